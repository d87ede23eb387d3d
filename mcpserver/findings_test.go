package mcpserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idebridge/idebridge/lsp"
)

// rename with apply true, without an IDE, answers once with what
// happened: the files written, never "Nothing is written yet" first.
func TestRenameApplyAnswersOnce(t *testing.T) {
	dir := t.TempDir()
	testModule(t, dir)
	s := newTestServer(t, dir, &Options{NoIDE: true})
	res := s.ok("rename", map[string]any{"file": "greet.go", "line": 4, "symbol": "greet", "new_name": "hello", "apply": true})
	text := res.Text()
	if strings.Contains(text, "Nothing is written") || !strings.Contains(text, "Applied, written directly (no IDE connected)") ||
		!strings.Contains(text, "2 of 2 files written") {
		t.Errorf("rename with apply true answered:\n%s", text)
	}
	var st renameResult
	if err := json.Unmarshal(res.StructuredContent, &st); err != nil || !st.Applied || st.Written != 2 || len(st.Files) != 2 || st.Files[0].Outcome != "written" {
		t.Errorf("structured: %s (%v)", res.StructuredContent, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "main.go")); !strings.Contains(string(b), "hello(\"a\")") {
		t.Errorf("main.go after the rename:\n%s", b)
	}
	res = s.ok("rename", map[string]any{"file": "greet.go", "line": 4, "symbol": "hello", "new_name": "greet", "apply": false})
	if !strings.Contains(res.Text(), "Nothing is written yet.") {
		t.Errorf("a proposal not applied should say nothing is written:\n%s", res.Text())
	}
}

// A file no server serves is answered, in the tool result the model
// reads, with the servers there are and their extensions, or with how to
// configure one when there is none: never a pointer to the log.
func TestNoServerSaysWhichServersExist(t *testing.T) {
	dir := t.TempDir()
	testModule(t, dir)
	writeText(t, filepath.Join(dir, "notes.txt"), "notes\n")
	s := newTestServer(t, dir, &Options{NoIDE: true})
	none := newTestServer(t, dir, &Options{NoIDE: true, Configs: []lsp.ServerConfig{}})
	for _, c := range []struct {
		s    *testServer
		want string
	}{
		{s, "The language servers here: gopls (.go)"},
		{none, "No language server is configured for this project: the user can install a Claude Code LSP plugin"},
	} {
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"document_symbols", map[string]any{"file": "notes.txt"}},
			{"hover", map[string]any{"file": "notes.txt", "line": 1, "column": 1}},
			{"diagnostics", map[string]any{"files": []string{"notes.txt"}}},
		} {
			res := c.s.call(call.tool, call.args)
			if text := res.Text(); !res.IsError || !strings.Contains(text, c.want) || strings.Contains(text, "log") {
				t.Errorf("%s on notes.txt: %s\nwant it to say %q", call.tool, text, c.want)
			}
		}
	}
}
