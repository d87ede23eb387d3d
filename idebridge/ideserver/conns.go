package ideserver

import (
	"container/list"
	"context"
	"net"
	"net/http"
	"sync"
)

// connGuard bounds the connections that have not authenticated yet, so
// that any local user, who can connect but has no token, cannot exhaust
// the server's file descriptors and lock the user's agent out. Each
// accepted connection counts until a request on it authenticates (a
// WebSocket upgrade with the token, an SSE stream or a POST to a live SSE
// session) or it closes. Over the cap, the oldest unauthenticated
// connection is closed: a flood of new connections then pushes out its
// own members, while the agent's connection, which authenticates with its
// first request, is never the oldest for long.
//
// Refused requests close their connection (Connection: close), and idle
// or slow connections time out (Options.RequestTimeout), so a flood holds
// at most the cap, each for a bounded time.
type connGuard struct {
	max int

	mu      sync.Mutex
	order   *list.List // of net.Conn, unauthenticated, oldest first
	entries map[net.Conn]*list.Element
}

func newConnGuard(max int) *connGuard {
	return &connGuard{max: max, order: list.New(), entries: map[net.Conn]*list.Element{}}
}

type connKey struct{}

// connContext is the http.Server's ConnContext: handlers find their
// connection with connFrom.
func connContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

func connFrom(r *http.Request) net.Conn {
	c, _ := r.Context().Value(connKey{}).(net.Conn)
	return c
}

// connState is the http.Server's ConnState hook.
func (g *connGuard) connState(c net.Conn, st http.ConnState) {
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
			evict.Close() // its server goroutine sees the error and ends
		}
	case http.StateHijacked, http.StateClosed:
		g.forget(c)
	}
}

// authenticated takes the connection of r out of the count for good.
func (g *connGuard) authenticated(r *http.Request) {
	if c := connFrom(r); c != nil {
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
