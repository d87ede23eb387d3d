package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testTimeout bounds every wait; never an assertion about speed.
const testTimeout = 2 * time.Minute

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// idebridgeBin builds the idebridge command once for the package's tests.
func idebridgeBin(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "idebridge-mcpserver-test")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "idebridge")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/idebridge/idebridge/cmd/idebridge").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building idebridge: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// gopls finds gopls as idebridge does.
func gopls(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("GOPLS"); p != "" {
		return p
	}
	if p, err := exec.LookPath("gopls"); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "gopls")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatal("this test needs gopls: go install golang.org/x/tools/gopls@v0.23.0")
	return ""
}

// scene is a Go module, a Claude Code configuration directory with no
// plugins, and the environment both commands run in: no IDE terminal,
// gopls isolated.
type scene struct {
	dir, cfg string
	env      []string
}

func newScene(t testing.TB) *scene {
	s := &scene{dir: t.TempDir(), cfg: t.TempDir()}
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"greet.go": "package main\n\n// Greeter says hello.\ntype Greeter interface {\n\tGreet(name string) string\n}\n\n" +
			"// English is a Greeter.\ntype English struct{}\n\n// Greet says hi.\nfunc (English) Greet(name string) string { return \"hi \" + name }\n\n" +
			"func greet(g Greeter, name string) string { return g.Greet(name) }\n",
		"main.go":   "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar g Greeter = English{}\n\tfmt.Println(greet(g, \"a\"), greet(g, \"b\"))\n}\n",
		"broken.go": "package main\n\nfunc broken() {\n\tx := 1\n}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(s.dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gocache, _ := exec.Command("go", "env", "GOCACHE").Output()
	s.env = []string{
		"PATH=" + filepath.Dir(gopls(t)) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"CLAUDE_CONFIG_DIR=" + s.cfg,
		"GOPLSCACHE=" + t.TempDir(),
		"GOCACHE=" + strings.TrimSpace(string(gocache)),
		"GOPROXY=off",
		"GOFLAGS=-mod=mod",
	}
	// `idebridge mcp` goes through the shared runtime: one of the
	// scene's own, stopped at the end.
	rt, err := os.MkdirTemp("", "rts")
	if err != nil {
		t.Fatal(err)
	}
	s.env = append(s.env, "IDEBRIDGE_RUNTIME_DIR="+filepath.Join(rt, "rt"), "IDEBRIDGE_RUNTIME_IDLE=30s")
	t.Cleanup(func() {
		stop := exec.Command(idebridgeBin(t), "runtime", "stop")
		stop.Env = s.env
		stop.Run()
		os.RemoveAll(rt)
	})
	return s
}

func (s *scene) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ide is a headless IDE, `idebridge ide serve`, running as a process.
type ide struct {
	cmd  *exec.Cmd
	port int
	done chan error
}

// startIDE runs `idebridge ide serve` on the scene's module, deciding
// every diff as diff says, and waits for it to announce itself.
func (s *scene) startIDE(t *testing.T, diff string) *ide {
	t.Helper()
	cmd := exec.Command(idebridgeBin(t), "ide", "serve", "--workspace", s.dir, "--diff", diff)
	cmd.Env = s.env
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	i := &ide{cmd: cmd, done: make(chan error, 1)}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		for sc.Scan() {
		}
		i.done <- cmd.Wait()
	}()
	t.Cleanup(func() { i.stop(t) })
	select {
	case l, ok := <-line:
		var info struct{ Port int }
		if !ok || json.Unmarshal([]byte(l), &info) != nil || info.Port == 0 {
			t.Fatalf("ide serve announced %q", l)
		}
		i.port = info.Port
	case <-time.After(testTimeout):
		t.Fatal("ide serve did not start")
	}
	return i
}

// stop ends the IDE as a user closing it does (its lockfile is removed).
func (i *ide) stop(t *testing.T) {
	if i.cmd.ProcessState != nil || i.done == nil {
		return
	}
	_ = i.cmd.Process.Signal(os.Interrupt)
	select {
	case <-i.done:
	case <-time.After(testTimeout):
		i.cmd.Process.Kill()
		t.Error("ide serve did not stop on interrupt")
		<-i.done
	}
	i.done = nil
}

// session starts `idebridge mcp` through the SDK's command transport.
func (s *scene) session(t testing.TB, ctx context.Context, stderr *syncBuffer) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(idebridgeBin(t), "mcp", "--project", s.dir)
	cmd.Env = s.env
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-test", Version: "1.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("the SDK's client could not start idebridge mcp: %v\nstderr:\n%s", err, stderr)
	}
	return cs, cmd
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// call calls a tool and returns its text; the result must be one text
// block, and isError must be as expected.
// outputSchemas are the tools' output schemas as tools/list gave them,
// resolved by the JSON Schema library the SDK uses; call validates every
// result's structured content against its tool's.
var outputSchemas = map[string]*jsonschema.Resolved{}

// resolveOutputSchema resolves a listed tool's output schema.
func resolveOutputSchema(t *testing.T, tool *mcp.Tool) {
	t.Helper()
	raw, err := json.Marshal(tool.OutputSchema)
	if err != nil || tool.OutputSchema == nil {
		t.Errorf("tool %s has no output schema (%v)", tool.Name, err)
		return
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Errorf("tool %s: output schema %s: %v", tool.Name, raw, err)
		return
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Errorf("tool %s: output schema %s does not resolve: %v", tool.Name, raw, err)
		return
	}
	outputSchemas[tool.Name] = rs
}

func call(t *testing.T, ctx context.Context, cs *mcp.ClientSession, wantErr bool, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	if rs := outputSchemas[name]; rs == nil {
		t.Errorf("%s: no output schema listed", name)
	} else if res.StructuredContent == nil {
		t.Errorf("%s %v answered no structured content", name, args)
	} else {
		// The SDK decodes it as any; validate the JSON value.
		raw, _ := json.Marshal(res.StructuredContent)
		var v any
		_ = json.Unmarshal(raw, &v)
		if err := rs.Validate(v); err != nil {
			t.Errorf("%s %v: structured content %s does not fit the output schema: %v", name, args, raw, err)
		}
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s answered %d content blocks, want 1", name, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s answered %T, want text", name, res.Content[0])
	}
	if res.IsError != wantErr {
		t.Errorf("%s %v: isError %v, want %v:\n%s", name, args, res.IsError, wantErr, tc.Text)
	}
	return tc.Text
}

func wantAll(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s does not say %q:\n%s", what, w, text)
		}
	}
}

var toolNames = []string{
	"diagnostics",
	"definition", "declaration", "type_definition", "implementation", "references", "hover",
	"document_symbols", "workspace_symbols", "call_hierarchy", "type_hierarchy", "rename", "preview_edit", "apply_edit", "fixes", "symbol_source",
	"ide_selection", "ide_open_editors", "ide_open_file", "ide_diagnostics", "propose_edit",
}

// The official SDK's client starts `idebridge mcp` over its command
// transport, lists the tools and calls every one: the language-server
// tools on gopls, the IDE tools on a headless IDE that accepts every
// diff; then the IDE restarts rejecting every diff, and the server finds
// it again.
func TestSDKClientCallsEveryTool(t *testing.T) {
	s := newScene(t)
	accepting := s.startIDE(t, "accept")
	ctx, cancel := context.WithTimeout(context.Background(), 3*testTimeout)
	defer cancel()
	var stderr syncBuffer
	cs, cmd := s.session(t, ctx, &stderr)
	defer cs.Close()

	if got := cs.InitializeResult(); got.ServerInfo.Name != "idebridge" || !strings.Contains(got.Instructions, "1-based") {
		t.Errorf("initialize result %+v", got)
	}
	// The server writes its first line before it serves, but exec copies
	// the child's stderr in a goroutine of this process: wait for the line.
	for deadline := time.Now().Add(testTimeout); !strings.Contains(stderr.String(), "\n") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	first, _, _ := strings.Cut(stderr.String(), "\n")
	wantAll(t, "the first log line", first, "idebridge mcp: project "+s.dir, "language servers: gopls (.go: "+gopls(t)+")",
		fmt.Sprintf("IDE: idebridge on port %d (ws, workspace %s)", accepting.port, s.dir))

	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		resolveOutputSchema(t, tool)
		if a := tool.Annotations; a == nil || a.Title == "" || a.OpenWorldHint == nil || *a.OpenWorldHint ||
			a.ReadOnlyHint == (tool.Name == "rename" || tool.Name == "propose_edit" || tool.Name == "apply_edit" || tool.Name == "ide_open_file") {
			t.Errorf("tool %s: annotations %+v", tool.Name, a)
		}
		schema, _ := json.Marshal(tool.InputSchema)
		if tool.Description == "" || !strings.Contains(string(schema), `"type":"object"`) {
			t.Errorf("tool %s: description %q, schema %s", tool.Name, tool.Description, schema)
		}
	}
	if !slices.Equal(names, toolNames) {
		t.Fatalf("tools %v, want %v", names, toolNames)
	}

	// The language servers.
	diags := call(t, ctx, cs, false, "diagnostics", map[string]any{"files": []string{"broken.go", "main.go"}})
	// An answer not known to be current is asked again, as a client does:
	// a cold gopls on a busy machine may take longer than the tool's bound.
	for try := 0; try < 4 && strings.Contains(diags, "may be incomplete or stale"); try++ {
		diags = call(t, ctx, cs, false, "diagnostics", map[string]any{"files": []string{"broken.go", "main.go"}})
	}
	wantAll(t, "diagnostics", diags,
		"<new-diagnostics>", "broken.go:\n  ✘ [Line 4:2] declared and not used: x", "No diagnostics in main.go.", "Checked: broken.go (gopls, ")
	wantAll(t, "definition", call(t, ctx, cs, false, "definition", map[string]any{"file": "main.go", "line": 7, "symbol": "greet", "occurrence": 2}),
		"main.go:7:29", "greet.go:14:6: func greet(g Greeter, name string) string")
	// gopls has no declarations: the answer says so, as an error a model
	// can read.
	wantAll(t, "declaration", call(t, ctx, cs, true, "declaration", map[string]any{"file": "main.go", "line": 7, "column": 14}),
		"gopls does not offer declaration")
	wantAll(t, "type_definition", call(t, ctx, cs, false, "type_definition", map[string]any{"file": "main.go", "line": 6, "symbol": "g"}),
		"greet.go:4:6: type Greeter interface {")
	wantAll(t, "implementation", call(t, ctx, cs, false, "implementation", map[string]any{"file": "greet.go", "line": 4, "symbol": "Greeter"}),
		"greet.go:9:6: type English struct{}")
	wantAll(t, "references", call(t, ctx, cs, false, "references", map[string]any{"file": "greet.go", "line": 14, "symbol": "greet"}),
		"main.go:7:14:", "main.go:7:29:")
	wantAll(t, "hover", call(t, ctx, cs, false, "hover", map[string]any{"file": "greet.go", "line": 12, "symbol": "Greet"}),
		"func (English) Greet(name string) string", "Greet says hi.")
	wantAll(t, "document_symbols", call(t, ctx, cs, false, "document_symbols", map[string]any{"file": "greet.go"}),
		"Greeter", "English", "greet")
	wantAll(t, "workspace_symbols", call(t, ctx, cs, false, "workspace_symbols", map[string]any{"query": "English"}),
		"greet.go:9:6")
	wantAll(t, "call_hierarchy", call(t, ctx, cs, false, "call_hierarchy", map[string]any{"file": "greet.go", "line": 14, "symbol": "greet"}),
		"main", "main.go:7:14")
	wantAll(t, "outgoing calls", call(t, ctx, cs, false, "call_hierarchy", map[string]any{"file": "greet.go", "line": 14, "symbol": "greet", "direction": "outgoing"}),
		"Greet")
	wantAll(t, "subtypes", call(t, ctx, cs, false, "type_hierarchy", map[string]any{"file": "greet.go", "line": 4, "symbol": "Greeter", "direction": "subtypes"}),
		"Subtypes of Greeter (greet.go:4:6), from gopls: 1 type", "English", "greet.go:9:6")
	wantAll(t, "supertypes", call(t, ctx, cs, false, "type_hierarchy", map[string]any{"file": "greet.go", "line": 9, "symbol": "English", "direction": "supertypes"}),
		"interface Greeter", "greet.go:4:6")
	wantAll(t, "a page of references", call(t, ctx, cs, false, "references", map[string]any{"file": "greet.go", "line": 14, "symbol": "greet", "limit": 1}),
		"from gopls: 3; showing 1 of 3 (1 in 1 file)", "(2 more: call references again with offset 1 for the next ones.)")

	// The IDE, accepting.
	wantAll(t, "ide_open_file", call(t, ctx, cs, false, "ide_open_file", map[string]any{"file": "main.go", "line": 7}),
		fmt.Sprintf("Opened main.go in idebridge on port %d with line 7 selected.", accepting.port))
	wantAll(t, "ide_selection", call(t, ctx, cs, false, "ide_selection", nil),
		"Selected in main.go, 7:1 to 7:43", "fmt.Println(greet(g, \"a\"), greet(g, \"b\"))")
	wantAll(t, "ide_open_editors", call(t, ctx, cs, false, "ide_open_editors", nil), "- main.go (active)")
	wantAll(t, "ide_diagnostics", call(t, ctx, cs, false, "ide_diagnostics", map[string]any{"file": "broken.go"}),
		"broken.go:", "declared and not used: x", fmt.Sprintf("(as idebridge on port %d shows them)", accepting.port))
	wantAll(t, "propose_edit", call(t, ctx, cs, false, "propose_edit", map[string]any{"file": "broken.go", "old_string": "\tx := 1\n", "new_string": "\t_ = 1\n"}),
		"The user accepted the edit of broken.go; it is written")
	if got := s.read(t, "broken.go"); got != "package main\n\nfunc broken() {\n\t_ = 1\n}\n" {
		t.Errorf("broken.go after the accepted edit:\n%s", got)
	}
	after := call(t, ctx, cs, false, "diagnostics", map[string]any{"files": []string{"broken.go"}})
	wantAll(t, "diagnostics after the edit", after, `function "broken" is unused`, "Checked: broken.go (gopls, ")
	if strings.Contains(after, "declared and not used") {
		t.Errorf("diagnostics after the edit still report the fixed error:\n%s", after)
	}
	wantAll(t, "rename, accepted", call(t, ctx, cs, false, "rename", map[string]any{"file": "greet.go", "line": 14, "symbol": "greet", "new_name": "salute"}),
		"--- a/greet.go", "--- a/main.go", fmt.Sprintf("Applied, reviewed in idebridge on port %d", accepting.port))
	if !strings.Contains(s.read(t, "greet.go"), "func salute(g Greeter") || !strings.Contains(s.read(t, "main.go"), "salute(g, \"a\"), salute(g, \"b\")") {
		t.Errorf("after the accepted rename:\n%s\n%s", s.read(t, "greet.go"), s.read(t, "main.go"))
	}

	// The IDE restarts, rejecting: the server finds it on its new port.
	accepting.stop(t)
	rejecting := s.startIDE(t, "reject")
	mainBefore := s.read(t, "main.go")
	var text string
	for deadline := time.Now().Add(testTimeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ide_open_editors", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		text = res.Content[0].(*mcp.TextContent).Text
		if strings.Contains(text, fmt.Sprintf("port %d", rejecting.port)) {
			break
		}
	}
	if want := fmt.Sprintf("No files are open in idebridge on port %d.", rejecting.port); text != want {
		t.Errorf("after the IDE restarted: %q, want %q", text, want)
	}
	wantAll(t, "propose_edit, rejected", call(t, ctx, cs, false, "propose_edit", map[string]any{"file": "main.go", "content": "package main\n"}),
		"The user rejected the edit of main.go; the file is unchanged.")
	wantAll(t, "rename, rejected", call(t, ctx, cs, false, "rename", map[string]any{"file": "greet.go", "line": 14, "symbol": "salute", "new_name": "greet"}),
		"rejected")
	if got := s.read(t, "main.go"); got != mainBefore {
		t.Errorf("main.go changed although every diff was rejected:\n%s", got)
	}

	// The IDE goes away: the IDE tools say why there is none; the
	// language servers still answer.
	rejecting.stop(t)
	for deadline := time.Now().Add(testTimeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ide_selection", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		if text = res.Content[0].(*mcp.TextContent).Text; res.IsError && strings.HasPrefix(text, "No IDE connected") {
			break
		}
	}
	wantAll(t, "ide_selection without an IDE", text, "No IDE connected: the connection to idebridge on port", "was lost",
		"no IDE lockfiles in "+filepath.Join(s.cfg, "ide"))
	wantAll(t, "hover without an IDE", call(t, ctx, cs, false, "hover", map[string]any{"file": "main.go", "line": 7, "symbol": "Println"}),
		"func fmt.Println")

	// Verified edits: a breaking change previewed shows the error it makes
	// in the file that calls the function, which the client never named;
	// with the fix added as a second edit nothing is left broken; both are
	// applied in one call. Nothing is written before apply_edit.
	greetBefore, mainBefore := s.read(t, "greet.go"), s.read(t, "main.go")
	breaking := map[string]any{"file": "greet.go", "old_string": "func salute(g Greeter, name string) string { return g.Greet(name) }",
		"new_string": "func salute(g Greeter, name string, loud bool) string {\n\tif loud {\n\t\tname += \"!\"\n\t}\n\treturn g.Greet(name)\n}"}
	wantAll(t, "preview_edit of a breaking change", call(t, ctx, cs, false, "preview_edit", map[string]any{"edits": []any{breaking}}),
		"Preview (nothing written):", "main.go: 2 introduced", "not enough arguments in call to salute", "+func salute(g Greeter, name string, loud bool) string {\n")
	both := []any{breaking, map[string]any{"file": "main.go", "old_string": `salute(g, "a"), salute(g, "b")`, "new_string": `salute(g, "a", false), salute(g, "b", true)`}}
	wantAll(t, "preview_edit with the fix", call(t, ctx, cs, false, "preview_edit", map[string]any{"edits": both}),
		"no diagnostics introduced or resolved", "checked ")
	if s.read(t, "greet.go") != greetBefore || s.read(t, "main.go") != mainBefore {
		t.Fatal("preview_edit wrote")
	}
	wantAll(t, "apply_edit", call(t, ctx, cs, false, "apply_edit", map[string]any{"edits": both}),
		"Written: greet.go, main.go.", "no diagnostics introduced or resolved")
	if !strings.Contains(s.read(t, "main.go"), `salute(g, "a", false), salute(g, "b", true)`) || !strings.Contains(s.read(t, "greet.go"), "loud bool") {
		t.Errorf("after apply_edit:\n%s\n%s", s.read(t, "greet.go"), s.read(t, "main.go"))
	}
	wantAll(t, "symbol_source", call(t, ctx, cs, false, "symbol_source", map[string]any{"file": "greet.go", "symbol": "English.Greet"}),
		"greet.go:12-12 English.Greet", `func (English) Greet(name string) string { return "hi " + name }`)

	if err := cs.Close(); err != nil {
		t.Errorf("closing the session: %v", err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("idebridge mcp exited %d after the client closed its input; stderr:\n%s", code, &stderr)
	}
}
