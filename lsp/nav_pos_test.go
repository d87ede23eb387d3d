package lsp

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestParsePos(t *testing.T) {
	tests := []struct {
		in   string
		want Pos
	}{
		{"main.go:12", Pos{Path: "main.go", Line: 12}},
		{"main.go:12:5", Pos{Path: "main.go", Line: 12, Column: 5}},
		{"main.go:12:Println", Pos{Path: "main.go", Line: 12, Symbol: "Println"}},
		{"main.go:12:x#2", Pos{Path: "main.go", Line: 12, Symbol: "x", Occurrence: 2}},
		{"main.go:12:fmt.Println", Pos{Path: "main.go", Line: 12, Symbol: "fmt.Println"}},
		{"a.cpp:7:std::sort", Pos{Path: "a.cpp", Line: 7, Symbol: "std::sort"}},
		{"a.cpp:7:std::sort#3", Pos{Path: "a.cpp", Line: 7, Symbol: "std::sort", Occurrence: 3}},
		{"a.ts:3:#count", Pos{Path: "a.ts", Line: 3, Symbol: "#count"}},
		{"a.ts:3:this.#count#2", Pos{Path: "a.ts", Line: 3, Symbol: "this.#count", Occurrence: 2}},
		{`C:\src\main.go:4:2`, Pos{Path: `C:\src\main.go`, Line: 4, Column: 2}},
		{"dir:x/main.go:4:y", Pos{Path: "dir:x/main.go", Line: 4, Symbol: "y"}},
		{"v1:2/f.go:3", Pos{Path: "v1:2/f.go", Line: 3}},
	}
	for _, tt := range tests {
		got, err := ParsePos(tt.in)
		if err != nil {
			t.Errorf("ParsePos(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParsePos(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		if s := got.String(); s != tt.in {
			t.Errorf("ParsePos(%q).String() = %q", tt.in, s)
		}
	}
	for _, bad := range []string{"", "main.go", "main.go:", "main.go:0", "main.go:3:0", ":3", "main.go:x", "main.go:3:"} {
		if p, err := ParsePos(bad); err == nil {
			t.Errorf("ParsePos(%q) = %+v, want an error", bad, p)
		}
	}
}

// A line break that ends the text does not start a line of its own in
// the count an error shows.
func TestResolvePosCountsLinesAsPeopleDo(t *testing.T) {
	for text, want := range map[string]string{
		"a\nb\nc\n": "the file has 3 lines; there is no line 9",
		"a\nb\nc":   "the file has 3 lines; there is no line 9",
		"x\r\n":     "the file has 1 line; there is no line 9",
		"a\n\n":     "the file has 2 lines; there is no line 9",
		"":          "the file has 1 line; there is no line 9",
	} {
		_, err := resolvePos(newLineIndex(text), Pos{Path: "f.go", Line: 9, Column: 1})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
	// The empty line after the last line break is still a place (the end).
	if _, err := resolvePos(newLineIndex("a\n"), Pos{Path: "f.go", Line: 2, Column: 1}); err != nil {
		t.Errorf("the end of a text ending in a line break: %v", err)
	}
}

func TestResolvePos(t *testing.T) {
	text := "package p\n\n\ttotal = total + s.Area()\n\ts := \"😀 🎉\"; n := max(x, 1)\nx"
	idx := newLineIndex(text)
	tests := []struct {
		pos      Pos
		line     int
		col, n   int
		problems []string // substrings of the error
	}{
		{pos: Pos{Line: 3, Symbol: "total", Occurrence: 2}, line: 2, col: 9, n: 5},
		{pos: Pos{Line: 3, Symbol: "total", Occurrence: 1}, line: 2, col: 1, n: 5},
		{pos: Pos{Line: 3, Symbol: "s.Area"}, line: 2, col: 19, n: 4},
		{pos: Pos{Line: 3, Symbol: "Area()"}, line: 2, col: 19, n: 4},
		{pos: Pos{Line: 3, Column: 20}, line: 2, col: 19},
		{pos: Pos{Line: 4, Symbol: "x"}, line: 3, col: 22, n: 1},  // not the x in max
		{pos: Pos{Line: 4, Symbol: "n"}, line: 3, col: 13, n: 1},  // after the emoji, in characters
		{pos: Pos{Line: 4, Symbol: "ma"}, line: 3, col: 18, n: 2}, // no whole word: a substring
		{pos: Pos{Line: 5, Column: 2}, line: 4, col: 1},           // the end of the last line
		{pos: Pos{Line: 3, Symbol: "total"}, problems: []string{`"total" occurs 2 times on line 3 (columns 2, 10)`, "#1 … #2", "\ttotal = total", "\t^       ^"}},
		{pos: Pos{Line: 3, Symbol: "total", Occurrence: 3}, problems: []string{"no occurrence #3", "columns 2, 10"}},
		{pos: Pos{Line: 3, Symbol: "Perimeter"}, problems: []string{`"Perimeter" is not on line 3`, "     3 | \ttotal = total + s.Area()"}},
		{pos: Pos{Line: 9, Column: 1}, problems: []string{"the file has 5 lines; there is no line 9"}},

		{pos: Pos{Line: 3, Column: 40}, problems: []string{"line 3 has 25 characters; column 40 is past its end"}},
		{pos: Pos{Line: 0, Column: 1}, problems: []string{"lines are 1-based"}},
		{pos: Pos{Line: 3}, problems: []string{"give a column or the symbol's text"}},
	}
	for _, tt := range tests {
		tt.pos.Path = "f.go"
		r, err := resolvePos(idx, tt.pos)
		if len(tt.problems) > 0 {
			if err == nil {
				t.Errorf("%v: resolved to %+v, want an error", tt.pos, r)
				continue
			}
			if !errors.Is(err, ErrBadPos) {
				t.Errorf("%v: %v does not match ErrBadPos", tt.pos, err)
			}
			for _, p := range tt.problems {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("%v: error lacks %q:\n%v", tt.pos, p, err)
				}
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tt.pos, err)
			continue
		}
		if r.line != tt.line || r.col != tt.col || r.n != tt.n {
			t.Errorf("%v: resolved to line %d col %d n %d, want %d %d %d", tt.pos, r.line, r.col, r.n, tt.line, tt.col, tt.n)
		}
	}
}

func TestNamedPart(t *testing.T) {
	for sym, want := range map[string]string{
		"x": "x", "fmt.Println": "Println", "std::vector<int>": "vector", "obj->method()": "method",
		"a.b.c": "c", "*ptr": "ptr", "Println(fmt.Sprint(x))": "Println", "+": "+", "#count": "count",
		"Größe": "Größe", "a.": "a",
	} {
		off, n := namedPart(sym)
		if got := string([]rune(sym[off:])[:n]); got != want {
			t.Errorf("namedPart(%q) names %q, want %q", sym, got, want)
		}
	}
}

// units16 is a simple model of a UTF-16 column: the UTF-16 length of the
// line's first n characters.
func units16(line string, n int) int {
	r := []rune(line)
	return len(utf16.Encode(r[:min(n, len(r))]))
}

func TestColumnConversions(t *testing.T) {
	text := "a😀b\té\n\r\n😀😀x\r🎉"
	idx := newLineIndex(text)
	for line := 0; line < len(idx.start); line++ {
		s, _ := idx.line(line)
		n := utf8.RuneCountInString(s)
		for col := 0; col <= n+2; col++ {
			want := min(col, n)
			if got := idx.fromRunes(line, col, EncodingUTF16); got != units16(s, col) {
				t.Errorf("line %d col %d: fromRunes UTF-16 = %d, want %d", line, col, got, units16(s, col))
			}
			if got := idx.fromRunes(line, col, EncodingUTF8); got != len(string([]rune(s)[:want])) {
				t.Errorf("line %d col %d: fromRunes UTF-8 = %d", line, col, got)
			}
			for _, enc := range []string{EncodingUTF8, EncodingUTF16, EncodingUTF32} {
				u := idx.fromRunes(line, min(col, n), enc)
				if back := idx.toRunes(line, u, enc); back != want {
					t.Errorf("line %d col %d %s: toRunes(fromRunes) = %d, want %d", line, col, enc, back, want)
				}
				off := idx.offset(line, u, enc)
				if got := text[idx.start[line]:off]; got != string([]rune(s)[:want]) {
					t.Errorf("line %d col %d %s: offset gives %q", line, col, enc, got)
				}
			}
		}
	}
	if got := idx.offset(99, 0, EncodingUTF16); got != len(text) {
		t.Errorf("offset past the last line = %d, want %d", got, len(text))
	}
	// Inside a surrogate pair: before the character.
	if got := idx.offset(0, 2, EncodingUTF16); got != 1 {
		t.Errorf("offset inside a surrogate pair = %d, want 1", got)
	}
}

func TestCaretLine(t *testing.T) {
	if got := caretLine("\tab cd ab", []int{2, 8}); got != "\t^     ^" {
		t.Errorf("caretLine = %q", got)
	}
	if got := caretLine("ab", []int{4}); got != "   ^" {
		t.Errorf("caretLine past the end = %q", got)
	}
}

func TestHoverMarkdown(t *testing.T) {
	tests := map[string]string{
		`{"kind":"markdown","value":"` + "```go\\nfunc f()\\n```\\n\\ndoc" + `"}`: "```go\nfunc f()\n```\n\ndoc",
		`{"kind":"plaintext","value":" x int "}`:                                  "x int",
		`"plain"`:                                                                 "plain",
		`{"language":"python","value":"def f(): ..."}`:                            "```python\ndef f(): ...\n```",
		`[{"language":"c","value":"int x"},"the doc",""]`:                         "```c\nint x\n```\n\nthe doc",
		`null`: "",
		`[]`:   "",
	}
	for in, want := range tests {
		if got := hoverMarkdown([]byte(in)); got != want {
			t.Errorf("hoverMarkdown(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestDecodeLocations(t *testing.T) {
	one := `{"uri":"file:///a.go","range":{"start":{"line":1,"character":2},"end":{"line":1,"character":4}}}`
	link := `{"targetUri":"file:///b.go","targetRange":{"start":{"line":0,"character":0},"end":{"line":9,"character":1}},` +
		`"targetSelectionRange":{"start":{"line":3,"character":5},"end":{"line":3,"character":8}}}`
	for in, want := range map[string][]string{
		"null":                       nil,
		"[]":                         {},
		one:                          {"file:///a.go 1:2"},
		"[" + one + "," + link + "]": {"file:///a.go 1:2", "file:///b.go 3:5"},
	} {
		list, err := decodeLocations([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		var got []string
		for _, l := range list {
			got = append(got, l.URI+" "+strconv.Itoa(l.Range.Start.Line)+":"+strconv.Itoa(l.Range.Start.Character))
		}
		if len(got) != len(want) || (len(got) > 0 && !cmp.Equal(got, want)) {
			t.Errorf("%s: got %q, want %q", in, got, want)
		}
	}
	if _, err := decodeLocations([]byte(`{"uri":3}`)); err == nil {
		t.Error("a malformed location decoded")
	}
}

func TestWorkspaceEditsRefusesFileOperations(t *testing.T) {
	we := lspWorkspaceEdit{DocumentChanges: []json.RawMessage{
		[]byte(`{"textDocument":{"uri":"file:///a.go","version":1},"edits":[]}`),
		[]byte(`{"kind":"rename","oldUri":"file:///a.go","newUri":"file:///b.go"}`),
		[]byte(`{"kind":"create","uri":"file:///c.go"}`),
	}}
	_, err := workspaceEdits(&we)
	if err == nil || !strings.Contains(err.Error(), "rename /a.go to /b.go, create /c.go") {
		t.Errorf("workspaceEdits = %v, want a refusal naming the operations", err)
	}
}
