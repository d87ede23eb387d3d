package main

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/lspdiag"
	"github.com/idebridge/idebridge/warm"
)

// `idebridge diag` through the user's runtime: the files are opened and
// settled on the project's shared language servers (warm.Diagnose), and
// what is new to this command drained through a memory of its own, so
// that it prints what it would print in its own process.

// useDiagRuntime tells whether diag goes through the runtime: by
// default, unless --no-runtime or IDEBRIDGE_RUNTIME=0 says not to.
// Windows has no runtime yet; a test binary never starts itself as one.
// Every flag of diag has its equivalent through the runtime (the server
// flags make the project's configuration, --timeout is the request's
// time and each Settle's, -q has no progress line to hide there).
func useDiagRuntime(inv *invocation, noRuntime bool) bool {
	return !noRuntime && !runtimeOff(inv) && !testing.Testing() && goruntime.GOOS != "windows"
}

// diagThroughRuntime runs diag's request in the runtime, filling files.
// done is false when the runtime could not be reached (said on standard
// error unless quiet): the caller runs the request itself, which is
// safe, since it writes nothing. A failure of the request itself ends
// the command with code.
func diagThroughRuntime(ctx context.Context, inv *invocation, wd string, set *serverSet, timeout time.Duration, quiet bool, files []*diagFile) (att *diag.Attachment, done bool, code int) {
	rt, err := newNavRuntime(inv, wd, set)
	if err != nil {
		if !quiet {
			fmt.Fprintf(inv.Stderr, "idebridge diag: note: no runtime (%v); running in this process\n", err)
		}
		return nil, false, exitOK
	}
	req := warm.DiagRequest{
		Files:  make([]string, len(files)),
		Settle: lsp.SettleOptions{Timeout: timeout, WaitForProgress: true},
		// The command's own limits (its process's registry's defaults),
		// not the runtime's MCP ones.
		Limits: lspdiag.ReaderOptions{MaxPerFile: lspdiag.DefaultMaxPerFile, MaxTotal: lspdiag.DefaultMaxTotal},
	}
	for i, f := range files {
		req.Files[i] = f.Path
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, _, err := warm.Diagnose(rctx, rt.opts, rt.project, req)
	var ne *warm.NavError
	switch {
	case err == nil:
	case errors.As(err, &ne) || ctx.Err() != nil:
		fmt.Fprintf(inv.Stderr, "idebridge diag: %v\n", err)
		return nil, true, exitFailure
	default:
		if !quiet {
			fmt.Fprintf(inv.Stderr, "idebridge diag: note: no runtime (%v); running in this process\n", err)
		}
		return nil, false, exitOK
	}
	for i, f := range files {
		r := res.Files[i]
		s := r.Settle // zero when the file was not settled, as in the process
		f.Server, f.err = r.Server, r.Err
		f.Version, f.Freshness, f.ElapsedMs = s.Version, s.Freshness, s.Elapsed.Milliseconds()
		f.Fresh, f.Reason, f.Status = s.Freshness.Fresh(), s.Reason, s.Status
	}
	return res.Attachment, true, exitOK
}
