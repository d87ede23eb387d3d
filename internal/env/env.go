// Package env is the one way this module reads an environment. Every
// option that reads environment variables is an []string in os.Environ's
// form ("KEY=value"), where nil means the process's own environment; the
// same slice can then be handed to a child process unchanged.
package env

import (
	"os"
	"strings"
)

// Lookup returns the value of key in environ (nil: the process's
// environment). When key appears more than once, the last one wins, as
// exec.Cmd does.
func Lookup(environ []string, key string) (string, bool) {
	if environ == nil {
		return os.LookupEnv(key)
	}
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// Get returns the value of key in environ (nil: the process's
// environment), "" when it is not set.
func Get(environ []string, key string) string {
	v, _ := Lookup(environ, key)
	return v
}

// Resolve returns environ, or a copy of the process's environment when it
// is nil.
func Resolve(environ []string) []string {
	if environ == nil {
		return os.Environ()
	}
	return environ
}

// FromMap turns a map into os.Environ form, for tests and callers that
// hold variables as a map.
func FromMap(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

// Truthy reports whether a variable's value turns a setting on: "1",
// "true", "yes" or "on", in any letter case and with surrounding space, as
// Claude Code reads its own variables.
func Truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// Falsy reports whether a variable's value turns a setting off explicitly:
// "0", "false", "no" or "off" (any case, surrounding space). A variable
// that is neither Truthy nor Falsy (unset, empty, anything else) leaves the
// setting at its default.
func Falsy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "no", "off":
		return true
	}
	return false
}
