package main

import (
	"context"
	"encoding/json"
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
		Usage:   "[--config FILE] [--json] [--timeout D] FILE...",
		Summary: "print the language-server diagnostics of files",
		Help: "Opens each FILE in the language server that serves its extension, waits until\n" +
			"its diagnostics are known (see --timeout), and prints them as the block a model\n" +
			"would get. Without --config, .go files are served by gopls, found through\n" +
			"$GOPLS, PATH or $(go env GOPATH)/bin. --config names a .lsp.json (a map from\n" +
			"server name to configuration, as in Claude Code plugins).\n\n" +
			"Exit status: 0 when every file was checked, even if diagnostics were found;\n" +
			"1 when a server failed; 2 when no server can serve a file (the message says\n" +
			"why and what to do); 64 bad usage.",
		Setup: func(fs *flag.FlagSet) runFunc {
			config := fs.String("config", "", "a .lsp.json file configuring the servers (default: gopls for .go)")
			asJSON := fs.Bool("json", false, "print JSON: {\"attachment\": the diagnostics (null if none), \"files\": [{path,\nserver, version, freshness, elapsedMs, error}]}")
			timeout := fs.Duration("timeout", time.Minute, "how long the command may take, servers' start and shutdown included")
			return func(ctx context.Context, inv *invocation, args []string) int {
				if len(args) == 0 {
					fmt.Fprintln(inv.Stderr, "idebridge diag: no files given")
					return exitUsage
				}
				if *timeout <= 0 {
					fmt.Fprintln(inv.Stderr, "idebridge diag: --timeout must be positive")
					return exitUsage
				}
				return runDiag(ctx, inv, *config, *asJSON, *timeout, args)
			}
		},
	})
}

// diagFile is the outcome for one file, as --json prints it.
type diagFile struct {
	Path      string        `json:"path"`
	Server    string        `json:"server,omitempty"`
	Version   int           `json:"version,omitempty"`
	Freshness lsp.Freshness `json:"freshness"`
	ElapsedMs int64         `json:"elapsedMs"`
	Error     string        `json:"error,omitempty"`

	err error
}

func runDiag(ctx context.Context, inv *invocation, configPath string, asJSON bool, timeout time.Duration, args []string) int {
	wd, err := inv.Getwd()
	if err != nil {
		fmt.Fprintf(inv.Stderr, "idebridge diag: %v\n", err)
		return exitFailure
	}
	configs, code := diagConfigs(inv, wd, configPath, args)
	if code != exitOK {
		return code
	}
	environ := make([]string, 0, len(inv.Env))
	for k, v := range inv.Env {
		environ = append(environ, k+"="+v)
	}
	sort.Strings(environ)
	m := lsp.NewManager(configs, &lsp.ManagerOptions{
		ProjectDir:      wd,
		Environ:         environ,
		SettleTimeout:   timeout,
		WaitForProgress: true, // one shot: wait for analysis results too
	})
	// One deadline covers the whole command, the servers' shutdown too: a
	// server still stuck when it passes gets diagShutdownGrace, then is killed.
	deadline := time.Now().Add(timeout)
	defer func() {
		sctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), later(deadline, time.Now().Add(diagShutdownGrace)))
		defer cancel()
		_ = m.Shutdown(sctx)
	}()
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	files := make([]*diagFile, len(args))
	for i, a := range args {
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(wd, p)
		}
		files[i] = &diagFile{Path: p}
	}
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
	}
	att, _ := m.Drain()

	code = exitOK
	for _, f := range files {
		if f.err == nil {
			continue
		}
		f.Error = f.err.Error()
		switch {
		case errors.Is(f.err, lsp.ErrNoServer):
			code = exitUnavailable
		case code == exitOK:
			code = exitFailure
		}
	}
	if asJSON {
		out := struct {
			Attachment *diag.Attachment `json:"attachment"`
			Files      []*diagFile      `json:"files"`
		}{att, files}
		enc := json.NewEncoder(inv.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(inv.Stderr, "idebridge diag: %v\n", err)
			return exitFailure
		}
	} else {
		printDiag(inv.Stdout, wd, att, files)
	}
	for _, f := range files {
		if f.err != nil {
			fmt.Fprintf(inv.Stderr, "idebridge diag: %s\n", diagAdvice(f.err, configPath))
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

// diagConfigs loads --config, or builds the gopls default, working on the
// module of the first .go file.
func diagConfigs(inv *invocation, wd, configPath string, files []string) ([]lsp.ServerConfig, int) {
	if configPath == "" {
		gopls, err := lsp.FindGopls(inv.Getenv)
		if err != nil {
			// Files other than .go still get a clear "no server" below.
			return nil, exitOK
		}
		cfg := lsp.GoplsConfig(gopls, wd)
		for _, f := range files {
			if strings.EqualFold(filepath.Ext(f), ".go") {
				if !filepath.IsAbs(f) {
					f = filepath.Join(wd, f)
				}
				cfg.WorkspaceFolder = moduleRoot(filepath.Dir(f), wd)
				break
			}
		}
		return []lsp.ServerConfig{cfg}, exitOK
	}
	if !filepath.IsAbs(configPath) {
		configPath = filepath.Join(wd, configPath)
	}
	configs, errs := lsp.LoadFile(configPath, &lsp.LoadOptions{ProjectDir: wd})
	for _, err := range errs {
		fmt.Fprintf(inv.Stderr, "idebridge diag: warning: %v\n", err)
	}
	if len(configs) == 0 {
		fmt.Fprintf(inv.Stderr, "idebridge diag: %s configures no usable language server\n", configPath)
		return nil, exitUnavailable
	}
	return configs, exitOK
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

// diagAdvice explains an error and, where it can, what to do.
func diagAdvice(err error, configPath string) string {
	var ne *lsp.NoServerError
	if errors.As(err, &ne) && configPath == "" {
		if ne.Extension == ".go" {
			return fmt.Sprintf("no language server for %s: %v", ne.Path, lsp.ErrGoplsNotFound)
		}
		return fmt.Sprintf("no language server for %s: without --config only .go files are served (by gopls); "+
			"pass --config with a .lsp.json for other languages", ne.Path)
	}
	return err.Error()
}

// printDiag prints the rendered block, or says that there is nothing new,
// and how each checked file's diagnostics were known (a timed-out file is
// also named in the block's notes).
func printDiag(w io.Writer, wd string, att *diag.Attachment, files []*diagFile) {
	var status []string
	for _, f := range files {
		if f.err != nil {
			continue
		}
		rel, err := filepath.Rel(wd, f.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = f.Path
		}
		status = append(status, fmt.Sprintf("%s (%s, %s)", filepath.ToSlash(rel), f.Server, f.Freshness))
	}
	if out := att.Render(&diag.RenderOptions{ProjectDir: wd}); out != "" {
		fmt.Fprintln(w, out)
	} else if len(status) > 0 {
		fmt.Fprintln(w, "No diagnostics.")
	}
	if len(status) > 0 {
		fmt.Fprintf(w, "Checked: %s\n", strings.Join(status, ", "))
	}
}
