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
	"time"

	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/warm"

	"github.com/idebridge/idebridge/cabi/abispec"
)

// The navigation exports: one per operation of the lsp package, each taking
// the place (and the operation's arguments) as one JSON object and
// answering the operation's result as JSON with "text", its rendering for
// a model, added.

// defaultNavTimeout bounds a navigation call when timeout_ms is 0: a
// server's start, and its load of the workspace, included.
const defaultNavTimeout = 60 * time.Second

func init() {
	statusClassifiers = append(statusClassifiers, func(err error) int {
		if errors.Is(err, lsp.ErrBadPos) {
			return abispec.StArgument
		}
		return 0
	})
}

// navRequest is the JSON of request_json.
type navRequest struct {
	Path               string `json:"path"`
	Line               int    `json:"line"`
	Column             int    `json:"column"`
	Symbol             string `json:"symbol"`
	Occurrence         int    `json:"occurrence"`
	IncludeDeclaration bool   `json:"includeDeclaration"`
	Query              string `json:"query"`
	NewName            string `json:"newName"`
	MaxLocations       int    `json:"maxLocations"`
	Offset             int    `json:"offset"`
	Limit              int    `json:"limit"`
}

// withText is v's JSON (an object) with text added as "text".
func withText(v any, rendered string) ([]byte, error) {
	js, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	text, err := json.Marshal(rendered)
	if err != nil {
		return nil, err
	}
	js = bytes.TrimSuffix(js, []byte("}"))
	if len(js) > 1 {
		js = append(js, ',')
	}
	js = append(js, `"text":`...)
	js = append(js, text...)
	return append(js, '}'), nil
}

// navExport runs the operation op of a navigation export.
func navExport(name string, op lsp.NavOp, h C.uint64_t, requestJSON *C.char, timeoutMs C.int64_t, out **C.char) C.int {
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	lh, err := lspAnyHandleOf(h)
	if err != nil {
		return fail(name, err)
	}
	// A manager through the runtime navigates there (export_lspruntime.go).
	var nav warm.Navigator = lh.m
	if lh.remote != nil {
		if op == lsp.OpRename {
			return fail(name, errRuntimeOnly)
		}
		nav = lh.remote
	}
	var r navRequest
	if err := decodeParam(requestJSON, "request_json", &r); err != nil {
		return fail(name, err)
	}
	if r.Path == "" && op != lsp.OpWorkspaceSymbols {
		return fail(name, argErr("request_json: path is required"))
	}
	if r.Offset < 0 || r.Limit < 0 {
		return fail(name, argErr("request_json: offset and limit must not be negative"))
	}
	ctx, cancel := timeoutContext(timeoutMs, defaultNavTimeout)
	defer cancel()
	res, err := nav.Navigate(ctx, lsp.NavRequest{
		Op:                 op,
		At:                 lsp.Pos{Path: r.Path, Line: r.Line, Column: r.Column, Symbol: r.Symbol, Occurrence: r.Occurrence},
		Query:              r.Query,
		IncludeDeclaration: r.IncludeDeclaration,
		NewName:            r.NewName,
		Offset:             r.Offset,
		Limit:              r.Limit,
	})
	if err != nil {
		return fail(name, err)
	}
	ropts := &lsp.NavRenderOptions{ProjectDir: nav.ProjectDir(), MaxLocations: r.MaxLocations}
	if (r.Offset > 0 || r.Limit > 0) && r.MaxLocations == 0 {
		ropts.MaxLocations = -1 // the page is the bound
	}
	js, err := withText(res, res.Render(ropts))
	if err != nil {
		return fail(name, err)
	}
	setOutBytes(out, js)
	return 0
}

//export idb_lsp_definition
func idb_lsp_definition(h C.uint64_t, requestJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_definition"
	defer recoverPanic(name, &st)
	enter(name)
	return navExport(name, lsp.OpDefinition, h, requestJSON, timeoutMs, out)
}

//export idb_lsp_declaration
func idb_lsp_declaration(h C.uint64_t, requestJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_declaration"
	defer recoverPanic(name, &st)
	enter(name)
	return navExport(name, lsp.OpDeclaration, h, requestJSON, timeoutMs, out)
}

//export idb_lsp_type_definition
func idb_lsp_type_definition(h C.uint64_t, requestJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_type_definition"
	defer recoverPanic(name, &st)
	enter(name)
	return navExport(name, lsp.OpTypeDefinition, h, requestJSON, timeoutMs, out)
}

//export idb_lsp_implementation
func idb_lsp_implementation(h C.uint64_t, requestJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_implementation"
	defer recoverPanic(name, &st)
	enter(name)
	return navExport(name, lsp.OpImplementation, h, requestJSON, timeoutMs, out)
}

//export idb_lsp_references
func idb_lsp_references(h C.uint64_t, requestJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_references"
	defer recoverPanic(name, &st)
	enter(name)
	return navExport(name, lsp.OpReferences, h, requestJSON, timeoutMs, out)
}

//export idb_lsp_hover
func idb_lsp_hover(h C.uint64_t, requestJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_hover"
	defer recoverPanic(name, &st)
	enter(name)
	return navExport(name, lsp.OpHover, h, requestJSON, timeoutMs, out)
}

//export idb_lsp_document_symbols
func idb_lsp_document_symbols(h C.uint64_t, requestJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_document_symbols"
	defer recoverPanic(name, &st)
	enter(name)
	return navExport(name, lsp.OpDocumentSymbols, h, requestJSON, timeoutMs, out)
}

//export idb_lsp_workspace_symbols
func idb_lsp_workspace_symbols(h C.uint64_t, requestJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_workspace_symbols"
	defer recoverPanic(name, &st)
	enter(name)
	return navExport(name, lsp.OpWorkspaceSymbols, h, requestJSON, timeoutMs, out)
}

//export idb_lsp_prepare_call_hierarchy
func idb_lsp_prepare_call_hierarchy(h C.uint64_t, requestJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_prepare_call_hierarchy"
	defer recoverPanic(name, &st)
	enter(name)
	return navExport(name, lsp.OpPrepareCallHierarchy, h, requestJSON, timeoutMs, out)
}

//export idb_lsp_incoming_calls
func idb_lsp_incoming_calls(h C.uint64_t, requestJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_incoming_calls"
	defer recoverPanic(name, &st)
	enter(name)
	return navExport(name, lsp.OpIncomingCalls, h, requestJSON, timeoutMs, out)
}

//export idb_lsp_outgoing_calls
func idb_lsp_outgoing_calls(h C.uint64_t, requestJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_outgoing_calls"
	defer recoverPanic(name, &st)
	enter(name)
	return navExport(name, lsp.OpOutgoingCalls, h, requestJSON, timeoutMs, out)
}

//export idb_lsp_prepare_type_hierarchy
func idb_lsp_prepare_type_hierarchy(h C.uint64_t, requestJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_prepare_type_hierarchy"
	defer recoverPanic(name, &st)
	enter(name)
	return navExport(name, lsp.OpPrepareTypeHierarchy, h, requestJSON, timeoutMs, out)
}

//export idb_lsp_supertypes
func idb_lsp_supertypes(h C.uint64_t, requestJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_supertypes"
	defer recoverPanic(name, &st)
	enter(name)
	return navExport(name, lsp.OpSupertypes, h, requestJSON, timeoutMs, out)
}

//export idb_lsp_subtypes
func idb_lsp_subtypes(h C.uint64_t, requestJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_subtypes"
	defer recoverPanic(name, &st)
	enter(name)
	return navExport(name, lsp.OpSubtypes, h, requestJSON, timeoutMs, out)
}

//export idb_lsp_rename
func idb_lsp_rename(h C.uint64_t, requestJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_rename"
	defer recoverPanic(name, &st)
	enter(name)
	return navExport(name, lsp.OpRename, h, requestJSON, timeoutMs, out)
}

// applyRename decodes a proposal and applies it with propose.
func applyRename(name string, h C.uint64_t, proposalJSON *C.char, timeoutMs C.int64_t, out **C.char,
	propose func(ctx context.Context) (lsp.ProposeFunc, func())) C.int {
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	m, err := lspFromHandle(h)
	if err != nil {
		return fail(name, err)
	}
	if proposalJSON == nil {
		return fail(name, argErr("proposal_json is NULL"))
	}
	var p lsp.RenameProposal
	// A proposal carries "text", its rendering, which has no field here:
	// decoded leniently.
	if err := json.Unmarshal(copyBytes(proposalJSON), &p); err != nil {
		return fail(name, argErr("proposal_json: %v", err))
	}
	for i, f := range p.Files {
		if f.Path == "" || f.Base == nil {
			return fail(name, argErr("proposal_json: file %d has no path or base (pass the proposal as idb_lsp_rename returned it)", i))
		}
	}
	ctx, cancel := timeoutContext(timeoutMs, 0)
	defer cancel()
	var fn lsp.ProposeFunc
	if propose != nil {
		var stop func()
		fn, stop = propose(ctx)
		defer stop()
	}
	// The review ends by the timeout through CancelAll, not by ctx, so
	// that the files left read as cancelled and skipped.
	res, err := m.ApplyRename(context.WithoutCancel(ctx), &p, fn)
	if err != nil {
		return fail(name, err)
	}
	js, err := withText(res, res.Render(&lsp.NavRenderOptions{ProjectDir: m.ProjectDir()}))
	if err != nil {
		return fail(name, err)
	}
	setOutBytes(out, js)
	return 0
}

//export idb_lsp_apply_rename
func idb_lsp_apply_rename(h C.uint64_t, proposalJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_apply_rename"
	defer recoverPanic(name, &st)
	enter(name)
	return applyRename(name, h, proposalJSON, timeoutMs, out, nil)
}
