package mcpclient

import (
	"bytes"
	"io"
)

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	// Event is the event type: the last "event" field of the event, or
	// "message" when it named none.
	Event string
	// Data is the event's "data" lines joined with "\n". It aliases the
	// reader's buffer and is valid only until the next call to next.
	Data []byte
	// ID is the stream's last event ID when the event was dispatched (the
	// "id" field persists from one event to the next, as the standard says).
	ID string
}

// sseReader parses a text/event-stream exactly as the HTML standard's
// event-stream interpretation does: lines end with LF, CRLF or a lone CR
// (also when the CR and LF arrive in different reads); a leading byte order
// mark is skipped; several "data" lines join with "\n"; comment lines
// (starting with ':') and unknown fields are ignored; an event with no data
// is not dispatched; an incomplete event at the end of the stream is
// discarded. Bytes are passed through as received (no UTF-8 decoding).
//
// The result does not depend on how the stream is split into reads. The
// size of an event is bounded: when the data collected for an event plus
// the line being read exceed the bound, next returns a
// *MessageTooLargeError and the reader stops.
//
// An sseReader is not safe for concurrent use.
type sseReader struct {
	r     io.Reader
	max   int
	buf   []byte // read buffer; buf[pos:end] is unread
	pos   int
	end   int
	line  []byte // a line that spans reads, without its terminator
	data  []byte // the current event's data, each line followed by '\n'
	event string // the current event's type; "" when none given
	id    string // last event ID
	// hasEvent is true once a field of the current event was seen (used
	// only to tell a clean end of stream from a cut one).
	hasEvent bool
	skipLF   bool // the previous line ended with CR: drop a leading LF
	bomDone  bool
	err      error
}

// newSSEReader returns a reader of the events in r; maxEventSize (positive)
// bounds one event (see sseReader).
func newSSEReader(r io.Reader, maxEventSize int) *sseReader {
	return &sseReader{r: r, max: maxEventSize, buf: make([]byte, 32<<10)}
}

// next returns the next event. At the end of the stream it returns io.EOF,
// or io.ErrUnexpectedEOF when the stream ended inside an event or a line.
// A read error from the underlying reader is returned as is, and next
// returns the same error again from then on; except a timeout (a net.Error
// whose Timeout is true, as a passed read deadline gives), after which next
// may be called again and resumes where the stream stopped.
func (s *sseReader) next() (sseEvent, error) {
	if s.err != nil {
		return sseEvent{}, s.err
	}
	// Do not keep a large event's buffers for the life of the stream.
	if cap(s.data) > 1<<20 && len(s.data) == 0 {
		s.data = nil
	}
	if cap(s.line) > 1<<20 && len(s.line) == 0 {
		s.line = nil
	}
	for {
		line, ok, err := s.nextLine()
		if err != nil {
			if !isTimeout(err) {
				s.err = err
			}
			return sseEvent{}, err
		}
		if !ok {
			continue
		}
		if ev, dispatch := s.processLine(line); dispatch {
			return ev, nil
		}
	}
}

// nextLine returns the next complete line. ok is false when more input was
// read but no line completed yet.
func (s *sseReader) nextLine() (line []byte, ok bool, err error) {
	if s.pos == s.end {
		if err := s.fill(); err != nil {
			return nil, false, err
		}
		return nil, false, nil
	}
	if !s.bomDone {
		avail := s.buf[s.pos:s.end]
		const bom = "\xef\xbb\xbf"
		n := min(len(avail), len(bom))
		if string(avail[:n]) != bom[:n] {
			s.bomDone = true
		} else if n == len(bom) {
			s.pos += len(bom)
			s.bomDone = true
			return nil, false, nil
		} else {
			// A prefix of the BOM: need more bytes to decide.
			if err := s.fill(); err != nil {
				if err == io.EOF || err == io.ErrUnexpectedEOF {
					// Not a BOM after all; it is an unterminated line.
					s.bomDone = true
					return nil, false, s.atEOF(err)
				}
				return nil, false, err
			}
			return nil, false, nil
		}
	}
	if s.skipLF {
		s.skipLF = false
		if s.buf[s.pos] == '\n' {
			s.pos++
			return nil, false, nil
		}
	}
	avail := s.buf[s.pos:s.end]
	i := bytes.IndexAny(avail, "\r\n")
	if i < 0 {
		if len(s.data)+len(s.line)+len(avail) > s.max {
			return nil, false, &MessageTooLargeError{Limit: int64(s.max), Incoming: true}
		}
		s.line = append(s.line, avail...)
		s.pos = s.end
		return nil, false, nil
	}
	if len(s.data)+len(s.line)+i > s.max {
		return nil, false, &MessageTooLargeError{Limit: int64(s.max), Incoming: true}
	}
	if avail[i] == '\r' {
		s.skipLF = true
	}
	s.pos += i + 1
	if len(s.line) > 0 {
		s.line = append(s.line, avail[:i]...)
		line = s.line
		s.line = s.line[:0]
		return line, true, nil
	}
	return avail[:i], true, nil
}

// fill reads more input into the buffer; the buffer must be fully consumed
// except for a BOM prefix being examined.
func (s *sseReader) fill() error {
	if s.pos > 0 {
		n := copy(s.buf, s.buf[s.pos:s.end])
		s.pos, s.end = 0, n
	}
	for {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if n > 0 {
			return nil
		}
		if err != nil {
			if err == io.EOF {
				return s.atEOF(err)
			}
			return err
		}
	}
}

// atEOF tells a clean end of stream from one inside an event or line.
func (s *sseReader) atEOF(error) error {
	if len(s.line) > 0 || s.pos < s.end || s.hasEvent {
		return io.ErrUnexpectedEOF
	}
	return io.EOF
}

// processLine applies one line; it returns the event when the line
// dispatched one.
func (s *sseReader) processLine(line []byte) (sseEvent, bool) {
	if len(line) == 0 {
		s.hasEvent = false
		if len(s.data) == 0 {
			s.event = ""
			return sseEvent{}, false
		}
		ev := sseEvent{Event: s.event, Data: s.data[:len(s.data)-1], ID: s.id}
		if ev.Event == "" {
			ev.Event = "message"
		}
		s.data = s.data[:0]
		s.event = ""
		return ev, true
	}
	if line[0] == ':' {
		return sseEvent{}, false
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		s.hasEvent = true
		s.data = append(s.data, value...)
		s.data = append(s.data, '\n')
	case "event":
		s.hasEvent = true
		s.event = internEventName(value)
	case "id":
		s.hasEvent = true
		if bytes.IndexByte(value, 0) < 0 {
			s.id = string(value)
		}
	case "retry":
		// Reconnection time: meaningful only to a reconnecting client; the
		// MCP client never reconnects a session, so it is ignored.
		s.hasEvent = true
	}
	return sseEvent{}, false
}

// internEventName avoids an allocation for the event names MCP uses.
func internEventName(b []byte) string {
	switch string(b) {
	case "message":
		return "message"
	case "endpoint":
		return "endpoint"
	case "ping":
		return "ping"
	}
	return string(b)
}
