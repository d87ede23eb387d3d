package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/warm"
)

// The navigation commands through the user's runtime: each read-only
// request goes to the project's language servers there (warm.Navigate),
// already warm, and its result prints as the process's own would. Rename
// stays in this process: it writes files, through the user's IDE when
// there is one.

// navRuntime is the runtime a navigation command goes through.
type navRuntime struct {
	opts    *warm.Options
	project *warm.Project
	// failed: the runtime could not be reached; the rest of the command
	// runs in this process.
	failed bool
}

// runtimeOff reports whether IDEBRIDGE_RUNTIME turns the runtime off.
func runtimeOff(inv *invocation) bool {
	switch strings.ToLower(strings.TrimSpace(inv.Getenv("IDEBRIDGE_RUNTIME"))) {
	case "0", "false", "no", "off":
		return true
	}
	return false
}

// useNavRuntime tells whether a navigation command goes through the
// runtime: by default, unless --no-runtime or IDEBRIDGE_RUNTIME=0 says
// not to, or --load-wait asks for a wait the runtime's servers do not have
// (they wait lsp.DefaultLoadWait, as idebridge mcp's). Windows has no
// runtime yet; a test binary never starts itself as one.
func useNavRuntime(inv *invocation, o *navFlags) bool {
	return !o.noRuntime && !runtimeOff(inv) && o.loadWait == lsp.DefaultLoadWait && !testing.Testing() && goruntime.GOOS != "windows"
}

func newNavRuntime(inv *invocation, wd string, set *serverSet) (*navRuntime, error) {
	start, err := runtimeStart()
	if err != nil {
		return nil, err
	}
	configs := append([]lsp.ServerConfig(nil), set.configs...)
	tuneBuiltinGopls(configs, set.origins)
	for i, c := range configs {
		// The built-in gopls on a file of the project's own module works
		// on the project, as idebridge mcp's does, whose configuration
		// says so with "": the same Project, so that they share it.
		if c.WorkspaceFolder != "" && filepath.Clean(c.WorkspaceFolder) == wd {
			configs[i].WorkspaceFolder = ""
		}
	}
	return &navRuntime{
		opts:    &warm.Options{Env: inv.environ(), Start: start},
		project: runtimeProject(wd, configs),
	}, nil
}

// runtimeProject is the project of a directory in the runtime, the same
// for `idebridge mcp` and the navigation commands, so that they share its
// language servers.
func runtimeProject(dir string, configs []lsp.ServerConfig) *warm.Project {
	return &warm.Project{Dir: dir, Configs: configs, NoIDE: true, NoIDEReason: runtimeNoIDE, ServerVersion: serverVersion}
}

// tuneBuiltinGopls sets the options of the built-in gopls: it holds its
// analysis back for a second after a change; diagnostics waits for that
// pass, so it should not idle.
func tuneBuiltinGopls(configs []lsp.ServerConfig, origins map[string]string) {
	for i, c := range configs {
		if strings.HasPrefix(origins[c.Name], "built in") {
			configs[i].InitializationOptions = json.RawMessage(`{"verboseWorkDoneProgress":true,"diagnosticsDelay":"0s"}`)
		}
	}
}

// navigate runs a read-only request: through the runtime when the command
// goes through it, else (or when the runtime cannot be reached, which
// the log says) on this process's manager.
func (s *navSession) navigate(ctx context.Context, req lsp.NavRequest) (lsp.NavResult, error) {
	if s.rt != nil && !s.rt.failed {
		res, _, err := warm.Navigate(ctx, s.rt.opts, s.rt.project, req)
		var ne *warm.NavError
		if err == nil || errors.As(err, &ne) || ctx.Err() != nil {
			return res, err
		}
		s.rt.failed = true
		if !s.o.quiet {
			fmt.Fprintf(s.inv.Stderr, "%s: note: no runtime (%v); running in this process\n", s.name, err)
		}
	}
	m, err := s.local()
	if err != nil {
		return nil, err
	}
	return m.Navigate(ctx, req)
}
