package main

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"errors"

	"github.com/idebridge/idebridge/cabi/abispec"
	"github.com/idebridge/idebridge/lsp"
)

// The LSP manager's reload and safe mode through the ABI.

func init() {
	statusClassifiers = append(statusClassifiers, func(err error) int {
		if errors.Is(err, lsp.ErrSafeMode) {
			return abispec.StNotFound
		}
		return 0
	})
}

//export idb_lsp_reload
func idb_lsp_reload(h C.uint64_t, configJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_reload"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	lh, err := lspHandleOf(h)
	if err != nil {
		return fail(name, err)
	}
	if configJSON == nil {
		return fail(name, argErr("config_json is NULL"))
	}
	cfgs, errs := lsp.ParseServers(copyBytes(configJSON), lsp.Source{Root: lh.projectDir, File: "config_json"},
		&lsp.LoadOptions{ProjectDir: lh.projectDir, UserConfig: lh.userConfig})
	if len(errs) > 0 {
		return fail(name, argErr("config_json: %w", errors.Join(errs...)))
	}
	ctx, cancel := timeoutContext(timeoutMs, defaultDocTimeout)
	defer cancel()
	problems := lh.m.Reload(ctx, cfgs)
	msgs := make([]string, 0, len(problems))
	for _, p := range problems {
		msgs = append(msgs, p.Error())
	}
	return setOutJSON(name, out, struct {
		Problems []string `json:"problems"`
	}{msgs})
}
