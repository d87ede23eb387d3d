package lsp

import (
	"testing"
	"unicode/utf8"

	"github.com/idebridge/idebridge/diag"
)

func TestColumnsToRunes(t *testing.T) {
	text := "héllo 😀 wörld\r\nsecond\rthird\nend"
	idx := newLineIndex(text)
	tests := []struct {
		name      string
		line, col int
		enc       string
		want      int
	}{
		{"ascii prefix utf16", 0, 1, EncodingUTF16, 1},
		{"after é utf16", 0, 2, EncodingUTF16, 2},
		{"after é utf8", 0, 3, EncodingUTF8, 2},
		{"inside é utf8", 0, 2, EncodingUTF8, 1},
		{"before emoji utf16", 0, 6, EncodingUTF16, 6},
		{"inside emoji utf16", 0, 7, EncodingUTF16, 6},
		{"after emoji utf16", 0, 8, EncodingUTF16, 7},
		{"after emoji utf8", 0, 11, EncodingUTF8, 7},
		{"after emoji utf32", 0, 7, EncodingUTF32, 7},
		{"w of wörld utf16", 0, 9, EncodingUTF16, 8},
		{"end of line clamps utf16", 0, 100, EncodingUTF16, 13},
		{"end of line clamps utf8", 0, 100, EncodingUTF8, 13},
		{"end of line clamps utf32", 0, 100, EncodingUTF32, 13},
		{"crlf line ends before \\r", 1, 6, EncodingUTF16, 6},
		{"second line clamps at 6", 1, 7, EncodingUTF16, 6},
		{"lone cr line", 2, 3, EncodingUTF16, 3},
		{"last line", 3, 3, EncodingUTF16, 3},
		{"missing line unchanged", 9, 5, EncodingUTF16, 5},
		{"zero", 0, 0, EncodingUTF8, 0},
	}
	for _, tt := range tests {
		if got := idx.toRunes(tt.line, tt.col, tt.enc); got != tt.want {
			t.Errorf("%s: toRunes(%d, %d, %s) = %d, want %d", tt.name, tt.line, tt.col, tt.enc, got, tt.want)
		}
	}
}

// TestColumnsRoundTrip checks the conversion against a model: for every
// character boundary of a line, the column counted in an encoding converts
// back to the number of characters before it.
func TestColumnsRoundTrip(t *testing.T) {
	lines := []string{"", "plain", "ünïcödé", "a😀b😀😀c", "\u0301combining", "日本語のテキスト", "bad\xffbyte"}
	for _, enc := range []string{EncodingUTF8, EncodingUTF16, EncodingUTF32} {
		for _, line := range lines {
			idx := newLineIndex(line)
			units, runes := 0, 0
			for i := 0; i <= len(line); {
				if got := idx.toRunes(0, units, enc); got != runes {
					t.Errorf("%s %q: column %d -> %d, want %d", enc, line, units, got, runes)
				}
				if i == len(line) {
					break
				}
				r, size := utf8.DecodeRuneInString(line[i:])
				switch enc {
				case EncodingUTF8:
					units += size
				case EncodingUTF16:
					units++
					if r > 0xFFFF {
						units++
					}
				default:
					units++
				}
				runes++
				i += size
			}
		}
	}
}

func TestConvertRangeBothEnds(t *testing.T) {
	idx := newLineIndex("x := \"😀\"\ny := 😀 + 1")
	got := idx.convertRange(diag.Range{Start: diag.Position{Line: 0, Character: 5}, End: diag.Position{Line: 1, Character: 7}}, EncodingUTF16)
	want := diag.Range{Start: diag.Position{Line: 0, Character: 5}, End: diag.Position{Line: 1, Character: 6}}
	if got != want {
		t.Errorf("convertRange = %+v, want %+v", got, want)
	}
}
