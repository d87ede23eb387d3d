package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/idebridge/idebridge/internal/jsonrpc"
)

// A Transport moves whole JSON-RPC messages between a Conn and one server.
// It knows nothing of JSON-RPC beyond a message's request id; the Conn does
// the rest. DialWebSocket and DialSSE return the two transports IDEs serve.
//
// Concurrency: Send, Ping, Interrupt and Close may be called from any
// goroutine, concurrently with each other and with Recv. Recv is called by
// one goroutine at a time (whichever holds the Conn's reader role).
//
// Blocking: Interrupt never blocks. Close blocks only until the
// transport's own goroutines have ended; it unblocks every Send, Recv and
// Ping in progress. Send blocks until its message is written (or, see
// below, acknowledged), within the transport's own write timeout; Recv
// until a message arrives, its deadline passes, Interrupt is called or the
// connection ends; Ping until its answer or ctx.
//
// Errors: every error that means the connection is gone wraps
// ErrConnectionLost (or is ErrClosed after Close); the Conn then fails
// every pending call with it. Recv's ErrInterrupted and *RefusedError, and
// Send's ctx error before its message started going out, leave the
// connection usable.
type Transport interface {
	// Send writes one message, m.Bytes(). A ctx that ends before the
	// message starts going out abandons it (Send returns ctx's error and
	// nothing was written); once started, a message is written whole or
	// the connection is failed, so that a cancelled call never leaves half
	// a message on the wire. Send may change m's bytes in place (the
	// WebSocket transport masks them) and must not keep m after it
	// returns.
	//
	// A transport that learns only later whether the server took a message
	// (an SSE POST's answer) may return before it knows, for a request
	// (m.RequestID reports true): when the server turns it down, Recv
	// returns a *RefusedError naming the request.
	Send(ctx context.Context, m *Message) error
	// Recv returns the next message; the slice is valid until the next
	// call. It returns an error wrapping ErrInterrupted, and may be called
	// again, when the deadline passes (zero means none) or Interrupt was
	// called since the previous Recv returned.
	Recv(deadline time.Time) ([]byte, error)
	// Interrupt makes the Recv in progress, or else the next one, return
	// ErrInterrupted soon.
	Interrupt()
	// Ping sends a keep-alive probe of the transport's own (a WebSocket
	// ping) and waits, until ctx ends, for a sign that the server is
	// alive: its answer, or any data at all. It returns ErrNoPing at once
	// when the transport has none; the Conn then pings with MCP.
	Ping(ctx context.Context) error
	// Close closes the connection. It is idempotent.
	Close() error
}

// ErrInterrupted is wrapped by Recv's error when its deadline passed or it
// was interrupted; the connection is intact.
var ErrInterrupted = errors.New("mcpclient: read interrupted")

// ErrNoPing is returned by Transport.Ping when the transport has no
// keep-alive probe of its own.
var ErrNoPing = errors.New("mcpclient: transport has no keep-alive probe")

// RefusedError is returned by Transport.Recv when the server turned down a
// request after Send had returned (an SSE POST answered with an error
// status). The connection stays usable; the Conn fails that call with it.
type RefusedError struct {
	// ID is the refused request's id.
	ID int64
	// Err says how the server refused it.
	Err error
}

// Error returns Err's message.
func (e *RefusedError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *RefusedError) Unwrap() error { return e.Err }

// headroom is reserved in front of every outgoing message for the largest
// WebSocket frame header (2 + 8 length + 4 mask bytes), so that a frame is
// built in place and written with one write.
const headroom = 14

// Message is one outgoing JSON-RPC message, built by the Conn in a pooled
// buffer (with room in front for a frame header, so that a transport can
// frame it in place). Params functions append a request's or
// notification's params to it.
type Message struct {
	b   []byte // headroom bytes, then the message
	enc *json.Encoder
	id  int64
	req bool
}

// Bytes returns the message.
func (m *Message) Bytes() []byte { return m.b[headroom:] }

// RequestID returns the message's id when it is a request.
func (m *Message) RequestID() (id int64, ok bool) { return m.id, m.req }

// Write appends p; it lets an encoder write into the message.
func (m *Message) Write(p []byte) (int, error) {
	m.b = append(m.b, p...)
	return len(p), nil
}

// AppendRaw appends JSON text as it is; it must be valid JSON in its place.
func (m *Message) AppendRaw(s string) { m.b = append(m.b, s...) }

// AppendString appends s as a JSON string literal (invalid UTF-8 replaced
// by U+FFFD, HTML characters not escaped).
func (m *Message) AppendString(s string) { m.b = jsonrpc.AppendString(m.b, s) }

// AppendInt appends an integer.
func (m *Message) AppendInt(n int64) { m.b = strconv.AppendInt(m.b, n, 10) }

// AppendJSON appends v encoded as encoding/json does, without escaping
// HTML characters.
func (m *Message) AppendJSON(v any) error {
	if err := m.enc.Encode(v); err != nil {
		return err
	}
	m.b = m.b[:len(m.b)-1] // Encode's newline
	return nil
}

// Params appends the params of a request or notification (a JSON object or
// array) to m.
type Params func(m *Message) error

var messagePool = sync.Pool{New: func() any {
	m := &Message{b: make([]byte, headroom, 2048)}
	m.enc = json.NewEncoder(m)
	m.enc.SetEscapeHTML(false)
	return m
}}

func getMessage() *Message {
	m := messagePool.Get().(*Message)
	m.b = m.b[:headroom]
	m.id, m.req = 0, false
	return m
}

// maxPooled keeps one 5 MiB diff from pinning 5 MiB in the pool.
const maxPooled = 256 << 10

func putMessage(m *Message) {
	if cap(m.b) > maxPooled {
		return
	}
	messagePool.Put(m)
}
