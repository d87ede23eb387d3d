package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/warm"

	"github.com/idebridge/idebridge/cabi/abispec"
)

// A manager opened with "runtime": true in idb_lsp_new's options has no
// language servers of its own: its navigation exports (idb_lsp_definition
// and the others but rename), idb_lsp_diagnose and idb_lsp_servers go to the project's
// servers in the user's runtime (package warm), shared with every other
// client of the runtime and warm between calls, through one session that
// idb_lsp_shutdown ends. Everything that needs the servers' state for
// this caller alone, or writes files, is refused with IDB_ERR_ARGUMENT
// (errRuntimeOnly): documents (open, change, save, close), settle and
// drain, edit sets, rename and apply, reload and load_claude_code. Two
// managers on one handle would disagree: a document changed in a local
// one would not be what the runtime's navigation answers about.

// errRuntimeOnly is the error of an export a runtime manager cannot serve.
var errRuntimeOnly = fmt.Errorf("%w: not available on a manager opened with \"runtime\": true, whose servers are shared in the "+
	"runtime (its navigation exports, idb_lsp_diagnose and idb_lsp_servers go through it); open a manager without \"runtime\" for "+
	"documents, settle and drain, edits and renames", errArgument)

// runtimeDialTimeout bounds idb_lsp_new's reaching the runtime, its start
// included.
const runtimeDialTimeout = 60 * time.Second

func init() {
	statusClassifiers = append(statusClassifiers, func(err error) int {
		if errors.Is(err, warm.ErrRemoteClosed) {
			return abispec.StClosed
		}
		return 0
	})
}

// newRuntimeLSP opens the session of a runtime manager on the project dir
// with cfgs.
func newRuntimeLSP(o *lspOptions, dir string, cfgs []lsp.ServerConfig) (*lspHandle, error) {
	if !o.Runtime {
		return nil, argErr("options_json: runtimeCommand and runtimeDir go with \"runtime\": true")
	}
	// The runtime's servers have the runtime's options: asking for others
	// would be silently ignored.
	for _, set := range []struct {
		name string
		on   bool
	}{
		{"maxOpenDocuments", o.MaxOpenDocuments != 0}, {"quietPeriodMs", o.QuietPeriodMs != 0},
		{"settleTimeoutMs", o.SettleTimeoutMs != 0}, {"startupTimeoutMs", o.StartupTimeoutMs != 0},
		{"shutdownTimeoutMs", o.ShutdownTimeoutMs != 0}, {"waitForProgress", o.WaitForProgress},
		{"safeMode", o.SafeMode}, {"roots", o.Roots != nil},
	} {
		if set.on {
			return nil, argErr("options_json: %s does not go with \"runtime\": true (the runtime's servers have its own options)", set.name)
		}
	}
	wo, err := warm.CommandOptions(o.RuntimeCommand)
	if err != nil {
		return nil, argErr("options_json: runtimeCommand: %v", err)
	}
	if o.RuntimeDir != "" {
		if wo.Dir, err = filepath.Abs(o.RuntimeDir); err != nil {
			return nil, argErr("options_json: runtimeDir: %v", err)
		}
	}
	if cfgs == nil {
		cfgs = []lsp.ServerConfig{} // no server, not the runtime's default gopls
	}
	ctx, cancel := context.WithTimeout(callContext(), runtimeDialTimeout)
	defer cancel()
	r, err := warm.Dial(ctx, wo, &warm.Project{Dir: dir, Configs: cfgs, NoIDE: true})
	if err != nil {
		return nil, fmt.Errorf("reaching the runtime: %w", err)
	}
	return &lspHandle{remote: r, projectDir: dir, userConfig: o.UserConfig}, nil
}
