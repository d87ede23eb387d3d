package ideserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idebridge/idebridge/lockfile"
	"github.com/idebridge/idebridge/mcp"
)

type serverState int

const (
	stateNew serverState = iota
	stateStarted
	stateClosed
)

// Server is an IDE's MCP server: it listens on loopback, announces itself
// with a lockfile, authenticates clients, and serves tools over WebSocket or
// legacy SSE. All methods are safe for concurrent use.
type Server struct {
	cfg   *config
	log   *slog.Logger
	token string
	tools *registry
	ed    *editor
	pool  *workers
	conns *connGuard

	// ctx is the parent of every session and handler context; cancelled
	// with ErrServerClosed by shutdown.
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	state    serverState
	ln       net.Listener
	httpSrv  *http.Server
	port     int
	lockPath string
	sessions map[*session]struct{}
	nextID   uint64

	sseSessions sync.Map // session id -> *sseConn

	// extraHTTP are the servers of running ServeStreamableHTTP calls.
	extraHTTP map[*http.Server]struct{}

	handlers sync.WaitGroup // tool handler goroutines
	loops    sync.WaitGroup // Serve, sessions, keep-alives

	closeOnce sync.Once
	closed    chan struct{}

	// argBytes are the bytes of large arguments held by running calls.
	argBytes atomic.Int64

	// prefix is what every modern result starts with (modernPrefix).
	prefixOnce sync.Once
	prefix     []byte
}

// New returns a server configured by opts (nil means defaults) with the
// default tool set registered. It does not listen yet; see Start.
func New(opts *Options) (*Server, error) {
	cfg, err := resolveOptions(opts)
	if err != nil {
		return nil, err
	}
	token := cfg.AuthToken
	if token == "" {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("ideserver: generating auth token: %w", err)
		}
		token = hex.EncodeToString(b[:])
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	s := &Server{
		cfg:      cfg,
		log:      logger,
		token:    token,
		tools:    newRegistry(),
		ed:       newEditor(),
		pool:     newWorkers(),
		conns:    newConnGuard(cfg.MaxUnauthenticatedConns),
		ctx:      ctx,
		cancel:   cancel,
		sessions: map[*session]struct{}{},
		closed:   make(chan struct{}),
	}
	if !cfg.NoDefaultTools {
		s.registerDefaults()
	}
	return s, nil
}

// Start listens on the configured loopback address and, unless NoLockfile
// is set, writes the lockfile (atomically, mode 0600, directory 0700). It
// returns once the server accepts connections; ctx bounds only the start.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case stateStarted:
		return ErrAlreadyStarted
	case stateClosed:
		return ErrServerClosed
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("starting IDE server: %w", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.Port)))
	if err != nil {
		return fmt.Errorf("starting IDE server: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if !s.cfg.NoLockfile {
		path, err := lockfile.Write(s.cfg.LockfileDir, &lockfile.Lockfile{
			Port:             port,
			WorkspaceFolders: slices.Clone(s.cfg.folders),
			PID:              os.Getpid(),
			IDEName:          s.cfg.IDEName,
			Transport:        s.cfg.Transport,
			AuthToken:        s.token,
		})
		if err != nil {
			ln.Close()
			return fmt.Errorf("starting IDE server: %w", err)
		}
		s.lockPath = path
	}
	s.httpSrv = &http.Server{
		Handler: http.HandlerFunc(s.serveHTTP),
		// Slow headers and idle kept-alive connections time out; an SSE
		// POST's body gets its own deadline (serveSSEPost). No overall
		// ReadTimeout: it would also cut WebSockets and SSE streams.
		ReadHeaderTimeout: s.cfg.RequestTimeout,
		IdleTimeout:       s.cfg.RequestTimeout,
		ConnState:         s.conns.connState,
		ConnContext:       connContext,
		ErrorLog:          log.New(slogWriter{s.log}, "", 0),
	}
	s.ln, s.port = ln, port
	s.state = stateStarted
	s.loops.Add(1)
	go func() {
		defer s.loops.Done()
		s.httpSrv.Serve(ln) // returns when the listener is closed
	}()
	return nil
}

// slogWriter sends net/http's internal error log to the server's logger.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	w.l.Debug("http server", "msg", string(p))
	return len(p), nil
}

// Port returns the port the server listens on (0 before Start).
func (s *Server) Port() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.port
}

// URL returns where clients connect: ws://127.0.0.1:<port>/ for WebSocket,
// http://127.0.0.1:<port>/sse for SSE ("" before Start).
func (s *Server) URL() string {
	port := s.Port()
	if port == 0 {
		return ""
	}
	hostport := net.JoinHostPort(s.cfg.Host, strconv.Itoa(port))
	if s.cfg.Transport == lockfile.TransportSSE {
		return "http://" + hostport + "/sse"
	}
	return "ws://" + hostport + "/"
}

// AuthToken returns the token clients must send.
func (s *Server) AuthToken() string { return s.token }

// Transport returns "ws" or "sse".
func (s *Server) Transport() string { return s.cfg.Transport }

// LockfilePath returns the lockfile's path, or "" when none was written.
func (s *Server) LockfilePath() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lockPath
}

// WorkspaceFolders returns the absolute workspace folders.
func (s *Server) WorkspaceFolders() []string { return slices.Clone(s.cfg.folders) }

// RegisterTool adds t, or replaces the tool of the same name (a default tool
// included: this is how getDiagnostics or a custom openDiff is plugged in).
// Connected clients get notifications/tools/list_changed.
func (s *Server) RegisterTool(t Tool) error {
	if err := validateTool(t); err != nil {
		return err
	}
	s.tools.put(t)
	s.notifyToolsChanged()
	return nil
}

// UnregisterTool removes the named tool and reports whether it existed.
func (s *Server) UnregisterTool(name string) bool {
	ok := s.tools.remove(name)
	if ok {
		s.notifyToolsChanged()
	}
	return ok
}

// Tools returns the registered tools in tools/list order.
func (s *Server) Tools() []Tool { return s.tools.list() }

func (s *Server) notifyToolsChanged() {
	// Fails only before any client could connect, or once closed.
	_ = s.Notify(mcp.MethodToolsListChanged, nil)
}

// Notify sends a notification to every client that has completed
// initialize, in the order Notify is called. params is encoded with
// encoding/json (nil for none). It blocks until each client took the
// message or its WriteTimeout passed; a client that fails is dropped. It
// returns an error only when params cannot be encoded, or the server is
// closed (ErrServerClosed) or has neither started nor a ServeStream session
// (ErrNotStarted).
func (s *Server) Notify(method string, params any) error {
	data, err := encodeNotification(method, params)
	if err != nil {
		return err
	}
	s.mu.Lock()
	state := s.state
	targets := make([]*session, 0, len(s.sessions))
	for ss := range s.sessions {
		targets = append(targets, ss)
	}
	s.mu.Unlock()
	switch {
	case state == stateClosed:
		return ErrServerClosed
	case state == stateNew && len(targets) == 0:
		return ErrNotStarted
	}
	slices.SortFunc(targets, func(a, b *session) int { return a.seq - b.seq })
	for _, ss := range targets {
		if ss.isInitialized() {
			ss.send(data)
		}
	}
	return nil
}

// Clients returns the connected clients, oldest first.
func (s *Server) Clients() []ClientInfo {
	s.mu.Lock()
	list := make([]*session, 0, len(s.sessions))
	for ss := range s.sessions {
		list = append(list, ss)
	}
	s.mu.Unlock()
	slices.SortFunc(list, func(a, b *session) int { return a.seq - b.seq })
	out := make([]ClientInfo, len(list))
	for i, ss := range list {
		out[i] = ss.clientInfo()
	}
	return out
}

// Close shuts the server down at once: the lockfile is removed, listening
// stops, pending openDiff calls are answered DIFF_REJECTED, every other
// handler's context is cancelled (cause ErrServerClosed) and awaited, then
// every connection is closed. It is idempotent; later calls wait for the
// first to finish. Handlers must honour their context, or Close waits for
// them.
func (s *Server) Close() error { return s.shutdown(context.Background(), false) }

// Shutdown is the graceful Close: new tool calls are refused and pending
// openDiff calls are answered DIFF_REJECTED at once, but other running
// tool calls may finish with a live context until ctx ends. Then it
// proceeds as Close: the remaining handlers are cancelled and awaited, and
// their answers sent, before connections close. It returns ctx's error if
// ctx ended before the handlers did.
func (s *Server) Shutdown(ctx context.Context) error { return s.shutdown(ctx, true) }

func (s *Server) shutdown(ctx context.Context, graceful bool) error {
	first := false
	s.closeOnce.Do(func() { first = true })
	if !first {
		select {
		case <-s.closed:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	defer close(s.closed)

	s.mu.Lock()
	s.state = stateClosed
	sessions := make([]*session, 0, len(s.sessions))
	for ss := range s.sessions {
		sessions = append(sessions, ss)
	}
	lockPath, ln, httpSrv := s.lockPath, s.ln, s.httpSrv
	extra := make([]*http.Server, 0, len(s.extraHTTP))
	for hs := range s.extraHTTP {
		extra = append(extra, hs)
	}
	s.mu.Unlock()

	var errs []error
	// Unannounce first, so no agent picks a server that is going away.
	if lockPath != "" {
		if err := lockfile.Remove(lockPath); err != nil {
			errs = append(errs, err)
		}
	}
	if ln != nil {
		ln.Close()
	}
	s.ed.shutdown()
	if graceful && !waitGroup(ctx, &s.handlers) {
		errs = append(errs, ctx.Err())
	}
	s.cancel(ErrServerClosed)
	s.handlers.Wait()
	close(s.pool.stop)
	for _, ss := range sessions {
		ss.conn.close(closeGoingAway, "server shutting down")
	}
	if httpSrv != nil {
		httpSrv.Close()
	}
	for _, hs := range extra {
		hs.Close()
	}
	s.loops.Wait()
	return errors.Join(errs...)
}

// waitGroup waits for wg or ctx and reports whether wg finished.
func waitGroup(ctx context.Context, wg *sync.WaitGroup) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// addSession registers a connected client; it fails once shutdown began.
// Before Start only ServeStream can call it.
func (s *Server) addSession(transport, remote string, c conn) (*session, error) {
	s.mu.Lock()
	if s.state == stateClosed {
		s.mu.Unlock()
		return nil, ErrServerClosed
	}
	s.nextID++
	ctx, cancel := context.WithCancelCause(s.ctx)
	ss := &session{
		srv:    s,
		conn:   c,
		ctx:    ctx,
		cancel: cancel,
		seq:    int(s.nextID),
		info: ClientInfo{
			ID:          "c" + strconv.FormatUint(s.nextID, 10),
			Transport:   transport,
			RemoteAddr:  remote,
			ConnectedAt: time.Now(),
		},
		inflight: map[string]*inflightCall{},
	}
	s.sessions[ss] = struct{}{}
	s.loops.Add(1)
	s.mu.Unlock()
	s.emit(EventConnected, ss, nil)
	return ss, nil
}

// removeSession forgets a client whose connection ended; idempotent.
func (s *Server) removeSession(ss *session, why error) {
	s.mu.Lock()
	_, ok := s.sessions[ss]
	delete(s.sessions, ss)
	s.mu.Unlock()
	if !ok {
		return
	}
	ss.cancel(ErrClientGone)
	ss.conn.close(closeNormal, "")
	s.emit(EventDisconnected, ss, why)
	s.loops.Done()
}

// spawn runs f on a goroutine that shutdown waits for. Only called while a
// handler is accounted for (see beginHandler), so before shutdown waits.
func (s *Server) spawn(f func()) {
	s.loops.Add(1)
	go func() {
		defer s.loops.Done()
		f()
	}()
}

// beginHandler accounts for a new tool call unless shutting down.
func (s *Server) beginHandler() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stateClosed {
		return false
	}
	s.handlers.Add(1)
	return true
}

func (s *Server) emit(kind EventKind, ss *session, err error) {
	if s.cfg.OnEvent != nil {
		s.cfg.OnEvent(Event{Kind: kind, Client: ss.clientInfo(), Err: err})
	}
}

func (s *Server) checkToken(got string) bool {
	return subtleEqual(got, s.token)
}
