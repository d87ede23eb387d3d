package idebridge_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/mcp"

	"github.com/idebridge/idebridge/lsp"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/idebridge/ideserver"
)

// Edit diagnostics against a headless IDE whose getDiagnostics comes from
// real gopls (the tests fail, never skip, without gopls).

// goplsIDE starts a headless IDE on a new Go module holding files, with
// getDiagnostics answered by gopls and openDiff by policy.
func goplsIDE(t testing.TB, policy ideserver.DiffPolicy, files map[string]string) (*idebridge.Client, string) {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/edit\n\ngo 1.22\n"
	for name, text := range files {
		writeFile(t, filepath.Join(dir, name), text, 0o644)
	}
	srv, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{dir}, NoLockfile: true, DiffPolicy: policy})
	if err != nil {
		t.Fatal(err)
	}
	diags, err := ideserver.NewDiagnostics(srv, &ideserver.DiagnosticsOptions{
		Env:           append(os.Environ(), "GOPLSCACHE="+t.TempDir(), "GOPROXY=off", "GOFLAGS=-mod=mod"),
		SettleTimeout: reviewTimeout,
		AnswerTimeout: reviewTimeout, // a cold gopls on a busy machine: the complete answer, not the first 5 s
	})
	if err != nil {
		t.Fatalf("these tests need gopls %s: %v", lsp.GoplsVersion, err)
	}
	if err := srv.RegisterTool(diags.Tool()); err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(reviewCtx(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), reviewTimeout)
		defer cancel()
		if err := diags.Close(ctx); err != nil {
			t.Errorf("stopping gopls: %v", err)
		}
	})
	return reviewClient(t, srv.URL(), srv.AuthToken()), dir
}

const cleanMain = `package main

import "fmt"

func main() {
	fmt.Println("hi")
}
`

// TestEditDiagnosticsIntroducedError: an edit accepted in the diff viewer
// introduces one error; exactly that error is reported.
func TestEditDiagnosticsIntroducedError(t *testing.T) {
	c, dir := goplsIDE(t, ideserver.AcceptDiffs, map[string]string{"main.go": cleanMain})
	path := filepath.Join(dir, "main.go")
	ctx := reviewCtx(t)
	snap, err := idebridge.SnapshotDiagnostics(ctx, c, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Diagnostics) != 0 || snap.Text != cleanMain {
		t.Fatalf("snapshot of a clean file: %+v", snap)
	}
	broken := strings.Replace(cleanMain, `fmt.Println("hi")`, `fmt.Println(undefinedAfterEdit)`, 1)
	res, err := idebridge.NewReviewer(c, nil).ProposeEdit(ctx, idebridge.EditRequest{Path: path, NewText: broken})
	if err != nil || !res.Written {
		t.Fatalf("edit: %+v, %v", res, err)
	}
	news, err := snap.NewDiagnostics(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(news.Diagnostics) != 1 {
		t.Fatalf("new diagnostics: %+v", news.Diagnostics)
	}
	d := news.Diagnostics[0]
	if d.Message != "undefined: undefinedAfterEdit" || d.Severity != diag.SeverityError || d.Source != "compiler" || d.Range.Start != (diag.Position{Line: 5, Character: 13}) {
		t.Errorf("diagnostic %+v", d)
	}
	block := news.Render(&diag.RenderOptions{ProjectDir: dir})
	want := "<new-diagnostics>\nThe following new diagnostic issues were detected:\n\nmain.go:\n  ✘ [Line 6:14] undefined: undefinedAfterEdit [UndeclaredName] (compiler)\n</new-diagnostics>"
	if block != want {
		t.Errorf("rendered:\n%s\nwant:\n%s", block, want)
	}
	// The convenience gives the same text.
	if got := snap.TryNewDiagnosticsText(ctx, c, &diag.RenderOptions{ProjectDir: dir}); got != want {
		t.Errorf("TryNewDiagnosticsText:\n%s", got)
	}
}

// TestEditDiagnosticsMovedErrorIsNotNew: lines added above an existing
// error move it; it is not new. An edit of the error's own line that
// leaves the error in place is not new either.
func TestEditDiagnosticsMovedErrorIsNotNew(t *testing.T) {
	const old = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(x)\n}\n"
	c, dir := goplsIDE(t, ideserver.AcceptDiffs, map[string]string{"main.go": old})
	path := filepath.Join(dir, "main.go")
	ctx := reviewCtx(t)
	snap, err := idebridge.SnapshotDiagnostics(ctx, c, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Diagnostics) != 1 || snap.Diagnostics[0].Message != "undefined: x" || snap.Diagnostics[0].Range.Start.Line != 5 {
		t.Fatalf("snapshot: %+v", snap.Diagnostics)
	}
	moved := strings.Replace(old, "import \"fmt\"\n", "import \"fmt\"\n\n// One.\n// Two.\n// Three.\n", 1)
	if res, err := idebridge.NewReviewer(c, nil).ProposeEdit(ctx, idebridge.EditRequest{Path: path, NewText: moved}); err != nil || !res.Written {
		t.Fatalf("edit: %+v, %v", res, err)
	}
	news, err := snap.NewDiagnostics(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(news.Diagnostics) != 0 || news.Moved != 1 {
		t.Fatalf("after inserting lines above the error: new %+v, moved %d", news.Diagnostics, news.Moved)
	}
	if block := news.Render(nil); block != "" {
		t.Errorf("rendered %q for nothing new", block)
	}

	// The error's own line changes, the error stays.
	snap, err = idebridge.SnapshotDiagnostics(ctx, c, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := idebridge.WriteFileAtomic(path, []byte(strings.Replace(moved, "fmt.Println(x)", "fmt.Println(x, 1)", 1)), nil); err != nil {
		t.Fatal(err)
	}
	if news, err := snap.NewDiagnostics(ctx, c); err != nil || len(news.Diagnostics) != 0 {
		t.Fatalf("after editing the error's line: %+v, %v", news, err)
	}
	// And a second error on a new line is new, the first still is not.
	snap, _ = idebridge.SnapshotDiagnostics(ctx, c, path)
	if err := idebridge.WriteFileAtomic(path, []byte(strings.Replace(moved, "fmt.Println(x)\n", "fmt.Println(x)\n\tfmt.Println(y)\n", 1)), nil); err != nil {
		t.Fatal(err)
	}
	news, err = snap.NewDiagnostics(ctx, c)
	if err != nil || len(news.Diagnostics) != 1 || news.Diagnostics[0].Message != "undefined: y" {
		t.Fatalf("a second error: %+v, %v", news, err)
	}
}

// TestEditDiagnosticsCap: an edit that breaks hundreds of lines renders a
// block within 4,000 characters that says how much it left out.
func TestEditDiagnosticsCap(t *testing.T) {
	c, dir := goplsIDE(t, ideserver.AcceptDiffs, map[string]string{"main.go": cleanMain})
	path := filepath.Join(dir, "main.go")
	ctx := reviewCtx(t)
	snap, err := idebridge.SnapshotDiagnostics(ctx, c, path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(cleanMain)
	const n = 300
	for i := range n {
		fmt.Fprintf(&b, "var _ int = \"not an int %d\"\n", i)
	}
	if err := idebridge.WriteFileAtomic(path, []byte(b.String()), nil); err != nil {
		t.Fatal(err)
	}
	news, err := snap.NewDiagnostics(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(news.Diagnostics) != n {
		t.Fatalf("%d new diagnostics, want %d", len(news.Diagnostics), n)
	}
	block := news.Render(nil)
	if chars := utf8.RuneCountInString(block); chars > diag.DefaultMaxChars || chars < diag.DefaultMaxChars/2 {
		t.Errorf("block of %d characters", chars)
	}
	if !strings.HasPrefix(block, "<new-diagnostics>\n") || !strings.HasSuffix(block, "\n</new-diagnostics>") {
		t.Errorf("block is not wrapped:\n%s", block)
	}
	shown := strings.Count(block, "✘ [Line ")
	if !strings.Contains(block, fmt.Sprintf("… %d more not shown", n-shown)) || shown == 0 || shown >= n {
		t.Errorf("%d shown, cut marker missing or wrong:\n%s", shown, block[len(block)-200:])
	}
	// A tighter budget holds too.
	if small := news.Render(&diag.RenderOptions{MaxChars: 500}); utf8.RuneCountInString(small) > 500 || !strings.Contains(small, "more not shown") {
		t.Errorf("500-character block of %d characters:\n%s", utf8.RuneCountInString(small), small)
	}
}

// TestEditDiagnosticsIDEUnavailable: the convenience swallows what the
// error-returning API reports.
func TestEditDiagnosticsIDEUnavailable(t *testing.T) {
	ctx := reviewCtx(t)
	if s := idebridge.TrySnapshotDiagnostics(ctx, nil, "main.go"); s != nil {
		t.Errorf("snapshot without an IDE: %+v", s)
	}
	var none *idebridge.DiagnosticsSnapshot
	if got := none.TryNewDiagnosticsText(ctx, nil, nil); got != "" {
		t.Errorf("text without a snapshot: %q", got)
	}

	srv, dir := reviewIDE(t, nil) // the default tools have no getDiagnostics
	c := reviewClient(t, srv.URL(), srv.AuthToken())
	path := filepath.Join(dir, "main.go")
	if _, err := idebridge.SnapshotDiagnostics(ctx, c, path); err == nil {
		t.Error("SnapshotDiagnostics with an IDE that cannot answer: no error")
	}
	if s := idebridge.TrySnapshotDiagnostics(ctx, c, path); s != nil {
		t.Errorf("TrySnapshotDiagnostics: %+v", s)
	}
	snap := &idebridge.DiagnosticsSnapshot{Path: path}
	if _, err := snap.NewDiagnostics(ctx, c); err == nil {
		t.Error("NewDiagnostics with an IDE that cannot answer: no error")
	}
	if got := snap.TryNewDiagnosticsText(ctx, c, nil); got != "" {
		t.Errorf("TryNewDiagnosticsText: %q", got)
	}
	c.Close()
	if got := snap.TryNewDiagnosticsText(ctx, c, nil); got != "" {
		t.Errorf("TryNewDiagnosticsText after Close: %q", got)
	}
}

// TestEditDiagnosticsDiffViews: diagnostics an IDE reports under its diff
// views' URIs count as the file's: the Neovim plugin's buffer
// "<file>-<tab> (proposed)" and VS Code's _claude_fs_right: scheme. A
// diagnostic the snapshot had in the file and the IDE now reports only in
// the diff view is not new; one it reports in both is counted once.
func TestEditDiagnosticsDiffViews(t *testing.T) {
	srv, dir := reviewIDE(t, nil)
	path := filepath.Join(dir, "main.go")
	writeFile(t, path, "package main\n\nfunc main() { x }\n", 0o644)
	var answer string
	diag := func(msg string, line int) string {
		return fmt.Sprintf(`{"message":%q,"severity":"Error","source":"compiler","range":{"start":{"line":%d,"character":14},"end":{"line":%d,"character":15}}}`, msg, line, line)
	}
	if err := srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: "getDiagnostics"}, Handler: func(context.Context, *ideserver.ToolCall) (*mcp.ToolResult, error) {
		return mcp.TextResult(answer), nil
	}}); err != nil {
		t.Fatal(err)
	}
	c := reviewClient(t, srv.URL(), srv.AuthToken())
	ctx := reviewCtx(t)
	uri := "file://" + path
	answer = `[{"uri":"` + uri + `","diagnostics":[` + diag("undefined: x", 2) + `]}]`
	snap, err := idebridge.SnapshotDiagnostics(ctx, c, path)
	if err != nil || len(snap.Diagnostics) != 1 {
		t.Fatalf("snapshot: %+v, %v", snap, err)
	}
	answer = `[{"uri":"file://` + path + `-main.go-1234 (proposed)","diagnostics":[` + diag("undefined: x", 2) + `,` + diag("undefined: y", 3) + `]},` +
		`{"uri":"_claude_fs_right:` + path + `","diagnostics":[` + diag("undefined: y", 3) + `,` + diag("undefined: z", 4) + `]},` +
		`{"uri":"file://` + path + `.orig","diagnostics":[` + diag("undefined: elsewhere", 1) + `]},` +
		`{"uri":"file://` + path + `-notes.txt","diagnostics":[` + diag("undefined: elsewhere", 1) + `]}]`
	news, err := snap.NewDiagnostics(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range news.Diagnostics {
		got = append(got, d.Message)
	}
	if strings.Join(got, "|") != "undefined: y|undefined: z" {
		t.Errorf("new diagnostics %q", got)
	}
}

// BenchmarkEditDiagnostics is the agent's whole diagnostics round around
// one edit, over WebSocket against the gopls-backed headless IDE: the
// snapshot (getDiagnostics {uri}), the write, and the fetch after it
// (getDiagnostics {uri} and {}), with the line diff between.
func BenchmarkEditDiagnostics(b *testing.B) {
	c, dir := goplsIDE(b, ideserver.AcceptDiffs, map[string]string{"main.go": cleanMain})
	path := filepath.Join(dir, "main.go")
	broken := strings.Replace(cleanMain, `fmt.Println("hi")`, `fmt.Println(undefinedAfterEdit)`, 1)
	ctx := b.Context()
	if _, err := idebridge.SnapshotDiagnostics(ctx, c, path); err != nil { // gopls loads the module
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		text, want := broken, 1
		if i%2 == 1 {
			text, want = cleanMain, 0
		}
		snap, err := idebridge.SnapshotDiagnostics(ctx, c, path)
		if err != nil {
			b.Fatal(err)
		}
		if err := idebridge.WriteFileAtomic(path, []byte(text), nil); err != nil {
			b.Fatal(err)
		}
		news, err := snap.NewDiagnostics(ctx, c)
		if err != nil || len(news.Diagnostics) != want {
			b.Fatalf("iteration %d: %+v, %v", i, news, err)
		}
	}
}
