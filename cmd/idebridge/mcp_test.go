package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/lsp"
)

// mcpTimeout bounds every wait of these tests; never an assertion about
// speed.
const mcpTimeout = 90 * time.Second

// mcpRun is `idebridge mcp` running in-process, driven over pipes as an
// MCP client drives the server it started.
type mcpRun struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan string
	stderr *syncBuffer
	done   chan int
	nextID int
}

// startMCP runs `idebridge mcp args...` in dir and performs the MCP
// handshake.
func startMCP(t *testing.T, dir string, env map[string]string, args ...string) *mcpRun {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &mcpRun{t: t, in: inW, lines: make(chan string, 64), stderr: &syncBuffer{}, done: make(chan int, 1)}
	inv := &invocation{Stdin: inR, Stdout: outW, Stderr: r.stderr, Env: env, Getwd: func() (string, error) { return dir, nil }}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		code := run(ctx, append([]string{"mcp"}, args...), inv)
		outW.Close()
		r.done <- code
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-r.done:
		case <-time.After(mcpTimeout):
			t.Errorf("idebridge mcp did not exit after its input closed")
		}
		cancel()
		outR.Close()
	})
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct{ Name string }
		Instructions    string
	}
	r.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "mcp-test", "version": "1"}}, &init)
	if init.ProtocolVersion != "2025-06-18" || init.ServerInfo.Name != "idebridge" || !strings.Contains(init.Instructions, "1-based") {
		t.Errorf("initialize answered %+v", init)
	}
	r.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return r
}

func (r *mcpRun) send(m map[string]any) {
	r.t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.in.Write(append(b, '\n')); err != nil {
		r.t.Fatalf("writing to idebridge mcp: %v\nstderr:\n%s", err, r.stderr)
	}
}

// request sends a request and decodes its result into v; a JSON-RPC error
// fails the test (the tools answer failures as results).
func (r *mcpRun) request(method string, params any, v any) {
	r.t.Helper()
	r.nextID++
	id := r.nextID
	r.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	timeout := time.After(mcpTimeout)
	for {
		select {
		case line, ok := <-r.lines:
			if !ok {
				r.t.Fatalf("idebridge mcp closed its output while %s was pending\nstderr:\n%s", method, r.stderr)
			}
			var m struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				r.t.Fatalf("idebridge mcp wrote a line that is not JSON: %q", line)
			}
			if m.ID == nil {
				continue // a notification
			}
			if *m.ID != id {
				r.t.Fatalf("an answer to request %d while %s (%d) was pending: %s", *m.ID, method, id, line)
			}
			if m.Error != nil {
				r.t.Fatalf("%s answered a protocol error %s", method, m.Error)
			}
			if err := json.Unmarshal(m.Result, v); err != nil {
				r.t.Fatalf("%s result %s: %v", method, m.Result, err)
			}
			return
		case <-timeout:
			r.t.Fatalf("no answer to %s\nstderr:\n%s", method, r.stderr)
		}
	}
}

// call calls a tool and returns its one text block and isError.
func (r *mcpRun) call(tool string, args map[string]any) (string, bool) {
	r.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	var res struct {
		Content []struct{ Type, Text string }
		IsError bool
	}
	r.request("tools/call", map[string]any{"name": tool, "arguments": args}, &res)
	if len(res.Content) != 1 || res.Content[0].Type != "text" {
		r.t.Fatalf("%s answered %d content blocks %+v, want one text block", tool, len(res.Content), res.Content)
	}
	return res.Content[0].Text, res.IsError
}

// ok calls a tool that must succeed and returns its text.
func (r *mcpRun) ok(tool string, args map[string]any) string {
	r.t.Helper()
	text, isErr := r.call(tool, args)
	if isErr {
		r.t.Fatalf("%s %v failed: %s", tool, args, text)
	}
	return text
}

// firstLine waits for the first line of the log.
func (r *mcpRun) firstLine() string {
	r.t.Helper()
	deadline := time.Now().Add(mcpTimeout)
	for time.Now().Before(deadline) {
		if line, _, ok := strings.Cut(r.stderr.String(), "\n"); ok {
			return line
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.t.Fatalf("no log line; stderr: %q", r.stderr)
	return ""
}

// end closes the server's input, as MCP clients end a stdio session, and
// returns the exit status.
func (r *mcpRun) end() int {
	r.t.Helper()
	r.in.Close()
	select {
	case code := <-r.done:
		r.done <- code // for the cleanup
		return code
	case <-time.After(mcpTimeout):
		r.t.Fatal("idebridge mcp did not exit at the end of its input")
	}
	return -1
}

func goplsPath(t *testing.T) string {
	t.Helper()
	p, err := lsp.FindGopls(os.Getenv)
	if err != nil {
		t.Fatalf("these tests need gopls %s: %v", lsp.GoplsVersion, err)
	}
	return p
}

// mcpEnv is a small environment: no IDE terminal, no user plugins, gopls
// isolated, the IDE lockfiles in a directory of the test's own, and the
// built command's `mcp` in its own process (IDEBRIDGE_RUNTIME=0: these
// tests are about the server itself; runtime_linux_test.go's go through
// the runtime).
func mcpEnv(t *testing.T, extra ...string) map[string]string {
	env := map[string]string{
		"PATH":              filepath.Dir(goplsPath(t)) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME":              t.TempDir(),
		"CLAUDE_CONFIG_DIR": t.TempDir(),
		"GOPLSCACHE":        t.TempDir(),
		"GOPROXY":           "off",
		"GOFLAGS":           "-mod=mod",
		"GOCACHE":           os.Getenv("GOCACHE"),
		"GOPATH":            os.Getenv("GOPATH"),
		"IDEBRIDGE_RUNTIME": "0",
	}
	if env["GOCACHE"] == "" {
		env["GOCACHE"] = filepath.Join(os.TempDir(), "idebridge-test-gocache")
	}
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}

// mcpModule writes a Go module: main.go (an unused variable), and
// greet.go whose greet is called twice on one line of main.go.
func mcpModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeText(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	writeText(t, filepath.Join(dir, "greet.go"), "package main\n\n// greet says hello.\nfunc greet(name string) string { return \"hi \" + name }\n")
	writeText(t, filepath.Join(dir, "main.go"), "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tunused := 1\n\tfmt.Println(greet(\"a\"), greet(\"b\"))\n}\n")
	return dir
}

// installOfficialPlugin builds a Claude Code configuration directory as
// `claude plugin install NAME@claude-plugins-official` leaves it (from the
// marketplace fixture of package lsp): the marketplace known, the plugin
// installed for the user (installed_plugins.json version 2) and enabled
// in the user settings.
func installOfficialPlugin(t *testing.T, name string) string {
	t.Helper()
	cfg := t.TempDir()
	market := filepath.Join(cfg, "plugins", "marketplaces", "claude-plugins-official")
	copyTree(t, officialMarketplace, market)
	install := filepath.Join(cfg, "plugins", "cache", "claude-plugins-official", name, "1.0.0")
	copyTree(t, filepath.Join(officialMarketplace, "plugins", name), install)
	known, _ := json.Marshal(map[string]any{"claude-plugins-official": map[string]any{
		"source": map[string]string{"source": "github", "repo": "anthropics/claude-plugins-official"}, "installLocation": market}})
	writeText(t, filepath.Join(cfg, "plugins", "known_marketplaces.json"), string(known))
	id := name + "@claude-plugins-official"
	installed, _ := json.Marshal(map[string]any{"version": 2, "plugins": map[string]any{
		id: []map[string]string{{"scope": "user", "installPath": install, "version": "1.0.0",
			"installedAt": "2026-08-21T10:00:00.000Z", "lastUpdated": "2026-08-21T10:00:00.000Z"}}}})
	writeText(t, filepath.Join(cfg, "plugins", "installed_plugins.json"), string(installed))
	writeText(t, filepath.Join(cfg, "settings.json"), `{"enabledPlugins": {"`+id+`": true}}`)
	return cfg
}

var mcpToolNames = []string{
	"diagnostics",
	"definition", "declaration", "type_definition", "implementation", "references", "hover",
	"document_symbols", "workspace_symbols", "call_hierarchy", "type_hierarchy", "rename", "preview_edit", "apply_edit", "fixes", "symbol_source",
	"ide_selection", "ide_open_editors", "ide_open_file", "ide_diagnostics", "propose_edit",
}

// The zero-configuration promise for any MCP client: in a project whose
// Claude Code has the official gopls plugin installed and enabled,
// `idebridge mcp` with no flags says in its first log line which servers
// (the plugin's gopls, its extension, the command found) and which IDE
// (none, and why) it found, lists its tools with schemas, and serves
// diagnostics and navigation from the plugin's server.
func TestMCPZeroConfiguration(t *testing.T) {
	gopls := goplsPath(t)
	cfg := installOfficialPlugin(t, "gopls-lsp")
	dir := mcpModule(t)
	r := startMCP(t, dir, mcpEnv(t, "CLAUDE_CONFIG_DIR="+cfg))

	first := r.firstLine()
	for _, want := range []string{
		"idebridge mcp: project " + dir,
		"language servers: plugin:gopls-lsp:gopls (.go: " + gopls + ")",
		"IDE: none (no usable IDE: no IDE lockfiles in " + filepath.Join(cfg, "ide"),
	} {
		if !strings.Contains(first, want) {
			t.Errorf("first log line does not say %q:\n%s", want, first)
		}
	}

	var list struct {
		Tools []struct {
			Name        string
			Description string
			InputSchema map[string]any
		}
	}
	r.request("tools/list", map[string]any{}, &list)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if tl.Description == "" || tl.InputSchema["type"] != "object" || tl.InputSchema["additionalProperties"] != false {
			t.Errorf("tool %s: description %q, schema %v", tl.Name, tl.Description, tl.InputSchema)
		}
	}
	if !slices.Equal(names, mcpToolNames) {
		t.Errorf("tools %v, want %v", names, mcpToolNames)
	}

	out := r.ok("diagnostics", map[string]any{"files": []string{"main.go", "greet.go"}})
	// An answer not known to be current is asked again, as a client does:
	// a cold gopls on a busy machine may take longer than the tool's bound.
	for try := 0; try < 4 && strings.Contains(out, "may be incomplete or stale"); try++ {
		out = r.ok("diagnostics", map[string]any{"files": []string{"main.go", "greet.go"}})
	}
	for _, want := range []string{
		"<new-diagnostics>", "main.go:\n  ✘ [Line 6:2] declared and not used: unused",
		"No diagnostics in greet.go.",
		"Checked: main.go (plugin:gopls-lsp:gopls, ", "greet.go (plugin:gopls-lsp:gopls, ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diagnostics does not say %q:\n%s", want, out)
		}
	}
	// The second greet on line 7, by symbol and occurrence.
	out = r.ok("definition", map[string]any{"file": "main.go", "line": 7, "symbol": "greet", "occurrence": 2})
	if !strings.Contains(out, "greet.go:4:6: func greet(name string) string") || !strings.Contains(out, "main.go:7:26") {
		t.Errorf("definition of the second greet:\n%s", out)
	}
	if code := r.end(); code != exitOK {
		t.Errorf("exit %d at the end of the input; stderr:\n%s", code, r.stderr)
	}
}

// The IDE is optional and found when a tool needs it: with none, the IDE
// tools say why; an IDE started later is found at the next call; one that
// goes away is reported lost, and its successor on another port (an IDE
// restarted) is found.
func TestMCPIDEComesAndGoes(t *testing.T) {
	dir := mcpModule(t)
	env := mcpEnv(t)
	lockDir := filepath.Join(env["CLAUDE_CONFIG_DIR"], "ide")
	r := startMCP(t, dir, env, "--no-plugins")
	if first := r.firstLine(); !strings.Contains(first, "IDE: none (no usable IDE: no IDE lockfiles in "+lockDir) {
		t.Errorf("first log line: %s", first)
	}
	text, isErr := r.call("ide_open_editors", nil)
	if !isErr || !strings.HasPrefix(text, "No IDE connected: no usable IDE: no IDE lockfiles in "+lockDir) {
		t.Errorf("without an IDE: %v %s", isErr, text)
	}

	startIDE := func() *ideserver.Server {
		srv, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{dir}, LockfileDir: lockDir, IDEName: "TestIDE"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), mcpTimeout)
		defer cancel()
		if err := srv.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		return srv
	}
	first := startIDE()
	text = r.ok("ide_open_editors", nil)
	if want := fmt.Sprintf("No files are open in TestIDE on port %d.", first.Port()); text != want {
		t.Errorf("with the IDE up: %q, want %q", text, want)
	}
	r.ok("ide_open_file", map[string]any{"file": "main.go", "line": 7})
	if text = r.ok("ide_open_editors", nil); !strings.Contains(text, "- main.go (active)") {
		t.Errorf("open editors after ide_open_file: %s", text)
	}
	sel := r.ok("ide_selection", nil)
	if want := "Selected in main.go, 7:1 to 7:37 (1-based line:column):\n```\n\tfmt.Println(greet(\"a\"), greet(\"b\"))\n```"; sel != want {
		t.Errorf("selection after opening main.go at line 7:\n%s\nwant:\n%s", sel, want)
	}

	first.Close()
	lost := ""
	for deadline := time.Now().Add(mcpTimeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		text, isErr = r.call("ide_open_editors", nil)
		if isErr && strings.HasPrefix(text, "No IDE connected") {
			lost = text
			break
		}
	}
	if want := fmt.Sprintf("No IDE connected: the connection to TestIDE on port %d was lost", first.Port()); !strings.HasPrefix(lost, want) ||
		!strings.Contains(lost, "and no IDE is usable now: no usable IDE: no IDE lockfiles in "+lockDir) {
		t.Errorf("after the IDE closed: %q, want it to start %q and say none is usable", lost, want)
	}

	second := startIDE()
	if second.Port() == first.Port() {
		t.Fatalf("the restarted IDE took the same port %d", second.Port())
	}
	if text = r.ok("ide_open_editors", nil); text != fmt.Sprintf("No files are open in TestIDE on port %d.", second.Port()) {
		t.Errorf("after the IDE restarted: %q", text)
	}
	log := r.stderr.String()
	for _, want := range []string{"connected to the IDE", "lost the IDE"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not say %q:\n%s", want, log)
		}
	}
}

// propose_edit and rename go through the IDE's diff review: the user (a
// policy here) accepts greet.go and rejects main.go; each file holds what
// was decided, and the answers say so.
func TestMCPReview(t *testing.T) {
	dir := mcpModule(t)
	env := mcpEnv(t)
	lockDir := filepath.Join(env["CLAUDE_CONFIG_DIR"], "ide")
	decide := ideserver.DiffPolicyFunc(func(_ context.Context, req *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
		if filepath.Base(req.NewPath) == "greet.go" {
			return ideserver.SaveDiff(req.NewContents), nil
		}
		return ideserver.DiffDecision{Action: ideserver.DiffReject}, nil
	})
	srv, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{dir}, LockfileDir: lockDir, DiffPolicy: decide})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), mcpTimeout)
	defer cancel()
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	r := startMCP(t, dir, env, "--no-plugins")
	if first := r.firstLine(); !strings.Contains(first, fmt.Sprintf("IDE: idebridge on port %d (ws, workspace %s)", srv.Port(), dir)) {
		t.Errorf("first log line: %s", first)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	greet0, main0 := read("greet.go"), read("main.go")

	out := r.ok("propose_edit", map[string]any{"file": "greet.go", "old_string": "says hello", "new_string": "says hi"})
	if !strings.HasPrefix(out, "The user accepted the edit of greet.go; it is written") || !strings.Contains(read("greet.go"), "// greet says hi.") {
		t.Errorf("accepted edit: %s\n%s", out, read("greet.go"))
	}
	out = r.ok("propose_edit", map[string]any{"file": "main.go", "content": "package main\n"})
	if !strings.HasPrefix(out, "The user rejected the edit of main.go; the file is unchanged.") || read("main.go") != main0 {
		t.Errorf("rejected edit: %s", out)
	}
	text, isErr := r.call("propose_edit", map[string]any{"file": "main.go", "old_string": "greet", "new_string": "hello"})
	if !isErr || !strings.Contains(text, "old_string occurs 2 times in main.go") {
		t.Errorf("ambiguous old_string: %v %s", isErr, text)
	}

	// Rename greet: the IDE reviews both files; greet.go is accepted,
	// main.go rejected, so nothing is written: a rename is written whole
	// or not at all.
	out = r.ok("rename", map[string]any{"file": "greet.go", "line": 4, "symbol": "greet", "new_name": "hello"})
	for _, want := range []string{"--- a/greet.go", "+func hello(name string) string", "--- a/main.go", "+\tfmt.Println(hello(\"a\"), hello(\"b\"))",
		"Not applied: the edit of main.go was rejected in idebridge on port"} {
		if !strings.Contains(out, want) {
			t.Errorf("rename does not say %q:\n%s", want, out)
		}
	}
	if g := read("greet.go"); g != strings.Replace(greet0, "says hello", "says hi", 1) {
		t.Errorf("greet.go after the rejected rename:\n%s", g)
	}
	if m := read("main.go"); m != main0 {
		t.Errorf("main.go after the rejected rename:\n%s", m)
	}
	// apply false only shows the diff.
	out = r.ok("rename", map[string]any{"file": "main.go", "line": 5, "symbol": "main", "new_name": "start", "apply": false})
	if !strings.Contains(out, "-func main() {") || strings.Contains(out, "Applied") || read("main.go") != main0 {
		t.Errorf("rename with apply false:\n%s", out)
	}
}

func TestMCPUsage(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := runIn(t, dir, mcpEnv(t), "mcp", "extra"); code != exitUsage || !strings.Contains(errOut, `unexpected argument "extra"`) {
		t.Errorf("positional argument: exit %d, %s", code, errOut)
	}
	if code, _, errOut := runIn(t, dir, mcpEnv(t), "mcp", "--project", filepath.Join(dir, "none")); code != exitUsage || !strings.Contains(errOut, "is not a directory") {
		t.Errorf("--project missing: exit %d, %s", code, errOut)
	}
	bad := filepath.Join(dir, "bad.json")
	writeText(t, bad, `{"x": {"command": 5}}`)
	if code, _, errOut := runIn(t, dir, mcpEnv(t), "mcp", "--config", bad); code != exitUnavailable || !strings.Contains(errOut, "configures no usable language server") {
		t.Errorf("--config without servers: exit %d, %s", code, errOut)
	}
	if code, out, _ := runIn(t, dir, nil, "mcp", "-h"); code != exitOK || !strings.Contains(out, "claude mcp add idebridge -- idebridge mcp") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
}

// A review the client cancels (its user pressed Esc) ends in the IDE too:
// the diff tab is closed, the file untouched, and no answer is sent for
// the cancelled call; the session goes on.
func TestMCPCancelledReview(t *testing.T) {
	dir := mcpModule(t)
	env := mcpEnv(t)
	started, ended := make(chan struct{}, 1), make(chan error, 1)
	block := ideserver.DiffPolicyFunc(func(ctx context.Context, _ *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
		started <- struct{}{}
		<-ctx.Done()
		ended <- context.Cause(ctx)
		return ideserver.DiffDecision{Action: ideserver.DiffReject}, nil
	})
	// The IDE's log shows every tools/call it receives, close_tab included.
	ideLog := &syncBuffer{}
	srv, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{dir}, LockfileDir: filepath.Join(env["CLAUDE_CONFIG_DIR"], "ide"), DiffPolicy: block,
		Logger: slog.New(slog.NewTextHandler(ideLog, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), mcpTimeout)
	defer cancel()
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	r := startMCP(t, dir, env, "--no-plugins", "-v")
	before, _ := os.ReadFile(filepath.Join(dir, "main.go"))

	r.nextID++
	id := r.nextID
	r.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": "propose_edit", "arguments": map[string]any{"file": "main.go", "content": "package main\n"}}})
	select {
	case <-started:
	case <-time.After(mcpTimeout):
		t.Fatal("the diff never reached the IDE")
	}
	r.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": id}})
	select {
	case cause := <-ended:
		// The agent both cancels its openDiff request and calls close_tab;
		// whichever reaches the IDE first ends the diff. What must hold is
		// that close_tab is sent: an IDE extension may ignore the
		// cancellation of openDiff and keep the tab open.
		if !errors.Is(cause, ideserver.ErrDiffClosed) && !errors.Is(cause, ideserver.ErrRequestCancelled) {
			t.Errorf("the IDE's diff ended with %v, want its tab closed or its request cancelled", cause)
		}
	case <-time.After(mcpTimeout):
		t.Fatal("the diff stayed open in the IDE after the call was cancelled")
	}
	for deadline := time.Now().Add(mcpTimeout); !strings.Contains(ideLog.String(), "tool=close_tab"); {
		if time.Now().After(deadline) {
			t.Fatalf("the agent never called close_tab for the cancelled review; the IDE's log:\n%s", ideLog.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The next call is answered, and nothing was for the cancelled one
	// (request fails on an answer to another id).
	if text := r.ok("ide_open_editors", nil); !strings.HasPrefix(text, "No files are open in idebridge") {
		t.Errorf("after the cancelled review: %s", text)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "main.go")); string(after) != string(before) {
		t.Errorf("main.go changed by a cancelled review:\n%s", after)
	}
	if log := r.stderr.String(); !strings.Contains(log, "msg=received method=tools/call") {
		t.Errorf("-v does not log the messages received:\n%s", log)
	}
}
