package ideserver

import (
	"bytes"
	"io"
	"testing"
)

// FuzzStreamLines checks the stdio framing against a simple model: split
// the input at "\n"; a piece whose content (without its "\r\n" or "\n")
// is longer than the limit is reported with that length and no data; any
// other piece that is not blank is one message, without its trailing
// "\r" and "\n" bytes; blank pieces are skipped. The input is read through
// a small buffer, so that lines span many reads.
func FuzzStreamLines(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\":2}\r\n\n  \n{\"c\":3}"), uint8(8))
	f.Add([]byte("0123456789abcdef0123456789abcdef0123\r\nshort\n"), uint8(10))
	f.Add([]byte("\r\r\n\r\n\n"), uint8(0))
	f.Add(bytes.Repeat([]byte("x"), 100), uint8(99))
	f.Fuzz(func(t *testing.T, data []byte, lim uint8) {
		limit := int64(lim)
		var want []streamLine
		pieces := bytes.Split(data, []byte("\n"))
		for i, p := range pieces {
			last := i == len(pieces)-1
			if last && len(p) == 0 {
				break
			}
			content := int64(len(p))
			if !last && bytes.HasSuffix(p, []byte("\r")) {
				content--
			}
			switch {
			case content > limit:
				want = append(want, streamLine{tooLong: content})
			case len(bytes.TrimSpace(bytes.TrimRight(p, "\r\n"))) > 0:
				want = append(want, streamLine{data: bytes.TrimRight(p, "\r\n")})
			}
		}

		lines := make(chan streamLine)
		stop := make(chan struct{})
		defer close(stop)
		go readLines(bytes.NewReader(data), limit, 16, nil, lines, nil, stop)
		var got []streamLine
		for l := range lines {
			if l.err != nil {
				if l.err != io.EOF {
					t.Fatalf("error %v reading from memory", l.err)
				}
				break
			}
			got = append(got, l)
		}
		if len(got) != len(want) {
			t.Fatalf("%q (limit %d): %d lines %+v, want %d %+v", data, limit, len(got), got, len(want), want)
		}
		for i := range got {
			if got[i].tooLong != want[i].tooLong || !bytes.Equal(got[i].data, want[i].data) {
				t.Errorf("%q (limit %d): line %d is %+v, want %+v", data, limit, i, got[i], want[i])
			}
		}
	})
}
