package ideserver

import (
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/idebridge/idebridge/lockfile"
	"github.com/idebridge/idebridge/mcp"
)

// This is the only file of the server that knows gorilla/websocket.

// serveWS authenticates and upgrades a WebSocket client and runs its read
// loop on this goroutine until the connection ends.
//
// A missing or wrong token is answered HTTP 400 before the upgrade, which
// clients (and deployed IDEs) read as "authentication failed".
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	if !s.checkToken(r.Header.Get(mcp.AuthHeader)) {
		s.log.Warn("refused WebSocket client: missing or wrong auth token", "remote", r.RemoteAddr)
		http.Error(w, "authentication failed: missing or wrong "+mcp.AuthHeader, http.StatusBadRequest)
		return
	}
	s.conns.authenticated(r)
	up := websocket.Upgrader{
		HandshakeTimeout: 10 * time.Second,
		Subprotocols:     []string{mcp.Subprotocol},
		// serveHTTP already refused non-loopback origins.
		CheckOrigin: func(*http.Request) bool { return true },
		Error: func(w http.ResponseWriter, _ *http.Request, status int, reason error) {
			http.Error(w, reason.Error(), status)
		},
	}
	c, err := up.Upgrade(w, r, nil)
	if err != nil {
		s.log.Debug("WebSocket upgrade failed", "remote", r.RemoteAddr, "err", err)
		return // Upgrade answered the HTTP error
	}
	wc := &wsConn{c: c, writeTimeout: s.cfg.WriteTimeout, done: make(chan struct{})}
	ss, err := s.addSession(lockfile.TransportWS, r.RemoteAddr, wc)
	if err != nil {
		wc.close(closeGoingAway, "server shutting down")
		return
	}
	c.SetReadLimit(s.cfg.MaxMessageSize)
	if iv := s.cfg.PingInterval; iv > 0 {
		// A client must show life (any frame, pongs included) every two
		// intervals; a half-open connection is dropped at the read deadline.
		extend := func() { c.SetReadDeadline(time.Now().Add(2 * iv)) }
		extend()
		c.SetPongHandler(func(string) error { extend(); return nil })
		// The session keeps shutdown waiting, so this Add is in time.
		s.spawn(func() { wc.pingLoop(iv) })
	}
	s.wsRead(ss, wc)
}

// wsRead reads the client's messages until the connection ends. When a
// tool call arrives, reading moves to another goroutine and this one runs
// the tool: the call starts at once on a goroutine whose stack has grown
// already, and the handoff is off the call's path.
func (s *Server) wsRead(ss *session, wc *wsConn) {
	c := wc.c
	for {
		typ, data, err := c.ReadMessage()
		if err != nil {
			switch {
			case websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway, websocket.CloseNoStatusReceived),
				wc.isClosed(): // we closed it
				err = nil
			case errors.Is(err, websocket.ErrReadLimit):
				s.log.Warn("client message over the size limit", "client", ss.info.ID, "limit", s.cfg.MaxMessageSize)
			}
			s.removeSession(ss, err)
			return
		}
		if s.cfg.PingInterval > 0 {
			c.SetReadDeadline(time.Now().Add(2 * s.cfg.PingInterval))
		}
		if typ != websocket.TextMessage {
			// One JSON-RPC message per text frame; binary is a protocol
			// error, as for the Neovim plugin.
			wc.close(closeUnsupported, "binary messages are not supported")
			s.removeSession(ss, errors.New("client sent a binary message"))
			return
		}
		if call := ss.handle(data); call != nil {
			s.pool.run(func() { s.wsRead(ss, wc) }, s.spawn)
			call()
			return
		}
	}
}

// wsConn is a server-side WebSocket. gorilla allows one concurrent writer
// (mu) plus concurrent WriteControl and Close. Its server-side
// WriteMessage sends every message as one unfragmented frame.
type wsConn struct {
	c            *websocket.Conn
	writeTimeout time.Duration

	mu sync.Mutex // serialises data frames

	closeOnce sync.Once
	done      chan struct{}
}

func (w *wsConn) writeMessage(data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-w.done:
		return net.ErrClosed
	default:
	}
	w.c.SetWriteDeadline(time.Now().Add(w.writeTimeout))
	return w.c.WriteMessage(websocket.TextMessage, data)
}

func (w *wsConn) isClosed() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

func (w *wsConn) close(code int, reason string) {
	w.closeOnce.Do(func() {
		close(w.done)
		w.c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
		w.c.Close()
	})
}

func (w *wsConn) pingLoop(iv time.Duration) {
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-t.C:
			if err := w.c.WriteControl(websocket.PingMessage, nil, time.Now().Add(w.writeTimeout)); err != nil {
				w.close(closeGoingAway, "ping failed")
				return
			}
		}
	}
}
