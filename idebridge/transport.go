package idebridge

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// A transport moves whole JSON-RPC messages between the client and one IDE
// (transport_ws.go, transport_sse.go). It knows nothing of JSON-RPC; the
// multiplexer (mux.go) does the rest.
type transport interface {
	// send writes one message, m.payload(). When the transport learns only
	// later whether the message was accepted (an SSE POST's answer), it
	// returns finish, which waits for that (until ctx ends or the deadline,
	// none when zero) and must be called exactly once after a nil error;
	// otherwise finish is nil. It takes ownership of m and
	// releases it when done; it may overwrite m's headroom and payload
	// (the WebSocket transport masks in place). It is safe for concurrent
	// use. A ctx that ends before the message starts going out abandons it;
	// once started, a message is written whole or the connection dies, so
	// that a cancelled call never leaves half a message on the wire. An
	// error that means the connection is gone wraps ErrConnectionLost.
	send(ctx context.Context, m *msgBuf) (finish finishFunc, err error)
	// recv returns the next message. The slice is valid until the next
	// call. One goroutine at a time calls recv (the mux's reader). After
	// close, or when the connection fails, it returns the cause. When the
	// read deadline passes or interrupt is called, it returns an error
	// wrapping errInterrupted and can be called again (interruptible
	// transports only).
	recv() ([]byte, error)
	// interruptible reports whether setReadDeadline and interrupt work;
	// the mux then lets callers read their own replies.
	interruptible() bool
	// setReadDeadline sets the deadline of recv; zero means none.
	setReadDeadline(t time.Time)
	// interrupt makes a recv in progress return errInterrupted soon. It is
	// safe to call from any goroutine.
	interrupt()
	// ping sends a transport-level keep-alive probe (a WebSocket ping),
	// waiting at most wait. It returns errNoTransportPing when the
	// transport has none and the client should send an MCP ping instead.
	ping(wait time.Duration) error
	// close closes the connection and unblocks recv and send. It is
	// idempotent.
	close() error
}

// dialContext opens the TCP connection of both transports; tests replace it
// to reach a loopback server under a name that is not loopback.
var dialContext = (&net.Dialer{Timeout: 10 * time.Second}).DialContext

// finishFunc waits for a sent message's acceptance; see transport.send.
type finishFunc func(ctx context.Context, deadline time.Time) error

// errNoTransportPing is returned by transport.ping when the transport has no
// keep-alive of its own.
var errNoTransportPing = errors.New("transport has no keep-alive probe")

// headroom is reserved in front of every outgoing message for the largest
// WebSocket frame header (2 + 8 length + 4 mask bytes), so that a frame is
// built in place and written with one write.
const headroom = 14

// msgBuf is a pooled buffer holding one outgoing message after headroom
// bytes, with a JSON encoder that appends to it.
type msgBuf struct {
	b   []byte
	enc *json.Encoder
}

// Write appends p; it lets the encoder write into the buffer.
func (m *msgBuf) Write(p []byte) (int, error) {
	m.b = append(m.b, p...)
	return len(p), nil
}

func (m *msgBuf) payload() []byte { return m.b[headroom:] }

var msgBufPool = sync.Pool{New: func() any {
	m := &msgBuf{b: make([]byte, headroom, 2048)}
	m.enc = json.NewEncoder(m)
	m.enc.SetEscapeHTML(false)
	return m
}}

func getMsgBuf() *msgBuf {
	m := msgBufPool.Get().(*msgBuf)
	m.b = m.b[:headroom]
	return m
}

// maxPooledBuf keeps one 5 MiB diff from pinning 5 MiB in the pool.
const maxPooledBuf = 256 << 10

func putMsgBuf(m *msgBuf) {
	if cap(m.b) > maxPooledBuf {
		return
	}
	msgBufPool.Put(m)
}

// encodeJSON appends v's JSON encoding (HTML characters unescaped, no
// trailing newline).
func (m *msgBuf) encodeJSON(v any) error {
	if err := m.enc.Encode(v); err != nil {
		return err
	}
	m.b = m.b[:len(m.b)-1] // Encode's newline
	return nil
}

// activity records when bytes last arrived from the IDE: the keep-alive
// declares a connection dead when nothing, not even a pong, arrived for too
// long.
type activity struct {
	last atomic.Int64 // nanoseconds since epoch (monotonic)
}

var epoch = time.Now()

func (a *activity) touch() { a.last.Store(int64(time.Since(epoch))) }

func (a *activity) idle() time.Duration {
	return time.Since(epoch) - time.Duration(a.last.Load())
}

// activityReader touches a on every read that returns data.
type activityReader struct {
	r io.Reader
	a *activity
}

func (r activityReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.a.touch()
	}
	return n, err
}
