package ideserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

// TransportStreamableHTTP is ClientInfo.Transport of a legacy Streamable
// HTTP session (one that opened with initialize).
const TransportStreamableHTTP = "streamable-http"

// MCPPath is the MCP endpoint of ServeStreamableHTTP.
const MCPPath = "/mcp"

// Bounds of the legacy sessions of one ServeStreamableHTTP: a client that
// initializes and never sends DELETE costs a session until it has been
// idle this long, or until maxHTTPSessions newer ones pushed it out.
const (
	httpSessionIdle = 30 * time.Minute
	maxHTTPSessions = 64
)

// ServeStreamableHTTP serves the server's tools over MCP's Streamable HTTP
// transport on ln, at MCPPath, until ctx ends (it returns ctx's error),
// the server closes (ErrServerClosed) or ln fails. ln must be a loopback
// TCP listener or a unix socket (ErrNotLoopback otherwise); ServeStreamableHTTP
// closes it. It needs no Start, and may run beside Start, ServeStream and
// other ServeStreamableHTTP calls.
//
// Every request must carry "Authorization: Bearer <AuthToken()>" (401
// otherwise), a loopback Host, and no Origin but a loopback one (403), as
// the WebSocket transport checks them.
//
// Both MCP eras are served on the one endpoint:
//   - a POST whose request carries params._meta with a modern protocol
//     version (2026-07-28) is served on its own, statelessly; its
//     Mcp-Protocol-Version, Mcp-Method and (tools/call) Mcp-Name headers
//     must match the body (400, -32020), an unserved version is 400
//     -32022 and an unknown method 404 -32601;
//   - a POST of initialize opens a legacy session (2025-03-26 to
//     2025-11-25): the answer carries an Mcp-Session-Id header, which the
//     client's later POSTs carry; DELETE ends the session. GET (the
//     optional stream for server-initiated messages) is answered 405.
//
// A request is answered with application/json, or with a
// text/event-stream carrying the notifications/progress about it before
// its answer when the tool reports progress and the client accepts an
// event stream. A client that closes its POST cancels the request.
func (s *Server) ServeStreamableHTTP(ctx context.Context, ln net.Listener) error {
	if ln == nil {
		return errors.New("ideserver: ServeStreamableHTTP needs a listener")
	}
	switch a := ln.Addr().(type) {
	case *net.TCPAddr:
		if !a.IP.IsLoopback() {
			ln.Close()
			return fmt.Errorf("%w: %s", ErrNotLoopback, a)
		}
	case *net.UnixAddr:
	default:
		ln.Close()
		return fmt.Errorf("%w: %s listener", ErrNotLoopback, a.Network())
	}
	h := &streamableHTTP{s: s, sessions: map[string]*httpSession{}}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: s.cfg.RequestTimeout,
		IdleTimeout:       s.cfg.RequestTimeout,
		ConnState:         s.conns.connState,
		ConnContext:       connContext,
		ErrorLog:          log.New(slogWriter{s.log}, "", 0),
	}
	s.mu.Lock()
	if s.state == stateClosed {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	if s.extraHTTP == nil {
		s.extraHTTP = map[*http.Server]struct{}{}
	}
	s.extraHTTP[hs] = struct{}{}
	s.loops.Add(1)
	s.mu.Unlock()
	defer s.loops.Done()
	stop := context.AfterFunc(ctx, func() { hs.Close() })
	err := hs.Serve(ln)
	stop()
	hs.Close()
	s.mu.Lock()
	delete(s.extraHTTP, hs)
	closed := s.state == stateClosed
	s.mu.Unlock()
	h.closeAll()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case closed:
		return ErrServerClosed
	}
	return fmt.Errorf("ideserver: serving Streamable HTTP: %w", err)
}

type streamableHTTP struct {
	s *Server

	mu       sync.Mutex
	sessions map[string]*httpSession
}

// httpSession is a legacy Streamable HTTP session.
type httpSession struct {
	ss       *session
	lastUsed time.Time
}

// httpSessionConn is a legacy session's own conn: every answer goes to the
// POST that asked, and broadcasts (tools/list_changed) have no stream to
// go to (GET is not served), so they are dropped.
type httpSessionConn struct{}

func (httpSessionConn) writeMessage([]byte) error { return nil }
func (httpSessionConn) close(int, string)         {}

func (h *streamableHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := h.s
	if !isLoopbackHostHeader(r.Host) {
		s.log.Warn("refused request with a non-loopback Host", "host", clip(r.Host, maxQuoted), "remote", r.RemoteAddr)
		httpError(w, http.StatusForbidden, "forbidden: Host is not a loopback address")
		return
	}
	if origin, ok := r.Header["Origin"]; ok && (len(origin) != 1 || !isLoopbackOrigin(origin[0])) {
		s.log.Warn("refused request with a non-loopback Origin", "remote", r.RemoteAddr)
		httpError(w, http.StatusForbidden, "forbidden: Origin is not a loopback address")
		return
	}
	if r.URL.Path != MCPPath {
		httpError(w, http.StatusNotFound, "not found: the MCP endpoint is "+MCPPath)
		return
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !s.checkToken(strings.TrimSpace(tok)) {
		s.log.Warn("refused Streamable HTTP request: missing or wrong bearer token", "remote", r.RemoteAddr)
		w.Header().Set("WWW-Authenticate", `Bearer realm="idebridge"`)
		httpError(w, http.StatusUnauthorized, "authentication failed: missing or wrong bearer token")
		return
	}
	s.conns.authenticated(r)
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodDelete:
		id := r.Header.Get(mcp.HeaderSessionID)
		h.mu.Lock()
		hsess := h.sessions[id]
		delete(h.sessions, id)
		h.mu.Unlock()
		if hsess == nil {
			httpError(w, http.StatusNotFound, "unknown session")
			return
		}
		s.removeSession(hsess.ss, nil)
		w.WriteHeader(http.StatusOK)
	default:
		w.Header().Set("Allow", "POST, DELETE")
		httpError(w, http.StatusMethodNotAllowed, "method not allowed: POST requests, DELETE ends a session")
	}
}

// httpError answers a failure before any JSON-RPC message was read.
func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Connection", "close")
	http.Error(w, msg, status)
}

// rpcError answers a request with a JSON-RPC error and an HTTP status.
func rpcError(w http.ResponseWriter, status int, id json.RawMessage, e *mcp.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(encodeError(id, e))
}

func (h *streamableHTTP) post(w http.ResponseWriter, r *http.Request) {
	s := h.s
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			httpError(w, http.StatusUnsupportedMediaType, "unsupported media type: POST application/json")
			return
		}
	}
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(s.cfg.RequestTimeout))
	body, over, err := readBody(w, r, s.cfg.MaxMessageSize, s.tools.argLimit)
	rc.SetReadDeadline(time.Time{})
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.log.Warn("client message over the size limit", "limit", s.cfg.MaxMessageSize, "remote", r.RemoteAddr)
			rpcError(w, http.StatusRequestEntityTooLarge, nil, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Invalid Request",
				Data: mustJSON(fmt.Sprintf("message larger than the limit of %d bytes", s.cfg.MaxMessageSize))})
			return
		}
		httpError(w, http.StatusBadRequest, "reading the request: "+clip(err.Error(), maxQuoted))
		return
	}
	if len(over) > 0 {
		// Refused whole, whatever its session: what the message would
		// have done is not known, and needs no session to be refused.
		s.log.Warn("client message with a string too long for its place", "remote", r.RemoteAddr)
		ss := s.ephemeralSession(r.RemoteAddr)
		defer ss.cancel(ErrClientGone)
		sink := &postSink{w: w, rc: http.NewResponseController(w), writeTimeout: s.cfg.WriteTimeout}
		if p, err := scanParams(jsonParams(body)); err == nil {
			sink.modern = p.modern()
		}
		ss.refuseOverlong(sink, body, over)
		sink.end()
		return
	}
	msg, err := jsonrpc.Decode(body)
	if err != nil {
		e := &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Invalid Request", Data: mustJSON(clip(err.Error(), maxQuoted))}
		if !jsonrpc.Valid(body) {
			e.Code, e.Message = mcp.CodeParseError, "Parse error"
		}
		rpcError(w, http.StatusBadRequest, nil, e)
		return
	}
	if msg.IsResponse() {
		w.WriteHeader(http.StatusAccepted) // the server sends no requests
		return
	}
	p, err := scanParams(msg.Params)
	if err != nil {
		rpcError(w, http.StatusBadRequest, msg.ID, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "Invalid params", Data: mustJSON(err.Error())})
		return
	}
	if p.modern() {
		h.modern(w, r, msg, p)
		return
	}
	h.legacy(w, r, msg)
}

// readBody reads a request body of at most limit bytes. One longer than
// maxString goes through a lineScanner (argLimit is its): a string too long
// for its place is not held, and listed in over. The bytes kept go in one
// buffer of the body's size when the client said it.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, argLimit func(tool, arg string) int) (body []byte, over []overlong, err error) {
	rd := http.MaxBytesReader(w, r.Body, limit)
	n := r.ContentLength
	if n > 0 && n <= maxString {
		b := make([]byte, n)
		if _, err := io.ReadFull(rd, b); err != nil {
			return nil, nil, err
		}
		// Nothing may follow the declared length; net/http enforces it.
		return b, nil, nil
	}
	scan := &lineScanner{argLimit: argLimit}
	if n <= limit {
		scan.want = n // a longer body fails at the limit
	}
	buf := make([]byte, 32<<10)
	for {
		k, err := rd.Read(buf)
		scan.write(buf[:k])
		if err == io.EOF {
			return scan.line(), scan.over, nil
		}
		if err != nil {
			return nil, nil, err
		}
	}
}

// jsonParams returns the raw params member of a JSON-RPC message, or nil.
func jsonParams(msg []byte) []byte {
	var params []byte
	jsonrpc.ScanObject(msg, func(key, value []byte) bool {
		if string(key) == "params" {
			params = value
		}
		return true
	})
	return params
}

// modern serves one 2026-07-28 request, statelessly: a session of its own
// that ends with the POST.
func (h *streamableHTTP) modern(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message, p *reqParams) {
	if e := checkHeaders(r, msg, p); e != nil {
		rpcError(w, http.StatusBadRequest, msg.ID, e)
		return
	}
	if e := checkModern(p); e != nil {
		rpcError(w, http.StatusBadRequest, msg.ID, e)
		return
	}
	if msg.IsNotification() {
		// 2026-07-28 defines no client notification over HTTP
		// (cancellation is closing the POST).
		w.WriteHeader(http.StatusAccepted)
		return
	}
	ss := h.s.ephemeralSession(r.RemoteAddr)
	defer ss.cancel(ErrClientGone)
	stop := context.AfterFunc(r.Context(), func() { ss.cancel(ErrClientGone) })
	defer stop()
	h.serve(w, r, ss, msg, true)
}

// checkHeaders checks that a modern POST's mirrored headers match its body.
func checkHeaders(r *http.Request, msg *jsonrpc.Message, p *reqParams) *mcp.Error {
	mismatch := func(what string) *mcp.Error {
		return &mcp.Error{Code: mcp.CodeHeaderMismatch, Message: "Header mismatch: " + what}
	}
	switch v := r.Header.Values(mcp.HeaderProtocolVersion); {
	case len(v) == 0:
		return mismatch(mcp.HeaderProtocolVersion + " header missing")
	case len(v) > 1 || v[0] != p.version:
		return mismatch(mcp.HeaderProtocolVersion + " header does not match params._meta")
	}
	switch v := r.Header.Values(mcp.HeaderMethod); {
	case len(v) == 0:
		return mismatch(mcp.HeaderMethod + " header missing")
	case len(v) > 1 || v[0] != msg.Method:
		return mismatch(mcp.HeaderMethod + " header does not match the method")
	}
	if msg.Method == mcp.MethodCallTool {
		v := r.Header.Values(mcp.HeaderName)
		if len(v) == 0 {
			return mismatch(mcp.HeaderName + " header missing")
		}
		name, ok := headerValue(v[0])
		if len(v) > 1 || !ok || len(p.name) == 0 || p.name[0] != '"' || name != jsonrpc.UnquoteValid(p.name) {
			return mismatch(mcp.HeaderName + " header does not match params.name")
		}
	}
	return nil
}

// headerValue decodes a header value that may use the Base64 sentinel
// form "=?base64?...?=".
func headerValue(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// legacy serves one message of a legacy session, opening the session on
// initialize.
func (h *streamableHTTP) legacy(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) {
	s := h.s
	if v := r.Header.Get(mcp.HeaderProtocolVersion); v != "" && !mcp.IsSupportedProtocolVersion(v) && !isModernVersion(v) {
		rpcError(w, http.StatusBadRequest, msg.ID, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Bad Request: unsupported " + mcp.HeaderProtocolVersion + " " + clip(v, maxQuoted)})
		return
	}
	if msg.Method == mcp.MethodInitialize && msg.IsRequest() {
		var idb [16]byte
		rand.Read(idb[:])
		id := hex.EncodeToString(idb[:])
		ss, err := s.addSession(TransportStreamableHTTP, r.RemoteAddr, httpSessionConn{})
		if err != nil {
			rpcError(w, http.StatusServiceUnavailable, msg.ID, &mcp.Error{Code: mcp.CodeServerError, Message: "server shutting down"})
			return
		}
		// Known before the answer can reach the client, which may
		// POST again at once.
		h.add(id, ss)
		w.Header().Set(mcp.HeaderSessionID, id)
		h.serve(w, r, ss, msg, false)
		if !ss.isInitialized() { // initialize failed: no session
			h.mu.Lock()
			delete(h.sessions, id)
			h.mu.Unlock()
			s.removeSession(ss, nil)
		}
		return
	}
	id := r.Header.Get(mcp.HeaderSessionID)
	if id == "" {
		// Neither a legacy session's request nor a modern one: to a
		// modern client, a request missing its required _meta (-32602,
		// 400); to a legacy one, a request outside a session (400).
		rpcError(w, http.StatusBadRequest, msg.ID, &mcp.Error{Code: mcp.CodeInvalidParams,
			Message: "Invalid params: params._meta must carry " + mcp.MetaProtocolVersion + " and " + mcp.MetaClientCapabilities + " (or open a legacy session with initialize and send its " + mcp.HeaderSessionID + ")"})
		return
	}
	h.mu.Lock()
	hsess := h.sessions[id]
	if hsess != nil {
		hsess.lastUsed = time.Now()
	}
	h.mu.Unlock()
	if hsess == nil {
		rpcError(w, http.StatusNotFound, msg.ID, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Session not found"})
		return
	}
	ss := hsess.ss
	if msg.IsNotification() {
		ss.handleMsg(msg, ss.conn)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	// The POST is the only way to the answer (there is no stream to
	// resume): a client that closes it cancels the request.
	stop := context.AfterFunc(r.Context(), func() { ss.cancelRequest(msg.ID, ErrClientGone) })
	defer stop()
	h.serve(w, r, ss, msg, false)
}

// add records a new legacy session, after ending those idle too long and,
// over the cap, the least recently used.
func (h *streamableHTTP) add(id string, ss *session) {
	now := time.Now()
	var drop []*session
	h.mu.Lock()
	for k, hs := range h.sessions {
		if now.Sub(hs.lastUsed) > httpSessionIdle {
			drop = append(drop, hs.ss)
			delete(h.sessions, k)
		}
	}
	for len(h.sessions) >= maxHTTPSessions {
		var oldest string
		for k, hs := range h.sessions {
			if oldest == "" || hs.lastUsed.Before(h.sessions[oldest].lastUsed) {
				oldest = k
			}
		}
		drop = append(drop, h.sessions[oldest].ss)
		delete(h.sessions, oldest)
	}
	h.sessions[id] = &httpSession{ss: ss, lastUsed: now}
	h.mu.Unlock()
	for _, d := range drop {
		h.s.removeSession(d, errors.New("ideserver: Streamable HTTP session expired"))
	}
}

func (h *streamableHTTP) closeAll() {
	h.mu.Lock()
	all := h.sessions
	h.sessions = map[string]*httpSession{}
	h.mu.Unlock()
	for _, hs := range all {
		h.s.removeSession(hs.ss, nil)
	}
}

// serve runs one request of ss with this POST as its replyTo, and returns
// once it is answered (or abandoned: the client went away).
func (h *streamableHTTP) serve(w http.ResponseWriter, r *http.Request, ss *session, msg *jsonrpc.Message, modern bool) {
	sink := &postSink{
		w: w, rc: http.NewResponseController(w), modern: modern,
		stream:       acceptsEventStream(r),
		writeTimeout: h.s.cfg.WriteTimeout,
	}
	defer sink.end()
	if msg.IsNotification() {
		ss.handleMsg(msg, sink)
		return
	}
	if call := ss.handleMsg(msg, sink); call != nil {
		call() // this goroutine is the request's own
	}
}

func acceptsEventStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part))
			if mt == "text/event-stream" || mt == "*/*" || mt == "text/*" {
				return true
			}
		}
	}
	return false
}

// postSink answers one POST: application/json for a lone answer, or an
// event stream once a notification about the request (progress) comes
// first. Writes end when the POST's handler returns.
type postSink struct {
	w            http.ResponseWriter
	rc           *http.ResponseController
	modern       bool
	stream       bool // the client accepts text/event-stream
	writeTimeout time.Duration

	mu        sync.Mutex
	streaming bool
	done      bool // answered, or the handler returned
}

func (p *postSink) writeMessage(data []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return net.ErrClosed
	}
	if !p.stream {
		return nil // the client takes only the answer
	}
	if !p.streaming {
		h := p.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		p.w.WriteHeader(http.StatusOK)
		p.streaming = true
	}
	return p.event(data)
}

func (p *postSink) event(data []byte) error {
	var b bytes.Buffer
	b.Grow(len(data) + 24)
	b.WriteString("event: message\ndata: ")
	b.Write(data) // one line: encoding/json writes no raw newline
	b.WriteString("\n\n")
	p.rc.SetWriteDeadline(time.Now().Add(p.writeTimeout))
	if _, err := p.w.Write(b.Bytes()); err != nil {
		return err
	}
	return p.rc.Flush()
}

func (p *postSink) writeFinal(data []byte, code int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return net.ErrClosed
	}
	p.done = true
	if p.streaming {
		return p.event(data)
	}
	status := http.StatusOK
	if p.modern {
		switch code {
		case mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapability, mcp.CodeUnsupportedProtocolVersion:
			status = http.StatusBadRequest
		case mcp.CodeMethodNotFound:
			status = http.StatusNotFound
		}
	}
	p.w.Header().Set("Content-Type", "application/json")
	p.w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	p.rc.SetWriteDeadline(time.Now().Add(p.writeTimeout))
	p.w.WriteHeader(status)
	_, err := p.w.Write(data)
	return err
}

// end: no write after the handler returns. A request answered nowhere (a
// notification) gets 202.
func (p *postSink) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done && !p.streaming {
		p.w.WriteHeader(http.StatusAccepted)
	}
	p.done = true
}

// ephemeralSession is the session of one modern request: not a client
// anyone lists or broadcasts to, ended by the caller.
func (s *Server) ephemeralSession(remote string) *session {
	ctx, cancel := context.WithCancelCause(s.ctx)
	return &session{
		srv:    s,
		conn:   httpSessionConn{},
		ctx:    ctx,
		cancel: cancel,
		info: ClientInfo{
			ID:          "http",
			Transport:   TransportStreamableHTTP,
			RemoteAddr:  remote,
			ConnectedAt: time.Now(),
		},
		inflight: map[string]*inflightCall{},
	}
}

// cancelRequest cancels the call in flight with this id, if any.
func (ss *session) cancelRequest(id json.RawMessage, cause error) {
	ss.mu.Lock()
	call := ss.inflight[string(id)]
	ss.mu.Unlock()
	if call != nil {
		call.cancel(cause)
	}
}
