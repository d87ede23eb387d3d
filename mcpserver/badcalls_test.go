package mcpserver

import (
	"strings"
	"testing"
)

// An ambiguous symbol, an address the file does not have, and arguments
// outside the schema are isError results that say how to call again.
func TestBadCalls(t *testing.T) {
	dir := t.TempDir()
	testModule(t, dir)
	s := newTestServer(t, dir, &Options{NoIDE: true, NoIDEReason: "idebridge mcp was started with --no-ide"})
	for _, tc := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"definition", map[string]any{"file": "main.go", "line": 7, "symbol": "greet"},
			[]string{`"greet" occurs 2 times on line 7 (columns 14, 26); say which with occurrence (1 to 2), or give column instead of symbol`, "     7 | \tfmt.Println(greet(\"a\"), greet(\"b\"))"}},
		{"hover", map[string]any{"file": "main.go", "line": 7, "symbol": "nothere"}, []string{"main.go:7:nothere", "is not on line 7"}},
		{"references", map[string]any{"file": "main.go", "line": 70, "column": 1}, []string{"main.go:70:1"}},
		{"definition", map[string]any{"file": "main.go", "line": 7}, []string{"needs column (1-based) or symbol"}},
		{"definition", map[string]any{"file": "main.go", "line": "7", "column": 1}, []string{"line must be an integer, not string"}},
		{"diagnostics", map[string]any{"file": "main.go"}, []string{`there is no argument "file"`}},
		{"diagnostics", map[string]any{"files": []string{"nope.go", "/etc/hostname", "go.mod"}}, []string{"nope.go does not exist.",
			"/etc/hostname is outside the project (" + dir + ")", "No language server serves go.mod (.mod files)"}},
		{"document_symbols", map[string]any{"file": "notes.txt"}, []string{"No language server serves notes.txt (.txt files)"}},
		{"ide_selection", nil, []string{"No IDE connected: auto-connect is off: idebridge mcp was started with --no-ide."}},
		{"propose_edit", map[string]any{"file": "main.go", "content": "x"}, []string{"No IDE connected", "write the file with your own tools instead"}},
	} {
		res := s.call(tc.tool, tc.args)
		text, isErr := res.Text(), res.IsError
		if !isErr {
			t.Errorf("%s %v succeeded: %s", tc.tool, tc.args, text)
		}
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s %v answered:\n%s\nwant it to say %q", tc.tool, tc.args, text, w)
			}
		}
	}
}
