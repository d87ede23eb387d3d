package main

/*
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
*/
import "C"

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/idebridge/idebridge/cabi/abispec"
	"github.com/idebridge/idebridge/mcp"
)

// An asynchronous call runs one blocking export on a goroutine of its own,
// registered as that goroutine's call: callContext gives the export a
// context that idb_call_cancel ends, and fail records the export's error
// (its message, and its value for the tool error's code) on the call
// rather than only on the thread. The goroutine is not locked to a thread:
// a call waiting on the network holds no OS thread. The idb_X_start
// functions that start calls are generated from the export table
// (start_gen.go).

// asyncCall is what a call handle names.
type asyncCall struct {
	fn     string // the blocking export, e.g. "idb_ide_call"
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	// hook, when set, runs after the export ended cancelled or timed out
	// (Func.CancelHook).
	hook func()
	// freeInputs frees the call's copies of the inputs.
	freeInputs func()

	mu        sync.Mutex
	h         uint64
	cancelled bool
	finished  bool
	freed     bool
	status    int
	result    *string // the result on IDB_OK; nil is NULL
	errJSON   string  // the error on another status
	err       error   // the error value the export failed with
	msg       string  // its message, as idb_last_error would give it
	taken     bool    // idb_call_result handed the result out
	release   func()  // releases a created object nobody took
	rfd, wfd  int     // the completion descriptor's ends (equal for an eventfd), -1 when none
}

// callOutcome is what the body of a call returns.
type callOutcome struct {
	status  C.int
	result  *string
	release func()
}

// callContext returns the context of the asynchronous call the calling
// thread runs, or context.Background for a call made directly from C.
// Every blocking export starts with it, which makes it the place where
// SIGCHLD's handler is checked (see sigchld_unix.go).
func callContext() context.Context {
	guardChildSignal()
	if c := currentCall(); c != nil {
		return c.ctx
	}
	return context.Background()
}

// running maps the goroutines running calls to their calls.
var running struct {
	sync.RWMutex
	n     int // len(calls)
	calls map[uint64]*asyncCall
}

// currentCall returns the call the calling goroutine runs, or nil.
func currentCall() *asyncCall {
	running.RLock()
	defer running.RUnlock()
	if running.n == 0 {
		return nil // the common case of a direct call: no goroutine id needed
	}
	return running.calls[goid()]
}

// setRunning records (c non-nil) or forgets the call of goroutine id.
func setRunning(id uint64, c *asyncCall) {
	running.Lock()
	defer running.Unlock()
	if running.calls == nil {
		running.calls = map[uint64]*asyncCall{}
	}
	if c != nil {
		running.calls[id] = c
	} else {
		delete(running.calls, id)
	}
	running.n = len(running.calls)
}

// goid returns the calling goroutine's id, from the first line of its
// stack trace ("goroutine 123 [running]:"). Go offers no cheaper way; it
// is read once per blocking export of a call, and on failure.
func goid() uint64 {
	var buf [40]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b, ok := bytes.CutPrefix(b, []byte("goroutine "))
	if !ok {
		return 0
	}
	var id uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// noteCallError records an export's failure on the call the calling
// goroutine runs, if any (called by fail and recoverPanic).
func noteCallError(msg string, err error) {
	if c := currentCall(); c != nil {
		c.mu.Lock()
		c.msg, c.err = msg, err
		c.mu.Unlock()
	}
}

// classKinds maps the binding classes to handle kinds, for the handle
// check of the idb_X_start functions.
var classKinds = map[string]kind{
	"Registry":        kindRegistry,
	"IDEClient":       kindIDE,
	"LSPManager":      kindLSP,
	"EditSet":         kindEditSet,
	abispec.CallClass: kindCall,
}

// checkHandle fails unless h is a live handle of class: a start function
// reports a bad handle at once rather than from the call.
func checkHandle(class string, h C.uint64_t) error {
	k, ok := classKinds[class]
	if !ok {
		return fmt.Errorf("internal error: unknown handle class %s", class)
	}
	_, err := handles.get(k, uint64(h))
	return err
}

// callInputs holds a start function's copies of its C inputs, which the
// caller may free as soon as the start function returns.
type callInputs struct {
	ptrs []unsafe.Pointer
}

// str copies a NUL-terminated string (NULL stays NULL).
func (in *callInputs) str(p *C.char) *C.char {
	if p == nil {
		return nil
	}
	q := C.strdup(p)
	in.ptrs = append(in.ptrs, unsafe.Pointer(q))
	return q
}

// bytes copies a buffer of n bytes (NULL stays NULL).
func (in *callInputs) bytes(p *C.char, n C.size_t) *C.char {
	if p == nil {
		return nil
	}
	q := C.malloc(n + 1)
	C.memcpy(q, unsafe.Pointer(p), n)
	in.ptrs = append(in.ptrs, q)
	return (*C.char)(q)
}

func (in *callInputs) free() {
	for _, p := range in.ptrs {
		C.free(p)
	}
	in.ptrs = nil
}

// startCall registers a call of the export fn and starts body on a
// goroutine locked to its thread; it stores the handle in *outCall.
func startCall(fn string, in *callInputs, hook func(), body func() callOutcome, outCall *C.uint64_t) C.int {
	ctx, cancel := context.WithCancel(context.Background())
	c := &asyncCall{fn: fn, ctx: ctx, cancel: cancel, done: make(chan struct{}), hook: hook, freeInputs: in.free, rfd: -1, wfd: -1}
	c.h = handles.add(kindCall, c)
	dispatch(c, body) // callworkers.go
	*outCall = C.uint64_t(c.h)
	return 0
}

// run runs body on goroutine id, records its outcome and signals
// completion.
func (c *asyncCall) run(id uint64, body func() callOutcome) {
	setRunning(id, c)
	o, msg := c.runBody(body)
	if o.status != 0 {
		c.mu.Lock()
		cancelled := c.cancelled
		c.mu.Unlock()
		st := int(o.status)
		if c.hook != nil && (cancelled || st == abispec.StTimeout) {
			c.runHook()
		}
	}
	setRunning(id, nil)
	c.freeInputs()
	c.cancel()
	c.finish(o, msg)
}

// runBody runs body, turning a panic into IDB_ERR_PANIC, and returns the
// message the export failed with when body failed.
func (c *asyncCall) runBody(body func() callOutcome) (o callOutcome, msg string) {
	defer func() {
		if r := recover(); r != nil {
			o = callOutcome{status: abispec.StPanic}
			msg = fmt.Sprintf("%s: internal error (recovered panic: %v)", c.fn, r)
		}
	}()
	o = body()
	if o.status != 0 {
		c.mu.Lock()
		msg = c.msg
		c.mu.Unlock()
	}
	return o, msg
}

// runHook runs the cancel hook, never letting a panic escape.
func (c *asyncCall) runHook() {
	defer func() { _ = recover() }()
	c.hook()
}

// callError is the JSON error of a failed call.
type callError struct {
	Status   int             `json:"status"`
	Function string          `json:"function"`
	Message  string          `json:"message"`
	Code     *int64          `json:"code,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// finish records the outcome and signals completion.
func (c *asyncCall) finish(o callOutcome, msg string) {
	if release := c.record(o, msg); release != nil {
		// Freed while running: nobody can take what it made. Released
		// outside the lock, since a shutdown may take a while.
		release()
	}
}

// record stores the outcome, signals completion, and returns the release
// of a created object that can no longer be taken.
func (c *asyncCall) record(o callOutcome, msg string) (release func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finished = true
	c.status = int(o.status)
	if c.status == 0 {
		c.result, c.release = o.result, o.release
	} else {
		if c.cancelled {
			// Whatever the export said (a context error), the caller
			// asked for it.
			c.status = abispec.StCancelled
			msg = c.fn + ": cancelled"
		}
		if msg == "" {
			msg = fmt.Sprintf("%s failed with status %d", c.fn, c.status)
		}
		ce := callError{Status: c.status, Function: c.fn, Message: msg}
		var te *mcp.ToolError
		if errors.As(c.err, &te) {
			ce.Code = &te.Code
			if len(te.Data) > 0 && json.Valid(te.Data) {
				ce.Data = te.Data
			}
		}
		js, _ := json.Marshal(ce) // strings, ints and valid JSON: cannot fail
		c.errJSON = string(js)
	}
	close(c.done)
	c.signalLocked()
	if c.freed {
		release, c.release = c.release, nil
	}
	return release
}

// signalLocked makes the completion pipe readable, if there is one.
func (c *asyncCall) signalLocked() {
	if c.wfd < 0 {
		return
	}
	if !c.freed {
		signalPipe(c.wfd)
	}
	if c.wfd != c.rfd {
		closeFD(c.wfd)
	}
	c.wfd = -1
}

func callFromHandle(h C.uint64_t) (*asyncCall, error) {
	obj, err := handles.get(kindCall, uint64(h))
	if err != nil {
		return nil, err
	}
	return obj.(*asyncCall), nil
}

//export idb_call_wait
func idb_call_wait(h C.uint64_t, timeoutMs C.int64_t) (st C.int) {
	const name = "idb_call_wait"
	defer recoverPanic(name, &st)
	enter(name)
	c, err := callFromHandle(h)
	if err != nil {
		return fail(name, err)
	}
	select {
	case <-c.done:
		return 0
	default:
	}
	if timeoutMs == 0 {
		// The polling case, which event loops call in a short spin: the
		// message without fail's work (no error value, no call lookup).
		setThreadError(name + ": " + c.fn + " is still running")
		return abispec.StTimeout
	}
	if timeoutMs < 0 {
		<-c.done
		return 0
	}
	t := time.NewTimer(time.Duration(timeoutMs) * time.Millisecond)
	defer t.Stop()
	select {
	case <-c.done:
		return 0
	case <-t.C:
		return fail(name, &statusError{abispec.StTimeout, fmt.Errorf("%s is still running after %d ms", c.fn, int64(timeoutMs))})
	}
}

//export idb_call_result
func idb_call_result(h C.uint64_t, out **C.char) (st C.int) {
	const name = "idb_call_result"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	c, err := callFromHandle(h)
	if err != nil {
		return fail(name, err)
	}
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.status != 0 {
		setOut(out, c.errJSON)
		return C.int(c.status)
	}
	c.taken = true
	if c.result == nil {
		*out = nil
	} else {
		setOut(out, *c.result)
	}
	return 0
}

//export idb_call_cancel
func idb_call_cancel(h C.uint64_t) (st C.int) {
	const name = "idb_call_cancel"
	defer recoverPanic(name, &st)
	enter(name)
	c, err := callFromHandle(h)
	if err != nil {
		return fail(name, err)
	}
	c.requestCancel()
	return 0
}

// requestCancel marks a running call cancelled and ends its context.
func (c *asyncCall) requestCancel() {
	c.mu.Lock()
	if !c.finished {
		c.cancelled = true
	}
	c.mu.Unlock()
	c.cancel()
}

//export idb_call_fd
func idb_call_fd(h C.uint64_t, out *C.uint64_t) (st C.int) {
	const name = "idb_call_fd"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	c, err := callFromHandle(h)
	if err != nil {
		return fail(name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rfd < 0 {
		r, w, err := newPipe()
		if err != nil {
			return fail(name, fmt.Errorf("creating the completion descriptor of %s: %w", c.fn, err))
		}
		c.rfd, c.wfd = r, w
		if c.finished {
			c.signalLocked()
		}
	}
	*out = C.uint64_t(c.rfd)
	return 0
}

//export idb_call_free
func idb_call_free(h C.uint64_t) (st C.int) {
	const name = "idb_call_free"
	defer recoverPanic(name, &st)
	enter(name)
	obj, err := handles.remove(kindCall, uint64(h))
	if err != nil {
		return fail(name, err)
	}
	c := obj.(*asyncCall)
	c.requestCancel()
	if release := c.markFreed(); release != nil {
		release()
	}
	return 0
}

// markFreed marks the call freed, closes its descriptor, drops its result,
// and returns the release of a created object nobody took.
func (c *asyncCall) markFreed() (release func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.freed = true
	if c.rfd >= 0 {
		closeFD(c.rfd)
		if c.wfd == c.rfd {
			c.wfd = -1 // one descriptor, now closed
		}
		c.rfd = -1
	}
	if c.finished {
		if !c.taken {
			release = c.release
		}
		c.release, c.result = nil, nil
	}
	return release
}

// The outcomes of the generated start functions' bodies, by out kind.

// outText takes a string an export stored (freeing it).
func outText(st C.int, p *C.char) callOutcome {
	o := callOutcome{status: st}
	if st == 0 && p != nil {
		s := C.GoString(p)
		o.result = &s
	}
	if p != nil {
		C.free(unsafe.Pointer(p))
	}
	return o
}

// outNumber gives a number an export stored, in decimal.
func outNumber(st C.int, n C.uint64_t) callOutcome {
	o := callOutcome{status: st}
	if st == 0 {
		s := strconv.FormatUint(uint64(n), 10)
		o.result = &s
	}
	return o
}

// outHandle gives a handle an export created, in decimal, with release to
// free it if nobody takes it.
func outHandle(st C.int, h C.uint64_t, release func(C.uint64_t) C.int) callOutcome {
	o := outNumber(st, h)
	if st == 0 {
		o.release = func() { release(h) }
	}
	return o
}

// outNone is the outcome of an export without an out parameter.
func outNone(st C.int) callOutcome { return callOutcome{status: st} }
