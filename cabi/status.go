package main

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/idebridge/idebridge/cabi/abispec"
)

// errArgument is wrapped by errors about the caller's arguments.
var errArgument = errors.New("invalid argument")

// statusError carries an explicit status for an error whose status cannot
// be derived from its chain.
type statusError struct {
	status int
	err    error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// statusClassifiers map errors of the wrapped packages to status codes; each
// capability file adds its own in init. The first that returns nonzero wins.
var statusClassifiers []func(error) int

// statusOf returns the status code for err (nil: IDB_OK).
func statusOf(err error) int {
	if err == nil {
		return abispec.StOK
	}
	var se *statusError
	if errors.As(err, &se) {
		return se.status
	}
	switch {
	case errors.Is(err, errBadHandle):
		return abispec.StHandle
	case errors.Is(err, errArgument):
		return abispec.StArgument
	}
	for _, c := range statusClassifiers {
		if s := c(err); s != 0 {
			return s
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return abispec.StTimeout
	}
	return abispec.StError
}

// fail records err as the calling thread's last error, prefixed with the
// export's name, and returns its status.
func fail(name string, err error) C_int {
	if err == nil {
		return 0
	}
	msg := name + ": " + err.Error()
	setThreadError(msg)
	noteCallError(msg, err)
	return C_int(statusOf(err))
}

// panicHook, when set (by tests), runs at the start of every export with
// the export's name; a test makes it panic to check recovery.
var panicHook func(name string)

// recoverPanic is deferred by every export that returns a status: it turns
// a panic into IDB_ERR_PANIC and a message with the panic value and stack.
func recoverPanic(name string, status *C_int) {
	if r := recover(); r != nil {
		msg := fmt.Sprintf("%s: internal error (recovered panic: %v)\n%s", name, r, debug.Stack())
		setThreadError(msg)
		noteCallError(msg, nil)
		*status = abispec.StPanic
	}
}

// enter runs at the start of every export.
func enter(name string) {
	if panicHook != nil {
		panicHook(name)
	}
}

// argErr returns an IDB_ERR_ARGUMENT error.
func argErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errArgument}, args...)...)
}
