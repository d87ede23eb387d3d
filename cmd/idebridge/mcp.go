package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/mcpserver"
)

// serverVersion is the version `idebridge mcp` reports to MCP clients and
// IDEs.
const serverVersion = "0.1.0"

func init() {
	register(&command{
		Name:    "mcp",
		Usage:   "[--project DIR] [--config FILE] [--plugin-dir DIR] [--marketplace DIR] [--no-plugins] [--no-ide] [--no-runtime] [-v]",
		Summary: "serve the project's language servers and the user's IDE to any MCP client, over stdio",
		Help: "An MCP server on standard input and output (newline-delimited JSON-RPC, MCP's\n" +
			"stdio transport) for MCP clients such as Claude Code, Codex, Gemini CLI or goose.\n" +
			"Its tools: diagnostics (the language servers' errors and warnings for files);\n" +
			"navigation on the same servers (definition, declaration, type_definition,\n" +
			"implementation, references, hover, document_symbols, workspace_symbols,\n" +
			"call_hierarchy, rename); and, when the user's IDE is found, ide_selection,\n" +
			"ide_open_editors, ide_open_file, ide_diagnostics and propose_edit (a change\n" +
			"shown in the IDE's diff viewer, written only as the user accepts it; rename\n" +
			"goes through the same review).\n\n" +
			sourcesHelp + " The project is\n" +
			"--project, or the working directory.\n\n" +
			"The IDE is found as Claude Code finds it: a lockfile in $CLAUDE_CONFIG_DIR/ide or\n" +
			"~/.claude/ide whose workspace holds the project, exactly one usable. It is\n" +
			"looked for when a tool needs it, so an IDE started or restarted later is found.\n" +
			"--no-ide, or CLAUDE_CODE_AUTO_CONNECT_IDE=0, turns that off.\n\n" +
			"By default the session goes through the user's shared runtime (`idebridge runtime\n" +
			"status`), started on first use: every client on one project shares its language\n" +
			"servers, already warm. --no-runtime, or IDEBRIDGE_RUNTIME=0, serves the session in\n" +
			"this process instead, as do --http and --socket; so does a runtime that cannot be\n" +
			"reached (the log says why). Through the runtime, -v's messages go to its log.\n\n" +
			"Standard output carries only the protocol. Standard error carries the log: its\n" +
			"first line names the project, the language servers (name, extensions, command)\n" +
			"and the IDE found (or why none); -v adds every MCP message received.\n\n" +
			"Register it with Claude Code: claude mcp add idebridge -- idebridge mcp\n" +
			"Exit status: 0 when the client ends the session (closes standard input) or\n" +
			"on SIGINT, SIGTERM or SIGHUP; 1 on a failure; 2 when the servers that --config,\n" +
			"--plugin-dir or --marketplace name do not load; 64 bad usage.",
		Setup: func(fs *flag.FlagSet) runFunc {
			var o mcpFlags
			fs.StringVar(&o.project, "project", "", "the project directory (default: the working directory)")
			o.src.register(fs)
			fs.BoolVar(&o.noIDE, "no-ide", false, "never connect to the user's IDE")
			fs.BoolVar(&o.noRuntime, "no-runtime", false, "serve the session in this process, not through the user's shared runtime")
			o.http.register(fs)
			fs.BoolVar(&o.verbose, "v", false, "log every MCP message received, and the servers' messages, to standard error")
			return func(ctx context.Context, inv *invocation, args []string) int {
				if len(args) > 0 {
					fmt.Fprintf(inv.Stderr, "idebridge mcp: unexpected argument %q\n", args[0])
					return exitUsage
				}
				return runMCP(ctx, inv, &o)
			}
		},
	})
}

type mcpFlags struct {
	project   string
	src       serverSources
	noIDE     bool
	noRuntime bool
	verbose   bool
	// runtimeNote says why the session is served in this process though
	// it could have gone through the runtime.
	runtimeNote string
	http        mcpHTTPFlags // mcp_http.go
}

func runMCP(ctx context.Context, inv *invocation, o *mcpFlags) int {
	const name = "idebridge mcp"
	wd, err := inv.Getwd()
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: working directory: %v\n", name, err)
		return exitFailure
	}
	dir := wd
	if o.project != "" {
		dir = absIn(wd, o.project)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		fmt.Fprintf(inv.Stderr, "%s: --project %s is not a directory\n", name, dir)
		return exitUsage
	}
	level := slog.LevelInfo
	if o.verbose {
		level = slog.LevelDebug
	}
	// Records made before the first line (which says what was found) are
	// held, then written after it.
	gate := &startGate{}
	logger := slog.New(&gateHandler{slog.NewTextHandler(inv.Stderr, &slog.HandlerOptions{Level: level}), gate})
	environ := inv.environ()

	set, code := mcpServers(inv, dir, &o.src)
	if code != exitOK {
		return code
	}
	configs := set.configs
	if useRuntime(inv, o) {
		code, served := runMCPRuntime(ctx, inv, o, dir, set)
		if served {
			return code
		}
	}
	srv, err := mcpserver.New(&mcpserver.Options{
		ProjectDir:    dir,
		Configs:       configs,
		Env:           environ,
		NoIDE:         o.noIDE,
		NoIDEReason:   "idebridge mcp was started with --no-ide",
		Logger:        logger,
		ServerLogger:  serverLogger(logger, o.verbose),
		ServerVersion: serverVersion,
	})
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		return exitFailure
	}
	defer srv.Close()

	ide := srv.IDEStatus(ctx)
	httpNote, code := o.http.start(inv, dir, srv.Underlying())
	if code != exitOK {
		return code
	}
	defer o.http.stop()
	fmt.Fprintf(inv.Stderr, "%s: project %s; language servers: %s; IDE: %s%s\n", name, dir, describeServers(configs, environ), ide, httpNote)
	gate.release(ctx)
	if o.runtimeNote != "" {
		fmt.Fprintf(inv.Stderr, "%s: %s\n", name, o.runtimeNote)
	}
	set.printWarnings(inv.Stderr, name)
	if set.goplsErr != nil {
		fmt.Fprintf(inv.Stderr, "%s: warning: no language server for .go files: %v\n", name, set.goplsErr)
	}
	err = o.http.serve(ctx, inv, srv.Underlying())
	switch {
	case err == nil, errors.Is(err, context.Canceled):
		return exitOK
	case errors.Is(err, io.ErrClosedPipe):
		return exitOK // the client went away
	}
	fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
	return exitFailure
}

// serverLogger is the language servers' logger: their messages only with
// -v, the manager's warnings always.
func serverLogger(l *slog.Logger, verbose bool) *slog.Logger {
	if verbose {
		return l
	}
	return slog.New(levelHandler{l.Handler(), slog.LevelWarn})
}

// startGate holds log records until release.
type startGate struct {
	mu   sync.Mutex
	open bool
	held []heldRecord
}

type heldRecord struct {
	h slog.Handler
	r slog.Record
}

// maxHeld bounds the records held before release.
const maxHeld = 1000

// release writes the held records, in order, and lets later ones through.
func (g *startGate) release(ctx context.Context) {
	g.mu.Lock()
	held := g.held
	g.held, g.open = nil, true
	g.mu.Unlock()
	for _, h := range held {
		_ = h.h.Handle(ctx, h.r)
	}
}

// gateHandler sends records to its handler once its gate is open.
type gateHandler struct {
	inner slog.Handler
	gate  *startGate
}

func (h *gateHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h *gateHandler) Handle(ctx context.Context, r slog.Record) error {
	g := h.gate
	g.mu.Lock()
	if !g.open {
		if len(g.held) < maxHeld {
			g.held = append(g.held, heldRecord{h.inner, r.Clone()})
		}
		g.mu.Unlock()
		return nil
	}
	g.mu.Unlock()
	return h.inner.Handle(ctx, r)
}

func (h *gateHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &gateHandler{h.inner.WithAttrs(as), h.gate}
}

func (h *gateHandler) WithGroup(name string) slog.Handler {
	return &gateHandler{h.inner.WithGroup(name), h.gate}
}

// levelHandler drops records below its level.
type levelHandler struct {
	slog.Handler
	min slog.Level
}

func (h levelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

// mcpServers loads the servers the flags choose for the project (see
// serverSources), the built-in gopls tuned for waiting on its analysis.
// It fails only when the flags named servers and none of them loaded.
func mcpServers(inv *invocation, dir string, src *serverSources) (*serverSet, int) {
	set := loadServers(inv, dir, src, nil)
	if src.explicit() && set.fromFlags() == 0 {
		set.printWarnings(inv.Stderr, "idebridge mcp")
		what := "what --config, --plugin-dir and --marketplace name"
		if len(src.pluginDirs) == 0 && len(src.marketplaces) == 0 {
			what = absIn(dir, src.config)
		}
		fmt.Fprintf(inv.Stderr, "idebridge mcp: %s configures no usable language server\n", what)
		return nil, exitUnavailable
	}
	tuneBuiltinGopls(set.configs, set.origins)
	return set, exitOK
}

// describeServers names each server with its extensions and the command
// it runs, resolved as it will be started.
func describeServers(configs []lsp.ServerConfig, environ []string) string {
	if len(configs) == 0 {
		return "none"
	}
	parts := make([]string, len(configs))
	for i, c := range configs {
		exts := make([]string, 0, len(c.ExtensionToLanguage))
		for e := range c.ExtensionToLanguage {
			exts = append(exts, e)
		}
		slices.Sort(exts)
		cmd, err := c.ResolveCommand(environ)
		if err != nil {
			cmd = c.Command + " (not found)"
		}
		parts[i] = fmt.Sprintf("%s (%s: %s)", c.Name, strings.Join(exts, " "), cmd)
	}
	return strings.Join(parts, ", ")
}
