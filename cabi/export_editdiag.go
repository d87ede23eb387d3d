package main

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"fmt"
	"time"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/idebridge"
)

// Diagnostics around an edit through the ABI: the IDE's diagnostics of a
// file before the edit (a snapshot, which crosses as JSON and comes back
// for the comparison), the ones the edit introduced with their rendered
// block, and the IDE's getDiagnostics decoded.

// snapshotJSON is an idebridge.DiagnosticsSnapshot as it crosses the ABI.
type snapshotJSON struct {
	Path        string            `json:"path"`
	URI         string            `json:"uri"`
	Text        string            `json:"text"`
	Diagnostics []diag.Diagnostic `json:"diagnostics"`
	Taken       time.Time         `json:"taken"`
}

// newDiagnosticsJSON is an idebridge.NewDiagnostics with its rendering.
type newDiagnosticsJSON struct {
	Path        string            `json:"path"`
	URI         string            `json:"uri"`
	Diagnostics []diag.Diagnostic `json:"diagnostics"`
	Moved       int               `json:"moved"`
	// Rendered is the <new-diagnostics> block, "" when nothing is new.
	Rendered string `json:"rendered"`
}

//export idb_ide_snapshot_diagnostics
func idb_ide_snapshot_diagnostics(h C.uint64_t, path *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_ide_snapshot_diagnostics"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	ic, err := ideFromHandle(h)
	if err != nil {
		return fail(name, err)
	}
	p, err := goString(path, "path")
	if err != nil {
		return fail(name, err)
	}
	ctx, cancel := timeoutContext(timeoutMs, ic.callTimeout)
	defer cancel()
	s, err := idebridge.SnapshotDiagnostics(ctx, ic.c, p)
	if err != nil {
		return fail(name, err)
	}
	return setOutJSON(name, out, snapshotJSON{s.Path, s.URI, s.Text, emptyIfNil(s.Diagnostics), s.Taken})
}

//export idb_ide_new_diagnostics
func idb_ide_new_diagnostics(h C.uint64_t, snapshotJSONText *C.char, optionsJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_ide_new_diagnostics"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	ic, err := ideFromHandle(h)
	if err != nil {
		return fail(name, err)
	}
	if snapshotJSONText == nil {
		return fail(name, argErr("snapshot_json is NULL"))
	}
	var sj snapshotJSON
	if err := decodeParam(snapshotJSONText, "snapshot_json", &sj); err != nil {
		return fail(name, err)
	}
	if sj.Path == "" {
		return fail(name, argErr("snapshot_json: no path (pass what idb_ide_snapshot_diagnostics returned)"))
	}
	var ro renderOptions
	if err := decodeOptions(optionsJSON, &ro); err != nil {
		return fail(name, err)
	}
	ctx, cancel := timeoutContext(timeoutMs, ic.callTimeout)
	defer cancel()
	snap := &idebridge.DiagnosticsSnapshot{Path: sj.Path, URI: sj.URI, Text: sj.Text, Diagnostics: sj.Diagnostics, Taken: sj.Taken}
	news, err := snap.NewDiagnostics(ctx, ic.c)
	if err != nil {
		return fail(name, err)
	}
	rendered := news.Render(&diag.RenderOptions{ProjectDir: ro.ProjectDir, Tag: ro.Tag, MaxChars: ro.MaxChars})
	return setOutJSON(name, out, newDiagnosticsJSON{news.Path, news.URI, emptyIfNil(news.Diagnostics), news.Moved, rendered})
}

//export idb_ide_get_diagnostics
func idb_ide_get_diagnostics(h C.uint64_t, path *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_ide_get_diagnostics"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	ic, err := ideFromHandle(h)
	if err != nil {
		return fail(name, err)
	}
	p, _ := goOptString(path)
	ctx, cancel := timeoutContext(timeoutMs, ic.callTimeout)
	defer cancel()
	files, err := ic.c.GetDiagnostics(ctx, p)
	if err != nil {
		if p == "" {
			return fail(name, fmt.Errorf("getDiagnostics: %w", err))
		}
		return fail(name, fmt.Errorf("getDiagnostics of %s: %w", p, err))
	}
	for i := range files {
		files[i].Diagnostics = emptyIfNil(files[i].Diagnostics)
	}
	return setOutJSON(name, out, emptyIfNil(files))
}
