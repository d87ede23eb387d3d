package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// editModule writes a module where calc/a.go declares Add, which
// calc/b.go (its package) and app/c.go (another package) call.
func editModule(t *testing.T, dir string) {
	t.Helper()
	writeText(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	writeText(t, filepath.Join(dir, "calc", "a.go"), "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n")
	writeText(t, filepath.Join(dir, "calc", "b.go"), "package calc\n\n// Twice doubles.\nfunc Twice(x int) int { return Add(x, x) }\n")
	writeText(t, filepath.Join(dir, "app", "c.go"), "package app\n\nimport \"example.com/m/calc\"\n\n// Sum sums.\nfunc Sum() int { return calc.Add(1, 2) }\n")
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// An agent previews a breaking change and sees the error it makes in a
// file of another package, which it never named; previews the change with
// its fixes and sees nothing broken; applies both in one call; and reads
// a symbol's source by name. Nothing is written before apply_edit.
func TestPreviewThenApplyEdits(t *testing.T) {
	dir := t.TempDir()
	editModule(t, dir)
	s := newTestServer(t, dir, &Options{NoIDE: true})
	a, b, c := filepath.Join(dir, "calc", "a.go"), filepath.Join(dir, "calc", "b.go"), filepath.Join(dir, "app", "c.go")
	before := map[string]string{a: readText(t, a), b: readText(t, b), c: readText(t, c)}
	unchanged := func(when string) {
		t.Helper()
		for p, want := range before {
			if got := readText(t, p); got != want {
				t.Fatalf("%s: %s was written:\n%s", when, p, got)
			}
		}
	}

	breaking := map[string]any{"file": "calc/a.go", "old_string": "func Add(a, b int) int {\n\treturn a + b", "new_string": "func Add(a, b, c int) int {\n\treturn a + b + c"}
	res := s.ok("preview_edit", map[string]any{"edits": []any{breaking}})
	text := res.Text()
	for _, want := range []string{"Preview (nothing written):", "app/c.go: 1 introduced", "not enough arguments in call to calc.Add", "calc/b.go: 1 introduced", "+func Add(a, b, c int) int {"} {
		if !strings.Contains(text, want) {
			t.Errorf("preview does not say %q:\n%s", want, text)
		}
	}
	v := checkStructured(t, s.tools["preview_edit"], res)
	if v["introduced"] != float64(2) || v["applied"] != false || v["status"] != statusComplete {
		t.Errorf("structured: %s", res.StructuredContent)
	}
	var got verifiedResult
	if err := json.Unmarshal(res.StructuredContent, &got); err != nil {
		t.Fatal(err)
	}
	sawC := false
	for _, f := range got.Files {
		if f.Path == c && !f.Edited && len(f.Introduced) == 1 && f.Introduced[0].Severity == "Error" && f.Introduced[0].Range.Start.Line == 6 {
			sawC = true
		}
	}
	if !sawC {
		t.Errorf("c.go's error is not in the structured files: %s", res.StructuredContent)
	}
	unchanged("after the preview")

	fixes := []any{breaking,
		map[string]any{"file": "calc/b.go", "old_string": "Add(x, x)", "new_string": "Add(x, x, 0)"},
		map[string]any{"file": "app/c.go", "old_string": "calc.Add(1, 2)", "new_string": "calc.Add(1, 2, 0)"},
	}
	res = s.ok("preview_edit", map[string]any{"edits": fixes})
	if text := res.Text(); !strings.Contains(text, "no diagnostics introduced or resolved") || !strings.Contains(text, "checked 3 files (3 edited, 0 dependents)") {
		t.Errorf("preview with the fixes:\n%s", text)
	}
	unchanged("after the second preview")

	res = s.ok("apply_edit", map[string]any{"edits": fixes})
	v = checkStructured(t, s.tools["apply_edit"], res)
	if text := res.Text(); !strings.Contains(text, "Written: calc/a.go, calc/b.go, app/c.go.") || !strings.Contains(text, "no diagnostics introduced or resolved") {
		t.Errorf("apply:\n%s", text)
	}
	if v["applied"] != true || v["introduced"] != float64(0) {
		t.Errorf("structured: %s", res.StructuredContent)
	}
	for p, want := range map[string]string{a: "func Add(a, b, c int) int {\n\treturn a + b + c\n}", b: "Add(x, x, 0)", c: "calc.Add(1, 2, 0)"} {
		if !strings.Contains(readText(t, p), want) {
			t.Errorf("%s on disk:\n%s", p, readText(t, p))
		}
	}
	// The servers have the written text: diagnostics of the disk are clean.
	if text := s.ok("diagnostics", map[string]any{"files": []string{"calc/a.go", "calc/b.go", "app/c.go"}}).Text(); strings.Contains(text, "✘") {
		t.Errorf("diagnostics after apply:\n%s", text)
	}

	// A quick fix: the code actions at a line, one staged by its title.
	writeText(t, filepath.Join(dir, "calc", "up.go"), "package calc\n\n// Up shouts.\nfunc Up(s string) string { return strings.ToUpper(s) }\n")
	res = s.ok("fixes", map[string]any{"file": "calc/up.go", "line": 4})
	checkStructured(t, s.tools["fixes"], res)
	if text := res.Text(); !strings.Contains(text, `- Add import:  "strings" [quickfix]: fixes undefined: strings`) {
		t.Errorf("fixes:\n%s", text)
	}
	res = s.ok("preview_edit", map[string]any{"edits": []any{map[string]any{"file": "calc/up.go", "line": 4, "fix": "Add import"}}})
	if text := res.Text(); !strings.Contains(text, "calc/up.go: 1 resolved\n  - 4:35 error: undefined: strings") || !strings.Contains(text, "+import \"strings\"") {
		t.Errorf("preview of the fix:\n%s", text)
	}

	// A messy text and its formatting, previewed: the diff is gofmt's.
	res = s.ok("preview_edit", map[string]any{"edits": []any{
		map[string]any{"file": "calc/b.go", "old_string": "return Add(x, x, 0)", "new_string": "return   Add(x,x,0)"},
		map[string]any{"file": "calc/b.go", "format": true},
	}})
	if text := res.Text(); !strings.Contains(text, "no diagnostics introduced or resolved") || strings.Contains(text, "--- a/calc/b.go") {
		t.Errorf("preview of a messy edit formatted:\n%s", text)
	}

	res = s.ok("symbol_source", map[string]any{"file": "calc/a.go", "symbol": "Add"})
	checkStructured(t, s.tools["symbol_source"], res)
	if text := res.Text(); !strings.Contains(text, "calc/a.go:4-6 Add\nfunc Add(a, b, c int) int {") {
		t.Errorf("symbol_source:\n%s", text)
	}
}

// Edits that cannot apply are refused whole, with a sentence a model can
// act on, and nothing is written.
func TestEditToolsRefuseBadEdits(t *testing.T) {
	dir := t.TempDir()
	editModule(t, dir)
	s := newTestServer(t, dir, &Options{NoIDE: true})
	a := filepath.Join(dir, "calc", "a.go")
	want := readText(t, a)
	for _, tc := range []struct {
		edits []any
		says  string
	}{
		{[]any{map[string]any{"file": "calc/a.go", "old_string": "nowhere", "new_string": "x"}}, "does not occur"},
		{[]any{map[string]any{"file": "calc/a.go", "old_string": "b", "new_string": "x"}}, "occurs 2 times in the file (at lines 4, 5)"},
		{[]any{map[string]any{"file": "calc/a.go", "old_string": "Add"}}, "needs new_string"},
		{[]any{map[string]any{"file": "calc/a.go", "symbol": "Add", "action": "delete"}}, "still has 2 references"},
		{[]any{map[string]any{"file": "calc/a.go", "symbol": "Add"}}, "symbol needs body"},
		{[]any{map[string]any{"file": "../elsewhere.go", "new_text": "x"}}, "outside the project"},
		{[]any{map[string]any{"file": "calc/a.go", "format": true, "new_text": "x"}}, "give exactly one of"},
	} {
		res := s.call("apply_edit", map[string]any{"edits": tc.edits})
		if !res.IsError || !strings.Contains(res.Text(), tc.says) {
			t.Errorf("%v: isError %v:\n%s", tc.edits, res.IsError, res.Text())
		}
		checkStructured(t, s.tools["apply_edit"], res)
	}
	if got := readText(t, a); got != want {
		t.Errorf("a.go was written:\n%s", got)
	}
}

// With the user's IDE connected, apply_edit never writes a file that has
// unsaved changes there: it asks checkDocumentDirty and refuses the whole
// edit, naming the file; with no file dirty it writes. The headless IDE
// has no buffers, so its checkDocumentDirty is replaced by one that
// answers for a buffer with unsaved changes in b.go.
func TestApplyEditRefusesUnderUnsavedChanges(t *testing.T) {
	dir := t.TempDir()
	editModule(t, dir)
	env := testEnv(t)
	ide, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{dir}, LockfileDir: filepath.Join(getenv(env, "CLAUDE_CONFIG_DIR"), "ide"),
		IDEName: "TestIDE", DiffPolicy: ideserver.AcceptDiffs})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := ide.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer ide.Close()
	a, b := filepath.Join(dir, "calc", "a.go"), filepath.Join(dir, "calc", "b.go")
	var asked []string
	var mu sync.Mutex
	savedB := false
	err = ide.RegisterTool(ideserver.Tool{
		Tool: mcp.Tool{Name: mcp.ToolCheckDocumentDirty, Description: "Report whether a document has unsaved changes",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"filePath":{"type":"string"}},"required":["filePath"]}`)},
		Handler: func(_ context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
			var args struct {
				FilePath string `json:"filePath"`
			}
			if err := call.Bind(&args); err != nil {
				return nil, err
			}
			mu.Lock()
			asked = append(asked, args.FilePath)
			mu.Unlock()
			return ideserver.JSONResult(map[string]any{"success": true, "filePath": args.FilePath, "isDirty": args.FilePath == b && !savedB, "isUntitled": false})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Saving b.go writes the user's unsaved change to disk, as an editor
	// does.
	err = ide.RegisterTool(ideserver.Tool{
		Tool: mcp.Tool{Name: mcp.ToolSaveDocument, Description: "Save a document",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"filePath":{"type":"string"}},"required":["filePath"]}`)},
		Handler: func(_ context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
			var args struct {
				FilePath string `json:"filePath"`
			}
			if err := call.Bind(&args); err != nil {
				return nil, err
			}
			mu.Lock()
			defer mu.Unlock()
			if args.FilePath == b && !savedB {
				writeText(t, b, strings.Replace(readText(t, b), "// Twice doubles.", "// Twice doubles (the user's unsaved words).", 1))
				savedB = true
			}
			return ideserver.JSONResult(map[string]any{"success": true, "filePath": args.FilePath, "saved": true})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestServer(t, dir, &Options{Env: env})
	wantA, wantB := readText(t, a), readText(t, b)
	edits := []any{
		map[string]any{"file": "calc/a.go", "old_string": "Add adds.", "new_string": "Add adds two numbers."},
		map[string]any{"file": "calc/b.go", "old_string": "Twice doubles.", "new_string": "Twice doubles x."},
	}
	res := s.call("apply_edit", map[string]any{"edits": edits})
	if !res.IsError || !strings.Contains(res.Text(), "calc/b.go has unsaved changes in TestIDE") || !strings.Contains(res.Text(), "nothing was written") {
		t.Errorf("apply_edit under an unsaved buffer: isError %v:\n%s", res.IsError, res.Text())
	}
	checkStructured(t, s.tools["apply_edit"], res)
	if readText(t, a) != wantA || readText(t, b) != wantB {
		t.Fatal("a file was written under an unsaved buffer")
	}
	mu.Lock()
	if len(asked) != 2 {
		t.Errorf("the IDE was asked about %v", asked)
	}
	mu.Unlock()

	res = s.ok("apply_edit", map[string]any{"edits": edits[:1]})
	if !strings.Contains(readText(t, a), "Add adds two numbers.") {
		t.Errorf("a.go was not written:\n%s", res.Text())
	}

	// save_unsaved: the IDE saves b.go first, and the edit applies to the
	// saved text.
	res = s.ok("apply_edit", map[string]any{"save_unsaved": true, "edits": []any{
		map[string]any{"file": "calc/b.go", "old_string": "(the user's unsaved words)", "new_string": "(the user's words, saved)"}}})
	checkStructured(t, s.tools["apply_edit"], res)
	if !strings.Contains(res.Text(), "Saved the unsaved changes of calc/b.go in the IDE first.") || !strings.Contains(readText(t, b), "// Twice doubles (the user's words, saved).") {
		t.Errorf("apply_edit save_unsaved:\n%s\nb.go:\n%s", res.Text(), readText(t, b))
	}
}

// startIDE starts a headless IDE on dir whose lockfile env's discovery
// finds, deciding diffs with policy.
func startIDE(t *testing.T, dir string, env []string, policy ideserver.DiffPolicy) *ideserver.Server {
	t.Helper()
	ide, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{dir}, LockfileDir: filepath.Join(getenv(env, "CLAUDE_CONFIG_DIR"), "ide"),
		IDEName: "TestIDE", DiffPolicy: policy})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := ide.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ide.Close() })
	return ide
}

// diffLog is a DiffPolicy that records the files shown and answers with
// decide.
type diffLog struct {
	mu     sync.Mutex
	shown  []string
	decide func(req *ideserver.DiffRequest) ideserver.DiffDecision
}

func (d *diffLog) Decide(_ context.Context, req *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
	d.mu.Lock()
	d.shown = append(d.shown, req.NewPath)
	d.mu.Unlock()
	return d.decide(req), nil
}

func (d *diffLog) files() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.shown...)
}

// With the user's IDE connected, apply_edit shows every file in its diff
// viewer first and writes all of them or none: accepted, all are written
// and checked; one of two rejected, nothing is written and the answer
// names the file; a file the user changed in the diff is written as they
// left it, and the check is of that text (the error their change makes
// shows); review false writes without asking.
func TestApplyEditReviewedInIDE(t *testing.T) {
	dir := t.TempDir()
	editModule(t, dir)
	env := testEnv(t)
	a, b, c := filepath.Join(dir, "calc", "a.go"), filepath.Join(dir, "calc", "b.go"), filepath.Join(dir, "app", "c.go")
	const userB = "package calc\n\n// Twice doubles.\nfunc Twice(x int) int { return Add(x, x, \"zero\") }\n"
	var mode string // what the user does; set before each call
	policy := &diffLog{decide: func(req *ideserver.DiffRequest) ideserver.DiffDecision {
		switch {
		case mode == "reject b" && req.NewPath == b:
			return ideserver.DiffDecision{Action: ideserver.DiffReject}
		case mode == "edit b" && req.NewPath == b:
			return ideserver.SaveDiff(userB)
		}
		return ideserver.SaveDiff(req.NewContents)
	}}
	startIDE(t, dir, env, policy)
	s := newTestServer(t, dir, &Options{Env: env})
	fixes := []any{
		map[string]any{"file": "calc/a.go", "old_string": "func Add(a, b int) int {\n\treturn a + b", "new_string": "func Add(a, b, c int) int {\n\treturn a + b + c"},
		map[string]any{"file": "calc/b.go", "old_string": "Add(x, x)", "new_string": "Add(x, x, 0)"},
	}
	before := map[string]string{a: readText(t, a), b: readText(t, b), c: readText(t, c)}

	mode = "reject b"
	res := s.call("apply_edit", map[string]any{"edits": fixes})
	checkStructured(t, s.tools["apply_edit"], res)
	if !res.IsError || !strings.Contains(res.Text(), "The user rejected the edit of calc/b.go in TestIDE on port ") || !strings.Contains(res.Text(), "(after accepting 1 other file(s)); nothing was written") {
		t.Errorf("apply_edit with b.go rejected: isError %v:\n%s", res.IsError, res.Text())
	}
	var got verifiedResult
	if err := json.Unmarshal(res.StructuredContent, &got); err != nil {
		t.Fatal(err)
	}
	if got.Applied || got.Refused != "calc/b.go" || got.Outcome != "rejected" || len(got.Written) != 0 {
		t.Errorf("structured: %s", res.StructuredContent)
	}
	for p, want := range before {
		if readText(t, p) != want {
			t.Fatalf("%s was written though b.go was rejected", p)
		}
	}
	if shown := policy.files(); len(shown) != 2 || shown[0] != a || shown[1] != b {
		t.Errorf("files shown: %v", shown)
	}

	mode = "edit b"
	res = s.ok("apply_edit", map[string]any{"edits": fixes})
	checkStructured(t, s.tools["apply_edit"], res)
	text := res.Text()
	if !strings.Contains(text, ". (reviewed in TestIDE on port ") || !strings.Contains(text, "The user changed calc/b.go in the review") {
		t.Errorf("apply_edit with b.go edited by the user:\n%s", text)
	}
	if readText(t, b) != userB {
		t.Errorf("b.go on disk:\n%s", readText(t, b))
	}
	got = verifiedResult{}
	if err := json.Unmarshal(res.StructuredContent, &got); err != nil {
		t.Fatal(err)
	}
	sawB, sawC := false, false
	for _, f := range got.Files {
		for _, d := range f.Introduced {
			sawB = sawB || f.Path == b && strings.Contains(d.Message, `"zero"`)
			sawC = sawC || f.Path == c && strings.Contains(d.Message, "not enough arguments")
		}
	}
	if !sawB || !sawC || !got.Applied || len(got.Modified) != 1 || got.Modified[0] != "calc/b.go" {
		t.Errorf("the check of what was written misses the user's error in b.go (%v) or c.go's (%v): %s", sawB, sawC, res.StructuredContent)
	}

	// Accept all, and review false.
	mode = ""
	n := len(policy.files())
	res = s.ok("apply_edit", map[string]any{"edits": []any{
		map[string]any{"file": "calc/b.go", "old_string": `Add(x, x, "zero")`, "new_string": "Add(x, x, 0)"},
		map[string]any{"file": "app/c.go", "old_string": "calc.Add(1, 2)", "new_string": "calc.Add(1, 2, 0)"},
	}})
	if text := res.Text(); !strings.Contains(text, ". (reviewed in TestIDE on port ") || !strings.Contains(text, "calc/b.go: 1 resolved") || len(policy.files()) != n+2 {
		t.Errorf("apply_edit accepted (%d shown):\n%s", len(policy.files())-n, text)
	}
	if !strings.Contains(readText(t, c), "calc.Add(1, 2, 0)") {
		t.Errorf("c.go on disk:\n%s", readText(t, c))
	}
	res = s.ok("apply_edit", map[string]any{"review": false, "edits": []any{map[string]any{"file": "app/c.go", "old_string": "// Sum sums.", "new_string": "// Sum adds."}}})
	if !strings.Contains(res.Text(), ". (directly, without review in TestIDE on port ") || len(policy.files()) != n+2 || !strings.Contains(readText(t, c), "Sum adds.") {
		t.Errorf("apply_edit review false:\n%s", res.Text())
	}
}
