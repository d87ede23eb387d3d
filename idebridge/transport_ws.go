package idebridge

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// This is the only file of the client that imports gorilla/websocket.
//
// Gorilla's client-side writer fragments every message larger than its
// write buffer (4 KiB by default), and deployed IDEs close the connection
// on a fragmented message. Rather than give every connection a write buffer
// as large as the largest message, the transport frames data messages
// itself: the message is encoded after headroom bytes, the frame header is
// written into the headroom, the payload is masked in place, and the frame
// goes out with one Write. Gorilla still does the handshake, reads, and
// the control frames it sends on its own (pongs, close replies); every
// write, ours and gorilla's, goes through wsNetConn, which holds one lock
// per frame: the single-writer discipline.

// AuthHeader is the request header that carries the lockfile's auth token.
const AuthHeader = "X-Claude-Code-Ide-Authorization"

// wsWriteTimeout bounds one frame write: a peer that takes no data for this
// long is gone.
const wsWriteTimeout = 30 * time.Second

// wsCloseWait bounds the wait for the write lock when sending a close frame
// on Close: a closing client does not wait behind a large write.
const wsCloseWait = 100 * time.Millisecond

type wsTransport struct {
	conn    *websocket.Conn
	nc      *wsNetConn
	maxSize int64
	readBuf []byte

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
		Subprotocols:   []string{"mcp"},
		ReadBufferSize: 32 << 10,
		// Gorilla's message writers are never used (see above), so no
		// per-connection write buffer is allocated.
		WriteBufferPool: noBufferPool{},
	}
	var header http.Header
	if token != "" {
		header = http.Header{AuthHeader: {token}}
	}
	conn, resp, err := d.DialContext(ctx, rawURL, header)
	if err != nil {
		if resp != nil {
			switch resp.StatusCode {
			case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden:
				return nil, fmt.Errorf("%w: WebSocket upgrade refused with HTTP %s", ErrAuthFailed, resp.Status)
			}
			return nil, fmt.Errorf("WebSocket upgrade refused with HTTP %s", resp.Status)
		}
		return nil, err
	}
	conn.SetReadLimit(maxSize)
	t := &wsTransport{conn: conn, nc: nc, maxSize: maxSize}
	act.touch()
	return t, nil
}

// noBufferPool is a BufferPool that never holds a buffer.
type noBufferPool struct{}

func (noBufferPool) Get() any { return nil }
func (noBufferPool) Put(any)  {}
func (t *wsTransport) ping(wait time.Duration) error {
	return t.writeControl(websocket.PingMessage, nil, wait)
}

func (t *wsTransport) send(ctx context.Context, m *msgBuf) error {
	defer putMsgBuf(m)
	frame := buildFrame(m.b, opText)
	if err := t.nc.writeFrame(ctx, frame, wsWriteTimeout); err != nil {
		if ctx.Err() != nil && !t.nc.failed.Load() {
			return err // abandoned before writing
		}
		if t.closing.Load() {
			return ErrClosed
		}
		return connLost(fmt.Errorf("writing to the IDE: %w", err))
	}
	return nil
}

const (
	opText  = 0x1
	opClose = 0x8
	opPing  = 0x9
)

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

// writeControl sends a control frame through our framing.
func (t *wsTransport) writeControl(messageType int, data []byte, wait time.Duration) error {
	var buf [headroom + 125]byte
	b := append(buf[:headroom], data...)
	op := byte(opPing)
	if messageType == websocket.CloseMessage {
		op = opClose
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return t.nc.writeFrame(ctx, buildFrame(b, op), wait)
}

func (t *wsTransport) recv() ([]byte, error) {
	if cap(t.readBuf) > maxPooledBuf {
		t.readBuf = nil // do not pin a large message's buffer
	}
	_, r, err := t.conn.NextReader()
	if err != nil {
		return nil, t.readErr(err)
	}
	buf := t.readBuf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, t.readErr(err)
		}
	}
	t.readBuf = buf
	return buf, nil
}

// readErr translates a read failure into the error the client reports.
func (t *wsTransport) readErr(err error) error {
	if t.closing.Load() {
		return ErrClosed
	}
	if errors.Is(err, websocket.ErrReadLimit) {
		return &MessageTooLargeError{Limit: t.maxSize, Incoming: true}
	}
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		if ce.Code == websocket.ClosePolicyViolation {
			return fmt.Errorf("%w: the IDE closed the connection with code 1008 %q", ErrAuthFailed, ce.Text)
		}
		return fmt.Errorf("the IDE closed the connection with code %d %q", ce.Code, ce.Text)
	}
	return err
}

func (t *wsTransport) close() error {
	var err error
	t.closeOnce.Do(func() {
		t.closing.Store(true)
		// Best effort: say goodbye unless a large write holds the line.
		_ = t.writeControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), wsCloseWait)
		err = t.conn.Close()
	})
	return err
}

// wsNetConn is the TCP connection under gorilla. Its write lock is held for
// one whole frame at a time, by our frames and gorilla's alike, so frames
// never interleave; reads record activity for the keep-alive.
type wsNetConn struct {
	net.Conn
	wmu chan struct{} // write lock, usable with a deadline or ctx
	act *activity

	// gorillaDeadline is the write deadline gorilla set for its next Write
	// (it always sets one right before writing, under its own lock); it
	// is applied under wmu so that it never cuts a frame of ours short.
	gorillaDeadline atomic.Pointer[time.Time]
	failed          atomic.Bool
}

func newWSNetConn(c net.Conn, act *activity) *wsNetConn {
	return &wsNetConn{Conn: c, wmu: make(chan struct{}, 1), act: act}
}

func (c *wsNetConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.act.touch()
	}
	return n, err
}

// SetWriteDeadline records gorilla's deadline for its next Write.
func (c *wsNetConn) SetWriteDeadline(t time.Time) error {
	c.gorillaDeadline.Store(&t)
	return nil
}

// Write is used by gorilla only: the handshake request and the control
// frames it sends itself.
func (c *wsNetConn) Write(p []byte) (int, error) {
	dl := c.gorillaDeadline.Load()
	if dl != nil && !dl.IsZero() {
		timer := time.NewTimer(time.Until(*dl))
		defer timer.Stop()
		select {
		case c.wmu <- struct{}{}:
		case <-timer.C:
			return 0, os.ErrDeadlineExceeded
		}
		defer func() { <-c.wmu }()
		if err := c.Conn.SetWriteDeadline(*dl); err != nil {
			return 0, err
		}
	} else {
		c.wmu <- struct{}{}
		defer func() { <-c.wmu }()
	}
	n, err := c.Conn.Write(p)
	if err != nil {
		c.fail()
	}
	return n, err
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
