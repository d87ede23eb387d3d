package ideserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzLineScanner checks lineScanner's promise on any input, in pieces of
// any size, with a small bound: a line without a string over the bound
// comes out unchanged; one with such strings comes out valid JSON when it
// went in so, each of them recorded with its true size.
func FuzzLineScanner(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":"0123456789","b":[1,"x"]}}}`), uint8(3), uint8(5))
	f.Add([]byte(`{"id":"\u00e9\"\\\/abcdefgh","method":"m","params":{"_meta":{"k":"vvvvvvvvvv"}}}`), uint8(1), uint8(4))
	f.Add([]byte(`[[[[{"aaaaaaaaaaaa":1}]]]] "unterminated`), uint8(7), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, piece, bound uint8) {
		s := &lineScanner{bound: int(bound%16) + 1}
		n := int(piece%64) + 1
		for i := 0; i < len(data); i += n {
			s.write(data[i:min(i+n, len(data))])
		}
		out := s.line()
		if len(s.over) == 0 && !bytes.Equal(out, data) {
			t.Fatalf("%q came out as %q with nothing recorded", data, out)
		}
		if json.Valid(data) && !json.Valid(out) {
			t.Fatalf("%q came out as %q, not JSON", data, out)
		}
		for _, o := range s.over {
			if o.size <= int64(s.bound) || len(o.String()) > 1024 {
				t.Fatalf("%q: recorded %+v (bound %d)", data, o, s.bound)
			}
		}
	})
}

// A line of a 32 MiB method, member name and _meta value, read in pieces,
// leaves a few bytes, not the line: what the scanner holds is bounded by
// its bound.
func TestLineScannerHoldsNoLongString(t *testing.T) {
	big := strings.Repeat("q", 32<<20)
	line := `{"jsonrpc":"2.0","id":7,"method":"` + big + `","params":{"` + big + `":1,"_meta":{"x":"` + big + `"}}}`
	s := &lineScanner{}
	peak := 0
	for i := 0; i < len(line); i += streamBuffer {
		s.write([]byte(line[i:min(i+streamBuffer, len(line))]))
		peak = max(peak, s.size+cap(s.str))
	}
	out := s.line()
	if peak > 2*maxString+scanBlock {
		t.Errorf("held %d bytes while reading a line of %d", peak, len(line))
	}
	if want := `{"jsonrpc":"2.0","id":7,"method":"…","params":{"…":1,"_meta":{"x":"…"}}}`; string(out) != want {
		t.Errorf("kept %.300s, want %s", out, want)
	}
	if len(s.over) != 3 || s.over[0].where != "method" || !s.over[1].key || s.over[1].where != "params" || s.over[2].where != "params._meta.x" || s.over[2].size != 32<<20 {
		t.Errorf("recorded %+v", s.over)
	}
}
