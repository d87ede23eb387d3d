package idebridge

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

// fakeIDE is a scriptable IDE-side MCP server over a real gorilla WebSocket
// on loopback, for the behaviours a well-behaved server cannot be made to
// show (never answering, going half-open, dying mid-call, 1008, ...).
type fakeIDE struct {
	t     *testing.T
	srv   *httptest.Server
	URL   string
	Token string

	// Protocol answered to initialize; default 2024-11-05.
	Protocol string
	// Tools offered; PageSize > 0 splits tools/list into pages.
	Tools    []mcp.Tool
	PageSize int
	// AuthMode says how a bad token is refused: "400" (HTTP 400 at the
	// upgrade) or "1008" (close code 1008 right after it).
	AuthMode string
	// Handle, if set, sees every message first (on the read loop) and
	// returns true when it dealt with it.
	Handle func(c *fakeConn, m *jsonrpc.Message) bool
	// OnCall answers tools/call on its own goroutine; nil echoes the
	// arguments back as text.
	OnCall func(c *fakeConn, m *jsonrpc.Message, name string, args json.RawMessage)

	conns chan *fakeConn
	wg    sync.WaitGroup
	stop  chan struct{}
	mu    sync.Mutex
	all   []*fakeConn
}

type fakeConn struct {
	t        *testing.T
	ws       *websocket.Conn
	wmu      sync.Mutex
	Header   http.Header
	Received chan *jsonrpc.Message
	frozen   chan struct{} // closed by Freeze: the read loop stops
	done     chan struct{}
	once     sync.Once
}

func newFakeIDE(t *testing.T) *fakeIDE {
	f := &fakeIDE{t: t, Token: "secret-token", conns: make(chan *fakeConn, 16), stop: make(chan struct{})}
	up := websocket.Upgrader{Subprotocols: []string{"mcp"}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		good := r.Header.Get(mcp.AuthHeader) == f.Token
		if !good && f.AuthMode != "1008" {
			http.Error(w, "bad token", http.StatusBadRequest)
			return
		}
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		if !good {
			ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.ClosePolicyViolation, "Authentication failed"), time.Now().Add(time.Second))
			ws.Close()
			return
		}
		c := &fakeConn{t: t, ws: ws, Header: r.Header.Clone(), Received: make(chan *jsonrpc.Message, 4096),
			frozen: make(chan struct{}), done: make(chan struct{})}
		f.mu.Lock()
		select {
		case <-f.stop:
			f.mu.Unlock()
			ws.Close()
			return
		default:
		}
		f.all = append(f.all, c)
		f.wg.Add(1)
		f.mu.Unlock()
		defer f.wg.Done()
		ws.SetPingHandler(func(data string) error {
			select {
			case <-c.frozen:
				<-f.stop // half-open: no pong, no reading
				return websocket.ErrCloseSent
			default:
			}
			c.wmu.Lock()
			defer c.wmu.Unlock()
			return ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
		})
		f.conns <- c
		f.serve(c)
	}))
	f.URL = "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/"
	t.Cleanup(func() {
		f.mu.Lock()
		close(f.stop)
		for _, c := range f.all {
			c.ws.NetConn().Close()
		}
		f.mu.Unlock()
		f.srv.CloseClientConnections()
		f.srv.Close()
		f.wg.Wait()
	})
	return f
}

// conn returns the next connection the server accepted.
func (f *fakeIDE) conn() *fakeConn {
	f.t.Helper()
	select {
	case c := <-f.conns:
		return c
	case <-time.After(10 * time.Second):
		f.t.Fatal("no connection reached the fake IDE")
		return nil
	}
}

func (f *fakeIDE) serve(c *fakeConn) {
	defer close(c.done)
	defer c.ws.Close()
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		m, err := jsonrpc.Decode(data)
		if err != nil {
			c.t.Errorf("fake IDE: client sent an invalid message %q: %v", data, err)
			continue
		}
		c.Received <- m
		if f.Handle != nil && f.Handle(c, m) {
			goto next
		}
		switch m.Method {
		case "initialize":
			proto := f.Protocol
			if proto == "" {
				proto = "2024-11-05"
			}
			c.Reply(m.ID, map[string]any{
				"protocolVersion": proto,
				"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
				"serverInfo":      map[string]any{"name": "fake-ide", "version": "1.0"},
			})
		case "tools/list":
			f.listTools(c, m)
		case "tools/call":
			var p struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			json.Unmarshal(m.Params, &p)
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				if f.OnCall != nil {
					f.OnCall(c, m, p.Name, p.Arguments)
					return
				}
				c.Reply(m.ID, textResult(string(p.Arguments)))
			}()
		case "ping":
			c.Reply(m.ID, map[string]any{})
		}
	next:
		select {
		case <-c.frozen:
			<-f.stop // stuck until the test ends
			return
		default:
		}
	}
}

func (f *fakeIDE) listTools(c *fakeConn, m *jsonrpc.Message) {
	var p struct {
		Cursor string `json:"cursor"`
	}
	if len(m.Params) > 0 {
		json.Unmarshal(m.Params, &p)
	}
	start, _ := strconv.Atoi(p.Cursor)
	end := len(f.Tools)
	if f.PageSize > 0 && start+f.PageSize < end {
		end = start + f.PageSize
	}
	res := map[string]any{"tools": f.Tools[start:end]}
	if f.Tools == nil {
		res["tools"] = []mcp.Tool{}
	}
	if end < len(f.Tools) {
		res["nextCursor"] = strconv.Itoa(end)
	}
	c.Reply(m.ID, res)
}

func textResult(texts ...string) map[string]any {
	content := []map[string]any{}
	for _, t := range texts {
		content = append(content, map[string]any{"type": "text", "text": t})
	}
	return map[string]any{"content": content}
}

// Send writes raw bytes as one text frame.
func (c *fakeConn) Send(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.ws.WriteMessage(websocket.TextMessage, data)
}

func (c *fakeConn) sendJSON(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		c.t.Errorf("fake IDE: %v", err)
		return
	}
	c.Send(data)
}

// Reply answers request id with result.
func (c *fakeConn) Reply(id json.RawMessage, result any) {
	c.sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// ReplyError answers request id with a JSON-RPC error.
func (c *fakeConn) ReplyError(id json.RawMessage, code int, msg string) {
	c.sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
}

// Notify sends a notification.
func (c *fakeConn) Notify(method string, params any) {
	c.sendJSON(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// Freeze makes the server stop reading (and so stop answering pings) and
// stop writing: a half-open connection, as seen from the client.
func (c *fakeConn) Freeze() { c.once.Do(func() { close(c.frozen) }) }

// Kill drops the TCP connection without a close frame.
func (c *fakeConn) Kill() { c.ws.NetConn().Close() }

// waitFor returns the next received message with the given method (and,
// for tools/call, tool name when name is not empty).
func (c *fakeConn) waitFor(method, name string) *jsonrpc.Message {
	c.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m := <-c.Received:
			if m.Method != method {
				continue
			}
			if name != "" {
				var p struct {
					Name string `json:"name"`
				}
				json.Unmarshal(m.Params, &p)
				if p.Name != name {
					continue
				}
			}
			return m
		case <-timeout:
			c.t.Fatalf("fake IDE: no %s %s received", method, name)
			return nil
		}
	}
}

// testCtx is a context that ends with the test, so that a broken client
// fails the test instead of hanging it.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// dialFake connects a client to f with opts (nil: test defaults).
func dialFake(t *testing.T, f *fakeIDE, opts *ClientOptions) *Client {
	t.Helper()
	c, err := DialURL(testCtx(t), f.URL, f.Token, opts)
	if err != nil {
		t.Fatalf("DialURL: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
