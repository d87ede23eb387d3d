package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf16"

	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/mcp"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/lockfile"
)

func init() {
	register(&command{
		Name:    "ide serve",
		Usage:   "[--workspace DIR]... [--transport ws|sse] [--diff accept|reject|prompt] [--lsp-config FILE] [--diagnostics-wait D] [--selection FILE:LINE] [--port N] [--lockfile-dir DIR] [--unconfined] [-v]",
		Summary: "run a headless IDE that agents connect to, until interrupted",
		Help: "Serves the workspace folders as an IDE would: writes a lockfile (mode 0600) that\n" +
			"agents discover, and answers MCP over WebSocket (or legacy SSE) on 127.0.0.1 with\n" +
			"the default tools: openFile, openDiff, close_tab, closeAllDiffTabs,\n" +
			"getWorkspaceFolders, getOpenEditors, checkDocumentDirty, saveDocument,\n" +
			"getCurrentSelection and getLatestSelection (what openFile last selected), and\n" +
			"getDiagnostics, answered by language servers: gopls for .go files (found\n" +
			"through $GOPLS, PATH or $(go env GOPATH)/bin), or the servers of --lsp-config\n" +
			"(a .lsp.json, as in Claude Code plugins). Each call re-reads the file from disk,\n" +
			"so an agent that writes a file and asks at once gets the new diagnostics.\n" +
			"getDiagnostics waits at most --diagnostics-wait (default 5s) for the servers,\n" +
			"then answers with what they have, each file they had not finished with\n" +
			"carrying a \"note\" beside its diagnostics, as an editor answers at once.\n" +
			"\n" +
			"The first line of standard output is a JSON object with port, lockfile,\n" +
			"transport, workspaceFolders, url and pid. SIGINT, SIGTERM or SIGHUP stop the\n" +
			"server cleanly: pending diffs are rejected and the lockfile is removed.\n" +
			"\n" +
			"--diff decides openDiff: accept saves every proposal, reject rejects it, and\n" +
			"prompt (the default) shows the unified diff on standard error and asks y/n/e on\n" +
			"standard input; e opens $VISUAL or $EDITOR on the proposal. When standard input\n" +
			"is not a terminal, the default prompt rejects every diff, and an explicit\n" +
			"--diff prompt reads the answers from it, a line each (a script can pipe y/n);\n" +
			"at its end, prompt rejects every diff.\n" +
			"\n" +
			"--selection FILE:LINE sends every client, once it has initialized, a\n" +
			"selection_changed notification selecting that line (1-based) of FILE, as an\n" +
			"editor does when the user clicks, for testing agents.\n" +
			"\n" +
			"The tools serve only files inside the workspace folders (after resolving\n" +
			"symbolic links): other paths, ../ and file URIs of other hosts are refused.\n" +
			"--unconfined lets them reach any file of this machine.\n" +
			"\n" +
			"-v logs every MCP message received (method, id, client, and the tool of a\n" +
			"tools/call) to standard error as JSON lines; without it only warnings (refused\n" +
			"connections) are logged.",
		Setup: func(fs *flag.FlagSet) runFunc {
			var o serveFlags
			fs.Var(&o.workspaces, "workspace", "a workspace folder; repeat for several (default: the working directory)")
			fs.StringVar(&o.transport, "transport", lockfile.TransportWS, "ws (WebSocket) or sse (legacy Server-Sent Events)")
			fs.StringVar(&o.diff, "diff", "prompt", "how openDiff is decided: accept, reject or prompt")
			fs.IntVar(&o.port, "port", 0, "the port to listen on (default: a free port)")
			fs.StringVar(&o.lockfileDir, "lockfile-dir", "", "where to write the lockfile (default: $CLAUDE_CONFIG_DIR/ide or ~/.claude/ide)")
			fs.StringVar(&o.ideName, "ide-name", ideserver.DefaultIDEName, "the ideName written in the lockfile")
			fs.BoolVar(&o.unconfined, "unconfined", false, "let the tools reach files outside the workspace folders")
			fs.BoolVar(&o.verbose, "v", false, "log every MCP message received to standard error (JSON lines)")
			fs.StringVar(&o.lspConfig, "lsp-config", "", "a .lsp.json configuring the language servers behind getDiagnostics (default: gopls for .go)")
			fs.StringVar(&o.selection, "selection", "", "FILE:LINE to announce as the user's selection (selection_changed) to each client")
			fs.DurationVar(&o.diagWait, "diagnostics-wait", ideserver.DefaultAnswerTimeout, "how long getDiagnostics waits for the language servers before it answers with what they have")
			return func(ctx context.Context, inv *invocation, args []string) int {
				if len(args) > 0 {
					fmt.Fprintf(inv.Stderr, "idebridge ide serve: unexpected argument %q\n", args[0])
					return exitUsage
				}
				fs.Visit(func(f *flag.Flag) { o.diffGiven = o.diffGiven || f.Name == "diff" })
				return ideServe(ctx, inv, &o)
			}
		},
	})
}

type serveFlags struct {
	workspaces  stringList
	transport   string
	diff        string
	diffGiven   bool // --diff was on the command line
	port        int
	lockfileDir string
	ideName     string
	verbose     bool
	unconfined  bool
	lspConfig   string
	selection   string
	diagWait    time.Duration // DiagnosticsOptions.AnswerTimeout
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// serveInfo is the first line ide serve prints.
type serveInfo struct {
	Port             int      `json:"port"`
	Lockfile         string   `json:"lockfile"`
	Transport        string   `json:"transport"`
	WorkspaceFolders []string `json:"workspaceFolders"`
	URL              string   `json:"url"`
	PID              int      `json:"pid"`
}

// shutdownGrace bounds how long running tool calls and language servers
// may take to finish at exit; shutdownHardStop is how long ide serve then
// gives language servers to die and calls that ignore their cancellation
// to return before it exits anyway.
const (
	shutdownGrace    = 5 * time.Second
	shutdownHardStop = time.Second
)

func ideServe(ctx context.Context, inv *invocation, o *serveFlags) int {
	const name = "idebridge ide serve"
	switch o.transport {
	case lockfile.TransportWS, lockfile.TransportSSE:
	default:
		fmt.Fprintf(inv.Stderr, "%s: --transport must be ws or sse, not %q\n", name, o.transport)
		return exitUsage
	}
	if o.diagWait <= 0 {
		fmt.Fprintf(inv.Stderr, "%s: --diagnostics-wait must be positive, not %v\n", name, o.diagWait)
		return exitUsage
	}
	wd, err := inv.Getwd()
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: working directory: %v\n", name, err)
		return exitFailure
	}
	folders := []string{wd}
	if len(o.workspaces) > 0 {
		folders = folders[:0]
		for _, w := range o.workspaces {
			if !filepath.IsAbs(w) {
				w = filepath.Join(wd, w)
			}
			folders = append(folders, filepath.Clean(w))
		}
	}
	policy, note, ok := diffPolicy(inv, o.diff, o.diffGiven)
	if !ok {
		fmt.Fprintf(inv.Stderr, "%s: --diff must be accept, reject or prompt, not %q\n", name, o.diff)
		return exitUsage
	}
	if note != "" {
		fmt.Fprintf(inv.Stderr, "%s: %s\n", name, note)
	}
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewJSONHandler(inv.Stderr, &slog.HandlerOptions{Level: level}))
	lockDir := o.lockfileDir
	if lockDir != "" && !filepath.IsAbs(lockDir) {
		lockDir = filepath.Join(wd, lockDir)
	}
	var sel *selectionParams
	if o.selection != "" {
		if sel, err = parseSelection(wd, o.selection); err != nil {
			fmt.Fprintf(inv.Stderr, "%s: --selection: %v\n", name, err)
			return exitUsage
		}
	}
	var srv *ideserver.Server
	var announce sync.WaitGroup
	defer announce.Wait()
	onEvent := func(ev ideserver.Event) {
		if sel == nil || ev.Kind != ideserver.EventInitialized {
			return
		}
		// OnEvent must not block: Notify waits for every client.
		announce.Add(1)
		go func() {
			defer announce.Done()
			_ = srv.Notify(mcp.MethodSelectionChanged, sel) // fails only once closed
		}()
	}
	srv, err = ideserver.New(&ideserver.Options{
		WorkspaceFolders: folders,
		IDEName:          o.ideName,
		Transport:        o.transport,
		Port:             o.port,
		LockfileDir:      lockDir,
		Getenv:           inv.Getenv,
		Logger:           logger,
		DiffPolicy:       policy,
		OnEvent:          onEvent,
		Unconfined:       o.unconfined,
	})
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		return exitUsage
	}
	diags, code := serveDiagnostics(inv, srv, wd, o, logger)
	if code != exitOK {
		return code
	}
	// main stops on SIGINT; a headless IDE must also clean up when its
	// terminal goes away or a supervisor stops it.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if err := srv.Start(ctx); err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		closeDiagnostics(diags)
		return exitFailure
	}
	info := serveInfo{
		Port:             srv.Port(),
		Lockfile:         srv.LockfilePath(),
		Transport:        srv.Transport(),
		WorkspaceFolders: srv.WorkspaceFolders(),
		URL:              srv.URL(),
		PID:              os.Getpid(),
	}
	line, _ := json.Marshal(info) // plain strings and ints: cannot fail
	if _, err := fmt.Fprintf(inv.Stdout, "%s\n", line); err != nil {
		srv.Close()
		closeDiagnostics(diags)
		fmt.Fprintf(inv.Stderr, "%s: writing to standard output: %v\n", name, err)
		return exitFailure
	}
	<-ctx.Done()
	// From here a second signal has its default effect.
	stop()
	return serveShutdown(inv, srv, diags)
}

// serveShutdown stops the server and its language servers within
// shutdownGrace: running calls may finish until then (pending diffs are
// rejected at once), then they are cancelled and the language servers
// killed. Whatever a call is doing, it returns soon after (at most
// 2*shutdownHardStop later), so the process ends; the lockfile is removed
// and the port closed first of all.
func serveShutdown(inv *invocation, srv *ideserver.Server, diags *ideserver.Diagnostics) int {
	const name = "idebridge ide serve"
	deadline := time.Now().Add(shutdownGrace)
	sctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Shutdown(sctx) }()
	var errs []error
	finished := false
	select {
	case err := <-srvDone:
		errs, finished = append(errs, err), true
	case <-sctx.Done():
	}
	// The language servers get what is left of the grace, or are killed
	// at once when calls held it all.
	dctx, dcancel := context.WithDeadline(context.Background(), later(deadline, time.Now().Add(shutdownHardStop)))
	defer dcancel()
	errs = append(errs, diags.Close(dctx))
	if !finished {
		select {
		case err := <-srvDone:
			errs = append(errs, err)
		case <-time.After(shutdownHardStop):
			fmt.Fprintf(inv.Stderr, "%s: tool calls still running after %v ignore their cancellation; exiting without them\n", name, shutdownGrace)
			return exitFailure
		}
	}
	for _, err := range errs {
		// Calls still running at the deadline were cancelled, and servers
		// that did not stop were killed: expected, not a failure.
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			fmt.Fprintf(inv.Stderr, "%s: shutting down: %v\n", name, err)
			return exitFailure
		}
	}
	return exitOK
}

// closeDiagnostics stops the language servers on an early exit.
func closeDiagnostics(diags *ideserver.Diagnostics) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	_ = diags.Close(ctx) // kills what does not stop in time
}

// stdinIsTerminal reports whether r is an interactive terminal; a variable
// so that tests can drive the prompt through a pipe.
var stdinIsTerminal = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// diffPolicy maps --diff to a policy, with a note for the user when prompt
// cannot ask. A prompt asked for on the command line (given) reads its
// answers from standard input even when that is not a terminal.
func diffPolicy(inv *invocation, mode string, given bool) (ideserver.DiffPolicy, string, bool) {
	switch mode {
	case "accept":
		return ideserver.AcceptDiffs, "", true
	case "reject":
		return ideserver.RejectDiffs, "", true
	case "prompt":
		if !given && !stdinIsTerminal(inv.Stdin) {
			return ideserver.RejectDiffs, "standard input is not a terminal: every diff will be rejected (use --diff accept or reject to choose)", true
		}
		var opts ideserver.PromptOptions
		if editor := firstNonEmpty(inv.Getenv("VISUAL"), inv.Getenv("EDITOR")); editor != "" {
			opts.Edit = func(ctx context.Context, req *ideserver.DiffRequest) (string, error) {
				return editProposal(ctx, inv, editor, req)
			}
		}
		return ideserver.NewPromptPolicy(inv.Stdin, inv.Stderr, &opts), "", true
	}
	return nil, "", false
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// editProposal opens the proposed text in the user's editor (a command line
// such as "vim" or "code --wait") and returns what the user saved.
func editProposal(ctx context.Context, inv *invocation, editor string, req *ideserver.DiffRequest) (string, error) {
	f, err := os.CreateTemp("", "idebridge-*-"+filepath.Base(req.NewPath))
	if err != nil {
		return "", fmt.Errorf("editing the proposal: %w", err)
	}
	path := f.Name()
	defer os.Remove(path)
	_, werr := io.WriteString(f, req.NewContents)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", fmt.Errorf("editing the proposal: %w", werr)
	}
	argv := strings.Fields(editor)
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], path)...)
	// The editor gets the terminal itself; any other reader would be
	// copied by a goroutine that outlives the editor, taking input from
	// the prompt.
	if f, ok := inv.Stdin.(*os.File); ok {
		cmd.Stdin = f
	}
	cmd.Stdout, cmd.Stderr = inv.Stderr, inv.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("running %s: %w", editor, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the edited proposal: %w", err)
	}
	return string(b), nil
}

// serveDiagnostics registers getDiagnostics backed by the language servers
// of lspConfig, or by gopls; without gopls it warns and answers every file
// with an empty list.
func serveDiagnostics(inv *invocation, srv *ideserver.Server, wd string, o *serveFlags, logger *slog.Logger) (*ideserver.Diagnostics, int) {
	const name = "idebridge ide serve"
	lspConfig := o.lspConfig
	environ := make([]string, 0, len(inv.Env))
	for k, v := range inv.Env {
		environ = append(environ, k+"="+v)
	}
	sort.Strings(environ)
	opts := &ideserver.DiagnosticsOptions{Env: environ, Logger: logger, AnswerTimeout: o.diagWait}
	if lspConfig != "" {
		if !filepath.IsAbs(lspConfig) {
			lspConfig = filepath.Join(wd, lspConfig)
		}
		configs, errs := lsp.LoadFile(lspConfig, &lsp.LoadOptions{ProjectDir: srv.WorkspaceFolders()[0]})
		for _, err := range errs {
			fmt.Fprintf(inv.Stderr, "%s: warning: %v\n", name, err)
		}
		if len(configs) == 0 {
			fmt.Fprintf(inv.Stderr, "%s: %s configures no usable language server\n", name, lspConfig)
			return nil, exitUnavailable
		}
		opts.Configs = configs
	}
	diags, err := ideserver.NewDiagnostics(srv, opts)
	if errors.Is(err, lsp.ErrGoplsNotFound) {
		fmt.Fprintf(inv.Stderr, "%s: warning: getDiagnostics will find nothing in .go files: %v\n", name, err)
		opts.Configs = []lsp.ServerConfig{}
		diags, err = ideserver.NewDiagnostics(srv, opts)
	}
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		return nil, exitUnavailable
	}
	if err := srv.RegisterTool(diags.Tool()); err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		return nil, exitFailure
	}
	return diags, exitOK
}

// selectionParams is a selection_changed notification's params.
type selectionParams struct {
	Text      string         `json:"text"`
	FilePath  string         `json:"filePath"`
	FileURL   string         `json:"fileUrl"`
	Selection selectionRange `json:"selection"`
}

type selectionRange struct {
	Start   selectionPos `json:"start"`
	End     selectionPos `json:"end"`
	IsEmpty bool         `json:"isEmpty"`
}

type selectionPos struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// parseSelection reads FILE:LINE (LINE 1-based) and selects that whole
// line, its end counted in UTF-16 units as editors count columns.
func parseSelection(wd, spec string) (*selectionParams, error) {
	i := strings.LastIndexByte(spec, ':')
	if i <= 0 {
		return nil, fmt.Errorf("want FILE:LINE, got %q", spec)
	}
	line, err := strconv.Atoi(spec[i+1:])
	if err != nil || line < 1 {
		return nil, fmt.Errorf("want FILE:LINE with LINE 1 or more, got %q", spec)
	}
	path := spec[:i]
	if !filepath.IsAbs(path) {
		path = filepath.Join(wd, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	if line > len(lines) || line == len(lines) && lines[line-1] == "" {
		return nil, fmt.Errorf("%s has no line %d", path, line)
	}
	text := strings.TrimSuffix(lines[line-1], "\r")
	width := len(utf16.Encode([]rune(text)))
	return &selectionParams{
		Text:     text,
		FilePath: path,
		FileURL:  (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String(),
		Selection: selectionRange{
			Start:   selectionPos{Line: line - 1},
			End:     selectionPos{Line: line - 1, Character: width},
			IsEmpty: width == 0,
		},
	}, nil
}
