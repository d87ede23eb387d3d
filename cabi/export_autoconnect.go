package main

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/idebridge/idebridge/cabi/abispec"
	"github.com/idebridge/idebridge/idebridge"
)

// Auto-connect and stale lockfiles through the ABI.

func init() {
	statusClassifiers = append(statusClassifiers, func(err error) int {
		if errors.Is(err, idebridge.ErrNoIDE) || errors.Is(err, idebridge.ErrAmbiguousIDE) {
			return abispec.StNotFound
		}
		return 0
	})
}

// autoConnectOptions is the JSON form of idb_should_auto_connect's options.
type autoConnectOptions struct {
	Requested bool              `json:"requested"`
	Env       map[string]string `json:"env"`
}

//export idb_should_auto_connect
func idb_should_auto_connect(optionsJSON *C.char, out **C.char) (st C.int) {
	const name = "idb_should_auto_connect"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	var o autoConnectOptions
	if err := decodeOptions(optionsJSON, &o); err != nil {
		return fail(name, err)
	}
	// The environment in os.Environ form, as discovery takes it (nil:
	// the process's).
	environ := (&discoverOptions{Env: o.Env}).goOptions().Env
	ok, why := idebridge.ShouldAutoConnect(&idebridge.AutoConnectOptions{Requested: o.Requested}, environ)
	return setOutJSON(name, out, struct {
		AutoConnect bool   `json:"autoConnect"`
		Why         string `json:"why"`
	}{ok, why})
}

// waitOptions is the JSON form of idb_wait_for_ide's options.
type waitOptions struct {
	discoverOptions
	PollIntervalMs int64 `json:"pollIntervalMs"`
}

//export idb_wait_for_ide
func idb_wait_for_ide(optionsJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_wait_for_ide"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	var o waitOptions
	if err := decodeOptions(optionsJSON, &o); err != nil {
		return fail(name, err)
	}
	if o.PollIntervalMs < 0 {
		return fail(name, argErr("options_json: pollIntervalMs %d is negative", o.PollIntervalMs))
	}
	// The timeout is how long to look: WaitForIDE's own deadline, so that
	// running out gives its error naming the candidates; none means look
	// until ctx (here: never) ends.
	opts := &idebridge.AutoConnectOptions{
		Discover:     o.goOptions(),
		PollInterval: time.Duration(o.PollIntervalMs) * time.Millisecond,
		Wait:         time.Duration(timeoutMs) * time.Millisecond,
	}
	ctx, cancel := context.WithCancel(callContext())
	defer cancel()
	if timeoutMs < 0 {
		opts.Wait = 1<<63 - 1
	}
	cand, cands, err := idebridge.WaitForIDE(ctx, opts)
	if err != nil {
		return fail(name, err)
	}
	return setOutJSON(name, out, struct {
		Candidate  *idebridge.Candidate  `json:"candidate"`
		Candidates []idebridge.Candidate `json:"candidates"`
	}{cand, emptyIfNil(cands)})
}

//export idb_remove_stale
func idb_remove_stale(optionsJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_remove_stale"
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
	dopts := o.goOptions()
	cands, err := idebridge.Discover(ctx, dopts)
	if err != nil {
		return fail(name, fmt.Errorf("discovering IDEs: %w", err))
	}
	removed, err := idebridge.RemoveStale(ctx, cands, dopts)
	if err != nil {
		return fail(name, err)
	}
	return setOutJSON(name, out, struct {
		Removed []string `json:"removed"`
	}{emptyIfNil(removed)})
}
