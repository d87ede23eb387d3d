package mcpclient

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

type ev struct{ Event, Data, ID string }

// readAll collects every event and the final error.
func readAll(r io.Reader, max int) ([]ev, error) {
	sr := newSSEReader(r, max)
	var out []ev
	for {
		e, err := sr.next()
		if err != nil {
			return out, err
		}
		out = append(out, ev{e.Event, string(e.Data), e.ID})
	}
}

func TestSSEReader(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []ev
		err  error
	}{
		{"lf", "event: endpoint\ndata: /messages?s=1\n\n", []ev{{"endpoint", "/messages?s=1", ""}}, io.EOF},
		{"crlf", "event: endpoint\r\ndata: /m\r\n\r\ndata: {}\r\n\r\n", []ev{{"endpoint", "/m", ""}, {"message", "{}", ""}}, io.EOF},
		{"cr only", "event: message\rdata: a\rdata: b\r\rdata: c\r\r", []ev{{"message", "a\nb", ""}, {"message", "c", ""}}, io.EOF},
		{"mixed endings", "data: a\r\ndata: b\rdata: c\n\r\n", []ev{{"message", "a\nb\nc", ""}}, io.EOF},
		{"multi-line data", "data: {\"a\":\ndata: 1}\n\n", []ev{{"message", "{\"a\":\n1}", ""}}, io.EOF},
		{"comments skipped", ": keep-alive\n:\ndata: x\n: inside\n\n", []ev{{"message", "x", ""}}, io.EOF},
		{"event without data is not dispatched", "event: ping\n\ndata: y\n\n", []ev{{"message", "y", ""}}, io.EOF},
		{"ping with data is dispatched as ping", "event: ping\ndata: 1\n\n", []ev{{"ping", "1", ""}}, io.EOF},
		{"unknown fields ignored", "foo: bar\nretry: 10\ndata: z\n\n", []ev{{"message", "z", ""}}, io.EOF},
		{"no space after colon", "data:x\nevent:e\n\n", []ev{{"e", "x", ""}}, io.EOF},
		{"only one space stripped", "data:  two\n\n", []ev{{"message", " two", ""}}, io.EOF},
		{"field without colon", "data\n\n", []ev{{"message", "", ""}}, io.EOF},
		{"empty data lines", "data:\ndata:\n\n", []ev{{"message", "\n", ""}}, io.EOF},
		{"id persists", "id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", []ev{{"message", "a", "7"}, {"message", "b", "7"}, {"message", "c", ""}}, io.EOF},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: x\x00y\ndata: b\n\n", []ev{{"message", "a", "1"}, {"message", "b", "1"}}, io.EOF},
		{"bom skipped", "\xef\xbb\xbfdata: a\n\n", []ev{{"message", "a", ""}}, io.EOF},
		{"second bom is data", "\xef\xbb\xbf\xef\xbb\xbfdata: a\n\n", nil, io.EOF},
		{"event type resets", "event: endpoint\ndata: a\n\ndata: b\n\n", []ev{{"endpoint", "a", ""}, {"message", "b", ""}}, io.EOF},
		{"incomplete event discarded", "data: a\n\ndata: b\n", []ev{{"message", "a", ""}}, io.ErrUnexpectedEOF},
		{"unterminated line", "data: a\n\ndata: b", []ev{{"message", "a", ""}}, io.ErrUnexpectedEOF},
		{"empty stream", "", nil, io.EOF},
		{"trailing comment only", "data: a\n\n: bye\n", []ev{{"message", "a", ""}}, io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for name, r := range map[string]io.Reader{
				"whole":    strings.NewReader(tc.in),
				"one byte": iotest.OneByteReader(strings.NewReader(tc.in)),
				"half":     iotest.HalfReader(strings.NewReader(tc.in)),
			} {
				got, err := readAll(r, 1<<20)
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s: events (-want +got):\n%s", name, diff)
				}
				if err != tc.err {
					t.Errorf("%s: final error %v, want %v", name, err, tc.err)
				}
			}
		})
	}
}

func TestSSEReaderSizeBound(t *testing.T) {
	small := "data: 12345\n\n"
	big := "data: " + strings.Repeat("x", 100) + "\n\n"
	for name, r := range map[string]io.Reader{
		"whole":    strings.NewReader(small + big + small),
		"one byte": iotest.OneByteReader(strings.NewReader(small + big + small)),
	} {
		got, err := readAll(r, 64)
		if diff := cmp.Diff([]ev{{"message", "12345", ""}}, got); diff != "" {
			t.Errorf("%s: events before the over-size one (-want +got):\n%s", name, diff)
		}
		var tooBig *MessageTooLargeError
		if !errors.As(err, &tooBig) || tooBig.Limit != 64 || !tooBig.Incoming {
			t.Errorf("%s: error %v, want *MessageTooLargeError with limit 64", name, err)
		}
	}
	// Many data lines add up: the bound is on the event, not the line.
	many := strings.Repeat("data: 0123456789\n", 10) + "\n"
	if _, err := readAll(strings.NewReader(many), 64); !errors.As(err, new(*MessageTooLargeError)) {
		t.Errorf("event of many small lines: error %v, want *MessageTooLargeError", err)
	}
	// A never-ending line is bounded too.
	if _, err := readAll(io.LimitReader(neverEnding('a'), 1<<20), 1024); !errors.As(err, new(*MessageTooLargeError)) {
		t.Errorf("endless line: error %v, want *MessageTooLargeError", err)
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func TestSSEReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom))
	got, err := readAll(r, 1<<20)
	if len(got) != 1 || !errors.Is(err, boom) {
		t.Fatalf("got %v, %v; want one event then boom", got, err)
	}
}
