package lsp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

func readAll(t *testing.T, c FrameCodec, input string) ([]string, error) {
	t.Helper()
	r := bufio.NewReader(strings.NewReader(input))
	var bodies []string
	for {
		var v json.RawMessage
		if err := c.ReadObject(r, &v); err != nil {
			return bodies, err
		}
		bodies = append(bodies, string(v))
	}
}

func TestFrameCodecReads(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		want    []string
		wantErr error // io.EOF for a clean end
		problem string
	}{
		{"two frames", "Content-Length: 2\r\n\r\n{}Content-Length: 7\r\n\r\n[1,2,3]", []string{"{}", "[1,2,3]"}, io.EOF, ""},
		{"content type and case", "content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}", []string{"{}"}, io.EOF, ""},
		{"bare LF lines", "Content-Length: 2\n\n{}", []string{"{}"}, io.EOF, ""},
		{"stray line break between frames", "Content-Length: 2\r\n\r\n{}\r\nContent-Length: 2\r\n\r\n[]", []string{"{}", "[]"}, io.EOF, ""},
		{"empty input", "", nil, io.EOF, ""},
		{"no length", "Content-Type: x\r\n\r\n{}", nil, ErrFrame, "no Content-Length header"},
		{"bad length", "Content-Length: nonsense\r\n\r\n{}", nil, ErrFrame, "bad Content-Length"},
		{"negative length", "Content-Length: -2\r\n\r\n{}", nil, ErrFrame, "bad Content-Length"},
		{"conflicting lengths", "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{} ", nil, ErrFrame, "conflicting"},
		{"no colon", "Content-Length 2\r\n\r\n{}", nil, ErrFrame, "no colon"},
		{"body cut short", "Content-Length: 10\r\n\r\n{}", nil, io.ErrUnexpectedEOF, "reading 10-byte body"},
		{"header cut short", "Content-Len", nil, io.ErrUnexpectedEOF, "reading header"},
		{"not JSON", "Content-Length: 3\r\n\r\nabc", nil, ErrFrame, "not a JSON-RPC message"},
		{"bytes after the value inside the body", "Content-Length: 4\r\n\r\n{}xxContent-Length: 2\r\n\r\n{}", nil, ErrFrame, "not a JSON-RPC message"},
		{"too large", "Content-Length: 999999999\r\n\r\n", nil, ErrFrame, "exceeds the limit"},
		{"header line too long", "X: " + strings.Repeat("a", 2000) + "\r\n", nil, ErrFrame, "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(t, FrameCodec{}, tt.input)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("bodies = %q, want %q", got, tt.want)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.problem != "" && !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("err = %q, want it to mention %q", err, tt.problem)
			}
			if tt.wantErr != io.EOF && !errors.Is(err, ErrFrame) {
				t.Errorf("err = %v does not match ErrFrame", err)
			}
		})
	}
}

func TestFrameCodecLimit(t *testing.T) {
	c := FrameCodec{MaxBytes: 10}
	if _, err := readAll(t, c, "Content-Length: 10\r\n\r\n\"12345678\""); err != io.EOF {
		t.Errorf("10 bytes under a limit of 10: %v", err)
	}
	_, err := readAll(t, c, "Content-Length: 11\r\n\r\n\"123456789\"")
	var fe *FrameError
	if !errors.As(err, &fe) || !strings.Contains(fe.Problem, "exceeds") {
		t.Errorf("11 bytes over a limit of 10: %v", err)
	}
}

// TestFrameCodecAgreesWithVSCodeCodec writes messages with jsonrpc2's
// VSCodeObjectCodec and reads them with FrameCodec, and the reverse.
func TestFrameCodecAgreesWithVSCodeCodec(t *testing.T) {
	msgs := []any{
		map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"x": "é😀"}},
		map[string]any{"jsonrpc": "2.0", "method": "exit"},
		[]int{1, 2, 3},
		"a string with \r\n inside",
	}
	for _, pair := range []struct {
		name string
		w    jsonrpc2.ObjectCodec
		r    jsonrpc2.ObjectCodec
	}{{"vscode to frame", jsonrpc2.VSCodeObjectCodec{}, FrameCodec{}}, {"frame to vscode", FrameCodec{}, jsonrpc2.VSCodeObjectCodec{}}} {
		var buf bytes.Buffer
		for _, m := range msgs {
			if err := pair.w.WriteObject(&buf, m); err != nil {
				t.Fatal(err)
			}
		}
		r := bufio.NewReader(&buf)
		for i, m := range msgs {
			var got json.RawMessage
			if err := pair.r.ReadObject(r, &got); err != nil {
				t.Fatalf("%s: message %d: %v", pair.name, i, err)
			}
			want, _ := json.Marshal(m)
			if !bytes.Equal(got, want) {
				t.Errorf("%s: message %d = %s, want %s", pair.name, i, got, want)
			}
		}
	}
}
