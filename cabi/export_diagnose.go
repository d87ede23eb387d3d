package main

/*
#include <stdint.h>
*/
import "C"

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/warm"
)

// defaultDiagnoseTimeout bounds idb_lsp_diagnose when timeout_ms is 0:
// the servers' start and first load included.
const defaultDiagnoseTimeout = 2 * time.Minute

// maxDiagnoseFiles bounds the files of one idb_lsp_diagnose call.
const maxDiagnoseFiles = 1000

// diagnosedFile is one file of idb_lsp_diagnose's answer.
type diagnosedFile struct {
	Path   string            `json:"path"`
	Server string            `json:"server,omitempty"`
	Settle *lsp.SettleResult `json:"settle,omitempty"`
	Error  string            `json:"error,omitempty"`
	// NoServer is set when the error is that no server serves the file.
	NoServer bool `json:"noServer,omitempty"`
}

// diagnosis is idb_lsp_diagnose's answer.
type diagnosis struct {
	Attachment any             `json:"attachment"`
	Files      []diagnosedFile `json:"files"`
}

//export idb_lsp_diagnose
func idb_lsp_diagnose(h C.uint64_t, filesJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_diagnose"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	lh, err := lspAnyHandleOf(h)
	if err != nil {
		return fail(name, err)
	}
	var files []string
	if err := decodeParam(filesJSON, "files_json", &files); err != nil {
		return fail(name, err)
	}
	if len(files) == 0 {
		return fail(name, argErr("files_json: no files"))
	}
	if len(files) > maxDiagnoseFiles {
		return fail(name, argErr("files_json: %d files, more than the %d one call takes", len(files), maxDiagnoseFiles))
	}
	for i, f := range files {
		if f == "" {
			return fail(name, argErr("files_json: file %d is empty", i))
		}
		if !filepath.IsAbs(f) {
			files[i] = filepath.Join(lh.projectDir, f)
		}
	}
	ctx, cancel := timeoutContext(timeoutMs, defaultDiagnoseTimeout)
	defer cancel()
	req := warm.DiagRequest{Files: files, Settle: lsp.SettleOptions{WaitForProgress: true}}
	if dl, ok := ctx.Deadline(); ok {
		req.Settle.Timeout = time.Until(dl)
	}
	var res *warm.DiagResult
	if lh.remote != nil {
		res, err = lh.remote.Diagnose(ctx, req)
	} else {
		res, err = warm.DiagnoseManager(ctx, lh.m, req)
	}
	if err != nil {
		return fail(name, err)
	}
	d := diagnosis{Files: make([]diagnosedFile, len(res.Files))}
	if res.Attachment != nil {
		d.Attachment = res.Attachment
	}
	for i, f := range res.Files {
		df := diagnosedFile{Path: f.Path, Server: f.Server}
		if f.Err != nil {
			df.Error = f.Err.Error()
			df.NoServer = errors.Is(f.Err, lsp.ErrNoServer)
		} else {
			s := f.Settle
			df.Settle = &s
		}
		d.Files[i] = df
	}
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled) {
		return fail(name, ctx.Err())
	}
	return setOutJSON(name, out, d)
}
