package warm

import (
	"bytes"
	"container/list"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// The runtime's Streamable HTTP endpoints: MCP clients that speak only
// HTTP reach the projects' shared servers directly, on a unix socket of
// their own beside the runtime's (BUILD.http) and, when asked, on a
// loopback TCP address with a bearer token. Each request is forwarded to
// its project's ideserver.Server (the one the stdio sessions are served
// on), so HTTP and stdio clients of a project share its language servers.
//
// The runtime's own socket cannot carry HTTP as well: there the runtime
// speaks first (its hello), while an HTTP client speaks first and reads
// nothing before its answer; telling them apart would delay every
// handshake by a wait for a request that never comes.

// HTTPPath is the MCP endpoint of the runtime's HTTP listeners. The
// project is named by the query parameter HTTPProjectParam, its absolute
// directory: http://127.0.0.1:PORT/mcp?project=/home/me/src/app.
const (
	HTTPPath         = "/mcp"
	HTTPProjectParam = "project"
)

// Defaults and bounds of HTTPOptions.
const (
	// DefaultHTTPSessionIdle is how long an HTTP session lives with no
	// request in flight.
	DefaultHTTPSessionIdle = 60 * time.Second
	// MaxHTTPSessionIdle is the longest HTTPOptions.SessionIdle.
	MaxHTTPSessionIdle = 30 * time.Minute
	// DefaultHTTPSessions is the most HTTP sessions the runtime holds at
	// once, and the most HTTPOptions.MaxSessions may be.
	DefaultHTTPSessions = 64
)

// HTTPOptions configure the runtime's Streamable HTTP endpoints
// (ServeOptions.HTTP). The unix socket BUILD.http is always served;
// TCP only when Addr is set.
type HTTPOptions struct {
	// Addr, when set, is a loopback TCP address to serve on as well
	// (127.0.0.1:PORT, [::1]:PORT or localhost:PORT; port 0 picks one).
	// Any other address is refused (Serve fails with ErrNotLoopback). Requests there must carry
	// "Authorization: Bearer <token>", the token in TokenFile.
	Addr string
	// TokenFile is where the bearer token is kept, mode 0600 (default
	// http.token in the runtime directory). A well-formed token found
	// there is kept, so that a client configured with it keeps working
	// across runtimes and builds; else a new one is written.
	TokenFile string
	// SessionIdle is how long an HTTP session (one opened with
	// initialize) lives with no request in flight; then it ends, as if
	// the client had sent DELETE. Zero means DefaultHTTPSessionIdle; at
	// most MaxHTTPSessionIdle.
	SessionIdle time.Duration
	// MaxSessions bounds the HTTP sessions held at once (zero:
	// DefaultHTTPSessions, its most): one more initialize is answered
	// 503.
	MaxSessions int
	// Project gives the Project of the directory a request names. A
	// request cannot carry a server configuration: the runtime runs only
	// what this function returns. Nil means &Project{Dir: dir, NoIDE:
	// true}: the built-in defaults (gopls for .go files), nothing read
	// from the directory. `idebridge runtime serve` loads what `idebridge
	// mcp` would load in the directory, so that both share one project.
	Project func(dir string) (*Project, error)
}

// HTTPStatus is where the runtime serves Streamable HTTP.
type HTTPStatus struct {
	// Socket is the unix socket, served as http://localhost/mcp.
	Socket string `json:"socket"`
	// URL is the TCP endpoint without its project parameter
	// (http://127.0.0.1:PORT/mcp), "" when there is none.
	URL string `json:"url,omitempty"`
	// TokenFile holds the bearer token TCP requests need (with URL).
	TokenFile string `json:"tokenFile,omitempty"`
	// SessionIdle is how long an HTTP session lives with no request.
	SessionIdle time.Duration `json:"sessionIdleNs"`
}

// HTTPURL returns the URL of a project on an HTTP endpoint: base (an
// HTTPStatus.URL, or "http://localhost/mcp" for the unix socket) with the
// project directory as its parameter.
func HTTPURL(base, dir string) string {
	return base + "?" + url.Values{HTTPProjectParam: {dir}}.Encode()
}

// ReadHTTPToken reads the bearer token from a token file (HTTPStatus.TokenFile).
func ReadHTTPToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("warm: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if !tokenOK(tok) {
		return "", fmt.Errorf("warm: %s holds no token", path)
	}
	return tok, nil
}

func tokenOK(tok string) bool {
	if len(tok) != 64 {
		return false
	}
	_, err := hex.DecodeString(tok)
	return err == nil
}

// loadToken keeps the token of path when it is well formed, a regular
// file of this user's closed to others; else it writes a new one.
func loadToken(path string) (string, error) {
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() && st.Mode().Perm() == 0o600 && ownedByMe(st) {
		if tok, err := ReadHTTPToken(path); err == nil {
			return tok, nil
		}
	}
	var b [32]byte
	rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-token-*")
	if err != nil {
		return "", fmt.Errorf("warm: token file: %w", err)
	}
	_, werr := tmp.WriteString(tok + "\n")
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o600), os.Rename(tmp.Name(), path)); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("warm: token file: %w", err)
	}
	return tok, nil
}

// ErrNotLoopback is Serve's error, wrapped, when HTTPOptions.Addr is not
// a loopback address.
var ErrNotLoopback = errors.New("warm: not a loopback address")

// checkLoopback refuses an address that is not loopback.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("warm: HTTP address %q: %w (want 127.0.0.1:PORT)", clip(addr), err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%w: HTTP address %s: the runtime listens on loopback only (127.0.0.1:PORT or [::1]:PORT)", ErrNotLoopback, clip(addr))
	}
	return nil
}

// httpFront is the runtime's HTTP side: its listeners, the per-project
// forwarding, and the legacy sessions it counts.
type httpFront struct {
	d       *daemon
	o       HTTPOptions
	token   string
	socket  string
	url     string // TCP, "" without
	servers []*http.Server
	guard   *connGuard // TCP's

	mu       sync.Mutex
	backends map[*project]*backend
	sessions map[string]*httpSess // by Mcp-Session-Id
	reserved int                  // initializes in flight
	closed   bool
}

// httpSess is a legacy HTTP session, counted as a runtime session.
type httpSess struct {
	id       string
	p        *project
	rid      int // its runtime session
	inflight int
	last     time.Time
}

// backend forwards requests to a project's ideserver.Server, served over
// in-memory connections.
type backend struct {
	ln    *pipeListener
	proxy *httputil.ReverseProxy
	tr    *http.Transport
}

// startHTTP validates the options and listens; the caller serves.
func (d *daemon) startHTTP() (*httpFront, error) {
	o := d.o.HTTP
	switch {
	case o.SessionIdle == 0:
		o.SessionIdle = DefaultHTTPSessionIdle
	case o.SessionIdle < 0 || o.SessionIdle > MaxHTTPSessionIdle:
		return nil, fmt.Errorf("warm: HTTP session idle time %s: want more than 0 and at most %s", o.SessionIdle, MaxHTTPSessionIdle)
	}
	switch {
	case o.MaxSessions == 0:
		o.MaxSessions = DefaultHTTPSessions
	case o.MaxSessions < 0 || o.MaxSessions > DefaultHTTPSessions:
		return nil, fmt.Errorf("warm: HTTP sessions %d: want 1 to %d", o.MaxSessions, DefaultHTTPSessions)
	}
	if o.Project == nil {
		o.Project = func(dir string) (*Project, error) { return &Project{Dir: dir, NoIDE: true}, nil }
	}
	f := &httpFront{d: d, o: o, backends: map[*project]*backend{}, sessions: map[string]*httpSess{}}
	var lns []net.Listener
	fail := func(err error) (*httpFront, error) {
		for _, ln := range lns {
			ln.Close()
		}
		return nil, err
	}
	if o.Addr != "" {
		if err := checkLoopback(o.Addr); err != nil {
			return nil, err
		}
		if o.TokenFile == "" {
			o.TokenFile = filepath.Join(filepath.Dir(d.paths.socket), "http.token")
			f.o.TokenFile = o.TokenFile
		}
		tok, err := loadToken(o.TokenFile)
		if err != nil {
			return nil, err
		}
		f.token = tok
		ln, err := net.Listen("tcp", o.Addr)
		if err != nil {
			return nil, fmt.Errorf("warm: HTTP: %w", err)
		}
		if a, ok := ln.Addr().(*net.TCPAddr); !ok || !a.IP.IsLoopback() {
			ln.Close()
			return nil, fmt.Errorf("%w: %s", ErrNotLoopback, ln.Addr())
		}
		lns = append(lns, ln)
		f.url = "http://" + ln.Addr().String() + HTTPPath
	}
	// Not named *.sock: that is the runtimes' handshake sockets (Running).
	f.socket = strings.TrimSuffix(d.paths.socket, ".sock") + ".http"
	os.Remove(f.socket) // a dead runtime's: Serve holds the serve lock
	uln, err := listenUnix(f.socket)
	if err != nil {
		return fail(err)
	}
	lns = append(lns, &peerListener{UnixListener: uln, log: d.o.Logger})
	for i, ln := range lns {
		tcp := o.Addr != "" && i == 0
		hs := &http.Server{
			Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.serveHTTP(w, r, tcp) }),
			ReadHeaderTimeout: handshakeTimeout,
			IdleTimeout:       time.Minute,
			ConnContext:       connContext,
			ErrorLog:          log.New(io.Discard, "", 0),
		}
		f.servers = append(f.servers, hs)
		if tcp {
			// Any local user can connect: the connections that have
			// not shown the token are bounded, the oldest closed first,
			// so that they cannot lock the user's clients out.
			f.guard = newConnGuard(maxConns)
			hs.ConnState = f.guard.state
			go hs.Serve(ln)
			continue
		}
		// This user's processes only: at most maxConns at once.
		go hs.Serve(&limitListener{Listener: ln, sem: make(chan struct{}, maxConns)})
	}
	return f, nil
}

// status describes the endpoints.
func (f *httpFront) status() *HTTPStatus {
	st := &HTTPStatus{Socket: f.socket, URL: f.url, SessionIdle: f.o.SessionIdle}
	if f.url != "" {
		st.TokenFile = f.o.TokenFile
	}
	return st
}

// expireLoop ends the sessions idle too long, until ctx ends.
func (f *httpFront) expireLoop(ctx context.Context) {
	t := time.NewTicker(max(f.o.SessionIdle/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			var old []*httpSess
			f.mu.Lock()
			for id, s := range f.sessions {
				if s.inflight == 0 && now.Sub(s.last) >= f.o.SessionIdle {
					delete(f.sessions, id)
					old = append(old, s)
				}
			}
			f.mu.Unlock()
			for _, s := range old {
				f.d.o.Logger.Info("HTTP session abandoned: it ends", "project", s.p.dir, "session", s.rid, "idle", f.o.SessionIdle)
				f.endBackend(s)
				f.d.leave(s.p, s.rid)
			}
		}
	}
}

// close stops the listeners and ends every HTTP session.
func (f *httpFront) close() {
	for _, hs := range f.servers {
		hs.Close()
	}
	f.mu.Lock()
	f.closed = true
	all := f.sessions
	f.sessions = map[string]*httpSess{}
	bs := f.backends
	f.backends = map[*project]*backend{}
	f.mu.Unlock()
	for _, s := range all {
		f.d.leave(s.p, s.rid)
	}
	for _, b := range bs {
		b.ln.Close()
		b.tr.CloseIdleConnections()
	}
}

// endBackend ends a legacy session in its project's server, as a DELETE
// from its client would.
func (f *httpFront) endBackend(s *httpSess) {
	b := f.backend(s.p)
	if b == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, "http://localhost"+ideserver.MCPPath, nil)
	req.Header.Set("Authorization", "Bearer "+s.p.mcp.AuthToken())
	req.Header.Set(mcp.HeaderSessionID, s.id)
	if resp, err := b.tr.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
}

// backend returns the project's forwarding, starting it at first use
// (nil once the runtime closes).
func (f *httpFront) backend(p *project) *backend {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	if b := f.backends[p]; b != nil {
		return b
	}
	ln := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	tr := &http.Transport{
		DialContext:         func(ctx context.Context, _, _ string) (net.Conn, error) { return ln.dial(ctx) },
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     30 * time.Second,
	}
	token := p.mcp.AuthToken()
	b := &backend{ln: ln, tr: tr}
	b.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = &url.URL{Scheme: "http", Host: "localhost", Path: ideserver.MCPPath}
			pr.Out.Host = "localhost" // the client's was checked
			pr.Out.Header.Del("Origin")
			pr.Out.Header.Set("Authorization", "Bearer "+token)
		},
		Transport:      tr,
		FlushInterval:  -1,
		ErrorLog:       log.New(logWriter{f.d.o.Logger}, "", 0), // a client gone mid-answer
		ModifyResponse: f.modifyResponse,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			switch {
			case errors.Is(err, errTooManySessions):
				f.tooMany(w)
				return
			case errors.Is(err, errFrontClosed):
				httpFail(w, http.StatusServiceUnavailable, "the runtime is stopping")
				return
			}
			if r.Context().Err() == nil {
				f.d.o.Logger.Warn("HTTP request to a project failed", "project", p.dir, "err", err)
				httpFail(w, http.StatusServiceUnavailable, "the project's server is closing (the runtime stops, or the project went idle): call again")
			}
		},
	}
	f.backends[p] = b
	go func() {
		err := p.mcp.ServeStreamableHTTP(context.Background(), ln)
		f.d.o.Logger.Debug("project's HTTP forwarding ended", "project", p.dir, "err", err)
		f.mu.Lock()
		if f.backends[p] == b {
			delete(f.backends, p)
		}
		f.mu.Unlock()
		tr.CloseIdleConnections()
	}()
	return b
}

var (
	errTooManySessions = errors.New("too many HTTP sessions")
	errFrontClosed     = errors.New("the runtime is stopping")
)

// reqState is what forwarding one request needs to know afterwards.
type reqState struct {
	p        *project
	rid      int
	client   string // initialize's clientInfo
	reserved bool   // an initialize holding a slot
	kept     *httpSess
}

type reqKey struct{}

// modifyResponse records the legacy session an initialize opened, before
// its answer reaches the client (which may POST again at once).
func (f *httpFront) modifyResponse(resp *http.Response) error {
	rs, _ := resp.Request.Context().Value(reqKey{}).(*reqState)
	sid := resp.Header.Get(mcp.HeaderSessionID)
	if rs == nil || rs.p == nil || sid == "" || resp.StatusCode != http.StatusOK {
		return nil
	}
	f.mu.Lock()
	if f.closed || (!rs.reserved && len(f.sessions)+f.reserved >= f.o.MaxSessions) {
		closed := f.closed
		f.mu.Unlock()
		go f.endBackend(&httpSess{id: sid, p: rs.p})
		if closed {
			return errFrontClosed
		}
		return errTooManySessions
	}
	if rs.reserved {
		f.reserved--
		rs.reserved = false
	}
	s := &httpSess{id: sid, p: rs.p, rid: rs.rid, inflight: 1, last: time.Now()}
	f.sessions[sid] = s
	f.mu.Unlock()
	rs.kept = s
	f.d.o.Logger.Info("HTTP session started", "project", rs.p.dir, "session", rs.rid, "client", rs.client)
	return nil
}

func (f *httpFront) tooMany(w http.ResponseWriter) {
	rpcFail(w, http.StatusServiceUnavailable, fmt.Sprintf("the runtime holds %d HTTP sessions already, its most: end one (DELETE), or wait for an abandoned one to end (after %s)", f.o.MaxSessions, f.o.SessionIdle))
}

// httpFail answers a request refused before it reached a project.
func httpFail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Connection", "close")
	http.Error(w, msg, status)
}

// rpcFail answers with a JSON-RPC error, for what an MCP client should
// show its user.
func rpcFail(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": mcp.CodeInvalidRequest, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// maxPeek is how much of a request's body the runtime reads to tell an
// initialize (and its client's name).
const maxPeek = 64 << 10

func (f *httpFront) serveHTTP(w http.ResponseWriter, r *http.Request, tcp bool) {
	if !loopbackHost(r.Host) {
		httpFail(w, http.StatusForbidden, "forbidden: Host is not a loopback address")
		return
	}
	if origin, ok := r.Header["Origin"]; ok && (len(origin) != 1 || !loopbackOrigin(origin[0])) {
		httpFail(w, http.StatusForbidden, "forbidden: Origin is not a loopback address")
		return
	}
	if r.URL.Path != HTTPPath {
		httpFail(w, http.StatusNotFound, "not found: the MCP endpoint is "+HTTPPath+"?"+HTTPProjectParam+"=/absolute/project/directory")
		return
	}
	if tcp {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(f.token)) != 1 {
			f.d.o.Logger.Warn("refused an HTTP request: missing or wrong bearer token", "remote", r.RemoteAddr)
			w.Header().Set("WWW-Authenticate", `Bearer realm="idebridge runtime"`)
			httpFail(w, http.StatusUnauthorized, "authentication failed: missing or wrong bearer token (idebridge runtime http prints the configuration)")
			return
		}
		if c, ok := r.Context().Value(connKey{}).(net.Conn); ok {
			f.guard.forget(c)
		}
	}
	if r.Method != http.MethodPost && r.Method != http.MethodDelete {
		w.Header().Set("Allow", "POST, DELETE")
		httpFail(w, http.StatusMethodNotAllowed, "method not allowed: POST requests, DELETE ends a session")
		return
	}
	if sid := r.Header.Get(mcp.HeaderSessionID); sid != "" {
		f.serveSession(w, r, sid)
		return
	}
	if r.Method == http.MethodDelete {
		httpFail(w, http.StatusBadRequest, "DELETE ends a session: it needs its "+mcp.HeaderSessionID+" header")
		return
	}
	dir := r.URL.Query().Get(HTTPProjectParam)
	if dir == "" || !filepath.IsAbs(dir) {
		httpFail(w, http.StatusBadRequest, "the URL names no project: add ?"+HTTPProjectParam+"=/absolute/project/directory")
		return
	}
	dir = filepath.Clean(dir)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		httpFail(w, http.StatusBadRequest, "project "+clip(dir)+" is not a directory")
		return
	}
	want, err := f.o.Project(dir)
	if err != nil {
		httpFail(w, http.StatusBadRequest, "project "+clip(dir)+": "+clip(err.Error()))
		return
	}
	rs := &reqState{}
	if r.ContentLength <= maxPeek {
		peek, err := io.ReadAll(io.LimitReader(r.Body, maxPeek+1))
		if err != nil {
			httpFail(w, http.StatusBadRequest, "reading the request: "+clip(err.Error()))
			return
		}
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(peek), r.Body), r.Body}
		var m struct {
			Method string `json:"method"`
			Params struct {
				ClientInfo struct{ Name, Version string } `json:"clientInfo"`
			} `json:"params"`
		}
		if json.Unmarshal(peek, &m) == nil && m.Method == mcp.MethodInitialize {
			rs.client = strings.TrimSpace(m.Params.ClientInfo.Name + " " + m.Params.ClientInfo.Version)
			f.mu.Lock()
			if len(f.sessions)+f.reserved >= f.o.MaxSessions {
				f.mu.Unlock()
				f.tooMany(w)
				return
			}
			f.reserved++
			rs.reserved = true
			f.mu.Unlock()
		}
	}
	defer func() {
		if rs.reserved {
			f.mu.Lock()
			f.reserved--
			f.mu.Unlock()
		}
	}()
	p, rid, err := f.d.join(want, peerPID(r.Context()))
	if err != nil {
		httpFail(w, http.StatusServiceUnavailable, clip(err.Error()))
		return
	}
	rs.p, rs.rid = p, rid
	// Deferred: the proxy panics (http.ErrAbortHandler) when the client
	// goes away while its answer streams.
	defer func() {
		if rs.kept != nil {
			f.done(rs.kept) // the session's: counted until it ends
			return
		}
		f.d.leave(p, rid) // a request on its own: counted while it ran
	}()
	f.d.setSession(p, rid, "http", rs.client)
	b := f.backend(p)
	if b == nil {
		httpFail(w, http.StatusServiceUnavailable, "the runtime is stopping")
		return
	}
	forward(b, w, r.WithContext(context.WithValue(r.Context(), reqKey{}, rs)))
}

// forward sends a request to its project's server and its answer back.
// Full duplex: the server would otherwise close the request's body once
// the answer's headers are written, while the forwarding may still read
// it to its end (to check that nothing follows the declared length), and
// that failed read would end the forwarding connection mid-answer.
func forward(b *backend, w http.ResponseWriter, r *http.Request) {
	http.NewResponseController(w).EnableFullDuplex()
	b.proxy.ServeHTTP(w, r)
}

// serveSession forwards a request of a legacy session.
func (f *httpFront) serveSession(w http.ResponseWriter, r *http.Request, sid string) {
	f.mu.Lock()
	s := f.sessions[sid]
	if s != nil {
		s.inflight++
		s.last = time.Now()
	}
	f.mu.Unlock()
	if s == nil {
		if r.Method == http.MethodDelete {
			httpFail(w, http.StatusNotFound, "unknown session")
			return
		}
		rpcFail(w, http.StatusNotFound, "Session not found")
		return
	}
	defer f.done(s)
	b := f.backend(s.p)
	if b == nil {
		httpFail(w, http.StatusServiceUnavailable, "the runtime is stopping")
		return
	}
	if r.Method == http.MethodDelete {
		// The session ends before its DELETE is answered, so a client
		// that has its answer finds it gone (from status too).
		dw := &deleteWriter{ResponseWriter: w, end: func() { f.deleted(s) }}
		defer dw.ended()
		w = dw
	}
	forward(b, w, r)
}

// deleteWriter answers a DELETE: the session ends (end runs) just before
// the answer's status is written, once the project's server has ended
// its side; and when the handler returns, if nothing was written.
type deleteWriter struct {
	http.ResponseWriter
	end  func()
	once sync.Once
}

func (w *deleteWriter) ended() { w.once.Do(w.end) }

func (w *deleteWriter) WriteHeader(code int) {
	w.ended()
	w.ResponseWriter.WriteHeader(code)
}

func (w *deleteWriter) Write(b []byte) (int, error) {
	w.ended()
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *deleteWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// deleted ends a session its client deleted.
func (f *httpFront) deleted(s *httpSess) {
	f.mu.Lock()
	ended := f.sessions[s.id] == s
	if ended {
		delete(f.sessions, s.id)
	}
	f.mu.Unlock()
	if ended {
		f.d.o.Logger.Info("HTTP session ended by its client", "project", s.p.dir, "session", s.rid)
		f.d.leave(s.p, s.rid)
	}
}

// done ends a request of s: it is idle from now.
func (f *httpFront) done(s *httpSess) {
	f.mu.Lock()
	s.inflight--
	s.last = time.Now()
	f.mu.Unlock()
}

// setSession records what a session is, for status.
func (d *daemon) setSession(p *project, id int, transport, client string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := p.sessions[id]; ok {
		s.Transport, s.Client = transport, client
		p.sessions[id] = s
	}
}

func loopbackHost(h string) bool {
	if h == "" {
		return false
	}
	host := h
	if hp, _, err := net.SplitHostPort(h); err == nil {
		host = hp
	} else if strings.Count(h, ":") == 1 {
		return false
	}
	return loopbackName(host)
}

func loopbackName(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" {
		return true
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func loopbackOrigin(o string) bool {
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return loopbackName(u.Hostname())
}

// pipeListener is a net.Listener of in-memory connections: a project's
// ideserver.Server serves Streamable HTTP on it, and the front dials it.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is a unix address: ideserver serves only loopback and unix
// listeners, and this one is in the process.
func (l *pipeListener) Addr() net.Addr { return &net.UnixAddr{Name: "warm-project", Net: "unix"} }

func (l *pipeListener) dial(ctx context.Context) (net.Conn, error) {
	a, b := net.Pipe()
	select {
	case l.conns <- b:
		return a, nil
	case <-l.done:
	case <-ctx.Done():
	}
	a.Close()
	b.Close()
	return nil, net.ErrClosed
}

// peerListener refuses the connections of other users, as the runtime's
// socket does (SO_PEERCRED, where the system has it).
type peerListener struct {
	*net.UnixListener
	log interface {
		Warn(msg string, args ...any)
	}
}

// peerConn is a connection with its peer's process id (0: unknown).
type peerConn struct {
	net.Conn
	pid int
}

func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.AcceptUnix()
		if err != nil {
			return nil, err
		}
		uid, pid, err := peerCred(c)
		if err != nil || (uid >= 0 && uid != os.Getuid()) {
			l.log.Warn("refused an HTTP connection from another user", "uid", uid, "pid", pid, "err", err)
			c.Close()
			continue
		}
		return &peerConn{Conn: c, pid: pid}, nil
	}
}

type (
	pidKey  struct{}
	connKey struct{}
)

func connContext(ctx context.Context, c net.Conn) context.Context {
	ctx = context.WithValue(ctx, connKey{}, c)
	if lc, ok := c.(*limitConn); ok {
		c = lc.Conn
	}
	if pc, ok := c.(*peerConn); ok {
		return context.WithValue(ctx, pidKey{}, pc.pid)
	}
	return ctx
}

func peerPID(ctx context.Context) int {
	pid, _ := ctx.Value(pidKey{}).(int)
	return pid
}

// limitListener holds at most cap(sem) connections open at once: the
// next waits in Accept.
type limitListener struct {
	net.Listener
	sem chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.sem <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// connGuard bounds the TCP connections that have not shown the token: over
// max, the oldest of them is closed. A connection counts from its accept
// until a request on it shows the token, or it closes.
type connGuard struct {
	max int

	mu      sync.Mutex
	order   *list.List // of net.Conn, oldest first
	entries map[net.Conn]*list.Element
}

func newConnGuard(max int) *connGuard {
	return &connGuard{max: max, order: list.New(), entries: map[net.Conn]*list.Element{}}
}

func (g *connGuard) state(c net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		var evict net.Conn
		g.mu.Lock()
		g.entries[c] = g.order.PushBack(c)
		if g.order.Len() > g.max {
			evict = g.order.Remove(g.order.Front()).(net.Conn)
			delete(g.entries, evict)
		}
		g.mu.Unlock()
		if evict != nil {
			evict.Close()
		}
	case http.StateHijacked, http.StateClosed:
		g.forget(c)
	}
}

func (g *connGuard) forget(c net.Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e, ok := g.entries[c]; ok {
		g.order.Remove(e)
		delete(g.entries, c)
	}
}

// logWriter passes the forwarding's own log lines to the runtime's log.
type logWriter struct{ l *slog.Logger }

func (w logWriter) Write(b []byte) (int, error) {
	w.l.Info("HTTP forwarding: " + strings.TrimSpace(string(b)))
	return len(b), nil
}
