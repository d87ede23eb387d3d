package lsp

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of the manager layer. Each is matched with errors.Is; a
// *ServerError carries the details of a server failure.
var (
	// ErrNoServer: no configured server serves the file's extension.
	ErrNoServer = errors.New("no language server for file")
	// ErrServerFailed: the server could not be started, crashed, or is out
	// of restarts. Matched by every *ServerError.
	ErrServerFailed = errors.New("language server failed")
	// ErrStartupTimeout: the server did not answer initialize within its
	// startup timeout.
	ErrStartupTimeout = errors.New("language server did not start in time")
	// ErrUnsupportedTransport: the configuration names a transport this
	// package cannot start ("socket").
	ErrUnsupportedTransport = errors.New("unsupported language server transport")
	// ErrServerExited: the server process ended, or its stream broke,
	// while it was in use.
	ErrServerExited = errors.New("language server exited unexpectedly")
	// ErrSafeMode: the manager runs in safe mode and starts no server.
	ErrSafeMode = errors.New("safe mode: language servers are not started")
	// ErrManagerClosed: the manager was shut down.
	ErrManagerClosed = errors.New("language server manager is shut down")
	// ErrNotOpen: the file is not open in the manager.
	ErrNotOpen = errors.New("file is not open")
	// ErrCommandNotFound: the server's command is not installed. Matched
	// by every *CommandNotFoundError (and by exec.ErrNotFound).
	ErrCommandNotFound = errors.New("language server command not found")
)

// CommandNotFoundError says that a server's command is not installed: a
// bare name not found on PATH, or a path that names no executable. Such a
// server is not restarted (a restart would fail alike); it is started
// again, without using a restart, once its command is found, after the
// user installs it.
type CommandNotFoundError struct {
	// Command is the configured command.
	Command string
	// Hint says how such servers are usually installed (InstallHint);
	// empty when the command is not a well-known server.
	Hint string
	// Err is the cause from os/exec.
	Err error
}

func (e *CommandNotFoundError) Error() string {
	msg := fmt.Sprintf("command %q is not installed (%v)", e.Command, e.Err)
	if e.Hint != "" {
		msg += "; install it: " + e.Hint
	} else {
		msg += "; install it, or set PATH to find it"
	}
	return msg
}

// Unwrap returns the cause.
func (e *CommandNotFoundError) Unwrap() error { return e.Err }

// Is makes every CommandNotFoundError match ErrCommandNotFound.
func (e *CommandNotFoundError) Is(target error) bool { return target == ErrCommandNotFound }

// NoServerError says why no server serves a file.
type NoServerError struct {
	Path      string
	Extension string // lower-cased; "" when the file has none
	// Known lists the extensions that are served, sorted.
	Known []string
}

func (e *NoServerError) Error() string {
	ext := e.Extension
	if ext == "" {
		ext = "(no extension)"
	}
	if len(e.Known) == 0 {
		return fmt.Sprintf("no language server for %s: no server is configured", e.Path)
	}
	return fmt.Sprintf("no language server for %s: extension %s is not configured (served: %s)",
		e.Path, ext, strings.Join(e.Known, " "))
}

// Is makes every NoServerError match ErrNoServer.
func (e *NoServerError) Is(target error) bool { return target == ErrNoServer }

// ServerError is a failure of one language server: it could not start, it
// crashed, or it has used up its restarts.
type ServerError struct {
	// Server is the server's name.
	Server string
	// ExitStatus says how the process ended ("exit status 2", "signal:
	// killed"); empty when it did not start or has not exited.
	ExitStatus string
	// Stderr is the tail of what the server wrote to standard error.
	Stderr string
	// Restarts is the number of restarts used so far.
	Restarts int
	// Final is true when the server will not be restarted again: every
	// use returns this error until the configuration is reloaded.
	Final bool
	// Err is the cause.
	Err error
}

func (e *ServerError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "language server %s: %v", e.Server, e.Err)
	if e.ExitStatus != "" {
		fmt.Fprintf(&b, " (%s)", e.ExitStatus)
	}
	if e.Final && !errors.Is(e.Err, ErrCommandNotFound) {
		fmt.Fprintf(&b, "; not restarting (%d restarts used)", e.Restarts)
	}
	if e.Stderr != "" {
		b.WriteString("; stderr:\n")
		b.WriteString(e.Stderr)
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *ServerError) Unwrap() error { return e.Err }

// Is makes every ServerError match ErrServerFailed.
func (e *ServerError) Is(target error) bool { return target == ErrServerFailed }

// lastLine returns the last non-empty line of s, for one-line notes.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
