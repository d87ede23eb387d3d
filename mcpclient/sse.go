package mcpclient

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idebridge/idebridge/mcp"
)

// The legacy SSE transport (docs/PROTOCOL.md, Connecting): GET the SSE URL
// and keep the stream open; its first event, "endpoint", names where to
// POST messages (resolved against the SSE URL, refused on another origin);
// replies arrive as "message" (or unnamed) events. It speaks HTTP/1.1 itself, over TCP for http:// and over
// crypto/tls for https://, one code path for both: the stream over a
// connection of its own, so that its reads can be interrupted and resumed
// (the parser, the chunked decoder and bufio all keep their state across a
// read deadline), and each POST as one write on a kept-alive connection
// whose answer is read on the caller's side. net/http hands every request
// to a writer goroutine and every response back from a reader goroutine,
// and on a loopback round trip that is most of the client's cost.

// DefaultPostTimeout bounds one POST; see SSEOptions.PostTimeout.
const DefaultPostTimeout = 30 * time.Second

// SSEOptions configure DialSSE. A nil *SSEOptions, and every zero field,
// means the documented default.
type SSEOptions struct {
	// AuthToken is sent as the mcp.AuthHeader header, on the stream and
	// on every POST, when not empty.
	AuthToken string
	// MaxMessageSize bounds one incoming event, in bytes; a larger one ends
	// the connection with a *MessageTooLargeError. Default
	// DefaultMaxMessageSize; negative is an error.
	MaxMessageSize int64
	// PostTimeout bounds connecting and writing one POST and, for a
	// notification or a response, waiting for its answer. The answer to a
	// request's POST is awaited in the background for as long as it takes
	// (some servers answer only once they have handled the message; the
	// caller's own deadline bounds the call), until the connection breaks
	// or the transport closes. Default DefaultPostTimeout; negative is an
	// error.
	PostTimeout time.Duration
	// DialContext opens TCP connections (the stream's and the POSTs').
	// Default: a net.Dialer with a 10 s timeout.
	DialContext DialFunc
	// TLSConfig is used for https:// URLs. Default: the system's roots.
	TLSConfig *tls.Config
}

// errForeignEndpoint is wrapped when the endpoint event names another
// origin: posting the user's files there could leak them.
var errForeignEndpoint = errors.New("SSE endpoint is on another origin")

type sseTransport struct {
	stream net.Conn // TCP, or TLS over it
	events *sseReader
	post   *poster

	intr atomic.Bool   // Interrupt was called since Recv last returned
	seq  atomic.Uint64 // messages received, for the poster

	mu      sync.Mutex
	refused []*RefusedError // requests the server turned down, for Recv
	broken  error           // a POST showed the session cannot be trusted

	closing atomic.Bool
	once    sync.Once
}

// DialSSE opens the legacy SSE transport at rawURL (http:// or https://, the
// SSE stream's URL) and waits for its endpoint event. ctx bounds the
// connection attempt only. A token the server refuses (HTTP 400, 401 or 403)
// is an error matching ErrAuthFailed.
func DialSSE(ctx context.Context, rawURL string, o *SSEOptions) (Transport, error) {
	var opts SSEOptions
	if o != nil {
		opts = *o
	}
	maxSize, err := resolveSize(opts.MaxMessageSize)
	if err != nil {
		return nil, err
	}
	postTimeout, err := resolveTimeout("PostTimeout", opts.PostTimeout, DefaultPostTimeout)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("parsing SSE URL: %w", err)
	}
	ep := httpEndpoint{dial: opts.DialContext.orDefault(), tls: opts.TLSConfig}
	switch strings.ToLower(u.Scheme) {
	case "http":
	case "https":
		ep.secure = true
	default:
		return nil, fmt.Errorf("SSE URL %s: scheme %q, want http or https", u.Redacted(), u.Scheme)
	}
	t := &sseTransport{}
	fail := func(err error) (Transport, error) {
		t.Close()
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			return nil, fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return nil, err
	}
	body, err := t.open(ctx, ep, u, opts.AuthToken)
	if err != nil {
		return fail(err)
	}
	t.events = newSSEReader(body, int(min(maxSize, int64(^uint(0)>>1))))

	// The endpoint event, within ctx.
	if dl, ok := ctx.Deadline(); ok {
		t.stream.SetReadDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { t.stream.SetReadDeadline(time.Unix(1, 0)) })
	endpoint, err := t.readEndpoint(u)
	if !stop() || ctx.Err() != nil {
		return fail(ctx.Err())
	}
	if err != nil {
		return fail(err)
	}
	t.stream.SetReadDeadline(time.Time{})
	t.post = newPoster(ep, endpoint, opts.AuthToken, postTimeout, t.refuse, t.breakDown)
	return t, nil
}

// httpEndpoint is how to reach an SSE server: TCP, or TLS over it.
type httpEndpoint struct {
	dial   DialFunc
	secure bool
	tls    *tls.Config
}

// connect opens a connection to u's host.
func (ep httpEndpoint) connect(ctx context.Context, u *url.URL) (net.Conn, error) {
	port := u.Port()
	if port == "" {
		port = "80"
		if ep.secure {
			port = "443"
		}
	}
	c, err := ep.dial(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return nil, err
	}
	if !ep.secure {
		return c, nil
	}
	return tlsClient(ctx, c, u.Hostname(), ep.tls)
}

// open sends the GET over a connection of its own and returns the
// response body.
func (t *sseTransport) open(ctx context.Context, ep httpEndpoint, u *url.URL, token string) (io.Reader, error) {
	c, err := ep.connect(ctx, u)
	if err != nil {
		return nil, err
	}
	t.stream = c
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	req := "GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host +
		"\r\nUser-Agent: idebridge\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n"
	if token != "" {
		req += mcp.AuthHeader + ": " + token + "\r\n"
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
		ev, err := t.events.next()
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

// Ping: the SSE transport has no probe of its own.
func (t *sseTransport) Ping(context.Context) error { return ErrNoPing }

// Interrupt cuts a blocked Recv at once, or makes the next one return.
func (t *sseTransport) Interrupt() {
	t.intr.Store(true)
	t.stream.SetReadDeadline(time.Unix(1, 0))
}

// Send POSTs one message; see poster.send.
func (t *sseTransport) Send(ctx context.Context, m *Message) error {
	if t.closing.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	started, err := t.post.send(ctx, m, t.seq.Load())
	switch {
	case err == nil:
		return nil
	case t.closing.Load():
		return ErrClosed
	case !started && ctx.Err() != nil:
		return ctx.Err() // abandoned before it went out
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("posting to the SSE endpoint: %w", err)
	}
	var se *httpStatusError
	if errors.As(err, &se) {
		// The server is there and refused this one message.
		return fmt.Errorf("posting to the SSE endpoint: %w", err)
	}
	// The IDE could not be reached or dropped the request: it may or may
	// not have the message, and the session cannot be trusted any more.
	return connLost(fmt.Errorf("posting to the SSE endpoint: %w", err))
}

// refuse queues the refusal of request id for Recv.
func (t *sseTransport) refuse(id int64, err error) {
	t.mu.Lock()
	t.refused = append(t.refused, &RefusedError{ID: id, Err: fmt.Errorf("posting to the SSE endpoint: %w", err)})
	t.mu.Unlock()
	t.Interrupt()
}

// breakDown fails the session: a request's POST went unanswered because
// its connection broke.
func (t *sseTransport) breakDown(err error) {
	t.mu.Lock()
	if t.broken == nil {
		t.broken = connLost(fmt.Errorf("posting to the SSE endpoint: %w", err))
	}
	t.mu.Unlock()
	t.Interrupt()
}

// interrupted returns what an interrupted Recv reports: a refusal or a
// failure a POST found, else ErrInterrupted.
func (t *sseTransport) interrupted(cause error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.broken != nil {
		return t.broken
	}
	if len(t.refused) > 0 {
		re := t.refused[0]
		t.refused = t.refused[1:]
		return re
	}
	if cause != nil {
		return fmt.Errorf("%w: %w", ErrInterrupted, cause)
	}
	return ErrInterrupted
}

func (t *sseTransport) Recv(deadline time.Time) ([]byte, error) {
	t.stream.SetReadDeadline(deadline)
	// After setting the deadline, which would undo an Interrupt that came
	// before it.
	if t.intr.Swap(false) {
		return nil, t.interrupted(nil)
	}
	for {
		ev, err := t.events.next()
		if err != nil {
			if t.closing.Load() {
				return nil, ErrClosed
			}
			if isTimeout(err) {
				t.intr.Store(false)
				return nil, t.interrupted(err)
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, fmt.Errorf("the IDE ended the SSE stream: %w", err)
			}
			return nil, err
		}
		if ev.Event == "message" {
			t.seq.Add(1)
			return ev.Data, nil
		}
		// endpoint (again), ping and unknown events carry no message.
	}
}

// Close closes the stream and every POST connection, and waits for the
// background reads of POST answers.
func (t *sseTransport) Close() error {
	t.once.Do(func() {
		t.closing.Store(true)
		if t.stream != nil {
			t.stream.Close()
		}
		if t.post != nil {
			t.post.close()
		}
	})
	return nil
}
