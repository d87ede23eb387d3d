package lsp

import (
	"unicode/utf8"

	"github.com/idebridge/idebridge/diag"
)

// Position encodings a server may choose (LSP PositionEncodingKind).
const (
	EncodingUTF8  = "utf-8"
	EncodingUTF16 = "utf-16"
	EncodingUTF32 = "utf-32"
)

// lineIndex finds lines in a document text. Lines end at "\n", "\r\n" or a
// lone "\r", as LSP defines them.
type lineIndex struct {
	text  string
	start []int // byte offset where each line starts
}

func newLineIndex(text string) *lineIndex {
	idx := &lineIndex{text: text, start: []int{0}}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			idx.start = append(idx.start, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			idx.start = append(idx.start, i+1)
		}
	}
	return idx
}

// lines is the number of lines as people count them: a line break that
// ends the text does not start another line (LSP still accepts a position
// at the start of that empty line, the end of the text).
func (idx *lineIndex) lines() int {
	n := len(idx.start)
	if n > 1 && idx.start[n-1] == len(idx.text) {
		n--
	}
	return n
}

// line returns the text of line n without its terminator, and false when
// the document has no such line.
func (idx *lineIndex) line(n int) (string, bool) {
	if n < 0 || n >= len(idx.start) {
		return "", false
	}
	end := len(idx.text)
	if n+1 < len(idx.start) {
		end = idx.start[n+1]
	}
	s := idx.text[idx.start[n]:end]
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s, true
}

// toRunes converts a column counted in enc units on the given line to a
// column counted in characters (runes). A column inside a character counts
// that character as not yet passed; a column past the end of the line is
// clamped to the line's length, as LSP prescribes. A line the text does not
// have leaves the column unchanged.
func (idx *lineIndex) toRunes(line, col int, enc string) int {
	s, ok := idx.line(line)
	if !ok || col <= 0 {
		return col
	}
	if enc == EncodingUTF32 {
		if n := utf8.RuneCountInString(s); col > n {
			return n
		}
		return col
	}
	units, runes := 0, 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		w := 1
		switch enc {
		case EncodingUTF8:
			w = size // an invalid byte is one byte, as the server saw it
		default: // UTF-16
			if r > 0xFFFF {
				w = 2
			}
		}
		if units+w > col {
			return runes
		}
		units += w
		runes++
		if units == col {
			return runes
		}
	}
	return runes
}

// convertRange converts both ends of r.
func (idx *lineIndex) convertRange(r diag.Range, enc string) diag.Range {
	r.Start.Character = idx.toRunes(r.Start.Line, r.Start.Character, enc)
	r.End.Character = idx.toRunes(r.End.Line, r.End.Character, enc)
	return r
}
