package fuzz

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/idebridge/idebridge/lsp"
)

// frameFuzzMax is a small body limit, so that short inputs reach it.
const frameFuzzMax = 64

// modelFrames is the LSP base protocol as lsp.FrameCodec documents
// it, restated over a whole input: header lines end in "\n" (a "\r"
// before it is dropped), empty lines before a header block are skipped,
// an empty line ends the block, Content-Length (any case) gives the body
// size, other headers are ignored. It returns the bodies read and whether
// the input ended cleanly at a frame boundary.
func modelFrames(data []byte) (bodies [][]byte, clean bool) {
	rest := data
	for {
		length, lines := -1, 0
		for {
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				return bodies, lines == 0 && len(rest) == 0
			}
			if i > 1024 {
				return bodies, false
			}
			line := string(rest[:i])
			rest = rest[i+1:]
			line = strings.TrimSuffix(line, "\r")
			if line == "" {
				if lines == 0 {
					continue
				}
				break
			}
			if lines++; lines > 32 {
				return bodies, false
			}
			name, value, ok := strings.Cut(line, ":")
			if !ok {
				return bodies, false
			}
			if !strings.EqualFold(strings.TrimSpace(name), "content-length") {
				continue
			}
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 || (length >= 0 && n != length) {
				return bodies, false
			}
			length = n
		}
		if length < 0 || length > frameFuzzMax || length > len(rest) {
			return bodies, false
		}
		body := rest[:length]
		if !json.Valid(body) {
			return bodies, false
		}
		bodies = append(bodies, body)
		rest = rest[length:]
	}
}

// FuzzLSPFrame reads arbitrary input with lsp.FrameCodec and checks it
// against modelFrames: the same bodies in the same order, a clean io.EOF
// exactly where the model ends cleanly, and otherwise an error matching
// lsp.ErrFrame. Every body read is written back with WriteObject and
// read again: the same JSON value comes out.
func FuzzLSPFrame(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		codec := lsp.FrameCodec{MaxBytes: frameFuzzMax}
		r := bufio.NewReader(bytes.NewReader(data))
		var got [][]byte
		var err error
		for {
			var v json.RawMessage
			if err = codec.ReadObject(r, &v); err != nil {
				break
			}
			got = append(got, v)
		}
		want, clean := modelFrames(data)
		if len(got) != len(want) {
			t.Fatalf("read %d frames, model %d (err %v)", len(got), len(want), err)
		}
		for i := range got {
			if !bytes.Equal(got[i], bytes.TrimSpace(want[i])) && !jsonEqual(got[i], want[i]) {
				t.Fatalf("frame %d = %q, model %q", i, got[i], want[i])
			}
		}
		if clean != (err == io.EOF) {
			t.Fatalf("ended with %v, model clean=%v", err, clean)
		}
		if err != io.EOF && !errors.Is(err, lsp.ErrFrame) {
			t.Fatalf("error %v does not match ErrFrame", err)
		}

		for i, body := range got {
			var buf bytes.Buffer
			if err := codec.WriteObject(&buf, json.RawMessage(body)); err != nil {
				t.Fatalf("writing frame %d: %v", i, err)
			}
			// Without the small limit: writing escapes HTML characters,
			// which may make the body longer.
			var back json.RawMessage
			if err := (lsp.FrameCodec{}).ReadObject(bufio.NewReader(&buf), &back); err != nil {
				t.Fatalf("reading back frame %d: %v", i, err)
			}
			if !jsonEqual(back, body) {
				t.Fatalf("frame %d round trip: %q -> %q", i, body, back)
			}
		}
	})
}

// jsonEqual compares two JSON values by meaning, numbers by their text
// (a number too large for a float64, such as 1E400, is still valid JSON).
func jsonEqual(a, b []byte) bool {
	decode := func(data []byte, v *any) error {
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		return d.Decode(v)
	}
	var x, y any
	if decode(a, &x) != nil || decode(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
