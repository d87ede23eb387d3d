package ideserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/mcp"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/internal/jsonrpc"
)

// diagModule writes a Go module with the given files into a new directory.
func diagModule(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/diag\n\ngo 1.22\n"
	for name, text := range files {
		writeText(t, filepath.Join(dir, name), text)
	}
	return dir
}

func writeText(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// goplsEnviron isolates gopls: its own cache, no network.
func goplsEnviron(t testing.TB) []string {
	return append(os.Environ(), "GOPLSCACHE="+t.TempDir(), "GOPROXY=off", "GOFLAGS=-mod=mod")
}

// startDiagServer starts a server on dir whose getDiagnostics is answered
// by real gopls (the test fails, never skips, without gopls).
func startDiagServer(t testing.TB, dir string, configs []lsp.ServerConfig) (*ideserver.Server, *ideserver.Diagnostics) {
	t.Helper()
	srv := startServer(t, &ideserver.Options{WorkspaceFolders: []string{dir}, NoLockfile: true})
	// The complete answer, however long a cold gopls takes on a busy
	// machine, not the first AnswerTimeout's worth.
	opts := &ideserver.DiagnosticsOptions{Configs: configs, Env: goplsEnviron(t), SettleTimeout: testTimeout, AnswerTimeout: testTimeout}
	d, err := ideserver.NewDiagnostics(srv, opts)
	if err != nil {
		t.Fatalf("NewDiagnostics (these tests need gopls %s): %v", lsp.GoplsVersion, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := d.Close(ctx); err != nil {
			t.Errorf("closing diagnostics: %v", err)
		}
		if err := d.Close(ctx); err != nil {
			t.Errorf("closing diagnostics twice: %v", err)
		}
	})
	if err := srv.RegisterTool(d.Tool()); err != nil {
		t.Fatal(err)
	}
	return srv, d
}

// wireDiag is one diagnostic of the deployed answer's shape.
type wireDiag struct {
	Message  string     `json:"message"`
	Severity string     `json:"severity"`
	Source   string     `json:"source"`
	Code     string     `json:"code"`
	Range    diag.Range `json:"range"`
}

type wireFile struct {
	URI         string     `json:"uri"`
	Diagnostics []wireDiag `json:"diagnostics"`
	Note        string     `json:"note"`
}

// getDiagnostics calls the tool and decodes its one JSON text.
func getDiagnostics(t *testing.T, c *client, args map[string]any) []wireFile {
	t.Helper()
	r := c.callTool(mcp.ToolGetDiagnostics, args)
	texts := r.texts()
	if len(texts) != 1 || r.IsError {
		t.Fatalf("getDiagnostics %v: %+v", args, r)
	}
	var files []wireFile
	if err := json.Unmarshal([]byte(texts[0]), &files); err != nil {
		t.Fatalf("getDiagnostics %v answered %q: %v", args, texts[0], err)
	}
	return files
}

func messages(f wireFile) []string {
	var out []string
	for _, d := range f.Diagnostics {
		out = append(out, d.Message)
	}
	return out
}

func fileURL(p string) string { return "file://" + filepath.ToSlash(p) }

// TestDiagnosticsGopls drives the headless IDE's getDiagnostics with real
// gopls through a session: the file is re-read at every call, the answer
// is the whole current set every time (not only what is new), and files
// opened or asked about are answered without a uri.
func TestDiagnosticsGopls(t *testing.T) {
	dir := diagModule(t, map[string]string{
		"main.go": "package main\n\nfunc main() {\n\tprintln(x)\n}\n",
		"util.go": "package main\n\nfunc helper() int { return 1 }\n",
	})
	main := filepath.Join(dir, "main.go")
	srv, _ := startDiagServer(t, dir, nil)
	c := dial(t, srv)
	c.handshake(1)

	// The tool is listed with the deployed schema's one argument.
	list := c.call("tools/list", nil)
	if !strings.Contains(string(list.Result), `"name":"getDiagnostics"`) || !strings.Contains(string(list.Result), `"uri"`) {
		t.Fatalf("tools/list lacks getDiagnostics: %s", list.Result)
	}

	files := getDiagnostics(t, c, map[string]any{"uri": fileURL(main)})
	if len(files) != 1 || files[0].URI != fileURL(main) {
		t.Fatalf("first answer: %+v", files)
	}
	if got := messages(files[0]); len(got) != 1 || got[0] != "undefined: x" {
		t.Fatalf("diagnostics of the broken file: %q", got)
	}
	d := files[0].Diagnostics[0]
	if d.Severity != "Error" || d.Source != "compiler" || d.Code != "UndeclaredName" || d.Range.Start != (diag.Position{Line: 3, Character: 9}) {
		t.Errorf("diagnostic: %+v", d)
	}

	// Asking again with nothing changed answers the same set: the answer
	// is what the file has, not what is new since the last call.
	again := getDiagnostics(t, c, map[string]any{"uri": fileURL(main)})
	if got := messages(again[0]); len(got) != 1 || got[0] != "undefined: x" {
		t.Fatalf("second answer, nothing changed: %+v", again)
	}

	// The agent writes the file and asks at once: the answer is for the
	// text on disk.
	writeText(t, main, "package main\n\nfunc main() {\n\tvar n int = helper()\n\tprintln(n)\n}\n")
	if files := getDiagnostics(t, c, map[string]any{"uri": fileURL(main)}); len(files) != 1 || len(files[0].Diagnostics) != 0 {
		t.Fatalf("after the fix: %+v", files)
	}
	// Breaking another file breaks this one: util.go is asked about
	// (opened in gopls), then changed, and main.go's answer follows.
	if files := getDiagnostics(t, c, map[string]any{"uri": fileURL(filepath.Join(dir, "util.go"))}); len(files[0].Diagnostics) != 0 {
		t.Fatalf("util.go: %+v", files)
	}
	writeText(t, filepath.Join(dir, "util.go"), "package main\n\nfunc helper() string { return \"\" }\n")
	all := getDiagnostics(t, c, map[string]any{})
	if len(all) != 1 || all[0].URI != fileURL(main) {
		t.Fatalf("without a uri after util.go changed: %+v", all)
	}
	if got := messages(all[0]); len(got) != 1 || !strings.Contains(got[0], "cannot use helper()") {
		t.Fatalf("main.go after util.go changed: %q", got)
	}

	// A relative path works as the default tools take it.
	if files := getDiagnostics(t, c, map[string]any{"uri": "main.go"}); len(files) != 1 || files[0].URI != fileURL(main) || len(files[0].Diagnostics) != 1 {
		t.Fatalf("relative path: %+v", files)
	}
}

// TestDiagnosticsOpenFileAndErrors covers openFile feeding the no-uri
// answer, files no server serves, a file that does not exist, and bad
// arguments.
func TestDiagnosticsOpenFileAndErrors(t *testing.T) {
	dir := diagModule(t, map[string]string{
		"a.go":      "package main\n\nfunc main() { var unused int }\n",
		"notes.txt": "not code\n",
	})
	srv, _ := startDiagServer(t, dir, nil)
	c := dial(t, srv)
	c.handshake(1)

	if files := getDiagnostics(t, c, map[string]any{}); len(files) != 0 {
		t.Fatalf("nothing opened yet: %+v", files)
	}
	c.callTool(mcp.ToolOpenFile, map[string]any{"filePath": filepath.Join(dir, "a.go")})
	files := getDiagnostics(t, c, map[string]any{})
	if len(files) != 1 || files[0].URI != fileURL(filepath.Join(dir, "a.go")) {
		t.Fatalf("after openFile: %+v", files)
	}
	if got := messages(files[0]); len(got) != 1 || !strings.Contains(got[0], "declared and not used") {
		t.Fatalf("a.go: %q", got)
	}

	// No server for .txt: an empty list for the file, as an editor shows.
	txt := fileURL(filepath.Join(dir, "notes.txt"))
	if files := getDiagnostics(t, c, map[string]any{"uri": txt}); len(files) != 1 || files[0].URI != txt || files[0].Diagnostics == nil || len(files[0].Diagnostics) != 0 {
		t.Fatalf("notes.txt: %+v", files)
	}

	// A file that does not exist: -32001, as Neovim answers a file it
	// cannot show.
	m := c.call("tools/call", map[string]any{"name": "getDiagnostics", "arguments": map[string]any{"uri": fileURL(filepath.Join(dir, "gone.go"))}})
	if m.Error == nil || m.Error.Code != jsonrpc.CodeFileNotOpen {
		t.Fatalf("missing file: %+v", m)
	}
	// A file deleted after it was opened drops out of the no-uri answer.
	if err := os.Remove(filepath.Join(dir, "a.go")); err != nil {
		t.Fatal(err)
	}
	if files := getDiagnostics(t, c, map[string]any{}); len(files) != 0 {
		t.Fatalf("after a.go was deleted: %+v", files)
	}
	for _, bad := range []any{map[string]any{"uri": 3}, map[string]any{"uri": "untitled:Untitled-1"}} {
		m := c.call("tools/call", map[string]any{"name": "getDiagnostics", "arguments": bad})
		if m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("arguments %v: %+v", bad, m)
		}
	}
}

// TestDiagnosticsWire checks the answer's text byte for byte where the
// deployed shape fixes it: escaped slashes, string severities, no empty
// source or code.
func TestDiagnosticsWire(t *testing.T) {
	dir := diagModule(t, map[string]string{"main.go": "package main\n\nfunc main() {\n\tprintln(x)\n}\n"})
	srv, _ := startDiagServer(t, dir, nil)
	c := dial(t, srv)
	c.handshake(1)
	text := c.callTool(mcp.ToolGetDiagnostics, map[string]any{"uri": fileURL(filepath.Join(dir, "main.go"))}).texts()[0]
	escaped := strings.ReplaceAll(fileURL(filepath.Join(dir, "main.go")), "/", `\/`)
	want := `[{"uri":"` + escaped + `","diagnostics":[{"message":"undefined: x","severity":"Error","source":"compiler","code":"UndeclaredName","range":{"start":{"line":3,"character":9},"end":{"line":3,"character":10}}}]}]`
	if text != want {
		t.Errorf("answer:\n%s\nwant:\n%s", text, want)
	}
}

// TestDiagnosticsWithoutServers: an empty configuration serves nothing,
// and a missing gopls is a clear error.
func TestDiagnosticsWithoutServers(t *testing.T) {
	dir := diagModule(t, map[string]string{"main.go": "package main\n\nfunc main() { x }\n"})
	srv, _ := startDiagServer(t, dir, []lsp.ServerConfig{})
	c := dial(t, srv)
	c.handshake(1)
	if files := getDiagnostics(t, c, map[string]any{"uri": fileURL(filepath.Join(dir, "main.go"))}); len(files) != 1 || len(files[0].Diagnostics) != 0 {
		t.Fatalf("no servers: %+v", files)
	}

	empty := t.TempDir()
	_, err := ideserver.NewDiagnostics(srv, &ideserver.DiagnosticsOptions{Env: []string{"GOPLS=" + filepath.Join(empty, "gopls")}})
	if !errors.Is(err, lsp.ErrGoplsNotFound) {
		t.Fatalf("NewDiagnostics without gopls: %v", err)
	}

	// Negative numbers are rejected, not taken for the default.
	for field, opts := range map[string]*ideserver.DiagnosticsOptions{
		"SettleTimeout": {Configs: []lsp.ServerConfig{}, SettleTimeout: -time.Second},
		"MaxFiles":      {Configs: []lsp.ServerConfig{}, MaxFiles: -1},
	} {
		if d, err := ideserver.NewDiagnostics(srv, opts); err == nil || d != nil || !strings.Contains(err.Error(), "DiagnosticsOptions."+field+" is negative") {
			t.Errorf("NewDiagnostics with a negative %s = %v, %v; want an error naming it", field, d, err)
		}
	}
}

// TestDiagnosticsContext: a call whose context has ended returns its
// error; the next call works.
func TestDiagnosticsContext(t *testing.T) {
	dir := diagModule(t, map[string]string{"main.go": "package main\n\nfunc main() {}\n"})
	_, d := startDiagServer(t, dir, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := d.Tool().Handler(ctx, &ideserver.ToolCall{Name: "getDiagnostics", Arguments: json.RawMessage(`{"uri":"main.go"}`)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := d.Tool().Handler(ctx, &ideserver.ToolCall{Name: "getDiagnostics", Arguments: json.RawMessage(`{"uri":"main.go"}`)})
	if err != nil || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, `"diagnostics":[]`) {
		t.Fatalf("clean file: %+v, %v", res, err)
	}
}

// A headless IDE whose getDiagnostics comes from gopls (found on PATH or
// in $GOPATH/bin): what `idebridge ide serve` runs.
func ExampleNewDiagnostics() {
	srv, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{"."}, DiffPolicy: ideserver.RejectDiffs})
	if err != nil {
		panic(err)
	}
	diags, err := ideserver.NewDiagnostics(srv, nil) // nil: gopls for .go files
	if err != nil {
		panic(err) // lsp.ErrGoplsNotFound says how to install gopls
	}
	if err := srv.RegisterTool(diags.Tool()); err != nil {
		panic(err)
	}
	ctx := context.Background()
	if err := srv.Start(ctx); err != nil {
		panic(err)
	}
	// ... agents connect, call getDiagnostics {"uri": "file:///..."} ...
	srv.Close()
	diags.Close(ctx)
}

// BenchmarkDiagnosticsAfterWrite measures what an agent waits for after
// writing a file: the file alternates between broken and fixed on disk,
// and each getDiagnostics must answer for the text just written, complete
// (gopls's analysis pass included). The headless IDE's gopls runs with
// diagnosticsDelay 0s; "gopls-default-delay" is the same with gopls's own
// 1 s default, for comparison.
func BenchmarkDiagnosticsAfterWrite(b *testing.B) {
	const broken = "package main\n\nfunc main() {\n\tprintln(x)\n}\n"
	const fixed = "package main\n\nfunc main() {\n\tprintln(1)\n}\n"
	gopls, err := lsp.FindGopls(nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name    string
		configs func(dir string) []lsp.ServerConfig
	}{
		{"diagnosticsDelay=0s", func(string) []lsp.ServerConfig { return nil }},
		{"gopls-default-delay", func(dir string) []lsp.ServerConfig {
			return []lsp.ServerConfig{lsp.GoplsConfig(gopls, dir)}
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			dir := diagModule(b, map[string]string{"main.go": fixed})
			_, d := startDiagServer(b, dir, bc.configs(dir))
			h := d.Tool().Handler
			call := &ideserver.ToolCall{Name: mcp.ToolGetDiagnostics, Arguments: json.RawMessage(`{"uri":"main.go"}`)}
			ctx := context.Background()
			if _, err := h(ctx, call); err != nil { // gopls starts and loads the module
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				text, want := fixed, `"diagnostics":[]`
				if i%2 == 0 {
					text, want = broken, `"undefined: x"`
				}
				writeText(b, filepath.Join(dir, "main.go"), text)
				res, err := h(ctx, call)
				if err != nil || !strings.Contains(res.Content[0].Text, want) {
					b.Fatalf("iteration %d: %+v, %v", i, res, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/call")
		})
	}
}

// TestDiagnosticsManyFiles: past MaxFiles, the oldest files drop out of
// the no-uri answer, and what remains is still complete.
func TestDiagnosticsManyFiles(t *testing.T) {
	files := map[string]string{}
	for i := range 6 {
		files[fmt.Sprintf("f%d.go", i)] = fmt.Sprintf("package main\n\nvar v%d int = \"s\"\n", i)
	}
	files["main.go"] = "package main\n\nfunc main() {}\n"
	dir := diagModule(t, files)
	srv := startServer(t, &ideserver.Options{WorkspaceFolders: []string{dir}, NoLockfile: true})
	d, err := ideserver.NewDiagnostics(srv, &ideserver.DiagnosticsOptions{Env: goplsEnviron(t), SettleTimeout: testTimeout, AnswerTimeout: testTimeout, MaxFiles: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(context.Background()) })
	if err := srv.RegisterTool(d.Tool()); err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv)
	c.handshake(1)
	for i := range 6 {
		got := getDiagnostics(t, c, map[string]any{"uri": fmt.Sprintf("f%d.go", i)})
		if len(got) != 1 || len(got[0].Diagnostics) != 1 {
			t.Fatalf("f%d.go: %+v", i, got)
		}
	}
	all := getDiagnostics(t, c, map[string]any{})
	var names []string
	for _, f := range all {
		names = append(names, filepath.Base(f.URI))
		if len(f.Diagnostics) != 1 || !strings.Contains(f.Diagnostics[0].Message, "cannot use \"s\"") {
			t.Errorf("%s: %+v", f.URI, f.Diagnostics)
		}
	}
	if strings.Join(names, ",") != "f3.go,f4.go,f5.go" {
		t.Errorf("no-uri answer covers %q, want the 3 most recent", names)
	}
}

// Check answers Go callers with each file's complete current set, every
// time (not only what is new), how it was known, and each file's own
// failure.
func TestDiagnosticsCheck(t *testing.T) {
	dir := diagModule(t, map[string]string{
		"main.go":  "package main\n\nfunc main() {\n\tx := 1\n}\n",
		"clean.go": "package main\n\nfunc helper() int { return 2 }\n",
		"notes.md": "# not code\n",
	})
	_, d := startDiagServer(t, dir, nil)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for round := range 2 {
		reps, err := d.Check(ctx, []string{"main.go", filepath.Join(dir, "clean.go"), "notes.md", "gone.go"})
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		if len(reps) != 4 {
			t.Fatalf("%d reports for 4 files", len(reps))
		}
		m := reps[0]
		if m.Err != nil || m.Path != filepath.Join(dir, "main.go") || m.Server != "gopls" || !m.Settle.Freshness.Fresh() {
			t.Fatalf("round %d: main.go report %+v", round, m)
		}
		if len(m.Diagnostics) != 1 || !strings.Contains(m.Diagnostics[0].Message, "declared and not used") || m.Diagnostics[0].Range.Start.Line != 3 {
			t.Errorf("round %d: main.go diagnostics %+v, want the one unused x on line 4 (every round)", round, m.Diagnostics)
		}
		if c := reps[1]; c.Err != nil || len(c.Diagnostics) != 0 || c.Server != "gopls" {
			t.Errorf("round %d: clean.go report %+v", round, c)
		}
		if n := reps[2]; n.Err != nil || n.Server != "" || len(n.Diagnostics) != 0 {
			t.Errorf("round %d: notes.md (no server) report %+v", round, n)
		}
		if g := reps[3]; !errors.Is(g.Err, os.ErrNotExist) {
			t.Errorf("round %d: missing file's error %v, want not exist", round, g.Err)
		}
	}
	// The file changes on disk: the next Check sees the new text.
	writeText(t, filepath.Join(dir, "main.go"), "package main\n\nfunc main() {\n\tx := 1\n\t_ = x\n}\n")
	reps, err := d.Check(ctx, []string{"main.go"})
	if err != nil || reps[0].Err != nil || len(reps[0].Diagnostics) != 0 {
		t.Errorf("after the fix: %+v, %v; want no diagnostics", reps, err)
	}
}
