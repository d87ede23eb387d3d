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
	client  *http.Client
	tr      *http.Transport
	postURL string
	token   string
	body    io.ReadCloser
	events  *SSEReader
	ctx     context.Context // ends with the transport
	cancel  context.CancelFunc
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
	tr := &http.Transport{
		// Loopback IDE connections must never go through a proxy.
		Proxy:               nil,
		DialContext:         dialContext,
		MaxIdleConns:        64,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	client := &http.Client{Transport: tr}
	// The stream outlives ctx (which bounds only the connection attempt).
	streamCtx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, cancel)
	fail := func(err error) (*sseTransport, error) {
		stop()
		cancel()
		tr.CloseIdleConnections()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return nil, err
	}
	req, err := http.NewRequestWithContext(streamCtx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fail(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	if token != "" {
		req.Header.Set(AuthHeader, token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fail(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden:
			return fail(fmt.Errorf("%w: SSE request refused with HTTP %s", ErrAuthFailed, resp.Status))
		}
		return fail(fmt.Errorf("SSE request refused with HTTP %s", resp.Status))
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		if mt, _, _ := mime.ParseMediaType(ct); mt != "text/event-stream" {
			resp.Body.Close()
			return fail(fmt.Errorf("SSE URL answered with Content-Type %q, not text/event-stream", ct))
		}
	}
	act.touch()
	events := NewSSEReader(activityReader{r: resp.Body, a: act}, int(min(maxSize, int64(^uint(0)>>1))))
	var endpoint *url.URL
	for endpoint == nil {
		ev, err := events.Next()
		if err != nil {
			resp.Body.Close()
			return fail(fmt.Errorf("reading the SSE endpoint event: %w", err))
		}
		if ev.Event != "endpoint" {
			continue // nothing can be answered before the endpoint is known
		}
		endpoint, err = u.Parse(strings.TrimSpace(string(ev.Data)))
		if err != nil {
			resp.Body.Close()
			return fail(fmt.Errorf("parsing the SSE endpoint %q: %w", ev.Data, err))
		}
		if !sameOrigin(u, endpoint) {
			resp.Body.Close()
			return fail(fmt.Errorf("%w: %s is not on %s://%s", errForeignEndpoint, endpoint.Redacted(), u.Scheme, u.Host))
		}
	}
	if !stop() {
		resp.Body.Close()
		return fail(ctx.Err())
	}
	t := &sseTransport{
		client:  client,
		tr:      tr,
		postURL: endpoint.String(),
		token:   token,
		body:    resp.Body,
		events:  events,
		ctx:     streamCtx,
		cancel:  cancel,
	}
	if strings.EqualFold(endpoint.Scheme, "http") {
		t.post = newPoster(endpoint, token)
	}
	return t, nil
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

// send POSTs one message. Once the POST has started, the IDE may have the
// message whatever becomes of the response, so the POST is not tied to the
// caller's ctx (a cancelled call must still be able to say
// notifications/cancelled about a request the IDE did get); it ends with
// the transport or after wsWriteTimeout.
func (t *sseTransport) send(ctx context.Context, m *msgBuf) error {
	if t.closing.Load() {
		putMsgBuf(m)
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		putMsgBuf(m)
		return err
	}
	if t.post != nil {
		defer putMsgBuf(m)
		if err := t.post.send(t.ctx, m.payload()); err != nil {
			if t.closing.Load() {
				return ErrClosed
			}
			var se *httpStatusError
			if errors.As(err, &se) {
				return fmt.Errorf("posting to the SSE endpoint: %w", err)
			}
			// The IDE could not be reached, or dropped the request: it
			// may or may not have the message, and the session cannot be
			// trusted any more.
			return connLost(fmt.Errorf("posting to the SSE endpoint: %w", err))
		}
		return nil
	}
	postCtx, cancel := context.WithTimeout(t.ctx, wsWriteTimeout)
	defer cancel()
	body := &pooledBody{m: m}
	body.r.Reset(m.payload())
	req, err := http.NewRequestWithContext(postCtx, http.MethodPost, t.postURL, body)
	if err != nil {
		body.Close()
		return err
	}
	req.ContentLength = int64(len(m.payload()))
	req.GetBody = nil
	req.Header["Content-Type"] = jsonContentType
	if t.token != "" {
		req.Header[AuthHeader] = []string{t.token}
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return fmt.Errorf("posting to the SSE endpoint: %w", err)
	}
	// Drain a little so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("posting to the SSE endpoint: HTTP %s", resp.Status)
	}
	return nil
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
		t.body.Close()
		t.tr.CloseIdleConnections()
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

// Connections idle for longer are checked before reuse, or dropped: IDE
// servers close idle keep-alive connections (Node's default is after 5 s).
const (
	postFreshIdle = time.Second
	postMaxIdle   = 4 * time.Second
	postMaxConns  = 16
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

// send POSTs body and reads the response; an error is returned for a
// status other than 2xx. It ends with ctx or after wsWriteTimeout.
func (p *poster) send(ctx context.Context, body []byte) error {
	pc, err := p.get(ctx)
	if err != nil {
		return err
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
	pc.c.SetDeadline(deadline)
	if _, err := pc.c.Write(h); err != nil {
		p.drop(pc)
		return err
	}
	status, reusable, err := readPostResponse(pc.br)
	if err != nil {
		p.drop(pc)
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
		idle := time.Since(pc.lastUsed)
		if idle < postFreshIdle || (idle < postMaxIdle && stillOpen(pc)) {
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

// stillOpen reports whether the server has not closed an idle connection
// (nothing may arrive on it between requests).
func stillOpen(pc *postConn) bool {
	pc.c.SetReadDeadline(time.Now())
	_, err := pc.br.Peek(1)
	pc.c.SetReadDeadline(time.Time{})
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
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

// readPostResponse reads one HTTP/1.x response and discards its body. It
// reports the status and whether the connection can carry another request.
func readPostResponse(br *bufio.Reader) (status int, reusable bool, err error) {
	for {
		line, err := readLine(br)
		if err != nil {
			return 0, false, err
		}
		// HTTP/1.1 202 Accepted
		proto, rest, ok := strings.Cut(line, " ")
		if !ok || !strings.HasPrefix(proto, "HTTP/1.") || len(rest) < 3 {
			return 0, false, fmt.Errorf("malformed HTTP status line %q", truncateText(line, 80))
		}
		status, err = strconv.Atoi(rest[:3])
		if err != nil {
			return 0, false, fmt.Errorf("malformed HTTP status line %q", truncateText(line, 80))
		}
		reusable = proto == "HTTP/1.1"
		contentLength := int64(-1)
		chunked := false
		for {
			h, err := readLine(br)
			if err != nil {
				return 0, false, err
			}
			if h == "" {
				break
			}
			name, value, ok := strings.Cut(h, ":")
			if !ok {
				return 0, false, fmt.Errorf("malformed HTTP header %q", truncateText(h, 80))
			}
			value = strings.TrimSpace(value)
			switch {
			case strings.EqualFold(name, "Content-Length"):
				n, err := strconv.ParseInt(value, 10, 64)
				if err != nil || n < 0 {
					return 0, false, fmt.Errorf("malformed Content-Length %q", value)
				}
				contentLength = n
			case strings.EqualFold(name, "Transfer-Encoding"):
				chunked = strings.EqualFold(value, "chunked")
				if !chunked {
					return 0, false, fmt.Errorf("unsupported Transfer-Encoding %q", value)
				}
			case strings.EqualFold(name, "Connection"):
				for _, tok := range strings.Split(value, ",") {
					switch strings.ToLower(strings.TrimSpace(tok)) {
					case "close":
						reusable = false
					case "keep-alive":
						if proto == "HTTP/1.0" {
							reusable = true
						}
					}
				}
			}
		}
		if status >= 100 && status < 200 && status != 101 {
			continue // 100 Continue and friends come before the real answer
		}
		switch {
		case status == 204 || status == 304:
		case chunked:
			if err := discardChunked(br); err != nil {
				return 0, false, err
			}
		case contentLength >= 0:
			if contentLength > maxPostResponse {
				return status, false, nil // not worth reading; drop the connection
			}
			if _, err := br.Discard(int(contentLength)); err != nil {
				return 0, false, err
			}
		default:
			// The body runs to the end of the connection.
			if _, err := io.Copy(io.Discard, io.LimitReader(br, maxPostResponse)); err != nil {
				return 0, false, err
			}
			reusable = false
		}
		return status, reusable, nil
	}
}

// readLine reads one CRLF- (or LF-) terminated line of at most 8 KiB.
func readLine(br *bufio.Reader) (string, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return "", errors.New("HTTP header line too long")
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return "", err
	}
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	return string(line), nil
}

func discardChunked(br *bufio.Reader) error {
	var total int64
	for {
		line, err := readLine(br)
		if err != nil {
			return err
		}
		size, _, _ := strings.Cut(line, ";")
		n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("malformed chunk size %q", truncateText(line, 40))
		}
		if n == 0 {
			for { // trailers
				t, err := readLine(br)
				if err != nil {
					return err
				}
				if t == "" {
					return nil
				}
			}
		}
		if total += n; total > maxPostResponse {
			return errors.New("response to a POST too large")
		}
		if _, err := br.Discard(int(n)); err != nil {
			return err
		}
		if l, err := readLine(br); err != nil || l != "" {
			if err == nil {
				err = errors.New("malformed chunk end")
			}
			return err
		}
	}
}
