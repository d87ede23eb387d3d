package lsp

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParsePos checks the command line's place syntax: whatever parses
// prints back to a string that parses to the same place, and the parts
// hold what the syntax allows.
func FuzzParsePos(f *testing.F) {
	for _, s := range []string{"main.go:12", "main.go:12:5", "a.cpp:7:std::sort#3", `C:\x\y.go:1:2`, "a.ts:3:this.#count#2", "f:1:x#0", "f:01:02"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePos(s)
		if err != nil {
			return
		}
		if p.Path == "" || p.Line < 1 || p.Column < 0 || p.Occurrence < 0 || (p.Column > 0 && p.Symbol != "") {
			t.Fatalf("ParsePos(%q) = %+v", s, p)
		}
		again, err := ParsePos(p.String())
		if err != nil || again != p {
			t.Fatalf("ParsePos(%q) = %+v; its String %q parses to %+v, %v", s, p, p.String(), again, err)
		}
	})
}

// FuzzNavColumns checks the column conversions against the text: a column
// in characters converted to a server's units and back is the same column
// (clamped to the line), its byte offset cuts the line after that many
// characters, and a symbol found on a line is there, at the column given.
func FuzzNavColumns(f *testing.F) {
	f.Add("a😀b\té\r\n😀x", 0, 2, "b")
	f.Add("total = total + s.Area()", 0, 9, "total")
	f.Add("\xff\xfeab", 0, 1, "ab")
	f.Fuzz(func(t *testing.T, text string, line, col int, sym string) {
		if line < 0 || line > 50 || col < 0 || col > 500 {
			return
		}
		idx := newLineIndex(text)
		s, ok := idx.line(line)
		if !ok {
			return
		}
		runes := []rune(s)
		want := min(col, len(runes))
		for _, enc := range []string{EncodingUTF8, EncodingUTF16, EncodingUTF32} {
			u := idx.fromRunes(line, col, enc)
			if back := idx.toRunes(line, u, enc); back != want {
				t.Fatalf("%s: line %q col %d: fromRunes %d, back %d", enc, s, col, u, back)
			}
			off := idx.offset(line, u, enc)
			if got := text[idx.start[line]:off]; utf8.ValidString(s) && got != string(runes[:want]) {
				t.Fatalf("%s: line %q col %d: offset cuts %q", enc, s, col, got)
			}
		}
		if sym == "" || !utf8.ValidString(s) || !utf8.ValidString(sym) {
			return
		}
		for _, o := range symbolOccurrences(s, sym) {
			if o.col < 0 || o.col+o.n > len(runes) {
				t.Fatalf("occurrence %+v of %q outside line %q", o, sym, s)
			}
			off, n := namedPart(sym)
			part := string([]rune(sym[off:])[:n])
			if got := string(runes[o.col : o.col+o.n]); got != part {
				t.Fatalf("occurrence of %q at %d names %q, want %q", sym, o.col, got, part)
			}
			if !strings.Contains(s, sym) {
				t.Fatalf("%q found in %q", sym, s)
			}
		}
	})
}

// FuzzApplyEdits checks a rename's edits against a model: two edits given
// as line:column ranges in UTF-16 apply as the same cuts of the text made
// by hand, in either order, or are refused when they overlap.
func FuzzApplyEdits(f *testing.F) {
	f.Add("func Area() {}\nx := s.Area()\n", 0, 5, 0, 9, "Size", 1, 7, 1, 11, "Size")
	f.Add("a😀b\n", 0, 3, 0, 4, "B", 0, 0, 0, 1, "A")
	f.Add("same\n", 0, 1, 0, 2, "x", 0, 1, 0, 3, "y")
	f.Fuzz(func(t *testing.T, text string, l1, c1, l2, c2 int, t1 string, l3, c3, l4, c4 int, t2 string) {
		for _, v := range []int{l1, c1, l2, c2, l3, c3, l4, c4} {
			if v < 0 || v > 200 {
				return
			}
		}
		idx := newLineIndex(text)
		e1 := lspTextEdit{Range: lspRange{Start: lspPos{l1, c1}, End: lspPos{l2, c2}}, NewText: t1}
		e2 := lspTextEdit{Range: lspRange{Start: lspPos{l3, c3}, End: lspPos{l4, c4}}, NewText: t2}
		s1, n1 := idx.offset(l1, c1, EncodingUTF16), idx.offset(l2, c2, EncodingUTF16)
		s2, n2 := idx.offset(l3, c3, EncodingUTF16), idx.offset(l4, c4, EncodingUTF16)
		got, err := applyEdits(text, []lspTextEdit{e1, e2}, EncodingUTF16)
		swapped, serr := applyEdits(text, []lspTextEdit{e2, e1}, EncodingUTF16)
		if n1 < s1 || n2 < s2 {
			if err == nil || serr == nil {
				t.Fatalf("an edit ending before its start applied")
			}
			return
		}
		// The model: the edit that starts first (the first given, at the
		// same start) cuts first; the other must start after it ends.
		type cut struct {
			start, end int
			text       string
		}
		a, b := cut{s1, n1, t1}, cut{s2, n2, t2}
		if s2 < s1 {
			a, b = b, a
		}
		if b.start < a.end {
			if err == nil {
				t.Fatalf("overlapping edits %v and %v applied: %q", a, b, got)
			}
			return
		}
		want := text[:a.start] + a.text + text[a.end:b.start] + b.text + text[b.end:]
		if err != nil || got != want {
			t.Fatalf("edits %v %v: got %q, %v; want %q", a, b, got, err, want)
		}
		if s1 != s2 && (serr != nil || swapped != want) {
			t.Fatalf("edits in the other order: %q, %v; want %q", swapped, serr, want)
		}
	})
}
