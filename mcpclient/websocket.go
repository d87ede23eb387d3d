package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
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

	"github.com/idebridge/idebridge/mcp"
)

// This is the only file of the client that imports gorilla/websocket.
//
// Gorilla does the opening handshake (the HTTP upgrade, the subprotocol, the
// auth header). The frames after it are the transport's own, for two
// reasons:
//
//   - Writing: gorilla's client-side writer fragments every message larger
//     than its write buffer (4 KiB by default), and deployed IDEs close the
//     connection on a fragmented message (the Neovim plugin with 1003;
//     docs/PROTOCOL.md, Connecting).
//     Rather than give every connection a write buffer as large as the
//     largest message, each message is encoded after headroom bytes, the
//     frame header is written into the headroom, the payload is masked in
//     place, and the frame goes out whole with one Write, under one lock
//     (the single-writer discipline; pings, pongs and close frames take the
//     same lock).
//   - Reading: after a read deadline passes, gorilla's connection is
//     unusable. The Conn lets the goroutine waiting for a reply read it
//     itself and must be able to interrupt a read to pass that role on;
//     frameReader keeps its state across an interrupted read.

// DefaultWriteTimeout bounds writing one WebSocket frame.
const DefaultWriteTimeout = 30 * time.Second

// wsCloseWait bounds the wait for the write lock when sending a close frame
// on Close: a closing client does not wait behind a large write.
const wsCloseWait = 100 * time.Millisecond

// WebSocketOptions configure DialWebSocket. A nil *WebSocketOptions, and
// every zero field, means the documented default.
type WebSocketOptions struct {
	// AuthToken is sent as the mcp.AuthHeader header when not empty.
	AuthToken string
	// MaxMessageSize bounds one incoming message, in bytes; a larger one
	// ends the connection with a *MessageTooLargeError (close code 1009).
	// Default DefaultMaxMessageSize; negative is an error.
	MaxMessageSize int64
	// WriteTimeout bounds writing one frame: a server that takes no data
	// for this long is gone. Default DefaultWriteTimeout; negative is an
	// error.
	WriteTimeout time.Duration
	// DialContext opens the TCP connection. Default: a net.Dialer with a
	// 10 s timeout.
	DialContext DialFunc
	// TLSConfig is used for wss:// URLs. Default: the system's roots.
	TLSConfig *tls.Config
}

type wsTransport struct {
	nc           *wsNetConn
	fr           *frameReader
	writeTimeout time.Duration
	intr         atomic.Bool   // Interrupt was called since Recv last returned
	pong         chan struct{} // a pong arrived (capacity 1)

	mu      sync.Mutex
	closing bool
	bg      sync.WaitGroup // pong and close replies
	closed  chan struct{}
	once    sync.Once
}

// DialWebSocket opens a WebSocket to rawURL (ws:// or wss://) with the
// subprotocol mcp and the auth token, never through a proxy. ctx bounds
// the connection attempt only. A token the server refuses (HTTP 400, 401 or
// 403 at the upgrade, or close code 1008 right after it) is an error
// matching ErrAuthFailed.
func DialWebSocket(ctx context.Context, rawURL string, o *WebSocketOptions) (Transport, error) {
	var opts WebSocketOptions
	if o != nil {
		opts = *o
	}
	maxSize, err := resolveSize(opts.MaxMessageSize)
	if err != nil {
		return nil, err
	}
	writeTimeout, err := resolveTimeout("WriteTimeout", opts.WriteTimeout, DefaultWriteTimeout)
	if err != nil {
		return nil, err
	}
	dial := opts.DialContext.orDefault()
	act := &activity{}
	var nc *wsNetConn
	d := websocket.Dialer{
		// Never through http_proxy or all_proxy; see DialFunc.
		Proxy: nil,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			nc = newWSNetConn(c, act)
			return nc, nil
		},
		NetDialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			host, _, _ := net.SplitHostPort(addr)
			tc, err := tlsClient(ctx, c, host, opts.TLSConfig)
			if err != nil {
				return nil, err
			}
			nc = newWSNetConn(tc, act)
			return nc, nil
		},
		Subprotocols:    []string{mcp.Subprotocol},
		ReadBufferSize:  4096,
		WriteBufferPool: noBufferPool{}, // gorilla writes no frame of ours
	}
	var header http.Header
	if opts.AuthToken != "" {
		header = http.Header{mcp.AuthHeader: {opts.AuthToken}}
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
	t := &wsTransport{nc: nc, writeTimeout: writeTimeout, pong: make(chan struct{}, 1), closed: make(chan struct{})}
	t.fr = newFrameReader(&leftoverReader{rest: leftover, r: nc}, maxSize)
	act.touch()
	return t, nil
}

// resolveSize applies the MaxMessageSize rule: zero is the default,
// negative an error.
func resolveSize(n int64) (int64, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("mcpclient: negative MaxMessageSize %d", n)
	case n == 0:
		return DefaultMaxMessageSize, nil
	}
	return n, nil
}

// resolveTimeout applies the timeout rule: zero is def, negative an error.
func resolveTimeout(name string, d, def time.Duration) (time.Duration, error) {
	switch {
	case d < 0:
		return 0, fmt.Errorf("mcpclient: negative %s %v", name, d)
	case d == 0:
		return def, nil
	}
	return d, nil
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

// goBackground runs f on a goroutine that Close waits for, unless closing.
func (t *wsTransport) goBackground(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing {
		return
	}
	t.bg.Add(1)
	go func() {
		defer t.bg.Done()
		f()
	}()
}

func (t *wsTransport) isClosing() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closing
}

// Ping writes a ping frame and waits for its pong, or for any data at all
// (a pong can queue behind a large message), until ctx ends.
func (t *wsTransport) Ping(ctx context.Context) error {
	sent := now()
	select {
	case <-t.pong: // a stale pong
	default:
	}
	if err := t.writeControl(ctx, opPing, nil, t.writeTimeout); err != nil {
		return err
	}
	select {
	case <-t.pong:
		return nil
	case <-t.closed:
		return ErrClosed
	case <-ctx.Done():
		if t.nc.act.since(sent) {
			return nil
		}
		return ctx.Err()
	}
}

func (t *wsTransport) Send(ctx context.Context, m *Message) error {
	frame := buildFrame(m.b, opText)
	if err := t.nc.writeFrame(ctx, frame, t.writeTimeout); err != nil {
		if ctx.Err() != nil && !t.nc.failed.Load() {
			return err // abandoned before writing
		}
		if t.isClosing() {
			return ErrClosed
		}
		return connLost(fmt.Errorf("writing to the IDE: %w", err))
	}
	return nil
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

// writeControl sends a control frame; waiting for the write lock ends with
// ctx, and the write itself takes at most wait.
func (t *wsTransport) writeControl(ctx context.Context, op byte, data []byte, wait time.Duration) error {
	var buf [headroom + 125]byte
	b := append(buf[:headroom], data...)
	return t.nc.writeFrame(ctx, buildFrame(b, op), wait)
}

// writeControlSoon sends a control frame within wait.
func (t *wsTransport) writeControlSoon(op byte, data []byte, wait time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_ = t.writeControl(ctx, op, data, wait)
}

func (t *wsTransport) Recv(deadline time.Time) ([]byte, error) {
	t.nc.Conn.SetReadDeadline(deadline)
	// After setting the deadline, which would undo an Interrupt that came
	// before it.
	if t.intr.Swap(false) {
		return nil, ErrInterrupted
	}
	for {
		op, payload, err := t.fr.next()
		if err != nil {
			if errors.Is(err, ErrInterrupted) {
				t.intr.Store(false)
				return nil, err
			}
			return nil, t.readErr(err)
		}
		switch op {
		case opText, opBinary:
			return payload, nil
		case opPing:
			data := bytes.Clone(payload)
			t.goBackground(func() { t.writeControlSoon(opPong, data, t.writeTimeout) })
		case opPong:
			select {
			case t.pong <- struct{}{}:
			default:
			}
		case opClose:
			code, text := closeCodeAndText(payload)
			t.goBackground(func() { t.writeControlSoon(opClose, closePayload(code, ""), wsCloseWait) })
			return nil, t.readErr(&closeError{code: code, text: text})
		}
	}
}

// Interrupt cuts a blocked Recv at once (a read deadline in the past), or
// makes the next one return at once.
func (t *wsTransport) Interrupt() {
	t.intr.Store(true)
	t.nc.Conn.SetReadDeadline(time.Unix(1, 0))
}

// closeError is the server's close frame.
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
	if t.isClosing() {
		return ErrClosed
	}
	var tooBig *MessageTooLargeError
	if errors.As(err, &tooBig) {
		t.goBackground(func() { t.writeControlSoon(opClose, closePayload(closeMessageTooBig, ""), wsCloseWait) })
		return err
	}
	var pe *wsProtocolError
	if errors.As(err, &pe) {
		t.goBackground(func() { t.writeControlSoon(opClose, closePayload(closeProtocolError, ""), wsCloseWait) })
		return err
	}
	var ce *closeError
	if errors.As(err, &ce) && ce.code == closePolicyViolation {
		return fmt.Errorf("%w: %w", ErrAuthFailed, ce)
	}
	return err
}

// Close says goodbye (unless a large write holds the line), closes the
// connection and waits for the pong and close replies in flight.
func (t *wsTransport) Close() error {
	var err error
	t.once.Do(func() {
		t.mu.Lock()
		t.closing = true
		t.mu.Unlock()
		t.writeControlSoon(opClose, closePayload(closeNormal, ""), wsCloseWait)
		err = t.nc.Close()
		close(t.closed)
		t.bg.Wait()
	})
	return err
}

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
	if f.msgOp == 0 && cap(f.msg) > maxPooled && !f.inFrame {
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
	if isTimeout(err) {
		return fmt.Errorf("%w: %w", ErrInterrupted, err)
	}
	return err
}

// isTimeout reports whether err is a passed read deadline.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// wsNetConn is the connection under the WebSocket (TCP, or TLS over it).
// Its write lock is held for one whole frame at a time, so frames never
// interleave; reads record activity for the keep-alive; during the
// handshake it records what gorilla read.
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
