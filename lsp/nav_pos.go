package lsp

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ParsePos parses the command line's place: FILE:LINE, FILE:LINE:COL or
// FILE:LINE:SYMBOL, where a trailing #N on the symbol picks its Nth
// occurrence on the line ("main.go:12:x#2"). The file part may itself
// contain colons (a Windows drive letter): the line is the first field
// after a colon that is all digits, and what follows it is a column when
// it is all digits, else a symbol (which may contain colons:
// "main.cpp:7:std::sort").
func ParsePos(s string) (Pos, error) {
	bad := func(why string) (Pos, error) {
		return Pos{}, fmt.Errorf("%q is not FILE:LINE, FILE:LINE:COL or FILE:LINE:SYMBOL: %s", s, why)
	}
	for i := 0; i < len(s); i++ {
		if s[i] != ':' || i == 0 {
			continue
		}
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i+1 || (j < len(s) && s[j] != ':') {
			continue
		}
		line, err := strconv.Atoi(s[i+1 : j])
		if err != nil || line < 1 {
			return bad("lines are 1-based numbers")
		}
		p := Pos{Path: s[:i], Line: line}
		if j == len(s) {
			return p, nil
		}
		rest := s[j+1:]
		if rest == "" {
			return bad("nothing after the line's colon")
		}
		if isDigits(rest) {
			col, err := strconv.Atoi(rest)
			if err != nil || col < 1 {
				return bad("columns are 1-based numbers")
			}
			p.Column = col
			return p, nil
		}
		if k := strings.LastIndexByte(rest, '#'); k > 0 && k < len(rest)-1 && isDigits(rest[k+1:]) {
			n, err := strconv.Atoi(rest[k+1:])
			if err != nil || n < 1 {
				return bad("occurrences are 1-based numbers")
			}
			rest, p.Occurrence = rest[:k], n
		}
		p.Symbol = rest
		return p, nil
	}
	return bad("no line number")
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// resolved is a Pos found in a document: 0-based line, the column in
// characters (0-based) and the length of the symbol part it names.
type resolved struct {
	line, col, n int
	text         string // the line
}

// maxShownLine bounds the line text in a PosError.
const maxShownLine = 300

// resolvePos finds p in idx, the document's text.
func resolvePos(idx *lineIndex, p Pos) (resolved, error) {
	fail := func(problem, text string, cols []int) error {
		return &PosError{Pos: p, Problem: problem, Text: shorten(text, maxShownLine), Columns: cols}
	}
	if p.Line < 1 {
		return resolved{}, fail(fmt.Sprintf("line %d: lines are 1-based", p.Line), "", nil)
	}
	if p.Column < 0 || p.Occurrence < 0 {
		return resolved{}, fail("columns and occurrences are 1-based", "", nil)
	}
	text, ok := idx.line(p.Line - 1)
	if !ok {
		return resolved{}, fail(fmt.Sprintf("the file has %d line%s; there is no line %d", idx.lines(), plural(idx.lines()), p.Line), "", nil)
	}
	n := utf8.RuneCountInString(text)
	if p.Column > 0 {
		if p.Column > n+1 {
			return resolved{}, fail(fmt.Sprintf("line %d has %d characters; column %d is past its end", p.Line, n, p.Column), text, nil)
		}
		return resolved{line: p.Line - 1, col: p.Column - 1, text: text}, nil
	}
	if p.Symbol == "" {
		return resolved{}, fail("give a column or the symbol's text on the line", text, nil)
	}
	occ := symbolOccurrences(text, p.Symbol)
	if len(occ) == 0 {
		return resolved{}, fail(fmt.Sprintf("%q is not on line %d", p.Symbol, p.Line), text, nil)
	}
	cols := make([]int, len(occ))
	for i, o := range occ {
		cols[i] = o.col + 1
	}
	switch {
	case p.Occurrence == 0 && len(occ) > 1:
		return resolved{}, fail(fmt.Sprintf("%q occurs %d times on line %d (columns %s); say which with #1 … #%d, or give a column",
			p.Symbol, len(occ), p.Line, joinInts(cols), len(occ)), text, cols)
	case p.Occurrence > len(occ):
		return resolved{}, fail(fmt.Sprintf("%q occurs %d time%s on line %d (columns %s), so there is no occurrence #%d",
			p.Symbol, len(occ), plural(len(occ)), p.Line, joinInts(cols), p.Occurrence), text, cols)
	}
	o := occ[max(p.Occurrence, 1)-1]
	return resolved{line: p.Line - 1, col: o.col, n: o.n, text: text}, nil
}

// occurrence is where a symbol's text stands on a line: the column (in
// characters, 0-based) and length of the part it names.
type occurrence struct{ col, n int }

// symbolOccurrences finds sym in line: whole-word matches when there are
// any, else every match. Each names the part of sym a model means: the
// last part of a qualified name at its start ("fmt.Println" names
// Println), else its first identifier, else all of it.
func symbolOccurrences(line, sym string) []occurrence {
	part, partLen := namedPart(sym)
	var whole, any []occurrence
	for i := 0; i+len(sym) <= len(line); {
		k := strings.Index(line[i:], sym)
		if k < 0 {
			break
		}
		at := i + k
		o := occurrence{col: utf8.RuneCountInString(line[:at+part]), n: partLen}
		any = append(any, o)
		if wordBoundary(line, at, at+len(sym), sym) {
			whole = append(whole, o)
		}
		i = at + len(sym)
	}
	if len(whole) > 0 {
		return whole
	}
	return any
}

// wordBoundary reports whether line[start:end] (which is sym) stands as a
// whole word: not glued to identifier characters on a side where sym
// itself begins or ends with one.
func wordBoundary(line string, start, end int, sym string) bool {
	first, _ := utf8.DecodeRuneInString(sym)
	last, _ := utf8.DecodeLastRuneInString(sym)
	if isIdentRune(first) && start > 0 {
		if r, _ := utf8.DecodeLastRuneInString(line[:start]); isIdentRune(r) {
			return false
		}
	}
	if isIdentRune(last) && end < len(line) {
		if r, _ := utf8.DecodeRuneInString(line[end:]); isIdentRune(r) {
			return false
		}
	}
	return true
}

func isIdentRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// namedPart returns the byte offset in sym of the part a position should
// name, and its length in characters: for a qualified name at the start
// of sym (a.b.c, a::b, a->b) its last identifier; else sym's first
// identifier; else all of sym.
func namedPart(sym string) (int, int) {
	ident := func(i int) int { // end of the identifier at i, or i
		for i < len(sym) {
			r, size := utf8.DecodeRuneInString(sym[i:])
			if !isIdentRune(r) {
				break
			}
			i += size
		}
		return i
	}
	if end := ident(0); end > 0 {
		start := 0
		for {
			next := -1
			for _, sep := range []string{".", "::", "->"} {
				if strings.HasPrefix(sym[end:], sep) {
					if e := ident(end + len(sep)); e > end+len(sep) {
						next = end + len(sep)
						start, end = next, e
					}
					break
				}
			}
			if next < 0 {
				return start, utf8.RuneCountInString(sym[start:end])
			}
		}
	}
	for i, r := range sym {
		if isIdentRune(r) {
			return i, utf8.RuneCountInString(sym[i:ident(i)])
		}
	}
	return 0, utf8.RuneCountInString(sym)
}

// caretLine marks the 1-based columns of text with carets, keeping the
// tabs of text so that the carets line up under it.
func caretLine(text string, cols []int) string {
	marks := map[int]bool{}
	last := 0
	for _, c := range cols {
		marks[c] = true
		last = max(last, c)
	}
	var b strings.Builder
	col := 1
	for _, r := range text {
		if col > last {
			break
		}
		switch {
		case marks[col]:
			b.WriteByte('^')
		case r == '\t':
			b.WriteByte('\t')
		default:
			b.WriteByte(' ')
		}
		col++
	}
	for ; col <= last; col++ {
		if marks[col] {
			b.WriteByte('^')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// shorten cuts s to at most n characters, marking the cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// fromRunes converts a column counted in characters on the given line to
// one counted in enc units: the inverse of toRunes. A column past the end
// of the line is the line's end; a line the text does not have leaves the
// column unchanged.
func (idx *lineIndex) fromRunes(line, col int, enc string) int {
	s, ok := idx.line(line)
	if !ok || col <= 0 || enc == EncodingUTF32 {
		return col
	}
	units, runes := 0, 0
	for i := 0; i < len(s) && runes < col; {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case enc == EncodingUTF8:
			units += size
		case r > 0xFFFF:
			units += 2
		default:
			units++
		}
		runes++
	}
	return units
}

// offset returns the byte offset in the text of a position counted in enc
// units, clamped to the line's end (and a line past the last to the end of
// the text), as LSP prescribes for positions past an end.
func (idx *lineIndex) offset(line, col int, enc string) int {
	if line < 0 {
		return 0
	}
	if line >= len(idx.start) {
		return len(idx.text)
	}
	s, _ := idx.line(line)
	base := idx.start[line]
	units := 0
	for i := 0; i < len(s); {
		if units >= col {
			return base + i
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case enc == EncodingUTF8:
			units += size
		case enc == EncodingUTF32:
			units++
		case r > 0xFFFF:
			units += 2
		default:
			units++
		}
		if units > col {
			return base + i // inside a character: before it
		}
		i += size
	}
	return base + len(s)
}
