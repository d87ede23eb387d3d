package main

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/mcp"
)

// Edit review through the ABI: the IDE client's Reviewer (one per client
// handle, so that cancelling cancels every edit proposed through it),
// ApplyEdit without an IDE, and the file states edits compare against.

// closeTabTimeout bounds the close_tab an asynchronous openDiff sends when
// it is cancelled.
const closeTabTimeout = idebridge.DefaultCloseTabTimeout

// reviewers holds the Reviewer of each IDE client handle.
var reviewers struct {
	sync.Mutex
	m map[uint64]*idebridge.Reviewer
}

// reviewerFor returns the Reviewer of the client handle h, creating it on
// first use. Reviewers of closed handles are dropped then, so the map holds
// at most the live clients and the one being added.
func reviewerFor(h C.uint64_t, ic *ideClient) *idebridge.Reviewer {
	reviewers.Lock()
	defer reviewers.Unlock()
	if r := reviewers.m[uint64(h)]; r != nil {
		return r
	}
	if reviewers.m == nil {
		reviewers.m = map[uint64]*idebridge.Reviewer{}
	}
	for k := range reviewers.m {
		if _, err := handles.get(kindIDE, k); err != nil {
			delete(reviewers.m, k)
		}
	}
	r := idebridge.NewReviewer(ic.c, nil)
	reviewers.m[uint64(h)] = r
	return r
}

// editOptions is the JSON form of an edit's options.
type editOptions struct {
	TabName string               `json:"tabName"`
	Base    *idebridge.FileState `json:"base"`
}

// editResultJSON is an edit's outcome as it crosses the ABI: the JSON of
// idebridge.EditResult, the text written (or that a conflict stopped), and
// the conflict, if one stopped the write.
type editResultJSON struct {
	*idebridge.EditResult
	Text     string        `json:"text"`
	Conflict *conflictJSON `json:"conflict,omitempty"`
}

// conflictJSON is an idebridge.ConflictError.
type conflictJSON struct {
	Message  string               `json:"message"`
	Expected *idebridge.FileState `json:"expected"`
	Actual   *idebridge.FileState `json:"actual"`
}

// editOutcome turns an edit's result and error into what the export
// returns: a conflict is an outcome (the result says it), any other error
// is the export's error.
func editOutcome(name string, res *idebridge.EditResult, err error, out **C.char) C.int {
	var ce *idebridge.ConflictError
	if err != nil && !(errors.As(err, &ce) && res != nil) {
		return fail(name, err)
	}
	js := editResultJSON{EditResult: res, Text: res.Text}
	if ce != nil {
		js.Conflict = &conflictJSON{Message: ce.Error(), Expected: ce.Expected, Actual: ce.Actual}
	}
	return setOutJSON(name, out, js)
}

// editRequest decodes an edit's inputs.
func editRequest(path, newText *C.char, newTextLen C.size_t, optionsJSON *C.char) (idebridge.EditRequest, error) {
	p, err := goString(path, "path")
	if err != nil {
		return idebridge.EditRequest{}, err
	}
	text, err := goBytes(newText, newTextLen, "new_text")
	if err != nil {
		return idebridge.EditRequest{}, err
	}
	var o editOptions
	if err := decodeOptions(optionsJSON, &o); err != nil {
		return idebridge.EditRequest{}, err
	}
	return idebridge.EditRequest{Path: p, NewText: string(text), Base: o.Base, TabName: o.TabName}, nil
}

//export idb_ide_propose_edit
func idb_ide_propose_edit(h C.uint64_t, path *C.char, newText *C.char, newTextLen C.size_t, optionsJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_ide_propose_edit"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	ic, err := ideFromHandle(h)
	if err != nil {
		return fail(name, err)
	}
	req, err := editRequest(path, newText, newTextLen, optionsJSON)
	if err != nil {
		return fail(name, err)
	}
	ctx, cancel := timeoutContext(timeoutMs, 0) // the user takes as long as they like
	defer cancel()
	res, err := reviewerFor(h, ic).ProposeEdit(ctx, req)
	return editOutcome(name, res, err, out)
}

//export idb_ide_cancel_all_edits
func idb_ide_cancel_all_edits(h C.uint64_t, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_ide_cancel_all_edits"
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
	n, err := reviewerFor(h, ic).CancelAll(ctx)
	if err != nil {
		return fail(name, err)
	}
	return setOutJSON(name, out, struct {
		Cancelled int `json:"cancelled"`
	}{n})
}

//export idb_apply_edit
func idb_apply_edit(path *C.char, newText *C.char, newTextLen C.size_t, optionsJSON *C.char, out **C.char) (st C.int) {
	const name = "idb_apply_edit"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	req, err := editRequest(path, newText, newTextLen, optionsJSON)
	if err != nil {
		return fail(name, err)
	}
	res, err := idebridge.ApplyEdit(req)
	return editOutcome(name, res, err, out)
}

//export idb_file_state
func idb_file_state(path *C.char, out **C.char) (st C.int) {
	const name = "idb_file_state"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	p, err := goString(path, "path")
	if err != nil {
		return fail(name, err)
	}
	fs, err := idebridge.StatFile(p)
	if err != nil {
		return fail(name, err)
	}
	return setOutJSON(name, out, fs)
}

// closeDiffOnCancel is the cancel hook of idb_ide_call: an openDiff whose
// call was cancelled or timed out still shows its tab in the IDE, so it
// closes the tab, as a cancelled edit review does.
func closeDiffOnCancel(h C.uint64_t, toolName, argsJSON *C.char, _ C.int64_t) {
	if toolName == nil || argsJSON == nil || C.GoString(toolName) != mcp.ToolOpenDiff {
		return
	}
	var args struct {
		TabName string `json:"tab_name"`
	}
	if json.Unmarshal(copyBytes(argsJSON), &args) != nil || args.TabName == "" {
		return
	}
	ic, err := ideFromHandle(h)
	if err != nil || ic.c.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTabTimeout)
	defer cancel()
	// A failure changes nothing: the outcome (cancelled) stands, and the
	// tab may linger as it would have without the hook.
	_ = ic.c.CloseTab(ctx, args.TabName)
}
