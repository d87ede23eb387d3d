package ideserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"time"

	"github.com/idebridge/idebridge/mcp"
)

// TransportStdio is ClientInfo.Transport of a session served by
// ServeStream: MCP's stdio transport.
const TransportStdio = "stdio"

// streamBuffer is the read buffer of a stream session.
const streamBuffer = 64 << 10

// hugeLine is the size of a line after which the heap is collected at
// once when it was handled (see ServeStream).
const hugeLine = 16 << 20

// streamQueue is how many messages may wait for the stream's writer
// before a sender waits (at most WriteTimeout) for room.
const streamQueue = 64

// ServeStream serves one MCP session over r and w, as MCP's stdio
// transport frames it: one JSON-RPC message per line (newline-delimited,
// no embedded newlines), client to server on r, server to client on w.
// Nothing but protocol messages is written to w. It needs no Start, no
// listener and no lockfile (the caller owns both ends, usually standard
// input and output), and it serves the same tools, with the same
// handshake, pagination, cancellation and notifications, as a WebSocket
// client gets; it may run alongside Start and other ServeStream calls.
//
// A malformed line is answered with a JSON-RPC error (id null) and the
// session goes on; so is a line longer than MaxMessageSize, which is
// skipped without being held in memory. Blank lines are ignored, and a
// line may end in "\r\n".
//
// Nor is a string that no legitimate message makes long held whole: a
// member name, or a string outside a tool call's arguments, of more than
// 64 KiB, or an argument's string far over the maxLength its tool's input
// schema gives it (more than 12 bytes a character: see Tool). Such a
// message is refused, naming the string by its start and size, under its
// id (id null when the id is the string): a tool call whose arguments only
// are at fault gets an isError result the model can act on, any other
// request a JSON-RPC error (-32602, or -32600 outside params). A tool's
// text arguments without a maxLength are served whole, byte for byte, up
// to MaxMessageSize. Streamable HTTP bodies are read the same way.
//
// ServeStream returns when r reaches its end (nil: the client closed its
// side, MCP's way of ending a stdio session), when ctx ends (ctx's
// error), when the server closes (ErrServerClosed), or when reading or
// writing fails (that error). Before it returns, the session's running
// tool calls are cancelled (cause ErrClientGone) and awaited, and the
// answers already made are written (for at most WriteTimeout). When it
// returns for another reason than r's end, a read in progress on r is
// left to a goroutine that ends when that read returns; close r to end it.
func (s *Server) ServeStream(ctx context.Context, r io.Reader, w io.Writer) error {
	if r == nil || w == nil {
		return errors.New("ideserver: ServeStream needs a reader and a writer")
	}
	sc := newStreamConn(w, s.cfg.WriteTimeout)
	ss, err := s.addSession(TransportStdio, TransportStdio, sc)
	if err != nil {
		return err
	}
	sc.mu.Lock()
	sc.onFail = func() { ss.cancel(ErrClientGone) }
	sc.mu.Unlock()
	go sc.writeLoop()

	lines := make(chan streamLine)
	stop := make(chan struct{})
	defer close(stop)
	// The next line is read once this one is handled: a line of megabytes
	// is not read while the one before it is still held.
	ready := make(chan struct{}, 1)
	go readLines(r, s.cfg.MaxMessageSize, streamBuffer, s.tools.argLimit, lines, ready, stop)

	var why error
loop:
	for {
		select {
		case l := <-lines:
			switch {
			case l.err == io.EOF:
				break loop
			case l.err != nil:
				why = fmt.Errorf("reading the client's messages: %w", l.err)
				break loop
			case l.tooLong > 0:
				s.log.Warn("client message over the size limit", "client", ss.info.ID, "limit", s.cfg.MaxMessageSize, "size", l.tooLong)
				ss.replyError(ss.conn, nil, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Invalid Request",
					Data: mustJSON(fmt.Sprintf("message of %d bytes or more is larger than the limit of %d bytes", l.tooLong, s.cfg.MaxMessageSize))})
			default:
				size := len(l.data)
				var call func()
				if len(l.over) > 0 {
					ss.refuseOverlong(ss.conn, l.data, l.over)
				} else {
					call = ss.handle(l.data)
				}
				l.data = nil
				if call != nil {
					s.pool.run(call, s.spawn)
				}
				if size > hugeLine {
					// Collect the line now: left to the GC's pacing, the
					// next one would be read into a heap let grow to
					// twice this one's garbage.
					runtime.GC()
				}
				ready <- struct{}{}
			}
		case <-ss.ctx.Done():
			// The server is closing, or the writer failed.
			if sc.err() != nil {
				why = sc.err()
			} else if errors.Is(context.Cause(ss.ctx), ErrServerClosed) {
				why = ErrServerClosed
			}
			break loop
		case <-ctx.Done():
			why = ctx.Err()
			break loop
		}
	}
	s.removeSession(ss, why)
	ss.calls.Wait()
	sc.finish()
	if why == nil {
		why = sc.err()
	}
	return why
}

// streamLine is one line read from the client, or why reading ended.
type streamLine struct {
	data []byte
	// tooLong, when positive, is the size at which a line over the limit
	// was given up (its bytes are dropped).
	tooLong int64
	// over lists the strings of data that were too long where they stood
	// (see lineScanner): each was replaced by "…" and the message is to be
	// refused.
	over []overlong
	err  error
}

// readLines reads newline-delimited messages from r and sends each one on
// lines, until r ends or fails (the last value sent carries the error) or
// stop is closed. No more than limit bytes (plus a line ending) of a line
// are ever held: the rest of a longer line is read and dropped. A line
// longer than the buffer goes through a lineScanner (argLimit is its):
// a string in it too long for its place is not held either. Unless ready
// is nil, after each line of data it waits for a value on ready (the line
// was handled) before it reads on.
func readLines(r io.Reader, limit int64, bufSize int, argLimit func(tool, arg string) int, lines chan<- streamLine, ready, stop <-chan struct{}) {
	br := bufio.NewReaderSize(r, bufSize)
	send := func(l streamLine) bool {
		select {
		case lines <- l:
			return true
		case <-stop:
			return false
		}
	}
	// A line longer than the buffer is gathered by a scanner, in blocks
	// joined once at its end into a slice of its exact size: growing one
	// slice would copy a line of megabytes many times and hold up to
	// twice it.
	var scan *lineScanner
	var size int64 // bytes of the current line read so far
	over := false  // the current line outgrew the limit
	var last byte  // the last byte of the previous chunk of the line
	for {
		chunk, err := br.ReadSlice('\n')
		size += int64(len(chunk))
		ending := lineEnding(chunk, last)
		if len(chunk) > 0 {
			last = chunk[len(chunk)-1]
		}
		if !over {
			if size > limit+2 {
				over, scan = true, nil // give the memory back while the rest is skipped
			} else if err == bufio.ErrBufferFull || scan != nil {
				if scan == nil {
					scan = &lineScanner{argLimit: argLimit}
				}
				scan.write(chunk)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if size > 0 {
			var l streamLine
			if content := size - ending; content > limit {
				l.tooLong = content
			} else {
				var line []byte
				if scan == nil {
					line = bytes.TrimRight(chunk, "\r\n")
				} else {
					line = bytes.TrimRight(scan.line(), "\r\n")
					l.over = scan.over
				}
				if len(bytes.TrimSpace(line)) > 0 {
					if scan == nil {
						line = bytes.Clone(line) // chunk is bufio's
					}
					l.data = line
				}
			}
			scan = nil // not to be held while the line is handled
			if (l.tooLong > 0 || l.data != nil) && !send(l) {
				return
			}
			if l.data != nil && ready != nil {
				l.data = nil
				select {
				case <-ready:
				case <-stop:
					return
				}
			}
		}
		scan, size, over, last = nil, 0, false, 0
		if err != nil {
			send(streamLine{err: err})
			return
		}
	}
}

// lineEnding returns how many bytes at the end of chunk, the last piece of
// a line, are its ending: "\n" or "\r\n" (the "\r" may end the previous
// piece, whose last byte is prev), 0 for a line ended by EOF.
func lineEnding(chunk []byte, prev byte) int64 {
	n := len(chunk)
	switch {
	case n == 0 || chunk[n-1] != '\n':
		return 0
	case n >= 2 && chunk[n-2] == '\r', n == 1 && prev == '\r':
		return 2
	}
	return 1
}

// streamConn writes a stream session's messages, one a line, from a
// goroutine of its own: a client that stops reading makes senders wait at
// most the write timeout for room in the queue, never longer, and the
// session is then dropped.
type streamConn struct {
	w            io.Writer
	writeTimeout time.Duration
	queue        chan []byte

	closeOnce sync.Once
	done      chan struct{} // closed by close: no more sends
	exited    chan struct{} // closed when writeLoop returns

	mu      sync.Mutex
	failure error
	// onFail is called once when a write fails (the session is dropped).
	onFail func()
}

func newStreamConn(w io.Writer, writeTimeout time.Duration) *streamConn {
	return &streamConn{
		w:            w,
		writeTimeout: writeTimeout,
		queue:        make(chan []byte, streamQueue),
		done:         make(chan struct{}),
		exited:       make(chan struct{}),
	}
}

func (c *streamConn) writeMessage(data []byte) error {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		// Never produced by encoding/json; a line is a message, so a raw
		// newline must not reach the wire.
		var buf bytes.Buffer
		if err := json.Compact(&buf, data); err != nil {
			return fmt.Errorf("ideserver: message with a raw newline: %w", err)
		}
		data = buf.Bytes()
	}
	select {
	case <-c.done:
		return net.ErrClosed
	default:
	}
	select {
	case c.queue <- data:
		return nil
	default:
	}
	t := time.NewTimer(c.writeTimeout)
	defer t.Stop()
	select {
	case c.queue <- data:
		return nil
	case <-c.done:
		return net.ErrClosed
	case <-t.C:
		err := fmt.Errorf("ideserver: the client took no message for %v", c.writeTimeout)
		c.fail(err)
		return err
	}
}

// writeLoop writes queued messages until close, then what is still
// queued.
func (c *streamConn) writeLoop() {
	defer close(c.exited)
	line := make([]byte, 0, 4096)
	write := func(data []byte) bool {
		line = append(append(line[:0], data...), '\n')
		if _, err := c.w.Write(line); err != nil {
			c.fail(fmt.Errorf("writing to the client: %w", err))
			return false
		}
		if cap(line) > 1<<20 {
			line = make([]byte, 0, 4096) // do not keep a huge buffer
		}
		return true
	}
	for {
		select {
		case data := <-c.queue:
			if !write(data) {
				return
			}
		case <-c.done:
			for {
				select {
				case data := <-c.queue:
					if !write(data) {
						return
					}
				default:
					return
				}
			}
		}
	}
}

func (c *streamConn) fail(err error) {
	c.mu.Lock()
	first := c.failure == nil
	if first {
		c.failure = err
	}
	onFail := c.onFail
	c.mu.Unlock()
	if first && onFail != nil {
		onFail()
	}
}

func (c *streamConn) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failure
}

func (c *streamConn) close(int, string) {
	c.closeOnce.Do(func() { close(c.done) })
}

// finish closes the connection and waits, at most the write timeout, for
// the queued messages to be written.
func (c *streamConn) finish() {
	c.close(closeNormal, "")
	t := time.NewTimer(c.writeTimeout)
	defer t.Stop()
	select {
	case <-c.exited:
	case <-t.C:
		c.fail(fmt.Errorf("ideserver: the client took no message for %v", c.writeTimeout))
	}
}
