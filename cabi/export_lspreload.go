package main

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"errors"
	"sync"

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

// lspSetup is what idb_lsp_reload needs to parse a new configuration as
// idb_lsp_new parsed the first: the project directory and user options.
type lspSetup struct {
	projectDir string
	userConfig map[string]string
}

var lspSetups struct {
	sync.Mutex
	m map[uint64]lspSetup
}

// rememberLSP records the setup of the manager handle h (idb_lsp_new).
// Setups of managers shut down since are dropped then.
func rememberLSP(h uint64, projectDir string, userConfig map[string]string) {
	lspSetups.Lock()
	defer lspSetups.Unlock()
	if lspSetups.m == nil {
		lspSetups.m = map[uint64]lspSetup{}
	}
	for k := range lspSetups.m {
		if _, err := handles.get(kindLSP, k); err != nil {
			delete(lspSetups.m, k)
		}
	}
	lspSetups.m[h] = lspSetup{projectDir, userConfig}
}

func lspSetupOf(h C.uint64_t) lspSetup {
	lspSetups.Lock()
	defer lspSetups.Unlock()
	return lspSetups.m[uint64(h)]
}

//export idb_lsp_reload
func idb_lsp_reload(h C.uint64_t, configJSON *C.char, timeoutMs C.int64_t, out **C.char) (st C.int) {
	const name = "idb_lsp_reload"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	m, err := lspFromHandle(h)
	if err != nil {
		return fail(name, err)
	}
	if configJSON == nil {
		return fail(name, argErr("config_json is NULL"))
	}
	setup := lspSetupOf(h)
	cfgs, errs := lsp.ParseServers(copyBytes(configJSON), lsp.Source{Root: setup.projectDir, File: "config_json"},
		&lsp.LoadOptions{ProjectDir: setup.projectDir, UserConfig: setup.userConfig})
	if len(errs) > 0 {
		return fail(name, argErr("config_json: %w", errors.Join(errs...)))
	}
	ctx, cancel := timeoutContext(timeoutMs, defaultDocTimeout)
	defer cancel()
	problems := m.Reload(ctx, cfgs)
	msgs := make([]string, 0, len(problems))
	for _, p := range problems {
		msgs = append(msgs, p.Error())
	}
	return setOutJSON(name, out, struct {
		Problems []string `json:"problems"`
	}{msgs})
}
