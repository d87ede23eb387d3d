package idebridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
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
	return &sseTransport{
		client:  client,
		tr:      tr,
		postURL: endpoint.String(),
		token:   token,
		body:    resp.Body,
		events:  events,
		ctx:     streamCtx,
		cancel:  cancel,
	}, nil
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
	})
	return nil
}
