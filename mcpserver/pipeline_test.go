package mcpserver

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// pipelineModule is testModule with a call of hello, which nothing
// declares yet: renaming greet to hello resolves that error.
func pipelineModule(t *testing.T, dir string) {
	testModule(t, dir)
	writeText(t, filepath.Join(dir, "main.go"), "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(greet(\"a\"), greet(\"b\"), hello(\"c\"))\n}\n")
}

// rename is checked before it is written: its answer carries the
// diagnostics it resolves; with the IDE, it is written all or none.
func TestRenameThroughThePipeline(t *testing.T) {
	dir := t.TempDir()
	pipelineModule(t, dir)
	env := testEnv(t)
	greet, main := filepath.Join(dir, "greet.go"), filepath.Join(dir, "main.go")
	var mode string
	policy := &diffLog{decide: func(req *ideserver.DiffRequest) ideserver.DiffDecision {
		if mode == "reject main" && req.NewPath == main {
			return ideserver.DiffDecision{Action: ideserver.DiffReject}
		}
		return ideserver.SaveDiff(req.NewContents)
	}}
	startIDE(t, dir, env, policy)
	s := newTestServer(t, dir, &Options{Env: env})
	greet0, main0 := readText(t, greet), readText(t, main)
	args := map[string]any{"file": "greet.go", "line": 4, "symbol": "greet", "new_name": "hello"}
	structured := func(res any) renameResult {
		t.Helper()
		var st renameResult
		raw := res.([]byte)
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	resolvedHello := func(st renameResult) bool {
		if st.Check == nil || st.Check.Resolved != 1 || st.Check.Introduced != 0 {
			return false
		}
		for _, f := range st.Check.Files {
			if f.Path == main && len(f.Resolved) == 1 && strings.Contains(f.Resolved[0].Message, "undefined: hello") {
				return true
			}
		}
		return false
	}

	// apply false: the proposal and its check; nothing shown, nothing written.
	a := map[string]any{"apply": false}
	for k, v := range args {
		a[k] = v
	}
	res := s.ok("rename", a)
	checkStructured(t, s.tools["rename"], res)
	if st := structured([]byte(res.StructuredContent)); !resolvedHello(st) || st.Applied {
		t.Errorf("rename apply false: %s", res.StructuredContent)
	}
	if text := res.Text(); !strings.Contains(text, "main.go: 1 resolved") || !strings.Contains(text, "Nothing is written yet.") {
		t.Errorf("rename apply false:\n%s", text)
	}
	if len(policy.files()) != 0 {
		t.Errorf("apply false showed %v in the IDE", policy.files())
	}

	// The IDE: main.go rejected, nothing written.
	mode = "reject main"
	res = s.ok("rename", args)
	checkStructured(t, s.tools["rename"], res)
	st := structured([]byte(res.StructuredContent))
	if !strings.Contains(res.Text(), "Not applied: the edit of main.go was rejected in TestIDE on port") || st.Written != 0 || !resolvedHello(st) {
		t.Errorf("rename with main.go rejected:\n%s\n%s", res.Text(), res.StructuredContent)
	}
	outcome := map[string]string{}
	for _, f := range st.Files {
		outcome[f.Path] = f.Outcome
	}
	if outcome[greet] != "skipped" || outcome[main] != "rejected" {
		t.Errorf("outcomes %v", outcome)
	}
	if readText(t, greet) != greet0 || readText(t, main) != main0 {
		t.Fatal("a rejected rename wrote a file")
	}

	// Accepted: both written, and the check is of what was written.
	mode = ""
	res = s.ok("rename", args)
	checkStructured(t, s.tools["rename"], res)
	st = structured([]byte(res.StructuredContent))
	if !strings.Contains(res.Text(), "Applied, reviewed in TestIDE on port") || st.Written != 2 || !resolvedHello(st) {
		t.Errorf("rename accepted:\n%s\n%s", res.Text(), res.StructuredContent)
	}
	if !strings.Contains(readText(t, greet), "func hello(name string)") || !strings.Contains(readText(t, main), "hello(\"a\"), hello(\"b\"), hello(\"c\")") {
		t.Errorf("after the rename:\n%s\n%s", readText(t, greet), readText(t, main))
	}
}

// propose_edit is staged and checked, then reviewed: the answer says what
// the user did and what the change does to the diagnostics; a text the
// user edited in the diff is what is written and checked.
func TestProposeEditThroughThePipeline(t *testing.T) {
	dir := t.TempDir()
	testModule(t, dir)
	env := testEnv(t)
	greet := filepath.Join(dir, "greet.go")
	const userText = "package main\n\n// greet says hello.\nfunc greet(name string) string { return \"hi \" + name + 1 }\n"
	var mode string
	policy := &diffLog{decide: func(req *ideserver.DiffRequest) ideserver.DiffDecision {
		switch mode {
		case "reject":
			return ideserver.DiffDecision{Action: ideserver.DiffReject}
		case "edit":
			return ideserver.SaveDiff(userText)
		}
		return ideserver.SaveDiff(req.NewContents)
	}}
	startIDE(t, dir, env, policy)
	s := newTestServer(t, dir, &Options{Env: env})
	greet0 := readText(t, greet)
	breaking := map[string]any{"file": "greet.go", "old_string": "func greet(name string) string", "new_string": "func greet(name string, n int) string"}
	introduced := func(raw []byte, want string) bool {
		var er editResult
		if err := json.Unmarshal(raw, &er); err != nil {
			t.Fatal(err)
		}
		if er.Check == nil {
			return false
		}
		for _, f := range er.Check.Files {
			for _, d := range f.Introduced {
				if strings.Contains(d.Message, want) {
					return true
				}
			}
		}
		return false
	}

	mode = "reject"
	res := s.ok("propose_edit", breaking)
	checkStructured(t, s.tools["propose_edit"], res)
	if text := res.Text(); !strings.HasPrefix(text, "The user rejected the edit of greet.go; the file is unchanged.") || !strings.Contains(text, "main.go: 2 introduced") {
		t.Errorf("propose_edit rejected:\n%s", text)
	}
	if !introduced(res.StructuredContent, "not enough arguments in call to greet") {
		t.Errorf("structured: %s", res.StructuredContent)
	}
	if readText(t, greet) != greet0 {
		t.Fatal("a rejected edit was written")
	}

	mode = "edit"
	res = s.ok("propose_edit", map[string]any{"file": "greet.go", "old_string": "says hello", "new_string": "says hi"})
	checkStructured(t, s.tools["propose_edit"], res)
	if text := res.Text(); !strings.HasPrefix(text, "The user accepted the edit of greet.go after changing it") || !strings.Contains(text, "greet.go: 1 introduced") {
		t.Errorf("propose_edit edited by the user:\n%s", text)
	}
	if readText(t, greet) != userText {
		t.Errorf("greet.go:\n%s", readText(t, greet))
	}
	if !introduced(res.StructuredContent, "mismatched types") {
		t.Errorf("the check of what was written misses the user's error: %s", res.StructuredContent)
	}
}

// The connection to the IDE closing during the review of the second file
// writes nothing, and the answer says so, naming the file. (A headless
// IDE that shuts down answers its pending diffs DIFF_REJECTED first: the
// connection is closed from this side, as a network drop would end it.)
func TestApplyEditIDELostDuringReview(t *testing.T) {
	dir := t.TempDir()
	editModule(t, dir)
	env := testEnv(t)
	a, b := filepath.Join(dir, "calc", "a.go"), filepath.Join(dir, "calc", "b.go")
	var s *testServer
	policy := ideserver.DiffPolicyFunc(func(ctx context.Context, req *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
		if req.NewPath == b {
			// The connection drops while the user looks at b.go.
			go s.srv.link.close()
			<-ctx.Done()
			return ideserver.DiffDecision{}, context.Cause(ctx)
		}
		return ideserver.SaveDiff(req.NewContents), nil
	})
	startIDE(t, dir, env, policy)
	s = newTestServer(t, dir, &Options{Env: env})
	wantA, wantB := readText(t, a), readText(t, b)
	res := s.call("apply_edit", map[string]any{"edits": []any{
		map[string]any{"file": "calc/a.go", "old_string": "Add adds.", "new_string": "Add adds two numbers."},
		map[string]any{"file": "calc/b.go", "old_string": "Twice doubles.", "new_string": "Twice doubles x."},
	}})
	checkStructured(t, s.tools["apply_edit"], res)
	if !res.IsError || !strings.Contains(res.Text(), "The review of calc/b.go in TestIDE on port") || !strings.Contains(res.Text(), "was lost during the review") ||
		!strings.Contains(res.Text(), "nothing was written") {
		t.Errorf("apply_edit with the IDE lost: isError %v:\n%s", res.IsError, res.Text())
	}
	if readText(t, a) != wantA || readText(t, b) != wantB {
		t.Fatal("a file was written though the review never ended")
	}
}

// propose_edit never writes a file with unsaved changes in the IDE: it
// refuses before showing the diff, naming the file.
func TestProposeEditRefusesUnderUnsavedChanges(t *testing.T) {
	dir := t.TempDir()
	testModule(t, dir)
	env := testEnv(t)
	greet := filepath.Join(dir, "greet.go")
	policy := &diffLog{decide: func(req *ideserver.DiffRequest) ideserver.DiffDecision { return ideserver.SaveDiff(req.NewContents) }}
	ide := startIDE(t, dir, env, policy)
	err := ide.RegisterTool(ideserver.Tool{
		Tool: mcp.Tool{Name: mcp.ToolCheckDocumentDirty, Description: "Report whether a document has unsaved changes",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"filePath":{"type":"string"}},"required":["filePath"]}`)},
		Handler: func(_ context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
			var args struct {
				FilePath string `json:"filePath"`
			}
			if err := call.Bind(&args); err != nil {
				return nil, err
			}
			return ideserver.JSONResult(map[string]any{"success": true, "filePath": args.FilePath, "isDirty": args.FilePath == greet, "isUntitled": false})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestServer(t, dir, &Options{Env: env})
	want := readText(t, greet)
	res := s.call("propose_edit", map[string]any{"file": "greet.go", "old_string": "says hello", "new_string": "says hi"})
	if !res.IsError || !strings.Contains(res.Text(), "greet.go has unsaved changes in TestIDE") || !strings.Contains(res.Text(), "the file is unchanged") {
		t.Errorf("propose_edit under unsaved changes: isError %v:\n%s", res.IsError, res.Text())
	}
	if readText(t, greet) != want || len(policy.files()) != 0 {
		t.Errorf("written, or shown in the IDE (%v)", policy.files())
	}
}
