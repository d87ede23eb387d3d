package lsp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/idebridge/idebridge/diag"
)

// symTree builds fileSymbols over text from nodes given by the text they
// span (its first occurrence).
func symTree(text string, roots ...*symNode) *fileSymbols {
	return &fileSymbols{text: text, idx: newLineIndex(text), roots: roots}
}

func node(text, path, span string, kind SymbolKind, children ...*symNode) *symNode {
	i := strings.Index(text, span)
	if i < 0 {
		panic("no " + span)
	}
	return &symNode{path: path, kind: kind, start: i, end: i + len(span), children: children}
}

func paths(ns []*symNode) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.path)
	}
	return out
}

// The symbols an edit touches are the declarations others can refer to:
// a function whose parameter changed (not the parameter, which only the
// function sees), a method (not its class) when the change is inside it,
// and the class too when the change is in the class outside its members.
func TestTouchingSymbols(t *testing.T) {
	text := "class Square:\n    size = 1\n    def area(self, w: int) -> int:\n        x = w\n        return x\n\ndef add(a: int, b: int) -> int:\n    return a + b\n"
	area := node(text, "Square.area", "def area(self, w: int) -> int:\n        x = w\n        return x", kindMethod,
		node(text, "Square.area.w", "w: int", 13), node(text, "Square.area.x", "x = w", 13))
	sq := node(text, "Square", text[:strings.Index(text, "\n\ndef add")], 5, node(text, "Square.size", "size = 1", 8), area)
	add := node(text, "add", "def add(a: int, b: int) -> int:\n    return a + b", kindFunction,
		node(text, "add.a", "a: int", 13), node(text, "add.b", "b: int", 13))
	fs := symTree(text, sq, add)
	at := func(s string) (int, int) {
		i := strings.Index(text, s)
		return i, i + len(s)
	}
	for _, tc := range []struct {
		span string
		want string
	}{
		{"b: int", "add"},                                     // a parameter: the function
		{"x = w", "Square.area"},                              // a local of a method: the method
		{"size = 1", "Square.size"},                           // a field: the field, not the class
		{"class Square:", "Square"},                           // the class's header
		{"1\n    def area", "Square.size Square.area Square"}, // across members: both, and the class
	} {
		s, e := at(tc.span)
		if got := strings.Join(paths(fs.touching(s, e)), " "); got != tc.want {
			t.Errorf("span %q: touching %q, want %q", tc.span, got, tc.want)
		}
	}
}

// Name paths: exact, Go's receiver form, a last part alone, an index for
// several; errors list what there is.
func TestFindSymbol(t *testing.T) {
	text := "a\nb\nc\nd\n"
	fs := symTree(text,
		node(text, "Square", "a", 23, node(text, "Square.Area", "b", kindMethod)),
		node(text, "draw", "c", kindFunction), node(text, "draw", "d", kindFunction))
	for _, tc := range []struct{ name, want, err string }{
		{"Square.Area", "Square.Area", ""},
		{"(*Square).Area", "Square.Area", ""},
		{"Area", "Square.Area", ""},
		{"draw[2]", "draw", ""},
		{"draw", "", `names 2 symbols (draw at line 3, draw at line 4); add [N]`},
		{"draw[3]", "", "there are 2, not 3"},
		{"draw[x]", "", "must be a number"},
		{"Circle", "", `no symbol "Circle" in the file; its symbols: Square, Square.Area, draw, draw`},
	} {
		n, err := fs.find(tc.name)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
		case tc.err == "" && (err != nil || n.path != tc.want):
			t.Errorf("%s: %v %v, want %s", tc.name, n, err, tc.want)
		}
	}
	if n, _ := fs.find("draw[2]"); n == nil || n.start != strings.Index(text, "d") {
		t.Errorf("draw[2] is %+v", n)
	}
}

// A body is replaced between the braces that end the declaration (the
// braces of a parameter's type do not count), or as the indented block
// after the header's colon; the given body is indented as the old one
// was, unless it carries its own indentation.
func TestReplaceBody(t *testing.T) {
	for _, tc := range []struct{ src, decl, body, want string }{
		{"func f(x struct{}) int {\n\treturn 1\n}\n", "func f(x struct{}) int {\n\treturn 1\n}", "return 2",
			"func f(x struct{}) int {\n\treturn 2\n}\n"},
		{"\tfunc (s S) m() {\n\t\ta()\n\t}\n", "func (s S) m() {\n\t\ta()\n\t}", "b()\nc()",
			"\tfunc (s S) m() {\n\t\tb()\n\t\tc()\n\t}\n"},
		{"class A:\n    def m(self,\n          x):\n        return 1\n\nz = 2\n", "def m(self,\n          x):\n        return 1", "y = x\nreturn y",
			"class A:\n    def m(self,\n          x):\n        y = x\n        return y\n\nz = 2\n"},
		{"def f():\n    return 1\n", "def f():\n    return 1", "    return 3", "def f():\n    return 3\n"},
	} {
		i := strings.Index(tc.src, tc.decl)
		n := &symNode{start: i, end: i + len(tc.decl)}
		lineStart := strings.LastIndexByte(tc.src[:i], '\n') + 1
		got, err := replaceBody(tc.src, n, lineStart, leadingSpace(tc.src[lineStart:]), tc.body)
		if err != nil || got != tc.want {
			t.Errorf("%q with body %q:\n%q, %v\nwant\n%q", tc.src, tc.body, got, err, tc.want)
		}
	}
	if _, err := replaceBody("x = 1\n", &symNode{start: 0, end: 5}, 0, "", "y"); err == nil {
		t.Error("a declaration without a body was given one")
	}
}

// old_string matches exactly once, or the error says how it does not.
func TestUniqueMatch(t *testing.T) {
	text := "a := 1\nb := 1\nc := 2\n"
	if at, err := uniqueMatch(text, "c := 2"); err != nil || at != 14 {
		t.Errorf("unique: %d %v", at, err)
	}
	if _, err := uniqueMatch(text, ":= 1"); err == nil || !strings.Contains(err.Error(), "occurs 2 times in the file (at lines 1, 2)") {
		t.Errorf("twice: %v", err)
	}
	if _, err := uniqueMatch(text, "c :=  2"); err == nil || !strings.Contains(err.Error(), "with other white space") {
		t.Errorf("white space: %v", err)
	}
	if _, err := uniqueMatch("aaa", "aa"); err == nil || !strings.Contains(err.Error(), "occurs 2 times") {
		t.Errorf("overlapping: %v", err)
	}
}

// A check's rendering shows the most severe diagnostics of a file first,
// at most 10, and counts the rest.
func TestEditCheckRenderBounded(t *testing.T) {
	var before, after fileSet
	after.server, before.server = "s", "s"
	after.res.Status, before.res.Status = StatusComplete, StatusComplete
	for i := range 25 {
		after.text += fmt.Sprintf("line %d\n", i)
		sev := diag.SeverityWarning
		if i == 24 {
			sev = diag.SeverityError
		}
		after.diags = append(after.diags, diag.Diagnostic{Severity: sev, Message: fmt.Sprintf("problem %d", i),
			Range: diag.Range{Start: diag.Position{Line: i}}})
	}
	before.text = after.text
	fc := compareSets("/p/a.go", true, before, after)
	c := &EditCheck{Files: []FileCheck{fc}, Introduced: len(fc.Introduced), Status: StatusComplete}
	out := c.Render("/p")
	if !strings.HasPrefix(out, "a.go: 25 introduced\n  + 25:1 error: problem 24\n  + 1:1 warning: problem 0\n") ||
		!strings.Contains(out, "  + 9:1 warning: problem 8\n  … 15 more\n") || strings.Contains(out, "problem 9\n") {
		t.Errorf("rendered:\n%s", out)
	}
}

// A check with no change but a file not known complete never says "no
// diagnostics introduced or resolved": what was received so far is not
// an answer; one with every file complete does.
func TestEditCheckRenderNoChange(t *testing.T) {
	complete := &EditCheck{Files: []FileCheck{{Path: "/p/a.go", Edited: true, Server: "s", Status: StatusComplete}}, Status: StatusComplete}
	if out := complete.Render("/p"); !strings.HasPrefix(out, "no diagnostics introduced or resolved\nchecked 1 files") {
		t.Errorf("complete:\n%s", out)
	}
	unknown := &EditCheck{Files: []FileCheck{
		{Path: "/p/a.go", Edited: true, Server: "s", Status: StatusComplete},
		{Path: "/p/b.go", Server: "s", Status: StatusUnknown, Reason: "no publish for it from s within 10s"},
	}, Status: StatusUnknown}
	out := unknown.Render("/p")
	if strings.Contains(out, "no diagnostics introduced or resolved") ||
		!strings.Contains(out, "b.go: unknown: no publish for it from s within 10s\n") ||
		!strings.Contains(out, "nothing introduced or resolved in the diagnostics received so far\n") ||
		!strings.Contains(out, "1 of them with diagnostics not known complete (unknown)") {
		t.Errorf("a file unknown:\n%s", out)
	}
}

// What a document keeps as its whole set is bounded: a flood keeps the
// maxSetKept most severe and its true size, and a check that compared a
// cut set says it is partial and why.
func TestRecordSetBounded(t *testing.T) {
	ds := make([]diag.Diagnostic, 3*maxSetKept)
	for i := range ds {
		ds[i] = diag.Diagnostic{Severity: diag.SeverityWarning, Message: "w", Range: diag.Range{Start: diag.Position{Line: i}}}
	}
	ds[len(ds)-1].Severity = diag.SeverityError
	var tr docTrack
	tr.recordSet(ds, false)
	if len(tr.set) != maxSetKept || tr.setTotal != len(ds) || tr.set[0].Severity != diag.SeverityError {
		t.Fatalf("kept %d of %d (total %d), first %v", len(tr.set), len(ds), tr.setTotal, tr.set[0].Severity)
	}
	before := fileSet{server: "s", res: SettleResult{Status: StatusComplete}}
	after := fileSet{server: "s", res: SettleResult{Status: StatusComplete}, diags: tr.set, total: tr.setTotal}
	fc := compareSets("/p/a.go", true, before, after)
	if fc.Status != StatusPartial || !strings.Contains(fc.Reason, "3000 diagnostics, the 1000 most severe compared") {
		t.Errorf("status %s: %s", fc.Status, fc.Reason)
	}
}
