package main

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/idebridge/idebridge/cabi/abispec"
	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/mcp"
)

// Defaults of the IDE exports' timeouts (timeout_ms 0).
const (
	defaultDiscoverTimeout = 10 * time.Second
	defaultCallTimeout     = 30 * time.Second
	waitPollInterval       = time.Second
)

func init() {
	statusClassifiers = append(statusClassifiers, func(err error) int {
		var te *mcp.ToolError
		switch {
		case errors.As(err, &te):
			return abispec.StTool
		case errors.Is(err, idebridge.ErrClosed), errors.Is(err, idebridge.ErrConnectionLost):
			return abispec.StClosed
		}
		return 0
	})
}

// discoverOptions is the JSON form of the discovery options.
type discoverOptions struct {
	Cwd           string            `json:"cwd"`
	Env           map[string]string `json:"env"`
	LockfileDirs  []string          `json:"lockfileDirs"`
	AllowInsecure bool              `json:"allowInsecure"`
}

func (o *discoverOptions) goOptions() *idebridge.DiscoverOptions {
	var environ []string // nil: the process's environment
	for k, v := range o.Env {
		environ = append(environ, k+"="+v)
	}
	if o.Env != nil && environ == nil {
		environ = []string{} // an empty object: no variables at all
	}
	return &idebridge.DiscoverOptions{Cwd: o.Cwd, Env: environ, Dirs: o.LockfileDirs, AllowInsecure: o.AllowInsecure}
}

// connectOptions is the JSON form of idb_ide_connect's options.
type connectOptions struct {
	discoverOptions
	Port               int    `json:"port"`
	URL                string `json:"url"`
	AuthToken          string `json:"authToken"`
	Wait               bool   `json:"wait"`
	CallTimeoutMs      int64  `json:"callTimeoutMs"`
	PingIntervalMs     int64  `json:"pingIntervalMs"`
	NotificationBuffer int    `json:"notificationBuffer"`
	ClientName         string `json:"clientName"`
}

// ideClient is what an IDE client handle names.
type ideClient struct {
	c *idebridge.Client
	// callTimeout is the default deadline of calls but openDiff; <= 0 is none.
	callTimeout time.Duration
}

// timeoutContext returns the context of a blocking call: a timeout of ms
// milliseconds when positive (saturated, see millis), def when 0 (none when
// def <= 0), none when negative. In an asynchronous call it derives from the
// call's context, which idb_call_cancel ends (export_async.go).
func timeoutContext(ms C.int64_t, def time.Duration) (context.Context, context.CancelFunc) {
	d := def
	switch {
	case ms > 0:
		d = millis(int64(ms))
	case ms < 0:
		d = 0
	}
	base := callContext()
	if d <= 0 {
		return context.WithCancel(base)
	}
	return context.WithTimeout(base, d)
}

// longest is what durations in milliseconds saturate to: about 73 years,
// practically forever, with room for the doubling a keep-alive does.
const longest = time.Duration(math.MaxInt64 / 4)

// millis converts an option in milliseconds: 0 stays 0 (the default),
// negative becomes -1 (none), and more than longest saturates to longest
// rather than wrapping around.
func millis(ms int64) time.Duration {
	switch {
	case ms < 0:
		return -1
	case ms > int64(longest/time.Millisecond):
		return longest
	}
	return time.Duration(ms) * time.Millisecond
}

// maxNotificationBuffer bounds connectOptions.NotificationBuffer: the
// queue is allocated up front, and a caller's typo must not exhaust memory.
const maxNotificationBuffer = 1 << 16

// check rejects options out of range.
func (o *connectOptions) check() error {
	if o.Port < 0 || o.Port > 65535 {
		return argErr("options_json: port %d is out of range", o.Port)
	}
	if o.NotificationBuffer > maxNotificationBuffer {
		return argErr("options_json: notificationBuffer %d is more than %d", o.NotificationBuffer, maxNotificationBuffer)
	}
	return nil
}

func ideFromHandle(h C.uint64_t) (*ideClient, error) {
	obj, err := handles.get(kindIDE, uint64(h))
	if err != nil {
		return nil, err
	}
	return obj.(*ideClient), nil
}

// emptyIfNil returns list, or an empty slice for nil, so that it marshals
// as [] rather than null.
func emptyIfNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}

//export idb_discover
func idb_discover(optionsJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_discover"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	var o discoverOptions
	if err := decodeOptions(optionsJSON, &o); err != nil {
		return fail(name, err)
	}
	ctx, cancel := timeoutContext(timeoutMs, defaultDiscoverTimeout)
	defer cancel()
	cands, err := idebridge.Discover(ctx, o.goOptions())
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return fail(name, fmt.Errorf("discovering IDEs: %w", err))
	}
	return setOutJSON(name, out, emptyIfNil(cands))
}

// chooseCandidate picks the candidate to connect to among cands: the one on
// port when port is not 0, else the only valid one. dirs are the lockfile
// directories searched, named when nothing was found there.
func chooseCandidate(cands []idebridge.Candidate, port int, dirs []string) (idebridge.Candidate, error) {
	notFound := func(format string, args ...any) error {
		return &statusError{abispec.StNotFound, fmt.Errorf(format, args...)}
	}
	describe := func() string {
		if len(cands) == 0 {
			return "no IDE lockfile found in " + strings.Join(dirs, ", ")
		}
		var parts []string
		for _, c := range cands {
			parts = append(parts, fmt.Sprintf("port %d (%s): %s", c.Port, c.IDEName, c.Message))
		}
		return strings.Join(parts, "; ")
	}
	if port != 0 {
		for _, c := range cands {
			if c.Port != port {
				continue
			}
			if !c.Valid {
				return c, notFound("the IDE on port %d is not usable: %s", port, c.Message)
			}
			return c, nil
		}
		return idebridge.Candidate{}, notFound("no IDE lockfile for port %d (%s)", port, describe())
	}
	valid := idebridge.ValidCandidates(cands)
	switch len(valid) {
	case 1:
		return valid[0], nil
	case 0:
		return idebridge.Candidate{}, notFound("no usable IDE: %s", describe())
	}
	var ports []string
	for _, c := range valid {
		ports = append(ports, fmt.Sprint(c.Port))
	}
	return idebridge.Candidate{}, notFound("%d usable IDEs (ports %s): choose one with the port option", len(valid), strings.Join(ports, ", "))
}

// findCandidate discovers IDEs and chooses one; with wait, it polls until
// one can be chosen or ctx ends.
func findCandidate(ctx context.Context, o *connectOptions) (idebridge.Candidate, error) {
	for {
		cands, err := idebridge.Discover(ctx, o.goOptions())
		if err != nil {
			return idebridge.Candidate{}, fmt.Errorf("discovering IDEs: %w", err)
		}
		c, err := chooseCandidate(cands, o.Port, idebridge.LockfileDirs(o.goOptions()))
		if err == nil || !o.Wait {
			return c, err
		}
		select {
		case <-ctx.Done():
			return idebridge.Candidate{}, &statusError{abispec.StTimeout, fmt.Errorf("no IDE became usable within the timeout: %w", err)}
		case <-time.After(waitPollInterval):
		}
	}
}

//export idb_ide_connect
func idb_ide_connect(optionsJSON *C.char, timeoutMs C.int64_t, outHandle *C.uint64_t) (st C.int) {
	const name = "idb_ide_connect"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(outHandle, "out_handle"); err != nil {
		return fail(name, err)
	}
	var o connectOptions
	if err := decodeOptions(optionsJSON, &o); err != nil {
		return fail(name, err)
	}
	if err := o.check(); err != nil {
		return fail(name, err)
	}
	ctx, cancel := timeoutContext(timeoutMs, idebridge.DefaultConnectTimeout)
	defer cancel()
	copts := &idebridge.ClientOptions{
		// The export's timeout bounds the whole connection attempt, and
		// each call gets its own deadline below.
		ConnectTimeout:     -1,
		CallTimeout:        -1,
		PingInterval:       millis(o.PingIntervalMs),
		NotificationBuffer: o.NotificationBuffer,
		ClientName:         o.ClientName,
	}
	var client *idebridge.Client
	var err error
	if o.URL != "" {
		client, err = idebridge.DialURL(ctx, o.URL, o.AuthToken, copts)
	} else {
		var cand idebridge.Candidate
		if cand, err = findCandidate(ctx, &o); err == nil {
			client, err = idebridge.Connect(ctx, cand, copts)
		}
	}
	if err != nil {
		return fail(name, err)
	}
	callTimeout := defaultCallTimeout
	if o.CallTimeoutMs != 0 {
		callTimeout = millis(o.CallTimeoutMs)
	}
	*outHandle = C.uint64_t(handles.add(kindIDE, &ideClient{c: client, callTimeout: callTimeout}))
	return 0
}

//export idb_ide_info
func idb_ide_info(h C.uint64_t, out **C.char) (st C.int) {
	const name = "idb_ide_info"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	ic, err := ideFromHandle(h)
	if err != nil {
		return fail(name, err)
	}
	info := struct {
		ServerInfo      mcp.Implementation `json:"serverInfo"`
		ProtocolVersion string             `json:"protocolVersion"`
		Instructions    string             `json:"instructions,omitempty"`
		Capabilities    json.RawMessage    `json:"capabilities,omitempty"`
	}{ic.c.ServerInfo(), ic.c.ProtocolVersion(), ic.c.Instructions(), ic.c.ServerCapabilities()}
	return setOutJSON(name, out, info)
}

//export idb_ide_tools
func idb_ide_tools(h C.uint64_t, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_ide_tools"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	ic, err := ideFromHandle(h)
	if err != nil {
		return fail(name, err)
	}
	ctx, cancel := timeoutContext(timeoutMs, ic.callTimeout)
	defer cancel()
	tools, err := ic.c.Tools(ctx)
	if err != nil {
		return fail(name, err)
	}
	return setOutJSON(name, out, emptyIfNil(tools))
}

//export idb_ide_call
func idb_ide_call(h C.uint64_t, toolName *C.char, argsJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_ide_call"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	ic, err := ideFromHandle(h)
	if err != nil {
		return fail(name, err)
	}
	tool, err := goString(toolName, "name")
	if err != nil {
		return fail(name, err)
	}
	var args any
	if argsJSON != nil {
		raw := bytes.TrimSpace(copyBytes(argsJSON))
		if len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
			if raw[0] != '{' || !json.Valid(raw) {
				return fail(name, argErr("args_json is not a JSON object"))
			}
			args = json.RawMessage(raw)
		}
	}
	def := ic.callTimeout
	if tool == mcp.ToolOpenDiff {
		def = 0 // the user decides, however long it takes
	}
	ctx, cancel := timeoutContext(timeoutMs, def)
	defer cancel()
	res, err := ic.c.CallTool(ctx, tool, args)
	if err != nil {
		return fail(name, err)
	}
	return setOutJSON(name, out, res)
}

//export idb_ide_next_notification
func idb_ide_next_notification(h C.uint64_t, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_ide_next_notification"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	ic, err := ideFromHandle(h)
	if err != nil {
		return fail(name, err)
	}
	var n idebridge.Notification
	var ok bool
	select {
	case n, ok = <-ic.c.Notifications():
	default:
		if timeoutMs == 0 {
			// The default is not to wait: only what is already queued.
			*out = nil
			return 0
		}
		ctx, cancel := timeoutContext(timeoutMs, 0)
		defer cancel()
		select {
		case n, ok = <-ic.c.Notifications():
		case <-ctx.Done():
			*out = nil
			return 0
		}
	}
	if !ok {
		err := ic.c.Err()
		if err == nil {
			err = idebridge.ErrClosed
		}
		return fail(name, fmt.Errorf("waiting for a notification: %w", err))
	}
	return setOutJSON(name, out, n)
}

//export idb_ide_close
func idb_ide_close(h C.uint64_t) (st C.int) {
	const name = "idb_ide_close"
	defer recoverPanic(name, &st)
	enter(name)
	obj, err := handles.remove(kindIDE, uint64(h))
	if err != nil {
		return fail(name, err)
	}
	obj.(*ideClient).c.Close()
	return 0
}
