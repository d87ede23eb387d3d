package lsp

import (
	"strings"
	"testing"
)

// DecodeEdits takes every edit kind by its JSON names, keeps an empty
// new_string (a deletion) apart from an absent one, and refuses what does
// not fit with a sentence naming the edit.
func TestDecodeEdits(t *testing.T) {
	edits, err := DecodeEdits([]byte(`[
		{"file": "a.go", "old_string": "x", "new_string": ""},
		{"file": "a.go", "new_text": ""},
		{"file": "a.go", "symbol": "Square.Area", "body": "return 1"},
		{"file": "a.go", "symbol": "main", "action": "insert_after", "text": "func f() {}"},
		{"file": "a.go", "symbol": "f", "action": "delete", "force": true},
		{"file": "a.go", "format": true},
		{"file": "a.go", "line": 3, "fix": "Organize Imports"}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(edits) != 7 {
		t.Fatalf("%d edits, want 7", len(edits))
	}
	if e := edits[0]; e.OldString != "x" || e.NewString != "" {
		t.Errorf("edit 1: %+v", e)
	}
	if e := edits[1]; e.NewText == nil || *e.NewText != "" {
		t.Errorf("edit 2: new_text %v, want a pointer to \"\"", e.NewText)
	}
	if e := edits[2]; e.Symbol != "Square.Area" || e.Body == nil || *e.Body != "return 1" {
		t.Errorf("edit 3: %+v", e)
	}
	if e := edits[3]; e.Action != SymbolInsertAfter || e.Text != "func f() {}" {
		t.Errorf("edit 4: %+v", e)
	}
	if e := edits[4]; e.Action != SymbolDelete || !e.Force {
		t.Errorf("edit 5: %+v", e)
	}
	if e := edits[5]; !e.Format {
		t.Errorf("edit 6: %+v", e)
	}
	if e := edits[6]; e.Fix != "Organize Imports" || e.Line != 3 {
		t.Errorf("edit 7: %+v", e)
	}

	for _, tc := range []struct{ in, says string }{
		{``, "no edits given"},
		{`[]`, "no edits given"},
		{`null`, "no edits given"},
		{`{"file": "a.go"}`, "not a JSON array of edits"},
		{`[{"file": "a.go", "new_text": "x"}] []`, "more follows the array"},
		{`[{"file": "a.go", "oldString": "x"}]`, `unknown field "oldString"`},
		{`[{"file": "a.go", "line": "3", "fix": "x"}]`, "not a JSON array of edits"},
		{`[{"new_text": "x"}]`, "edit 1: no file given"},
		{`[{"file": "a.go", "new_text": "x"}, {"file": "a.go", "old_string": "x"}]`, "edit 2: old_string needs new_string"},
		{`[{"file": "a.go", "old_string": "", "new_string": "y"}]`, "edit 1: old_string is empty"},
		{`[{"file": "a.go", "new_string": "y"}]`, "edit 1: new_string needs old_string"},
		{`[{"file": "a.go", "fix": "Organize Imports"}]`, "edit 1: fix needs line"},
		{`[{"file": "a.go", "line": 3}]`, "edit 1: line goes with fix"},
		{`[{"file": "a.go", "symbol": "main"}]`, "edit 1: symbol needs body"},
		{`[{"file": "a.go", "symbol": "main", "action": "rename", "text": "x"}]`, `edit 1: action "rename" is none of`},
		{`[{"file": "a.go", "action": "delete"}]`, "edit 1: action needs symbol"},
		{`[{"file": "a.go", "symbol": "main", "action": "replace"}]`, "edit 1: action replace needs text"},
	} {
		_, err := DecodeEdits([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: error %v, want one saying %q", tc.in, err, tc.says)
		}
	}
}
