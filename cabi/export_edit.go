package main

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/idebridge/idebridge/lsp"
)

// The verified edits: an edit set (lsp.EditSet) on a manager's servers,
// and the code actions and symbol sources an editing agent asks for.

// defaultEditTimeout bounds staging, checking and applying when
// timeout_ms is 0: servers start, load and settle every checked file.
const defaultEditTimeout = 2 * time.Minute

// defaultDiscardTimeout bounds a discard (and the free that discards).
const defaultDiscardTimeout = 60 * time.Second

// editSetHandle is what an edit set handle names.
type editSetHandle struct {
	es *lsp.EditSet
	m  *lsp.Manager
}

func editSetOf(h C.uint64_t) (*editSetHandle, error) {
	obj, err := handles.get(kindEditSet, uint64(h))
	if err != nil {
		return nil, err
	}
	return obj.(*editSetHandle), nil
}

//export idb_edit_set_new
func idb_edit_set_new(manager C.uint64_t, outHandle *C.uint64_t) (st C.int) {
	const name = "idb_edit_set_new"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(outHandle, "out_handle"); err != nil {
		return fail(name, err)
	}
	m, err := lspFromHandle(manager)
	if err != nil {
		return fail(name, err)
	}
	*outHandle = C.uint64_t(handles.add(kindEditSet, &editSetHandle{es: m.NewEditSet(), m: m}))
	return 0
}

//export idb_edit_set_stage
func idb_edit_set_stage(set C.uint64_t, editsJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_edit_set_stage"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	h, err := editSetOf(set)
	if err != nil {
		return fail(name, err)
	}
	if editsJSON == nil {
		return fail(name, argErr("edits_json is NULL"))
	}
	edits, err := lsp.DecodeEdits(borrowBytes(editsJSON))
	if err != nil {
		return fail(name, argErr("edits_json: %v", err))
	}
	ctx, cancel := timeoutContext(timeoutMs, defaultEditTimeout)
	defer cancel()
	if err := h.es.Stage(ctx, edits); err != nil {
		return fail(name, err)
	}
	return setOutJSON(name, out, emptyIfNil(h.es.Files()))
}

//export idb_edit_set_check
func idb_edit_set_check(set C.uint64_t, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_edit_set_check"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	h, err := editSetOf(set)
	if err != nil {
		return fail(name, err)
	}
	ctx, cancel := timeoutContext(timeoutMs, defaultEditTimeout)
	defer cancel()
	c, err := h.es.Check(ctx)
	if err != nil {
		return fail(name, err)
	}
	js, err := withText(c, c.Render(h.m.ProjectDir()))
	if err != nil {
		return fail(name, err)
	}
	setOutBytes(out, js)
	return 0
}

//export idb_edit_set_diff
func idb_edit_set_diff(set C.uint64_t, out **C.char) (st C.int) {
	const name = "idb_edit_set_diff"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	h, err := editSetOf(set)
	if err != nil {
		return fail(name, err)
	}
	setOut(out, h.es.Diff())
	return 0
}

//export idb_edit_set_discard
func idb_edit_set_discard(set C.uint64_t, timeoutMs C.int64_t) (st C.int) {
	const name = "idb_edit_set_discard"
	defer recoverPanic(name, &st)
	enter(name)
	h, err := editSetOf(set)
	if err != nil {
		return fail(name, err)
	}
	ctx, cancel := timeoutContext(timeoutMs, defaultDiscardTimeout)
	defer cancel()
	if err := h.es.Discard(ctx); err != nil {
		return fail(name, err)
	}
	return 0
}

// editApplied is the JSON of idb_edit_set_apply: lsp.EditApplied, and why
// the check after the write failed.
type editApplied struct {
	*lsp.EditApplied
	CheckError string `json:"checkError,omitempty"`
}

//export idb_edit_set_apply
func idb_edit_set_apply(set C.uint64_t, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_edit_set_apply"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	h, err := editSetOf(set)
	if err != nil {
		return fail(name, err)
	}
	ctx, cancel := timeoutContext(timeoutMs, defaultEditTimeout)
	defer cancel()
	applied, err := h.es.Apply(ctx, nil)
	if applied == nil {
		if err == nil {
			err = errors.New("edits not applied")
		}
		return fail(name, err)
	}
	res := editApplied{EditApplied: applied}
	if applied.Written == nil {
		applied.Written = []string{}
	}
	dir := h.m.ProjectDir()
	names := make([]string, len(applied.Written))
	for i, p := range applied.Written {
		names[i] = displayIn(dir, p)
	}
	text := fmt.Sprintf("written: %s\n", strings.Join(names, ", "))
	if err != nil {
		// Written all the same: a failed status would say it was not.
		res.CheckError = err.Error()
		text += res.CheckError + "\n"
	} else if applied.Check != nil {
		text += applied.Check.Render(dir)
	}
	js, err := withText(res, text)
	if err != nil {
		return fail(name, err)
	}
	setOutBytes(out, js)
	return 0
}

// displayIn is path relative to dir when it lies inside it.
func displayIn(dir, path string) string {
	if dir != "" && strings.HasPrefix(path, dir+string(filepath.Separator)) {
		return path[len(dir)+1:]
	}
	return path
}

//export idb_edit_set_free
func idb_edit_set_free(set C.uint64_t, timeoutMs C.int64_t) (st C.int) {
	const name = "idb_edit_set_free"
	defer recoverPanic(name, &st)
	enter(name)
	obj, err := handles.remove(kindEditSet, uint64(set))
	if err != nil {
		return fail(name, err)
	}
	ctx, cancel := timeoutContext(timeoutMs, defaultDiscardTimeout)
	defer cancel()
	// A manager shut down has no server left to put back.
	if err := obj.(*editSetHandle).es.Discard(ctx); err != nil && !errors.Is(err, lsp.ErrManagerClosed) {
		return fail(name, fmt.Errorf("discarding the staged edits (the set is freed): %w", err))
	}
	return 0
}

//export idb_lsp_code_actions
func idb_lsp_code_actions(manager C.uint64_t, requestJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_code_actions"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	m, err := lspFromHandle(manager)
	if err != nil {
		return fail(name, err)
	}
	var r struct {
		Path string `json:"path"`
		Line int    `json:"line"`
	}
	if err := decodeParam(requestJSON, "request_json", &r); err != nil {
		return fail(name, err)
	}
	if r.Path == "" || r.Line < 1 {
		return fail(name, argErr("request_json: path and line (1-based) are required"))
	}
	ctx, cancel := timeoutContext(timeoutMs, defaultNavTimeout)
	defer cancel()
	acts, err := m.CodeActions(ctx, r.Path, r.Line)
	if err != nil {
		return fail(name, err)
	}
	return setOutJSON(name, out, acts)
}

//export idb_lsp_symbol_source
func idb_lsp_symbol_source(manager C.uint64_t, requestJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_symbol_source"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	m, err := lspFromHandle(manager)
	if err != nil {
		return fail(name, err)
	}
	var r struct {
		Path   string `json:"path"`
		Symbol string `json:"symbol"`
	}
	if err := decodeParam(requestJSON, "request_json", &r); err != nil {
		return fail(name, err)
	}
	if r.Path == "" || strings.TrimSpace(r.Symbol) == "" {
		return fail(name, argErr("request_json: path and symbol are required"))
	}
	ctx, cancel := timeoutContext(timeoutMs, defaultNavTimeout)
	defer cancel()
	src, err := m.SymbolSource(ctx, r.Path, r.Symbol)
	if err != nil {
		return fail(name, err)
	}
	return setOutJSON(name, out, src)
}
