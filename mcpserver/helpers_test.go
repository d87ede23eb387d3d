package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/mcp"
)

// testTimeout bounds every wait of these tests; never an assertion about
// speed.
const testTimeout = 90 * time.Second

func goplsPath(t testing.TB) string {
	t.Helper()
	p, err := lsp.FindGopls(os.Getenv)
	if err != nil {
		t.Fatalf("these tests need gopls %s: %v", lsp.GoplsVersion, err)
	}
	return p
}

// testEnv is a small environment: no IDE terminal, gopls isolated, the
// IDE lockfiles in a directory of the test's own.
func testEnv(t testing.TB) []string {
	gocache := os.Getenv("GOCACHE")
	if gocache == "" {
		gocache = filepath.Join(os.TempDir(), "idebridge-test-gocache")
	}
	return []string{
		"PATH=" + filepath.Dir(goplsPath(t)) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"CLAUDE_CONFIG_DIR=" + t.TempDir(),
		"GOPLSCACHE=" + t.TempDir(),
		"GOPROXY=off",
		"GOFLAGS=-mod=mod",
		"GOCACHE=" + gocache,
		"GOPATH=" + os.Getenv("GOPATH"),
	}
}

func getenv(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

func writeText(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// testModule writes a Go module: main.go (an unused variable, two calls
// of greet on line 7, a call of fmt.Println), and greet.go.
func testModule(t testing.TB, dir string) {
	t.Helper()
	writeText(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	writeText(t, filepath.Join(dir, "greet.go"), "package main\n\n// greet says hello.\nfunc greet(name string) string { return \"hi \" + name }\n")
	writeText(t, filepath.Join(dir, "main.go"), "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tunused := 1\n\tfmt.Println(greet(\"a\"), greet(\"b\"))\n}\n")
}

// testServer is a Server on dir with gopls, its tools by name.
type testServer struct {
	t     testing.TB
	srv   *Server
	tools map[string]ideserver.Tool
	env   []string
}

func newTestServer(t testing.TB, dir string, opts *Options) *testServer {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	o.ProjectDir = dir
	if o.SettleTimeout == 0 {
		// The tests ask what the servers finally say, not how soon: on a
		// busy machine gopls has taken over 10 s (the default) to publish
		// for a preview's new version.
		o.SettleTimeout = testTimeout / 3
	}
	if o.Env == nil {
		o.Env = testEnv(t)
	}
	if o.Configs == nil {
		cfg := lsp.GoplsConfig(goplsPath(t), dir)
		cfg.InitializationOptions = json.RawMessage(`{"verboseWorkDoneProgress":true,"diagnosticsDelay":"0s"}`)
		o.Configs = []lsp.ServerConfig{cfg}
	}
	srv, err := New(&o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ts := &testServer{t: t, srv: srv, tools: map[string]ideserver.Tool{}, env: o.Env}
	for _, tl := range srv.Tools() {
		ts.tools[tl.Name] = tl
	}
	return ts
}

// call calls a tool's handler as tools/call does.
func (s *testServer) call(name string, args map[string]any) *mcp.ToolResult {
	s.t.Helper()
	tl, ok := s.tools[name]
	if !ok {
		s.t.Fatalf("no tool %s", name)
	}
	if args == nil {
		args = map[string]any{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := tl.Handler(ctx, &ideserver.ToolCall{Name: name, Arguments: raw})
	if err != nil {
		s.t.Fatalf("%s %v: protocol error %v", name, args, err)
	}
	return res
}

// diagnosed calls the diagnostics tool for files, and asks again (at most
// three times) while the answer says a server did not publish within the
// tool's bound: a cold gopls on a loaded machine may take longer, the
// answer says so, and asking again is what a client does with it.
func (s *testServer) diagnosed(files ...string) *mcp.ToolResult {
	s.t.Helper()
	res := s.ok("diagnostics", map[string]any{"files": files})
	for i := 0; i < 3 && strings.Contains(res.Text(), "no publish for it from"); i++ {
		res = s.ok("diagnostics", map[string]any{"files": files})
	}
	return res
}

// ok calls a tool that must succeed.
func (s *testServer) ok(name string, args map[string]any) *mcp.ToolResult {
	s.t.Helper()
	res := s.call(name, args)
	if res.IsError {
		s.t.Fatalf("%s %v failed: %s", name, args, res.Text())
	}
	return res
}
