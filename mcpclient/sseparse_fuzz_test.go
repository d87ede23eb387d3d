package mcpclient

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

type fuzzEvent struct{ Event, Data, ID string }

// timeoutError is what a read past its deadline returns.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// stuttering returns its data a byte at a time with a timeout between
// bytes, as a stream read under ever-expiring deadlines would.
type stuttering struct {
	data []byte
	tick bool
}

func (s *stuttering) Read(p []byte) (int, error) {
	if s.tick = !s.tick; s.tick {
		return 0, timeoutError{}
	}
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	p[0] = s.data[0]
	s.data = s.data[1:]
	return 1, nil
}

// readSSE runs the parser over r and returns the events and the final
// error, normalised to its kind; a timeout is retried, as the client does.
func readSSE(r io.Reader, bound int) ([]fuzzEvent, string) {
	sr := newSSEReader(r, bound)
	var out []fuzzEvent
	for {
		ev, err := sr.next()
		if errors.Is(err, timeoutError{}) {
			continue
		}
		if err != nil {
			var tooBig *MessageTooLargeError
			switch {
			case err == io.EOF:
				return out, "EOF"
			case err == io.ErrUnexpectedEOF:
				return out, "unexpected EOF"
			case errors.As(err, &tooBig):
				return out, "too large"
			default:
				return out, "other: " + err.Error()
			}
		}
		out = append(out, fuzzEvent{ev.Event, string(ev.Data), ev.ID})
	}
}

// splitReader returns data in two reads, cut at n.
type splitReader struct {
	parts [][]byte
}

func (s *splitReader) Read(p []byte) (int, error) {
	for len(s.parts) > 0 && len(s.parts[0]) == 0 {
		s.parts = s.parts[1:]
	}
	if len(s.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.parts[0])
	s.parts[0] = s.parts[0][n:]
	return n, nil
}

// modelSSE is the event-stream interpretation of the HTML standard written
// as plainly as possible, over the whole input at once, without a bound.
func modelSSE(data []byte) ([]fuzzEvent, string) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var lines [][]byte
	start := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '\n':
			lines = append(lines, data[start:i])
			start = i + 1
		case '\r':
			lines = append(lines, data[start:i])
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	rest := data[start:]
	var out []fuzzEvent
	var buf, event, id string
	var pending bool
	for _, line := range lines {
		if len(line) == 0 {
			pending = false
			if buf == "" {
				event = ""
				continue
			}
			name := event
			if name == "" {
				name = "message"
			}
			out = append(out, fuzzEvent{name, buf[:len(buf)-1], id})
			buf, event = "", ""
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := string(line), ""
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = string(line[:i]), string(line[i+1:])
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch field {
		case "data":
			buf += value + "\n"
			pending = true
		case "event":
			event = value
			pending = true
		case "id":
			if !bytes.Contains([]byte(value), []byte{0}) {
				id = value
			}
			pending = true
		case "retry":
			pending = true
		}
	}
	if len(rest) > 0 || pending {
		return out, "unexpected EOF"
	}
	return out, "EOF"
}

// FuzzSSEParse checks the SSE parser (unexported, so the target lives here)
// against three properties: splitting
// the byte stream at any point (or into single bytes, or with a read
// timeout between every byte, after which reading resumes) yields the same
// events and the same ending as one piece; no event's data exceeds the size bound;
// and, when the bound is not reached, the events agree with a plain model of
// the standard's algorithm.
func FuzzSSEParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, cut uint, bound uint16) {
		limit := 8 + int(bound)%4096
		whole, endWhole := readSSE(bytes.NewReader(data), limit)

		at := int(cut % uint(len(data)+1))
		split, endSplit := readSSE(&splitReader{parts: [][]byte{bytes.Clone(data[:at]), bytes.Clone(data[at:])}}, limit)
		if diff := cmp.Diff(whole, split); diff != "" || endWhole != endSplit {
			t.Fatalf("cut at %d: events differ (-whole +split):\n%s\nends %q vs %q", at, diff, endWhole, endSplit)
		}
		bytewise, endBytes := readSSE(iotest.OneByteReader(bytes.NewReader(data)), limit)
		if diff := cmp.Diff(whole, bytewise); diff != "" || endWhole != endBytes {
			t.Fatalf("byte by byte: events differ (-whole +bytes):\n%s\nends %q vs %q", diff, endWhole, endBytes)
		}
		stutter, endStutter := readSSE(&stuttering{data: bytes.Clone(data)}, limit)
		if diff := cmp.Diff(whole, stutter); diff != "" || endWhole != endStutter {
			t.Fatalf("with a timeout between bytes: events differ (-whole +resumed):\n%s\nends %q vs %q", diff, endWhole, endStutter)
		}
		for _, ev := range whole {
			if len(ev.Data) > limit {
				t.Fatalf("event of %d bytes passed the %d-byte bound", len(ev.Data), limit)
			}
		}
		if endWhole == "too large" {
			return
		}
		model, endModel := modelSSE(data)
		if diff := cmp.Diff(model, whole); diff != "" || endModel != endWhole {
			t.Fatalf("parser disagrees with the model (-model +parser):\n%s\nends %q vs %q", diff, endModel, endWhole)
		}
	})
}
