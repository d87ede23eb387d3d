package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/mcp"
)

// serverVersion is the version `idebridge mcp` reports to MCP clients and
// IDEs.
const serverVersion = "0.1.0"

func init() {
	register(&command{
		Name:    "mcp",
		Usage:   "[--project DIR] [--config FILE] [--no-ide] [-v]",
		Summary: "serve the project's language servers and the user's IDE to any MCP client, over stdio",
		Help: "An MCP server on standard input and output (newline-delimited JSON-RPC, MCP's\n" +
			"stdio transport) for MCP clients such as Claude Code, Codex, Gemini CLI or goose.\n" +
			"Its tools: diagnostics (the language servers' errors and warnings for files)\n" +
			"and, when the user's IDE is found, ide_selection, ide_open_editors,\n" +
			"ide_open_file, ide_diagnostics and propose_edit (a change shown in the IDE's\n" +
			"diff viewer, written only as the user accepts it).\n\n" +
			"Without --config, .go files are served by gopls, found through $GOPLS, PATH or\n" +
			"$(go env GOPATH)/bin; --config names a .lsp.json (a map from server name to\n" +
			"configuration, as in Claude Code plugins). The IDE is found as Claude Code finds\n" +
			"it: a lockfile in $CLAUDE_CONFIG_DIR/ide or ~/.claude/ide whose workspace holds\n" +
			"the project, exactly one usable; it is looked for when a tool needs it, so an IDE\n" +
			"started or restarted later is found. --no-ide, or CLAUDE_CODE_AUTO_CONNECT_IDE=0,\n" +
			"turns that off.\n\n" +
			"Standard output carries only the protocol. Standard error carries the log: its\n" +
			"first line names the project, the language servers (name, extensions, command)\n" +
			"and the IDE found (or why none); -v adds every MCP message received.\n\n" +
			"Register it with Claude Code: claude mcp add idebridge -- idebridge mcp\n" +
			"Exit status: 0 when the client ends the session (closes standard input), 1 on\n" +
			"a failure, 2 when no language server is configured, 64 bad usage.",
		Setup: func(fs *flag.FlagSet) runFunc {
			var o mcpFlags
			fs.StringVar(&o.project, "project", "", "the project directory (default: the working directory)")
			fs.StringVar(&o.config, "config", "", "a .lsp.json file configuring the language servers (default: gopls for .go)")
			fs.BoolVar(&o.noIDE, "no-ide", false, "never connect to the user's IDE")
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
	project string
	config  string
	noIDE   bool
	verbose bool
}

// mcpInstructions is the initialize result's advice to the model.
const mcpInstructions = "Code intelligence from the user's language servers and IDE. " +
	"Paths are relative to the project directory, or absolute; lines and columns are 1-based. " +
	"Call diagnostics after editing files to see the errors the edits introduced. " +
	"The ide_ tools and propose_edit need the user's IDE; without one they say why."

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
	logger := slog.New(slog.NewTextHandler(inv.Stderr, &slog.HandlerOptions{Level: level}))
	environ := inv.environ()

	configs, warnings, code := mcpConfigs(inv, dir, o.config)
	if code != exitOK {
		return code
	}
	srv, err := ideserver.New(&ideserver.Options{
		WorkspaceFolders:         []string{dir},
		NoLockfile:               true,
		NoDefaultTools:           true,
		ProtocolVersion:          mcp.ProtocolVersion,
		NegotiateProtocolVersion: true,
		ServerName:               "idebridge",
		ServerVersion:            serverVersion,
		Instructions:             mcpInstructions,
		Logger:                   logger,
	})
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		return exitFailure
	}
	defer srv.Close()
	d, err := ideserver.NewDiagnostics(srv, &ideserver.DiagnosticsOptions{Configs: configs, Env: environ, Logger: serverLogger(logger, o.verbose)})
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		return exitFailure
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		defer cancel()
		_ = d.Close(sctx)
	}()
	link := newIDELink(dir, environ, o.noIDE, logger)
	defer link.close()

	lctx, cancel := context.WithTimeout(ctx, ideConnectTimeout+time.Second)
	ide := link.describe(lctx)
	cancel()
	fmt.Fprintf(inv.Stderr, "%s: project %s; language servers: %s; IDE: %s\n", name, dir, describeServers(configs, environ), ide)
	for _, w := range warnings {
		fmt.Fprintf(inv.Stderr, "%s: warning: %s\n", name, w)
	}
	for _, p := range d.Manager().Problems() {
		fmt.Fprintf(inv.Stderr, "%s: warning: %v\n", name, p)
	}

	p := project{dir: dir}
	tools := []ideserver.Tool{diagnosticsTool(d, p)}
	tools = append(tools, ideTools(link, p)...)
	for _, t := range tools {
		if err := srv.RegisterTool(t); err != nil {
			fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
			return exitFailure
		}
	}
	err = srv.ServeStream(ctx, inv.Stdin, inv.Stdout)
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

// levelHandler drops records below its level.
type levelHandler struct {
	slog.Handler
	min slog.Level
}

func (h levelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

// mcpConfigs loads --config, or builds the gopls default for the project.
func mcpConfigs(inv *invocation, dir, configPath string) ([]lsp.ServerConfig, []string, int) {
	const name = "idebridge mcp"
	if configPath == "" {
		gopls, err := lsp.FindGopls(inv.Getenv)
		if err != nil {
			return []lsp.ServerConfig{}, []string{"no language server for .go files: " + err.Error()}, exitOK
		}
		cfg := lsp.GoplsConfig(gopls, dir)
		// gopls holds its analysis back for a second after a change;
		// diagnostics waits for that pass, so it should not idle.
		cfg.InitializationOptions = json.RawMessage(`{"verboseWorkDoneProgress":true,"diagnosticsDelay":"0s"}`)
		return []lsp.ServerConfig{cfg}, nil, exitOK
	}
	path := absIn(dir, configPath)
	configs, errs := lsp.LoadFile(path, &lsp.LoadOptions{ProjectDir: dir})
	var warnings []string
	for _, err := range errs {
		warnings = append(warnings, err.Error())
	}
	if len(configs) == 0 {
		for _, w := range warnings {
			fmt.Fprintf(inv.Stderr, "%s: warning: %s\n", name, w)
		}
		fmt.Fprintf(inv.Stderr, "%s: %s configures no usable language server\n", name, path)
		return nil, nil, exitUnavailable
	}
	return configs, warnings, exitOK
}

// absIn makes p absolute against dir.
func absIn(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
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
		cmd, err := resolveCommand(&c, environ)
		if err != nil {
			cmd = c.Command + " (not found)"
		}
		parts[i] = fmt.Sprintf("%s (%s: %s)", c.Name, strings.Join(exts, " "), cmd)
	}
	return strings.Join(parts, ", ")
}

// resolveCommand finds the executable a configuration starts: a bare name
// in the PATH of environ (the configuration's own PATH first), a relative
// path against its workspace folder.
func resolveCommand(c *lsp.ServerConfig, environ []string) (string, error) {
	name := c.Command
	if strings.ContainsRune(name, filepath.Separator) || strings.ContainsRune(name, '/') {
		if !filepath.IsAbs(name) {
			base := c.WorkspaceFolder
			if base == "" {
				base = c.ProjectDir
			}
			name = filepath.Join(base, name)
		}
		if st, err := os.Stat(name); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", &exec.Error{Name: c.Command, Err: exec.ErrNotFound}
		}
		return name, nil
	}
	path, ok := c.Env["PATH"]
	if !ok {
		for _, kv := range environ {
			if v, found := strings.CutPrefix(kv, "PATH="); found {
				path = v
				break
			}
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}
