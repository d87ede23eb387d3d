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
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/warm"

	"github.com/idebridge/idebridge/cabi/abispec"
)

// defaultDocTimeout bounds the LSP document operations when timeout_ms is
// 0: long enough for a server's first start and initialize.
const defaultDocTimeout = 60 * time.Second

func init() {
	statusClassifiers = append(statusClassifiers, func(err error) int {
		switch {
		case errors.Is(err, lsp.ErrNoServer), errors.Is(err, lsp.ErrNotOpen):
			return abispec.StNotFound
		case errors.Is(err, lsp.ErrManagerClosed):
			return abispec.StClosed
		case errors.Is(err, lsp.ErrConfig):
			return abispec.StArgument
		}
		return 0
	})
}

// lspOptions is the JSON form of the manager's options.
type lspOptions struct {
	MaxOpenDocuments  int               `json:"maxOpenDocuments"`
	QuietPeriodMs     int64             `json:"quietPeriodMs"`
	SettleTimeoutMs   int64             `json:"settleTimeoutMs"`
	StartupTimeoutMs  int64             `json:"startupTimeoutMs"`
	ShutdownTimeoutMs int64             `json:"shutdownTimeoutMs"`
	WaitForProgress   bool              `json:"waitForProgress"`
	UserConfig        map[string]string `json:"userConfig"`
	SafeMode          bool              `json:"safeMode"`
	ConfigFile        string            `json:"configFile"`
	Roots             []string          `json:"roots"`
	// Runtime, RuntimeCommand and RuntimeDir: see export_lspruntime.go.
	Runtime        bool   `json:"runtime"`
	RuntimeCommand string `json:"runtimeCommand"`
	RuntimeDir     string `json:"runtimeDir"`
}

func lspFromHandle(h C.uint64_t) (*lsp.Manager, error) {
	lh, err := lspHandleOf(h)
	if err != nil {
		return nil, err
	}
	return lh.m, nil
}

// lspHandle is what an LSP manager handle names: the manager, and the
// project directory and user options idb_lsp_new parsed its configuration
// with, which idb_lsp_reload parses a new one with and
// idb_lsp_load_claude_code takes as its default project. A manager opened
// with "runtime" has no manager but a remote (export_lspruntime.go).
type lspHandle struct {
	m          *lsp.Manager
	remote     *warm.Remote
	projectDir string
	userConfig map[string]string
}

// lspHandleOf is the handle of an in-process manager: one opened with
// "runtime" is refused (errRuntimeOnly).
func lspHandleOf(h C.uint64_t) (*lspHandle, error) {
	lh, err := lspAnyHandleOf(h)
	if err != nil {
		return nil, err
	}
	if lh.remote != nil {
		return nil, errRuntimeOnly
	}
	return lh, nil
}

// lspAnyHandleOf is the handle of a manager, in the process or through
// the runtime.
func lspAnyHandleOf(h C.uint64_t) (*lspHandle, error) {
	obj, err := handles.get(kindLSP, uint64(h))
	if err != nil {
		return nil, err
	}
	return obj.(*lspHandle), nil
}

//export idb_lsp_new
func idb_lsp_new(configJSON *C.char, projectDir *C.char, optionsJSON *C.char, outHandle *C.uint64_t) (st C.int) {
	const name = "idb_lsp_new"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(outHandle, "out_handle"); err != nil {
		return fail(name, err)
	}
	if configJSON == nil {
		return fail(name, argErr("config_json is NULL"))
	}
	dir, err := goString(projectDir, "project_dir")
	if err != nil {
		return fail(name, err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return fail(name, argErr("project_dir: %v", err))
	}
	var o lspOptions
	if err := decodeOptions(optionsJSON, &o); err != nil {
		return fail(name, err)
	}
	text := copyBytes(configJSON)
	if t := strings.TrimSpace(string(text)); t != "" && !strings.HasPrefix(t, "{") {
		if st, err := os.Stat(t); err == nil && !st.IsDir() {
			return fail(name, argErr("config_json is not JSON but the path of a file (%s): pass {} and name the file in the configFile option", t))
		}
	}
	cfgs, errs := lsp.ParseServers(text, lsp.Source{Root: dir, File: "config_json"},
		&lsp.LoadOptions{ProjectDir: dir, UserConfig: o.UserConfig})
	if len(errs) > 0 {
		return fail(name, argErr("config_json: %w", errors.Join(errs...)))
	}
	if o.ConfigFile != "" {
		more, errs := lsp.LoadFile(o.ConfigFile, &lsp.LoadOptions{ProjectDir: dir, UserConfig: o.UserConfig})
		if len(errs) > 0 {
			return fail(name, argErr("configFile: %w", errors.Join(errs...)))
		}
		cfgs = append(cfgs, more...)
	}
	if o.Runtime || o.RuntimeCommand != "" || o.RuntimeDir != "" {
		lh, err := newRuntimeLSP(&o, dir, cfgs)
		if err != nil {
			return fail(name, err)
		}
		*outHandle = C.uint64_t(handles.add(kindLSP, lh))
		return 0
	}
	m, err := lsp.NewManager(cfgs, &lsp.ManagerOptions{
		ProjectDir:       dir,
		MaxOpenDocuments: o.MaxOpenDocuments,
		QuietPeriod:      time.Duration(o.QuietPeriodMs) * time.Millisecond,
		SettleTimeout:    time.Duration(o.SettleTimeoutMs) * time.Millisecond,
		StartupTimeout:   time.Duration(o.StartupTimeoutMs) * time.Millisecond,
		ShutdownTimeout:  time.Duration(o.ShutdownTimeoutMs) * time.Millisecond,
		WaitForProgress:  o.WaitForProgress,
		SafeMode:         o.SafeMode,
		Roots:            o.Roots,
	})
	if err != nil { // a negative option, named
		return fail(name, argErr("options_json: %w", err))
	}
	// An explicit configuration with conflicting extensions is a mistake
	// to report, not to resolve silently. No server has started yet.
	if problems := m.Problems(); len(problems) > 0 {
		m.Shutdown(context.Background())
		return fail(name, argErr("config_json: %w", errors.Join(problems...)))
	}
	*outHandle = C.uint64_t(handles.add(kindLSP, &lspHandle{m: m, projectDir: dir, userConfig: o.UserConfig}))
	return 0
}

// lspDocOp runs one document operation of an LSP export.
func lspDocOp(name string, h C.uint64_t, path *C.char, timeoutMs C.int64_t, op func(context.Context, *lsp.Manager, string) error) C.int {
	m, err := lspFromHandle(h)
	if err != nil {
		return fail(name, err)
	}
	p, err := goString(path, "path")
	if err != nil {
		return fail(name, err)
	}
	ctx, cancel := timeoutContext(timeoutMs, defaultDocTimeout)
	defer cancel()
	if err := op(ctx, m, p); err != nil {
		return fail(name, err)
	}
	return 0
}

//export idb_lsp_open
func idb_lsp_open(h C.uint64_t, path *C.char, timeoutMs C.int64_t) (st C.int) {
	const name = "idb_lsp_open"
	defer recoverPanic(name, &st)
	enter(name)
	return lspDocOp(name, h, path, timeoutMs, func(ctx context.Context, m *lsp.Manager, p string) error {
		return m.Open(ctx, p)
	})
}

//export idb_lsp_change
func idb_lsp_change(h C.uint64_t, path *C.char, text *C.char, timeoutMs C.int64_t) (st C.int) {
	const name = "idb_lsp_change"
	defer recoverPanic(name, &st)
	enter(name)
	t, err := goString(text, "text")
	if err != nil {
		return fail(name, err)
	}
	return lspDocOp(name, h, path, timeoutMs, func(ctx context.Context, m *lsp.Manager, p string) error {
		return m.Change(ctx, p, t)
	})
}

//export idb_lsp_save
func idb_lsp_save(h C.uint64_t, path *C.char, timeoutMs C.int64_t) (st C.int) {
	const name = "idb_lsp_save"
	defer recoverPanic(name, &st)
	enter(name)
	return lspDocOp(name, h, path, timeoutMs, func(ctx context.Context, m *lsp.Manager, p string) error {
		return m.Save(ctx, p)
	})
}

//export idb_lsp_close_file
func idb_lsp_close_file(h C.uint64_t, path *C.char, timeoutMs C.int64_t) (st C.int) {
	const name = "idb_lsp_close_file"
	defer recoverPanic(name, &st)
	enter(name)
	return lspDocOp(name, h, path, timeoutMs, func(ctx context.Context, m *lsp.Manager, p string) error {
		return m.Close(ctx, p)
	})
}

//export idb_lsp_settle
func idb_lsp_settle(h C.uint64_t, path *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_settle"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	var res lsp.SettleResult
	st = lspDocOp(name, h, path, timeoutMs, func(ctx context.Context, m *lsp.Manager, p string) error {
		var err error
		res, err = m.Settle(ctx, p)
		// Running out of time is not an error for Settle, whichever
		// deadline ran out: the result says so.
		if errors.Is(err, context.DeadlineExceeded) && res.Freshness == lsp.FreshTimedOut {
			err = nil
		}
		return err
	})
	if st != 0 {
		return st
	}
	return setOutJSON(name, out, res)
}

//export idb_lsp_drain
func idb_lsp_drain(h C.uint64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_drain"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	m, err := lspFromHandle(h)
	if err != nil {
		return fail(name, err)
	}
	att, ok := m.Drain()
	if !ok {
		*out = nil
		return 0
	}
	return setOutJSON(name, out, att)
}

//export idb_lsp_servers
func idb_lsp_servers(h C.uint64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_servers"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	lh, err := lspAnyHandleOf(h)
	if err != nil {
		return fail(name, err)
	}
	if lh.remote != nil {
		ctx, cancel := timeoutContext(0, defaultDocTimeout)
		defer cancel()
		ss, err := lh.remote.Servers(ctx)
		if err != nil {
			return fail(name, err)
		}
		return setOutJSON(name, out, emptyIfNil(ss))
	}
	return setOutJSON(name, out, emptyIfNil(lh.m.Servers()))
}

//export idb_lsp_shutdown
func idb_lsp_shutdown(h C.uint64_t, timeoutMs C.int64_t) (st C.int) {
	const name = "idb_lsp_shutdown"
	defer recoverPanic(name, &st)
	enter(name)
	obj, err := handles.remove(kindLSP, uint64(h))
	if err != nil {
		return fail(name, err)
	}
	if r := obj.(*lspHandle).remote; r != nil {
		r.Close() // ends the session; the runtime's servers serve on
		return 0
	}
	// 0 leaves the servers' own shutdown timeouts in charge.
	ctx, cancel := timeoutContext(timeoutMs, 0)
	defer cancel()
	if err := obj.(*lspHandle).m.Shutdown(ctx); err != nil {
		return fail(name, fmt.Errorf("shutting down the language servers (their processes were killed): %w", err))
	}
	return 0
}
