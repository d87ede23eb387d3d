package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/idebridge/idebridge/diag"

	"github.com/idebridge/idebridge/lsp"
)

func init() {
	register(&command{
		Name:    "diag",
		Usage:   "[--config FILE] [--plugin-dir DIR] [--marketplace DIR] [--no-plugins] [--json] [--timeout D] [--no-runtime] [-q] FILE...",
		Summary: "print the language-server diagnostics of files",
		Help: "Opens each FILE in the language server that serves its extension, waits until\n" +
			"its diagnostics are known (see --timeout), and prints them as the block a model\n" +
			"would get.\n\n" + sourcesHelp + "\n\n" +
			"Each file's line says how its diagnostics were known to be current (its server\n" +
			"answered a pull for its text, published for its version, ended its work, or,\n" +
			"without versions, published and then went quiet), or that they are not.\n\n" +
			progressHelp + "\n\n" +
			"The files go to the user's shared runtime (see `idebridge runtime`), whose\n" +
			"language servers stay warm for the next command and for `idebridge mcp`;\n" +
			"what it prints is what the command prints in its own process: every\n" +
			"diagnostic of the files (and of the files the servers report on their own)\n" +
			"that stands, whatever other clients of the runtime were shown. --no-runtime,\n" +
			"or IDEBRIDGE_RUNTIME=0 in the environment, runs the servers in this process;\n" +
			"so does a runtime that cannot be reached, which standard error notes.\n\n" +
			"Each file's status is one of complete, partial (its server reported on it but\n" +
			"was still at work), unknown (its server reported nothing on it in time) or\n" +
			"server-down; \"No diagnostics.\" is printed only when every file is complete.\n\n" +
			"Exit status: 0 when every file's diagnostics are complete,\n" +
			"even if diagnostics were found; 3 when some file's are partial (may be stale or\n" +
			"incomplete); 4 when some file's are unknown (its server did not report on it\n" +
			"within --timeout); 1 when a server failed (server-down); 2 when no server can\n" +
			"serve a file (the message says why and what to do); 64 bad usage. 2 comes before\n" +
			"1, 1 before 4, and 4 before 3.",
		Setup: func(fs *flag.FlagSet) runFunc {
			var src serverSources
			src.register(fs)
			asJSON := fs.Bool("json", false, "print JSON: {\"attachment\": the diagnostics (null if none), \"files\": [{path,\nserver, version, freshness, fresh, status, reason, elapsedMs, error}]}")
			timeout := fs.Duration("timeout", time.Minute, "how long the command may take, servers' start and shutdown included")
			quiet := fs.Bool("q", false, "print no progress line on standard error")
			noRuntime := fs.Bool("no-runtime", false, "run the language servers in this process, not through the user's shared runtime")
			return func(ctx context.Context, inv *invocation, args []string) int {
				if len(args) == 0 {
					fmt.Fprintln(inv.Stderr, "idebridge diag: no files given")
					return exitUsage
				}
				if *timeout <= 0 {
					fmt.Fprintln(inv.Stderr, "idebridge diag: --timeout must be positive")
					return exitUsage
				}
				return runDiag(ctx, inv, &src, *asJSON, *timeout, *quiet, *noRuntime, args)
			}
		},
	})
}

// exitStale: some file's diagnostics are partial (lsp.StatusPartial):
// may be stale or incomplete.
const exitStale = 3

// exitUnknown: some file's diagnostics are unknown (lsp.StatusUnknown):
// its server reported nothing on it in time.
const exitUnknown = 4

// diagFile is the outcome for one file, as --json prints it.
type diagFile struct {
	Path      string        `json:"path"`
	Server    string        `json:"server,omitempty"`
	Version   int           `json:"version,omitempty"`
	Freshness lsp.Freshness `json:"freshness"`
	// Fresh: the diagnostics are known to be current (Freshness.Fresh).
	Fresh bool `json:"fresh"`
	// Status: complete, partial, unknown or server-down (lsp.Status).
	Status lsp.Status `json:"status,omitempty"`
	// Reason says how that was known, or why it was not.
	Reason    string `json:"reason,omitempty"`
	ElapsedMs int64  `json:"elapsedMs"`
	Error     string `json:"error,omitempty"`

	err error
}

func runDiag(ctx context.Context, inv *invocation, src *serverSources, asJSON bool, timeout time.Duration, quiet, noRuntime bool, args []string) int {
	wd, err := inv.Getwd()
	if err != nil {
		fmt.Fprintf(inv.Stderr, "idebridge diag: %v\n", err)
		return exitFailure
	}
	set, code := diagServers(inv, wd, src, args)
	if code != exitOK {
		return code
	}
	files := make([]*diagFile, len(args))
	for i, a := range args {
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(wd, p)
		}
		files[i] = &diagFile{Path: p}
	}
	var att *diag.Attachment
	done := false
	if useDiagRuntime(inv, noRuntime) {
		att, done, code = diagThroughRuntime(ctx, inv, wd, set, timeout, quiet, files)
		if code != exitOK {
			return code
		}
	}
	if !done {
		var shutdown func()
		att, shutdown, code = diagInProcess(ctx, inv, wd, set, timeout, quiet, files)
		if code != exitOK {
			return code
		}
		defer shutdown() // once the outcome is printed
	}
	return diagReport(inv, wd, set, asJSON, att, files)
}

// diagInProcess opens, settles and drains files on language servers of
// its own; shutdown stops them.
func diagInProcess(ctx context.Context, inv *invocation, wd string, set *serverSet, timeout time.Duration, quiet bool, files []*diagFile) (_ *diag.Attachment, shutdown func(), _ int) {
	configs := set.configs
	environ := make([]string, 0, len(inv.Env))
	for k, v := range inv.Env {
		environ = append(environ, k+"="+v)
	}
	sort.Strings(environ)
	progress := newProgressLine(inv, quiet)
	defer progress.Close()
	m, err := lsp.NewManager(configs, &lsp.ManagerOptions{
		ProjectDir:      wd,
		Env:             environ,
		SettleTimeout:   timeout,
		WaitForProgress: true, // one shot: wait for analysis results too
		OnEvent:         progress.onEvent(),
	})
	if err != nil {
		fmt.Fprintf(inv.Stderr, "idebridge diag: %v\n", err)
		return nil, nil, exitFailure
	}
	// One deadline covers the whole command, the servers' shutdown too: a
	// server still stuck when it passes gets diagShutdownGrace, then is killed.
	deadline := time.Now().Add(timeout)
	shutdown = func() {
		sctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), later(deadline, time.Now().Add(diagShutdownGrace)))
		defer cancel()
		_ = m.Shutdown(sctx)
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	// Open everything first, so that servers work on all files at once.
	for _, f := range files {
		if f.Server, f.err = m.ServerFor(f.Path); f.err == nil {
			f.err = m.Open(ctx, f.Path)
		}
	}
	for _, f := range files {
		if f.err != nil {
			continue
		}
		res, err := m.Settle(ctx, f.Path)
		f.Version, f.Freshness, f.ElapsedMs, f.err = res.Version, res.Freshness, res.Elapsed.Milliseconds(), err
		f.Fresh, f.Reason, f.Status = res.Freshness.Fresh(), res.Reason, res.Status
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			// --timeout ran out: not a failure, an answer.
			f.err = nil
		}
	}
	att, _ := m.Drain()
	progress.Close()
	return att, shutdown, exitOK
}

// diagReport prints the outcome and returns the exit status.
func diagReport(inv *invocation, wd string, set *serverSet, asJSON bool, att *diag.Attachment, files []*diagFile) int {
	code := exitOK
	for _, f := range files {
		if f.err == nil {
			switch {
			case f.Status == lsp.StatusComplete:
			case f.Status == lsp.StatusUnknown && (code == exitOK || code == exitStale):
				code = exitUnknown
			case code == exitOK:
				code = exitStale
			}
			continue
		}
		f.Error = f.err.Error()
		switch {
		case errors.Is(f.err, lsp.ErrNoServer):
			code = exitUnavailable
		case code == exitOK, code == exitStale, code == exitUnknown:
			code = exitFailure
		}
	}
	if asJSON {
		out := struct {
			Attachment *diag.Attachment `json:"attachment"`
			Files      []*diagFile      `json:"files"`
		}{att, files}
		if !inv.writeJSON("idebridge diag", out) {
			return exitFailure
		}
	} else {
		printDiag(inv.Stdout, wd, att, files)
	}
	for _, f := range files {
		if f.err != nil {
			fmt.Fprintf(inv.Stderr, "idebridge diag: %s\n", set.advice(f.err))
		}
	}
	return code
}

// diagShutdownGrace is how long diag waits for servers to exit once its
// deadline has passed.
const diagShutdownGrace = time.Second

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// moduleRoot returns the nearest directory at or above dir holding a
// go.mod, or fallback.
func moduleRoot(dir, fallback string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if st, err := os.Stat(filepath.Join(d, "go.mod")); err == nil && st.Mode().IsRegular() {
			return d
		}
		if filepath.Dir(d) == d {
			return fallback
		}
	}
}

// printDiag prints the rendered block, or says that there is nothing new,
// and for each checked file how its diagnostics were known to be current,
// or that they are not (such a file is also named in the block's notes).
// "No diagnostics." stands only when every file's are complete.
func printDiag(w io.Writer, wd string, att *diag.Attachment, files []*diagFile) {
	var lines []string
	stale := 0
	for _, f := range files {
		if f.err != nil {
			continue
		}
		rel, err := filepath.Rel(wd, f.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = f.Path
		}
		rel = filepath.ToSlash(rel)
		switch {
		case f.Status == lsp.StatusComplete:
			lines = append(lines, fmt.Sprintf("  %s (%s, %s): %s", rel, f.Server, f.Freshness, f.Reason))
			continue
		case f.Fresh:
			// Current for its version, but the server was still at work.
			lines = append(lines, fmt.Sprintf("  %s (%s, %s): MAY BE INCOMPLETE: %s", rel, f.Server, f.Freshness, f.Reason))
		default:
			lines = append(lines, fmt.Sprintf("  %s (%s, %s): NOT KNOWN TO BE CURRENT: %s", rel, f.Server, f.Freshness, f.Reason))
		}
		stale++
	}
	out := att.Render(&diag.RenderOptions{ProjectDir: wd})
	switch {
	case out != "":
		fmt.Fprintln(w, out)
	case len(lines) == 0:
	case stale == 0:
		fmt.Fprintln(w, "No diagnostics.")
	case stale == len(lines):
		fmt.Fprintln(w, "No diagnostics received, and none of the files' diagnostics are known to be current.")
	default:
		fmt.Fprintf(w, "No diagnostics received; %d of %d files' diagnostics are not known to be current.\n", stale, len(lines))
	}
	if len(lines) > 0 {
		fmt.Fprintln(w, "Checked:")
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	}
}
