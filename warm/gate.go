package warm

import (
	"context"
	"sync"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// exclusiveTools stage text in the language servers (an lsp.EditSet, from
// Stage to Discard or Apply, inside the call): while one runs, no other
// call of any session of the project runs, so none sees the staged text
// and none disturbs it.
var exclusiveTools = map[string]bool{"preview_edit": true, "apply_edit": true}

// gate is a readers-writer lock whose waits end with their context, and
// which lets no new reader in while a writer waits.
type gate struct {
	mu       sync.Mutex
	readers  int
	writer   bool
	waitingW int
	changed  chan struct{} // closed and replaced at every release
}

func newGate() *gate { return &gate{changed: make(chan struct{})} }

func (g *gate) acquire(ctx context.Context, exclusive bool) error {
	g.mu.Lock()
	waiting := false
	for {
		if exclusive && !g.writer && g.readers == 0 {
			g.writer = true
			if waiting {
				g.waitingW--
			}
			g.mu.Unlock()
			return nil
		}
		if !exclusive && !g.writer && g.waitingW == 0 {
			g.readers++
			g.mu.Unlock()
			return nil
		}
		if exclusive && !waiting {
			waiting = true
			g.waitingW++
		}
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			g.mu.Lock()
			if waiting {
				g.waitingW--
				g.wakeLocked()
			}
			g.mu.Unlock()
			return context.Cause(ctx)
		}
		g.mu.Lock()
	}
}

func (g *gate) release(exclusive bool) {
	g.mu.Lock()
	if exclusive {
		g.writer = false
	} else {
		g.readers--
	}
	g.wakeLocked()
	g.mu.Unlock()
}

func (g *gate) wakeLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// gated wraps a tool's handler in the project's gate.
func gated(t ideserver.Tool, g *gate) ideserver.Tool {
	inner, exclusive := t.Handler, exclusiveTools[t.Name]
	t.Handler = func(ctx context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
		if err := g.acquire(ctx, exclusive); err != nil {
			return nil, err
		}
		defer g.release(exclusive)
		return inner(ctx, call)
	}
	return t
}
