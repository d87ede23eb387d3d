package idebridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// This is the only file of the client that imports gorilla/websocket.
//
// Gorilla does the opening handshake (the HTTP upgrade, the subprotocol, the
// auth header). The frames after it are the transport's own, for two
// reasons:
//
//   - Writing: gorilla's client-side writer fragments every message larger
//     than its write buffer (4 KiB by default), and deployed IDEs close the
//     connection on a fragmented message. Rather than give every
//     connection a write buffer as large as the largest message, each
//     message is encoded after headroom bytes, the frame header is written
//     into the headroom, the payload is masked in place, and the frame goes
//     out whole with one Write, under one lock (the single-writer
//     discipline; pings, pongs and close frames take the same lock).
//   - Reading: after a read deadline passes, gorilla's connection is
//     unusable. The client's multiplexer lets the goroutine waiting for a
//     reply read it itself (no hand-off between goroutines on the common
//     path, see mux.go), and must be able to interrupt a read to pass that
//     role on. frameReader keeps its state across an interrupted read.

// AuthHeader is the request header that carries the lockfile's auth token.
const AuthHeader = "X-Claude-Code-Ide-Authorization"

// wsWriteTimeout bounds one frame write: a peer that takes no data for this
// long is gone.
const wsWriteTimeout = 30 * time.Second

// wsCloseWait bounds the wait for the write lock when sending a close frame
// on Close: a closing client does not wait behind a large write.
const wsCloseWait = 100 * time.Millisecond

// Opcodes (RFC 6455, section 5.2).
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// Close codes the client sends or interprets.
const (
	closeNormal          = 1000
	closeProtocolError   = 1002
	closePolicyViolation = 1008
	closeMessageTooBig   = 1009
)

type wsTransport struct {
	nc      *wsNetConn
	fr      *frameReader
	maxSize int64
	// goBackground runs pong and close replies off the reading goroutine
	// (set by the mux).
	goBackground func(func())

	closing   atomic.Bool
	closeOnce sync.Once
}

// dialWS opens a WebSocket to rawURL with the subprotocol mcp and the auth
// token, never through a proxy.
func dialWS(ctx context.Context, rawURL, token string, maxSize int64, act *activity) (*wsTransport, error) {
	var nc *wsNetConn
	d := websocket.Dialer{
		// Loopback IDE connections must never go through http_proxy or
		// all_proxy; the IDE is on this machine (or the WSL host).
		Proxy: nil,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			nc = newWSNetConn(c, act)
			return nc, nil
		},
		Subprotocols:    []string{"mcp"},
		ReadBufferSize:  4096,
		WriteBufferPool: noBufferPool{}, // gorilla writes no frame of ours
	}
	var header http.Header
	if token != "" {
		header = http.Header{AuthHeader: {token}}
	}
	_, resp, err := d.DialContext(ctx, rawURL, header)
	if err != nil {
		if nc != nil {
			nc.Close()
		}
		if resp != nil {
			switch resp.StatusCode {
			case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden:
				return nil, fmt.Errorf("%w: WebSocket upgrade refused with HTTP %s", ErrAuthFailed, resp.Status)
			}
			return nil, fmt.Errorf("WebSocket upgrade refused with HTTP %s", resp.Status)
		}
		return nil, err
	}
	// Gorilla may have read past the upgrade response (a frame the IDE sent
	// at once, such as a 1008 close); those bytes start the frame stream.
	leftover, err := nc.endHandshake()
	if err != nil {
		nc.Close()
		return nil, err
	}
	t := &wsTransport{nc: nc, maxSize: maxSize, goBackground: func(f func()) { go f() }}
	t.fr = newFrameReader(&leftoverReader{rest: leftover, r: nc}, maxSize)
	act.touch()
	return t, nil
}

// noBufferPool is a BufferPool that never holds a buffer.
type noBufferPool struct{}

func (noBufferPool) Get() any { return nil }
func (noBufferPool) Put(any)  {}

// leftoverReader reads rest, then r.
type leftoverReader struct {
	rest []byte
	r    net.Conn
}

func (l *leftoverReader) Read(p []byte) (int, error) {
	if len(l.rest) > 0 {
		n := copy(p, l.rest)
		l.rest = l.rest[n:]
		return n, nil
	}
	return l.r.Read(p)
}

func (t *wsTransport) ping(wait time.Duration) error {
	return t.writeControl(opPing, nil, wait)
}

func (t *wsTransport) send(ctx context.Context, m *msgBuf) (finishFunc, error) {
	defer putMsgBuf(m)
	frame := buildFrame(m.b, opText)
	if err := t.nc.writeFrame(ctx, frame, wsWriteTimeout); err != nil {
		if ctx.Err() != nil && !t.nc.failed.Load() {
			return nil, err // abandoned before writing
		}
		if t.closing.Load() {
			return nil, ErrClosed
		}
		return nil, connLost(fmt.Errorf("writing to the IDE: %w", err))
	}
	return nil, nil
}

// buildFrame turns b (headroom bytes, then the payload) into one final,
// masked client frame in place and returns it (a suffix of b).
func buildFrame(b []byte, opcode byte) []byte {
	payload := b[headroom:]
	n := len(payload)
	var hlen int
	switch {
	case n <= 125:
		hlen = 6
	case n <= 0xffff:
		hlen = 8
	default:
		hlen = 14
	}
	f := b[headroom-hlen:]
	f[0] = 0x80 | opcode // FIN: never fragmented
	switch hlen {
	case 6:
		f[1] = 0x80 | byte(n)
	case 8:
		f[1] = 0x80 | 126
		binary.BigEndian.PutUint16(f[2:], uint16(n))
	default:
		f[1] = 0x80 | 127
		binary.BigEndian.PutUint64(f[2:], uint64(n))
	}
	key := rand.Uint32()
	binary.LittleEndian.PutUint32(f[hlen-4:], key)
	maskBytes(key, payload)
	return f
}

// maskBytes XORs b with the 4-byte mask key (little-endian as it appears
// on the wire), eight bytes at a time.
func maskBytes(key uint32, b []byte) {
	k8 := uint64(key) | uint64(key)<<32
	for len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)^k8)
		b = b[8:]
	}
	for i := range b {
		b[i] ^= byte(key >> (8 * (i & 3)))
	}
}

// writeControl sends a control frame, waiting at most wait.
func (t *wsTransport) writeControl(op byte, data []byte, wait time.Duration) error {
	var buf [headroom + 125]byte
	b := append(buf[:headroom], data...)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return t.nc.writeFrame(ctx, buildFrame(b, op), wait)
}

func (t *wsTransport) recv() ([]byte, error) {
	for {
		op, payload, err := t.fr.next()
		if err != nil {
			if errors.Is(err, errInterrupted) {
				return nil, err
			}
			return nil, t.readErr(err)
		}
		switch op {
		case opText, opBinary:
			return payload, nil
		case opPing:
			data := bytes.Clone(payload)
			t.goBackground(func() { _ = t.writeControl(opPong, data, wsWriteTimeout) })
		case opPong:
			// Only a sign of life, which wsNetConn.Read recorded.
		case opClose:
			code, text := closeCodeAndText(payload)
			t.goBackground(func() {
				_ = t.writeControl(opClose, closePayload(code, ""), wsCloseWait)
			})
			return nil, t.readErr(&closeError{code: code, text: text})
		}
	}
}

func (t *wsTransport) setReadDeadline(d time.Time) { t.nc.Conn.SetReadDeadline(d) }

// interrupt makes a blocked recv return errInterrupted at once; any later
// recv must set its own deadline first.
func (t *wsTransport) interrupt() { t.nc.Conn.SetReadDeadline(time.Unix(1, 0)) }

func (t *wsTransport) interruptible() bool { return true }

// closeError is the IDE's close frame.
type closeError struct {
	code int
	text string
}

func (e *closeError) Error() string {
	return fmt.Sprintf("the IDE closed the connection with code %d %q", e.code, e.text)
}

func closeCodeAndText(p []byte) (int, string) {
	if len(p) < 2 {
		return 1005, "" // no status received
	}
	return int(binary.BigEndian.Uint16(p)), string(p[2:])
}

func closePayload(code int, text string) []byte {
	if code == 1005 || code == 1006 || code == 1015 {
		code = closeNormal // not to be sent
	}
	b := binary.BigEndian.AppendUint16(nil, uint16(code))
	return append(b, text...)
}

// readErr translates a read failure into the error the client reports.
func (t *wsTransport) readErr(err error) error {
	if t.closing.Load() {
		return ErrClosed
	}
	var tooBig *MessageTooLargeError
	if errors.As(err, &tooBig) {
		t.goBackground(func() { _ = t.writeControl(opClose, closePayload(closeMessageTooBig, ""), wsCloseWait) })
		return err
	}
	var pe *wsProtocolError
	if errors.As(err, &pe) {
		t.goBackground(func() { _ = t.writeControl(opClose, closePayload(closeProtocolError, ""), wsCloseWait) })
		return err
	}
	var ce *closeError
	if errors.As(err, &ce) && ce.code == closePolicyViolation {
		return fmt.Errorf("%w: %w", ErrAuthFailed, ce)
	}
	return err
}

func (t *wsTransport) close() error {
	var err error
	t.closeOnce.Do(func() {
		t.closing.Store(true)
		// Best effort: say goodbye unless a large write holds the line.
		_ = t.writeControl(opClose, closePayload(closeNormal, ""), wsCloseWait)
		err = t.nc.Close()
	})
	return err
}

// errInterrupted is returned by a recv whose read deadline passed or that
// was interrupted; the transport's state is intact and recv may be called
// again.
var errInterrupted = errors.New("read interrupted")

// wsProtocolError is a frame the WebSocket protocol does not allow.
type wsProtocolError struct{ msg string }

func (e *wsProtocolError) Error() string { return "WebSocket protocol error: " + e.msg }

// frameReader reads server frames and assembles messages. Every field of
// its progress lives in the struct, so that a read interrupted by a
// deadline (bufio hands back the timeout once and keeps what it buffered)
// resumes where it stopped.
type frameReader struct {
	br      *bufio.Reader
	maxSize int64

	hdr     [14]byte
	hdrN    int // header bytes read
	inFrame bool
	op      byte  // this frame's opcode
	fin     bool  // this frame is final
	left    int64 // payload bytes left in this frame

	msg   []byte // the data message being assembled
	msgOp byte   // its opcode; 0 when no message is open
	ctrl  []byte // the control frame being read
}

func newFrameReader(r *leftoverReader, maxSize int64) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(r, 32<<10), maxSize: maxSize}
}

// next returns the next whole data message (opText or opBinary) or control
// frame. The payload is valid until the next call.
func (f *frameReader) next() (op byte, payload []byte, err error) {
	if f.msgOp == 0 && cap(f.msg) > maxPooledBuf && !f.inFrame {
		f.msg = nil // do not pin a large message's buffer
	}
	for {
		if !f.inFrame {
			if err := f.readHeader(); err != nil {
				return 0, nil, err
			}
		}
		if f.op >= opClose {
			for f.left > 0 {
				n, err := f.br.Read(f.ctrl[len(f.ctrl) : len(f.ctrl)+int(f.left)])
				f.ctrl = f.ctrl[:len(f.ctrl)+n]
				f.left -= int64(n)
				if err != nil {
					return 0, nil, readError(err)
				}
			}
			f.inFrame = false
			return f.op, f.ctrl, nil
		}
		if cap(f.msg)-len(f.msg) < int(f.left) {
			f.msg = slices.Grow(f.msg, int(f.left)) // bounded by maxSize
		}
		for f.left > 0 {
			n, err := f.br.Read(f.msg[len(f.msg) : len(f.msg)+int(f.left)])
			f.msg = f.msg[:len(f.msg)+n]
			f.left -= int64(n)
			if err != nil {
				return 0, nil, readError(err)
			}
		}
		f.inFrame = false
		if f.fin {
			op := f.msgOp
			f.msgOp = 0
			// Text is not checked for valid UTF-8 (RFC 6455 would fail the
			// connection); the JSON decoder reads bad bytes as U+FFFD.
			msg := f.msg
			f.msg = f.msg[:0]
			return op, msg, nil
		}
	}
}

// readHeader reads one frame header and checks it.
func (f *frameReader) readHeader() error {
	for {
		need := 2
		if f.hdrN >= 2 {
			switch f.hdr[1] & 0x7f {
			case 126:
				need += 2
			case 127:
				need += 8
			}
			if f.hdr[1]&0x80 != 0 {
				need += 4
			}
			if f.hdrN >= need {
				break
			}
		}
		n, err := f.br.Read(f.hdr[f.hdrN:need])
		f.hdrN += n
		if err != nil {
			return readError(err)
		}
	}
	b0, b1 := f.hdr[0], f.hdr[1]
	f.hdrN = 0
	if b0&0x70 != 0 {
		return &wsProtocolError{"reserved bits set without an extension"}
	}
	if b1&0x80 != 0 {
		return &wsProtocolError{"masked frame from the server"}
	}
	f.fin, f.op = b0&0x80 != 0, b0&0x0f
	var length int64
	switch b1 & 0x7f {
	case 126:
		length = int64(binary.BigEndian.Uint16(f.hdr[2:4]))
	case 127:
		u := binary.BigEndian.Uint64(f.hdr[2:10])
		if u > 1<<62 {
			return &wsProtocolError{"frame length out of range"}
		}
		length = int64(u)
	default:
		length = int64(b1 & 0x7f)
	}
	switch f.op {
	case opClose, opPing, opPong:
		if !f.fin || length > 125 {
			return &wsProtocolError{"fragmented or long control frame"}
		}
		f.ctrl = f.ctrl[:0]
		if cap(f.ctrl) < 125 {
			f.ctrl = make([]byte, 0, 125)
		}
	case opText, opBinary:
		if f.msgOp != 0 {
			return &wsProtocolError{"new message inside a fragmented one"}
		}
		f.msgOp = f.op
		f.msg = f.msg[:0]
	case opContinuation:
		if f.msgOp == 0 {
			return &wsProtocolError{"continuation frame outside a message"}
		}
	default:
		return &wsProtocolError{fmt.Sprintf("unknown opcode %#x", f.op)}
	}
	if f.op < opClose {
		if size := int64(len(f.msg)) + length; size > f.maxSize {
			return &MessageTooLargeError{Size: size, Limit: f.maxSize, Incoming: true}
		}
	}
	f.left = length
	f.inFrame = true
	return nil
}

// readError tells an interrupted read (a deadline) from a failed one.
func readError(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("%w: %w", errInterrupted, err)
	}
	return err
}

// wsNetConn is the TCP connection under the WebSocket. Its write lock is
// held for one whole frame at a time, so frames never interleave; reads
// record activity for the keep-alive; during the handshake it records what
// gorilla read.
type wsNetConn struct {
	net.Conn
	wmu chan struct{} // write lock, usable with a deadline or ctx
	act *activity

	handshake atomic.Bool
	seen      []byte // bytes read during the handshake
	failed    atomic.Bool
}

func newWSNetConn(c net.Conn, act *activity) *wsNetConn {
	w := &wsNetConn{Conn: c, wmu: make(chan struct{}, 1), act: act}
	w.handshake.Store(true)
	return w
}

func (c *wsNetConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.act.touch()
		if c.handshake.Load() {
			c.seen = append(c.seen, p[:n]...)
		}
	}
	return n, err
}

// endHandshake returns the bytes gorilla read beyond the upgrade response.
func (c *wsNetConn) endHandshake() ([]byte, error) {
	c.handshake.Store(false)
	i := bytes.Index(c.seen, []byte("\r\n\r\n"))
	if i < 0 {
		return nil, errors.New("WebSocket upgrade response not found")
	}
	rest := c.seen[i+4:]
	c.seen = nil
	return rest, nil
}

// Write is used by gorilla only, for the upgrade request.
func (c *wsNetConn) Write(p []byte) (int, error) {
	c.wmu <- struct{}{}
	defer func() { <-c.wmu }()
	return c.Conn.Write(p)
}

// writeFrame writes one whole frame. Waiting for the lock ends with ctx;
// once writing, the frame goes out whole within wait, or the connection is
// closed: a partial frame would corrupt the stream.
func (c *wsNetConn) writeFrame(ctx context.Context, frame []byte, wait time.Duration) error {
	if c.failed.Load() {
		return net.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case c.wmu <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-c.wmu }()
	if err := c.Conn.SetWriteDeadline(time.Now().Add(wait)); err != nil {
		c.fail()
		return err
	}
	if _, err := c.Conn.Write(frame); err != nil {
		c.fail()
		return err
	}
	return nil
}

// fail closes a connection whose write failed: the peer may have seen part
// of a frame.
func (c *wsNetConn) fail() {
	if c.failed.CompareAndSwap(false, true) {
		c.Conn.Close()
	}
}
