package ideserver

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/idebridge/idebridge/lockfile"
	"github.com/idebridge/idebridge/mcp"
)

// Legacy SSE transport: GET /sse opens the event stream, whose first event
// ("endpoint") is the relative URL to POST messages to; each reply goes out
// as a "message" event.
const (
	ssePath      = "/sse"
	messagesPath = "/messages"
)

// serveSSE authenticates a client, opens its event stream and keeps it open
// (with keep-alive comments) until the client or the server ends it.
//
// A missing or wrong token is answered HTTP 401.
func (s *Server) serveSSE(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !s.checkToken(r.Header.Get(mcp.AuthHeader)) {
		s.log.Warn("refused SSE client: missing or wrong auth token", "remote", r.RemoteAddr)
		http.Error(w, "authentication failed: missing or wrong "+mcp.AuthHeader, http.StatusUnauthorized)
		return
	}
	s.conns.authenticated(r)
	rc := http.NewResponseController(w)
	var idb [16]byte
	if _, err := rand.Read(idb[:]); err != nil {
		http.Error(w, "cannot create session", http.StatusInternalServerError)
		return
	}
	sc := &sseConn{
		w:            w,
		rc:           rc,
		id:           hex.EncodeToString(idb[:]),
		writeTimeout: s.cfg.WriteTimeout,
		done:         make(chan struct{}),
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	ss, err := s.addSession(lockfile.TransportSSE, r.RemoteAddr, sc)
	if err != nil {
		return
	}
	sc.session = ss
	// Known before the client can learn the endpoint and POST to it.
	s.sseSessions.Store(sc.id, sc)
	defer s.sseSessions.Delete(sc.id)
	var why error
	if err := sc.writeEvent("endpoint", []byte(messagesPath+"?session="+sc.id)); err != nil {
		sc.close(closeNormal, "")
		s.removeSession(ss, err)
		return
	}

	var tick <-chan time.Time
	if iv := s.cfg.PingInterval; iv > 0 {
		t := time.NewTicker(iv)
		defer t.Stop()
		tick = t.C
	}
loop:
	for {
		select {
		case <-sc.done:
			break loop
		case <-r.Context().Done():
			break loop
		case <-tick:
			if err := sc.writeRaw([]byte(": keep-alive\n\n")); err != nil {
				why = err
				break loop
			}
		}
	}
	sc.close(closeNormal, "")
	// Unknown to POSTs before the disconnection is announced.
	s.sseSessions.Delete(sc.id)
	s.removeSession(ss, why)
}

// serveSSEPost takes one JSON-RPC message for a session and answers 202;
// replies go out on the session's event stream.
//
// The session id is an unguessable secret handed only to an authenticated
// stream, so the token header is optional here; a wrong token is refused
// with 401.
func (s *Server) serveSSEPost(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if tok, ok := r.Header[http.CanonicalHeaderKey(mcp.AuthHeader)]; ok && (len(tok) != 1 || !s.checkToken(tok[0])) {
		http.Error(w, "authentication failed: wrong "+mcp.AuthHeader, http.StatusUnauthorized)
		return
	}
	q := r.URL.Query()
	id := q.Get("session")
	if id == "" {
		id = q.Get("sessionId")
	}
	v, ok := s.sseSessions.Load(id)
	if !ok || id == "" {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	sc := v.(*sseConn)
	// A live session's id is the client's credential: its connection may
	// stay open for the next POST.
	s.conns.authenticated(r)
	w.Header().Del("Connection")
	// The body must arrive in time: a trickle would hold the connection.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(s.cfg.RequestTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxMessageSize))
	if err != nil {
		w.Header().Set("Connection", "close")
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.log.Warn("client message over the size limit", "client", sc.session.info.ID, "limit", s.cfg.MaxMessageSize)
			http.Error(w, fmt.Sprintf("message larger than %d bytes", s.cfg.MaxMessageSize), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading message: "+err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, "Accepted")
	// The POST is answered; a tool call runs on its own goroutine so the
	// response ends now (a client may wait for the end of its body).
	if call := sc.session.handle(body); call != nil {
		s.pool.run(call, s.spawn)
	}
}

// sseConn is one client's event stream. Writes are serialised by mu and
// end when the stream does.
type sseConn struct {
	w            http.ResponseWriter
	rc           *http.ResponseController
	id           string
	writeTimeout time.Duration
	session      *session

	mu     sync.Mutex
	closed bool

	closeOnce sync.Once
	done      chan struct{}
}

func (c *sseConn) writeMessage(data []byte) error { return c.writeEvent("message", data) }

// writeEvent writes one event; data with line breaks (not produced by
// encoding/json, but possible in raw JSON) is split over data: lines, which
// the client joins with "\n" again.
func (c *sseConn) writeEvent(event string, data []byte) error {
	var b bytes.Buffer
	b.Grow(len(data) + len(event) + 20)
	b.WriteString("event: ")
	b.WriteString(event)
	b.WriteByte('\n')
	for {
		line, rest, found := bytes.Cut(data, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		b.WriteString("data: ")
		b.Write(line)
		b.WriteByte('\n')
		if !found {
			break
		}
		data = rest
	}
	b.WriteByte('\n')
	return c.writeRaw(b.Bytes())
}

func (c *sseConn) writeRaw(p []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return net.ErrClosed
	}
	c.rc.SetWriteDeadline(time.Now().Add(c.writeTimeout))
	if _, err := c.w.Write(p); err != nil {
		return err
	}
	return c.rc.Flush()
}

// close ends the stream: the GET handler returns, which ends the response.
func (c *sseConn) close(int, string) {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		close(c.done)
	})
}
