package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/idebridge/idebridge/internal/jsonrpc"
)

// parseEntry parses one server entry of a configuration document. The
// error is a *ConfigError naming the entry and, where it can, the field.
func parseEntry(key string, raw json.RawMessage, src Source, o *LoadOptions) (ServerConfig, error) {
	fail := func(field string, err error) (ServerConfig, error) {
		return ServerConfig{}, &ConfigError{Plugin: src.Plugin, File: src.File, Server: key, Field: field, Err: err}
	}
	raw = bytes.TrimSpace(raw)
	if k := jsonrpc.Kind(raw); k != "object" {
		return fail("", fmt.Errorf("%s, not an object", jsonrpc.WithArticle(k)))
	}
	if key == "" {
		return fail("", errors.New("empty server name"))
	}
	d, err := newEntryDecoder(raw, src, o)
	if err != nil {
		return fail("", err)
	}
	c := ServerConfig{
		Name: key, Plugin: src.Plugin, Marketplace: src.Marketplace, Server: key,
		Root: src.Root, DataDir: src.DataDir, ProjectDir: o.ProjectDir, File: src.File,
	}
	if src.Plugin != "" {
		c.Name = "plugin:" + src.Plugin + ":" + key
	}
	// The fields in the order their problems are reported: the first
	// problem makes the decoder return zero values for the rest.
	c.Command = d.command(src.Root)
	c.Args = d.args()
	c.Transport = d.transport()
	c.Env = d.env()
	c.ExtensionToLanguage = d.extensions()
	c.InitializationOptions = d.object("initializationOptions")
	c.Settings = d.object("settings")
	c.WorkspaceFolder = d.workspaceFolder(o.ProjectDir)
	c.StartupTimeout = d.millis("startupTimeout")
	c.ShutdownTimeout = d.millis("shutdownTimeout")
	c.NoRestartOnCrash = !d.boolean("restartOnCrash", true)
	c.NoDiagnostics = !d.boolean("diagnostics", true)
	c.MaxRestarts = d.maxRestarts()
	if d.err != nil {
		return fail(d.field, d.err)
	}
	return c, nil
}

// entryDecoder reads the fields of one server entry. It keeps the first
// problem and the field it concerns; once it has one, every method returns
// a zero value without looking further.
type entryDecoder struct {
	fields map[string]json.RawMessage // values with surrounding space trimmed
	vars   map[string]string          // for ${NAME} expansion

	field string
	err   error
}

func newEntryDecoder(raw json.RawMessage, src Source, o *LoadOptions) (*entryDecoder, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	for k, v := range fields {
		fields[k] = bytes.TrimSpace(v)
	}
	vars := map[string]string{VarPluginRoot: src.Root, VarProjectDir: o.ProjectDir}
	if src.DataDir != "" {
		vars[VarPluginData] = src.DataDir
	}
	for k, v := range o.UserConfig {
		vars[userConfigPrefix+k] = v
	}
	return &entryDecoder{fields: fields, vars: vars}, nil
}

// fail records the first problem.
func (d *entryDecoder) fail(field string, err error) {
	if d.err == nil {
		d.field, d.err = field, err
	}
}

// value returns the field's raw value; ok is false when it is absent or
// null (both mean the default), or when a problem was found before.
func (d *entryDecoder) value(field string) (json.RawMessage, bool) {
	if d.err != nil {
		return nil, false
	}
	v, ok := d.fields[field]
	if !ok || jsonrpc.Kind(v) == "null" {
		return nil, false
	}
	return v, true
}

// kindErr says that v is not what field should be.
func (d *entryDecoder) kindErr(field string, v json.RawMessage, want string) {
	d.fail(field, fmt.Errorf("%s, not %s", jsonrpc.WithArticle(jsonrpc.Kind(v)), want))
}

// expand expands ${NAME} references in a value of field.
func (d *entryDecoder) expand(field, s string) string {
	v, err := expandVars(s, d.vars)
	if err != nil {
		d.fail(field, err)
		return ""
	}
	return v
}

// str returns a string field, unexpanded.
func (d *entryDecoder) str(field string) (string, bool) {
	v, ok := d.value(field)
	if !ok {
		return "", false
	}
	var s string
	if jsonrpc.Kind(v) != "string" || json.Unmarshal(v, &s) != nil {
		d.kindErr(field, v, "a string")
		return "", false
	}
	return s, true
}

func (d *entryDecoder) command(root string) string {
	cmd, ok := d.str("command")
	if d.err == nil && (!ok || cmd == "") {
		d.fail("command", errors.New("required"))
	}
	return commandIn(root, d.expand("command", cmd))
}

// commandIn makes a relative command path ("bin/srv") absolute against the
// plugin's root, so that it never runs a file of the project or the
// current directory of that name. A bare name ("gopls") is left for PATH.
func commandIn(root, cmd string) string {
	if root == "" || cmd == "" || filepath.IsAbs(cmd) || !strings.ContainsAny(cmd, `/\`) {
		return cmd
	}
	return filepath.Join(root, filepath.FromSlash(cmd))
}

func (d *entryDecoder) args() []string {
	v, ok := d.value("args")
	if !ok {
		return nil
	}
	var items []json.RawMessage
	if jsonrpc.Kind(v) != "array" || json.Unmarshal(v, &items) != nil {
		d.kindErr("args", v, "an array of strings")
		return nil
	}
	var args []string
	for i, it := range items {
		field := "args[" + strconv.Itoa(i) + "]"
		it = bytes.TrimSpace(it)
		var s string
		if jsonrpc.Kind(it) != "string" || json.Unmarshal(it, &s) != nil {
			d.kindErr(field, it, "a string")
			return nil
		}
		args = append(args, d.expand(field, s))
	}
	if d.err != nil {
		return nil
	}
	return args
}

func (d *entryDecoder) transport() string {
	t, ok := d.str("transport")
	if ok && t != TransportStdio && t != TransportSocket {
		d.fail("transport", fmt.Errorf("%q, not %q or %q", t, TransportStdio, TransportSocket))
		return ""
	}
	return t
}

func (d *entryDecoder) env() map[string]string {
	return d.stringMap("env", func(k, v string) (string, error) {
		s := d.expand("env."+k, v)
		return s, nil
	})
}

func (d *entryDecoder) extensions() map[string]string {
	m := d.stringMap("extensionToLanguage", func(k, v string) (string, error) {
		return v, checkExtension(k, v)
	})
	if d.err == nil && len(m) == 0 {
		d.fail("extensionToLanguage", errors.New("required: at least one extension"))
	}
	return m
}

// stringMap decodes an object of strings, passing each pair through check
// (in key order, so that the problem reported is always the same one). An
// empty object is nil.
func (d *entryDecoder) stringMap(field string, check func(k, v string) (string, error)) map[string]string {
	v, ok := d.value(field)
	if !ok {
		return nil
	}
	var raw map[string]json.RawMessage
	if jsonrpc.Kind(v) != "object" || json.Unmarshal(v, &raw) != nil {
		d.kindErr(field, v, "an object of strings")
		return nil
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out map[string]string
	for _, k := range keys {
		item := bytes.TrimSpace(raw[k])
		var s string
		if jsonrpc.Kind(item) != "string" || json.Unmarshal(item, &s) != nil {
			d.kindErr(field+"."+k, item, "a string")
			return nil
		}
		s, err := check(k, s)
		if err != nil {
			d.fail(field, err)
		}
		if d.err != nil {
			return nil
		}
		if out == nil {
			out = make(map[string]string, len(keys))
		}
		out[k] = s
	}
	return out
}

// object returns an object field, compacted; nil when absent.
func (d *entryDecoder) object(field string) json.RawMessage {
	v, ok := d.value(field)
	if !ok {
		return nil
	}
	if jsonrpc.Kind(v) != "object" {
		d.kindErr(field, v, "an object")
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		d.fail(field, err)
		return nil
	}
	return buf.Bytes()
}

// workspaceFolder returns the expanded folder, made absolute against
// projectDir.
func (d *entryDecoder) workspaceFolder(projectDir string) string {
	wf, ok := d.str("workspaceFolder")
	if !ok || wf == "" {
		return ""
	}
	wf = d.expand("workspaceFolder", wf)
	if d.err != nil {
		return ""
	}
	if !filepath.IsAbs(wf) && projectDir != "" {
		wf = filepath.Join(projectDir, wf)
	}
	return wf
}

// millis returns a duration given in milliseconds.
func (d *entryDecoder) millis(field string) time.Duration {
	v, ok := d.value(field)
	if !ok {
		return 0
	}
	n, err := nonNegInt(v)
	switch {
	case err != nil:
		d.fail(field, fmt.Errorf("%w (milliseconds)", err))
	case n > math.MaxInt64/int64(time.Millisecond):
		d.fail(field, errors.New("too large"))
	default:
		return time.Duration(n) * time.Millisecond
	}
	return 0
}

// boolean returns a boolean field, def when absent.
func (d *entryDecoder) boolean(field string, def bool) bool {
	v, ok := d.value(field)
	if !ok {
		return def
	}
	if jsonrpc.Kind(v) != "boolean" {
		d.kindErr(field, v, "a boolean")
		return def
	}
	return v[0] == 't'
}

// maxRestarts maps the .lsp.json field to ServerConfig.MaxRestarts: absent
// is 0 (the default), 0 is -1 (none), n is n.
func (d *entryDecoder) maxRestarts() int {
	v, ok := d.value("maxRestarts")
	if !ok {
		return 0
	}
	n, err := nonNegInt(v)
	switch {
	case err != nil:
		d.fail("maxRestarts", err)
	case n > math.MaxInt32:
		d.fail("maxRestarts", errors.New("too large"))
	case n == 0:
		return -1
	default:
		return int(n)
	}
	return 0
}

func nonNegInt(v json.RawMessage) (int64, error) {
	if jsonrpc.Kind(v) != "number" {
		return 0, fmt.Errorf("%s, not a number", jsonrpc.WithArticle(jsonrpc.Kind(v)))
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(string(v), 64)
		if ferr != nil || f != math.Trunc(f) || f < 0 || f > math.MaxInt64/2 {
			return 0, fmt.Errorf("%s is not a non-negative integer", clip(string(v)))
		}
		n = int64(f)
	}
	if n < 0 {
		return 0, fmt.Errorf("%d is negative", n)
	}
	return n, nil
}

// expandVars replaces ${NAME} and ${NAME:-default} with values from vars.
// "$${" stands for a literal "${". Every referenced name without a value
// and without a default is reported in one *MissingVariableError.
func expandVars(s string, vars map[string]string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	var missing []string
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			b.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", fmt.Errorf("unterminated ${ in %q", clip(s))
			}
			ref := s[i+2 : i+2+end]
			name, def, hasDef := strings.Cut(ref, ":-")
			if name == "" {
				return "", fmt.Errorf("empty variable name in %q", clip(s))
			}
			if v, ok := vars[name]; ok && v != "" {
				b.WriteString(v)
			} else if hasDef {
				b.WriteString(def)
			} else {
				missing = append(missing, name)
			}
			i += 2 + end + 1
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	if len(missing) > 0 {
		return "", &MissingVariableError{Names: missing}
	}
	return b.String(), nil
}
