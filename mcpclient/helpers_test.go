package mcpclient

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"testing"
	"time"

	"github.com/idebridge/idebridge/mcp"
)

// testOptions configure dialConn; the zero value is the defaults, with
// keep-alive off.
type testOptions struct {
	maxSize int64
	ping    time.Duration // 0: off
	dial    DialFunc
	tls     *tls.Config
}

// dialConn opens the transport rawURL's scheme names and starts a Conn on
// it, with no MCP handshake: the scripted servers answer whatever comes.
func dialConn(ctx context.Context, rawURL, token string, o testOptions) (*Conn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	var t Transport
	switch u.Scheme {
	case "ws", "wss":
		t, err = DialWebSocket(ctx, rawURL, &WebSocketOptions{AuthToken: token, MaxMessageSize: o.maxSize, DialContext: o.dial, TLSConfig: o.tls})
	case "http", "https":
		t, err = DialSSE(ctx, rawURL, &SSEOptions{AuthToken: token, MaxMessageSize: o.maxSize, DialContext: o.dial, TLSConfig: o.tls})
	default:
		return nil, fmt.Errorf("scheme %q", u.Scheme)
	}
	if err != nil {
		return nil, err
	}
	ping := o.ping
	if ping == 0 {
		ping = -1
	}
	c, err := New(t, &Options{MaxMessageSize: o.maxSize, PingInterval: ping})
	if err != nil {
		t.Close()
		return nil, err
	}
	return c, nil
}

// mustDial is dialConn for a test that needs the connection.
func mustDial(t *testing.T, rawURL, token string, o testOptions) *Conn {
	t.Helper()
	c, err := dialConn(testCtx(t), rawURL, token, o)
	if err != nil {
		t.Fatalf("dialing %s: %v", rawURL, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// initialize sends initialize and decodes its answer.
func initialize(ctx context.Context, c *Conn) (*mcp.InitializeResult, error) {
	raw, err := c.Call(ctx, mcp.MethodInitialize, func(m *Message) error {
		return m.AppendJSON(mcp.InitializeParams{ProtocolVersion: mcp.ProtocolVersion, Capabilities: json.RawMessage("{}"), ClientInfo: mcp.Implementation{Name: "test", Version: "0"}})
	}, 0)
	if err != nil {
		return nil, err
	}
	var res mcp.InitializeResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// callTool calls a tool with args (nil: {}) as the idebridge client does.
func callTool(ctx context.Context, c *Conn, name string, args any, timeout time.Duration) (*mcp.ToolResult, error) {
	raw, err := c.Call(ctx, mcp.MethodCallTool, func(m *Message) error {
		m.AppendRaw(`{"name":`)
		m.AppendString(name)
		m.AppendRaw(`,"arguments":`)
		if args == nil {
			m.AppendRaw("{}")
		} else if err := m.AppendJSON(args); err != nil {
			return err
		}
		m.AppendRaw("}")
		return nil
	}, timeout)
	var rpcErr *mcp.Error
	if errors.As(err, &rpcErr) {
		return nil, &mcp.ToolError{Tool: name, Code: rpcErr.Code, Message: rpcErr.Message, Data: rpcErr.Data}
	}
	if err != nil {
		return nil, err
	}
	return mcp.DecodeToolResult(name, raw)
}

// testCtx is a context that ends with the test, so that a broken client
// fails the test instead of hanging it.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitGoroutines waits until at most n goroutines run; it fails the test if
// that never happens (a leak), never because of how long it took.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want <= %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
