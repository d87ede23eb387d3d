package idebridge

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The legacy SSE transport: GET the SSE URL and keep the stream open; its
// first event, "endpoint", names where to POST messages (resolved against
// the SSE URL, refused on another origin); replies arrive as "message" (or
// unnamed) events.

// errForeignEndpoint is wrapped when the endpoint event names another
// origin: posting the user's files there could leak them.
var errForeignEndpoint = errors.New("SSE endpoint is on another origin")

type sseTransport struct {
	postURL string
	token   string
	events  *SSEReader
	ctx     context.Context // ends with the transport
	cancel  context.CancelFunc

	// The stream: over a connection of its own for plain http (conn set;
	// reads can be interrupted, so callers read their own replies), or
	// through net/http for https (client and tr set).
	stream io.Closer
	conn   net.Conn
	client *http.Client
	tr     *http.Transport
	// post sends messages over plain http without net/http (see poster);
	// nil for https, where net/http does it.
	post *poster

	closing   atomic.Bool
	closeOnce sync.Once
}

func dialSSE(ctx context.Context, rawURL, token string, maxSize int64, act *activity) (*sseTransport, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("parsing SSE URL: %w", err)
	}
	// The stream outlives ctx, which bounds only the connection attempt.
	streamCtx, cancel := context.WithCancel(context.Background())
	t := &sseTransport{token: token, ctx: streamCtx, cancel: cancel}
	fail := func(err error) (*sseTransport, error) {
		t.close()
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			return nil, fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return nil, err
	}
	var body io.Reader
	if strings.EqualFold(u.Scheme, "http") {
		body, err = t.openDirect(ctx, u)
	} else {
		body, err = t.openHTTP(ctx, u)
	}
	if err != nil {
		return fail(err)
	}
	act.touch()
	t.events = NewSSEReader(activityReader{r: body, a: act}, int(min(maxSize, int64(^uint(0)>>1))))

	// The endpoint event, within ctx.
	var stop func() bool
	if t.conn != nil {
		if dl, ok := ctx.Deadline(); ok {
			t.conn.SetReadDeadline(dl)
		}
		stop = context.AfterFunc(ctx, t.interrupt)
	} else {
		stop = context.AfterFunc(ctx, cancel)
	}
	endpoint, err := t.readEndpoint(u)
	if !stop() || ctx.Err() != nil {
		return fail(ctx.Err())
	}
	if err != nil {
		return fail(err)
	}
	if t.conn != nil {
		t.conn.SetReadDeadline(time.Time{})
	}
	t.postURL = endpoint.String()
	if strings.EqualFold(endpoint.Scheme, "http") {
		t.post = newPoster(endpoint, token)
	}
	return t, nil
}

// openDirect sends the GET over a connection of its own and returns the
// response body.
func (t *sseTransport) openDirect(ctx context.Context, u *url.URL) (io.Reader, error) {
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	c, err := dialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	t.conn, t.stream = c, c
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	req := "GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host +
		"\r\nUser-Agent: idebridge\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n"
	if t.token != "" {
		req += AuthHeader + ": " + t.token + "\r\n"
	}
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(c, 32<<10)
	var head responseHead
	for {
		head, err = readResponseHead(br)
		if err != nil {
			return nil, fmt.Errorf("reading the SSE response: %w", err)
		}
		if head.status < 100 || head.status > 199 {
			break
		}
	}
	if err := checkStreamResponse(head.status, http.StatusText(head.status), head.contentType); err != nil {
		return nil, err
	}
	c.SetDeadline(time.Time{})
	switch {
	case head.chunked:
		return &chunkedBody{br: br}, nil
	case head.contentLength >= 0:
		return &limitedBody{br: br, left: head.contentLength}, nil
	default:
		return br, nil
	}
}

// openHTTP sends the GET through net/http (https).
func (t *sseTransport) openHTTP(ctx context.Context, u *url.URL) (io.Reader, error) {
	t.tr = &http.Transport{
		// Loopback IDE connections must never go through a proxy.
		Proxy:               nil,
		DialContext:         dialContext,
		MaxIdleConns:        64,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	t.client = &http.Client{Transport: t.tr}
	stop := context.AfterFunc(ctx, t.cancel)
	defer stop()
	req, err := http.NewRequestWithContext(t.ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	if t.token != "" {
		req.Header.Set(AuthHeader, t.token)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, err
	}
	t.stream = resp.Body
	if err := checkStreamResponse(resp.StatusCode, resp.Status, resp.Header.Get("Content-Type")); err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// checkStreamResponse refuses anything but a 200 event stream.
func checkStreamResponse(status int, statusText, contentType string) error {
	if status != http.StatusOK {
		switch status {
		case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("%w: SSE request refused with HTTP %d %s", ErrAuthFailed, status, statusText)
		}
		return fmt.Errorf("SSE request refused with HTTP %d %s", status, statusText)
	}
	if contentType != "" {
		if mt, _, _ := mime.ParseMediaType(contentType); mt != "text/event-stream" {
			return fmt.Errorf("SSE URL answered with Content-Type %q, not text/event-stream", contentType)
		}
	}
	return nil
}

// readEndpoint reads events until the endpoint event and resolves it.
func (t *sseTransport) readEndpoint(u *url.URL) (*url.URL, error) {
	for {
		ev, err := t.events.Next()
		if err != nil {
			return nil, fmt.Errorf("reading the SSE endpoint event: %w", err)
		}
		if ev.Event != "endpoint" {
			continue // nothing can be answered before the endpoint is known
		}
		endpoint, err := u.Parse(strings.TrimSpace(string(ev.Data)))
		if err != nil {
			return nil, fmt.Errorf("parsing the SSE endpoint %q: %w", ev.Data, err)
		}
		if !sameOrigin(u, endpoint) {
			return nil, fmt.Errorf("%w: %s is not on %s://%s", errForeignEndpoint, endpoint.Redacted(), u.Scheme, u.Host)
		}
		return endpoint, nil
	}
}

// sameOrigin compares scheme, host and port (with the scheme's default).
func sameOrigin(a, b *url.URL) bool {
	if !strings.EqualFold(a.Scheme, b.Scheme) || !strings.EqualFold(a.Hostname(), b.Hostname()) {
		return false
	}
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return port(a) == port(b)
}

func (t *sseTransport) ping(time.Duration) error { return errNoTransportPing }

// Over its own connection, the stream can be interrupted and resumed (the
// SSE parser, chunkedBody and bufio all keep their state across a read
// deadline); through net/http it cannot, and the mux keeps a dedicated
// reader for it.
func (t *sseTransport) interruptible() bool { return t.conn != nil }

func (t *sseTransport) setReadDeadline(d time.Time) {
	if t.conn != nil {
		t.conn.SetReadDeadline(d)
	}
}

func (t *sseTransport) interrupt() {
	if t.conn != nil {
		t.conn.SetReadDeadline(time.Unix(1, 0))
	}
}

// send POSTs one message. Once the POST has started, the IDE may have the
// message whatever becomes of the response, so the POST is not tied to the
// caller's ctx (a cancelled call must still be able to say
// notifications/cancelled about a request the IDE did get); it ends with
// the transport or after wsWriteTimeout.
func (t *sseTransport) send(ctx context.Context, m *msgBuf) (finishFunc, error) {
	if t.closing.Load() {
		putMsgBuf(m)
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		putMsgBuf(m)
		return nil, err
	}
	if t.post != nil {
		pc, err := t.post.write(t.ctx, m.payload())
		putMsgBuf(m)
		if err != nil {
			return nil, t.postErr(err)
		}
		return func(ctx context.Context, deadline time.Time) error {
			if err := t.post.finish(ctx, deadline, pc); err != nil {
				if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
					return err
				}
				return t.postErr(err)
			}
			return nil
		}, nil
	}
	postCtx, cancel := context.WithTimeout(t.ctx, wsWriteTimeout)
	defer cancel()
	body := &pooledBody{m: m}
	body.r.Reset(m.payload())
	req, err := http.NewRequestWithContext(postCtx, http.MethodPost, t.postURL, body)
	if err != nil {
		body.Close()
		return nil, err
	}
	req.ContentLength = int64(len(m.payload()))
	req.GetBody = nil
	req.Header["Content-Type"] = jsonContentType
	if t.token != "" {
		req.Header[AuthHeader] = []string{t.token}
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, connLost(fmt.Errorf("posting to the SSE endpoint: %w", err))
	}
	// Drain a little so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("posting to the SSE endpoint: HTTP %s", resp.Status)
	}
	return nil, nil
}

// postErr maps a POST failure: a status other than 2xx is the IDE refusing
// one message; anything else means the IDE could not be reached or dropped
// the request, may or may not have the message, and the session cannot be
// trusted any more.
func (t *sseTransport) postErr(err error) error {
	if t.closing.Load() {
		return ErrClosed
	}
	var se *httpStatusError
	if errors.As(err, &se) {
		return fmt.Errorf("posting to the SSE endpoint: %w", err)
	}
	return connLost(fmt.Errorf("posting to the SSE endpoint: %w", err))
}

var jsonContentType = []string{"application/json"}

// pooledBody returns its buffer to the pool when the HTTP client closes it,
// which may happen after Do returns.
type pooledBody struct {
	r    bytes.Reader
	m    *msgBuf
	once sync.Once
}

func (b *pooledBody) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b *pooledBody) Close() error {
	b.once.Do(func() {
		b.r.Reset(nil)
		putMsgBuf(b.m)
	})
	return nil
}

func (t *sseTransport) recv() ([]byte, error) {
	for {
		ev, err := t.events.Next()
		if err != nil {
			if t.closing.Load() {
				return nil, ErrClosed
			}
			if isTimeout(err) {
				return nil, fmt.Errorf("%w: %w", errInterrupted, err)
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, fmt.Errorf("the IDE ended the SSE stream: %w", err)
			}
			return nil, err
		}
		switch ev.Event {
		case "message":
			return ev.Data, nil
		default:
			// endpoint (again), ping and unknown events carry no message.
		}
	}
}

func (t *sseTransport) close() error {
	t.closeOnce.Do(func() {
		t.closing.Store(true)
		t.cancel()
		if t.stream != nil {
			t.stream.Close()
		}
		if t.tr != nil {
			t.tr.CloseIdleConnections()
		}
		if t.post != nil {
			t.post.close()
		}
	})
	return nil
}

// poster POSTs messages to a plain-http SSE endpoint over kept-alive
// connections, without net/http: the request goes out with one write (its
// header and body together) and the response is read on the caller's
// goroutine. net/http hands every request to a writer goroutine and every
// response back from a reader goroutine, and writes header and body
// separately; on a loopback round trip that is most of the client's cost.
// It speaks just enough HTTP/1.1 for an IDE's message endpoint: status and
// headers, then a body by Content-Length, chunked, or until the connection
// closes.
type poster struct {
	addr string // host:port to dial
	head []byte // request line and fixed headers, up to "Content-Length: "

	mu     sync.Mutex
	idle   []*postConn
	active map[*postConn]bool
	closed bool
}

type postConn struct {
	c        net.Conn
	br       *bufio.Reader
	lastUsed time.Time
}

// A connection idle for longer is not reused: IDE servers close idle
// keep-alive connections (Node's default is after 5 s), and a request
// written just as the server closes would be lost.
const (
	postMaxIdle  = time.Second
	postMaxConns = 16
)

func newPoster(u *url.URL, token string) *poster {
	host := u.Host
	addr := host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	var h []byte
	h = append(h, "POST "...)
	h = append(h, u.RequestURI()...)
	h = append(h, " HTTP/1.1\r\nHost: "...)
	h = append(h, host...)
	h = append(h, "\r\nUser-Agent: idebridge\r\nContent-Type: application/json\r\n"...)
	if token != "" {
		h = append(h, AuthHeader+": "...)
		h = append(h, token...)
		h = append(h, "\r\n"...)
	}
	h = append(h, "Content-Length: "...)
	return &poster{addr: addr, head: h, active: map[*postConn]bool{}}
}

// write sends body as one POST; finish reads the answer. Both end with ctx
// or after wsWriteTimeout.
func (p *poster) write(ctx context.Context, body []byte) (*postConn, error) {
	pc, err := p.get(ctx)
	if err != nil {
		return nil, err
	}
	// Header and body in one buffer and one write: on loopback, and more
	// so under gVisor, a syscall costs more than copying the message.
	req := getMsgBuf()
	defer putMsgBuf(req)
	h := append(req.b[:0], p.head...)
	h = strconv.AppendInt(h, int64(len(body)), 10)
	h = append(h, "\r\n\r\n"...)
	h = append(h, body...)
	req.b = h
	deadline := time.Now().Add(wsWriteTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	pc.c.SetWriteDeadline(deadline)
	if _, err := pc.c.Write(h); err != nil {
		p.drop(pc)
		return nil, err
	}
	return pc, nil
}

// finish reads the answer to the POST written on pc; a status other than
// 2xx is an *httpStatusError. Some servers answer a POST only once they
// have handled the message, so the wait is the caller's: it ends with ctx
// or at deadline (none when zero), which only drops this connection.
func (p *poster) finish(ctx context.Context, deadline time.Time, pc *postConn) error {
	pc.c.SetReadDeadline(deadline)
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { pc.c.SetReadDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	status, reusable, err := readPostResponse(pc.br)
	if err != nil {
		p.drop(pc)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if isTimeout(err) {
			return fmt.Errorf("%w: no answer to the POST in time", context.DeadlineExceeded)
		}
		return err
	}
	if reusable {
		p.put(pc)
	} else {
		p.drop(pc)
	}
	if status < 200 || status > 299 {
		return &httpStatusError{status}
	}
	return nil
}

// send POSTs body and reads the answer, within wsWriteTimeout.
func (p *poster) send(ctx context.Context, body []byte) error {
	pc, err := p.write(ctx, body)
	if err != nil {
		return err
	}
	return p.finish(ctx, time.Now().Add(wsWriteTimeout), pc)
}

// httpStatusError is a POST answered with a status other than 2xx: the
// server is there and refused this one message.
type httpStatusError struct{ status int }

func (e *httpStatusError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.status, http.StatusText(e.status))
}

// get returns an idle connection that is still usable, or a new one.
func (p *poster) get(ctx context.Context) (*postConn, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	for len(p.idle) > 0 {
		pc := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if time.Since(pc.lastUsed) < postMaxIdle {
			p.active[pc] = true
			p.mu.Unlock()
			return pc, nil
		}
		pc.c.Close()
	}
	p.mu.Unlock()
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := dialContext(dctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	pc := &postConn{c: c, br: bufio.NewReaderSize(c, 4096)}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return nil, ErrClosed
	}
	p.active[pc] = true
	return pc, nil
}

func (p *poster) put(pc *postConn) {
	pc.c.SetDeadline(time.Time{})
	pc.lastUsed = time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.active, pc)
	if p.closed || len(p.idle) >= postMaxConns {
		pc.c.Close()
		return
	}
	p.idle = append(p.idle, pc)
}

func (p *poster) drop(pc *postConn) {
	pc.c.Close()
	p.mu.Lock()
	delete(p.active, pc)
	p.mu.Unlock()
}

// close closes every connection, unblocking POSTs in flight.
func (p *poster) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, pc := range p.idle {
		pc.c.Close()
	}
	p.idle = nil
	for pc := range p.active {
		pc.c.Close()
	}
}

// maxPostResponse bounds what is read of a response to a POST: a message
// endpoint answers "Accepted" or nothing.
const maxPostResponse = 1 << 20

// responseHead is what the client needs of an HTTP/1.x response head.
type responseHead struct {
	status        int
	keepAlive     bool
	contentLength int64 // -1 when absent
	chunked       bool
	contentType   string
}

// readResponseHead reads a status line and headers. It works on bufio's
// own buffer and converts nothing it does not keep.
func readResponseHead(br *bufio.Reader) (responseHead, error) {
	h := responseHead{contentLength: -1}
	line, err := readLine(br)
	if err != nil {
		return h, err
	}
	// HTTP/1.1 202 Accepted
	proto, rest, ok := bytes.Cut(line, []byte(" "))
	if !ok || !bytes.HasPrefix(proto, []byte("HTTP/1.")) || len(rest) < 3 {
		return h, fmt.Errorf("malformed HTTP status line %q", truncateText(string(line), 80))
	}
	for _, c := range rest[:3] {
		if c < '0' || c > '9' {
			return h, fmt.Errorf("malformed HTTP status line %q", truncateText(string(line), 80))
		}
		h.status = h.status*10 + int(c-'0')
	}
	http10 := string(proto) == "HTTP/1.0"
	h.keepAlive = string(proto) == "HTTP/1.1"
	for {
		hl, err := readLine(br)
		if err != nil {
			return h, err
		}
		if len(hl) == 0 {
			return h, nil
		}
		name, value, ok := bytes.Cut(hl, []byte(":"))
		if !ok {
			return h, fmt.Errorf("malformed HTTP header %q", truncateText(string(hl), 80))
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, ok := parseDecimal(value)
			if !ok {
				return h, fmt.Errorf("malformed Content-Length %q", value)
			}
			h.contentLength = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			if h.chunked = bytes.EqualFold(value, []byte("chunked")); !h.chunked {
				return h, fmt.Errorf("unsupported Transfer-Encoding %q", value)
			}
		case bytes.EqualFold(name, []byte("Content-Type")):
			h.contentType = string(value)
		case bytes.EqualFold(name, []byte("Connection")):
			for len(value) > 0 {
				var tok []byte
				tok, value, _ = bytes.Cut(value, []byte(","))
				tok = bytes.TrimSpace(tok)
				switch {
				case bytes.EqualFold(tok, []byte("close")):
					h.keepAlive = false
				case bytes.EqualFold(tok, []byte("keep-alive")) && http10:
					h.keepAlive = true
				}
			}
		}
	}
}

// parseDecimal parses a non-negative decimal integer of at most 18 digits.
func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// readPostResponse reads one HTTP/1.x response and discards its body. It
// reports the status and whether the connection can carry another request.
func readPostResponse(br *bufio.Reader) (status int, reusable bool, err error) {
	for {
		h, err := readResponseHead(br)
		if err != nil {
			return 0, false, err
		}
		if h.status >= 100 && h.status < 200 && h.status != 101 {
			continue // 100 Continue and friends come before the real answer
		}
		reusable = h.keepAlive
		switch {
		case h.status == 204 || h.status == 304:
		case h.chunked:
			n, err := io.Copy(io.Discard, io.LimitReader(&chunkedBody{br: br}, maxPostResponse+1))
			if err != nil {
				return 0, false, err
			}
			if n > maxPostResponse {
				reusable = false // not read to its end
			}
		case h.contentLength >= 0:
			if h.contentLength > maxPostResponse {
				return h.status, false, nil // not worth reading; drop the connection
			}
			if _, err := br.Discard(int(h.contentLength)); err != nil {
				return 0, false, err
			}
		default:
			// The body runs to the end of the connection.
			if _, err := io.Copy(io.Discard, io.LimitReader(br, maxPostResponse)); err != nil {
				return 0, false, err
			}
			reusable = false
		}
		return h.status, reusable, nil
	}
}

// readLine reads one CRLF- (or LF-) terminated line of at most the
// buffer's size.
// The line aliases br's buffer: it is valid until the next read.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, errors.New("HTTP header line too long")
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r")), nil
}

// chunkedBody decodes a chunked body. Its progress lives in the struct, so
// that a read cut by a deadline resumes where it stopped.
type chunkedBody struct {
	br        *bufio.Reader
	left      int64  // data bytes left in the current chunk
	line      []byte // a line read in part
	afterData bool   // the CRLF after chunk data comes next
	trailers  bool   // reading trailers after the last chunk
	done      bool
}

func (c *chunkedBody) Read(p []byte) (int, error) {
	for {
		if c.done {
			return 0, io.EOF
		}
		if c.left > 0 {
			if int64(len(p)) > c.left {
				p = p[:c.left]
			}
			n, err := c.br.Read(p)
			c.left -= int64(n)
			if c.left == 0 {
				c.afterData = true
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return n, err
		}
		line, err := c.readLine()
		if err != nil {
			return 0, err
		}
		switch {
		case c.afterData:
			if len(line) != 0 {
				return 0, errors.New("malformed chunked body: no CRLF after chunk data")
			}
			c.afterData = false
		case c.trailers:
			if len(line) == 0 {
				c.done = true
			}
		default:
			size, _, _ := bytes.Cut(line, []byte(";"))
			n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 64)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("malformed chunk size %q", truncateText(string(line), 40))
			}
			if n == 0 {
				c.trailers = true
			}
			c.left = n
		}
	}
}

// readLine returns the next line without its line ending; a line cut by a
// read error is kept for the next call.
func (c *chunkedBody) readLine() ([]byte, error) {
	for {
		frag, err := c.br.ReadSlice('\n')
		if len(c.line)+len(frag) > 8<<10 {
			return nil, errors.New("chunked body line too long")
		}
		c.line = append(c.line, frag...)
		switch err {
		case nil:
			line := bytes.TrimSuffix(bytes.TrimSuffix(c.line, []byte("\n")), []byte("\r"))
			c.line = c.line[:0]
			return line, nil
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// limitedBody reads a body of known length, resumably.
type limitedBody struct {
	br   *bufio.Reader
	left int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.br.Read(p)
	l.left -= int64(n)
	return n, err
}

// isTimeout reports whether err is a passed read deadline.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
