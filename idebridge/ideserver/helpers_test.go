package ideserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

// testTimeout bounds every wait in the tests, so a bug fails instead of
// hanging; it is never an assertion about speed.
const testTimeout = 20 * time.Second

// startServer starts a server on loopback with its lockfile in a temporary
// directory and closes it (checking for leaked goroutines) at cleanup.
func startServer(t testing.TB, opts *ideserver.Options) *ideserver.Server {
	t.Helper()
	if opts == nil {
		opts = &ideserver.Options{}
	}
	if len(opts.WorkspaceFolders) == 0 {
		opts.WorkspaceFolders = []string{t.TempDir()}
	}
	if opts.LockfileDir == "" && !opts.NoLockfile {
		opts.LockfileDir = t.TempDir()
	}
	srv, err := ideserver.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	leakCheckOnce(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := srv.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return srv
}

var leakChecked sync.Map // testing.TB -> bool

// leakCheckOnce registers, once per test and before any server's own
// cleanup (cleanups run last-in first-out), a check that no server
// goroutine outlives the test's servers.
func leakCheckOnce(t testing.TB) {
	if _, loaded := leakChecked.LoadOrStore(t, true); loaded {
		return
	}
	t.Cleanup(func() {
		leakChecked.Delete(t)
		checkNoServerGoroutines(t)
	})
}

// checkNoServerGoroutines fails if a goroutine running server code is left
// after Close. Close waits for everything it started, so this holds at
// once; the short poll only lets net/http's own connection goroutines
// (which may call into our handler) unwind.
func checkNoServerGoroutines(t testing.TB) {
	t.Helper()
	var stacks string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		stacks = ""
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "idebridge/ideserver.") && !strings.Contains(g, "_test.go") {
				stacks += g + "\n\n"
			}
		}
		if stacks == "" {
			return
		}
	}
	t.Errorf("server goroutines left after Close:\n%s", stacks)
}

// client is a raw WebSocket MCP client: enough JSON-RPC to drive the server
// and see exactly what it sends.
type client struct {
	t  testing.TB
	c  *websocket.Conn
	in chan *jsonrpc.Message
	// errc gets the read loop's final error.
	errc chan error

	wmu    sync.Mutex
	mu     sync.Mutex
	nextID int
	// notes collects notifications seen while waiting for responses.
	notes []*jsonrpc.Message
}

func authHeader(token string) http.Header {
	h := http.Header{}
	if token != "" {
		h.Set(mcp.AuthHeader, token)
	}
	return h
}

func dial(t testing.TB, srv *ideserver.Server) *client {
	t.Helper()
	c, resp, err := dialRaw(srv.URL(), authHeader(srv.AuthToken()), nil)
	if err != nil {
		t.Fatalf("dial %s: %v (response %v)", srv.URL(), err, resp)
	}
	return newClient(t, c)
}

func dialRaw(url string, h http.Header, d *websocket.Dialer) (*websocket.Conn, *http.Response, error) {
	if d == nil {
		d = &websocket.Dialer{}
	}
	dd := *d
	dd.Subprotocols = []string{"mcp"}
	dd.Proxy = nil
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, resp, err := dd.DialContext(ctx, url, h)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	return c, resp, err
}

func newClient(t testing.TB, c *websocket.Conn) *client {
	cl := &client{t: t, c: c, in: make(chan *jsonrpc.Message, 1024), errc: make(chan error, 1)}
	c.SetReadLimit(-1)
	go func() {
		for {
			_, data, err := c.ReadMessage()
			if err != nil {
				close(cl.in)
				cl.errc <- err
				return
			}
			m, err := decodeServerMessage(data)
			if err != nil {
				t.Errorf("server sent an invalid message %.200q: %v", data, err)
				continue
			}
			cl.in <- m
		}
	}()
	t.Cleanup(func() { cl.close() })
	return cl
}

func (c *client) close() { c.c.Close() }

func (c *client) sendRaw(data []byte) {
	c.t.Helper()
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.c.WriteMessage(websocket.TextMessage, data); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *client) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendRaw(b)
}

// next returns the next message from the server.
func (c *client) next() *jsonrpc.Message {
	c.t.Helper()
	select {
	case m, ok := <-c.in:
		if !ok {
			c.t.Fatalf("connection closed while waiting for a message: %v", <-c.errc)
		}
		return m
	case <-time.After(testTimeout):
		c.t.Fatalf("no message from the server")
	}
	return nil
}

// request sends a request and returns its id.
func (c *client) request(method string, params any) json.RawMessage {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := json.RawMessage(fmt.Sprint(c.nextID))
	c.mu.Unlock()
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	c.send(m)
	return id
}

func (c *client) notify(method string, params any) {
	c.t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	c.send(m)
}

// wait returns the response with the given id, keeping notifications in
// c.notes; it fails on a response to another id.
func (c *client) wait(id json.RawMessage) *jsonrpc.Message {
	c.t.Helper()
	for {
		m := c.next()
		if m.IsNotification() {
			c.notes = append(c.notes, m)
			continue
		}
		if string(m.ID) != string(id) {
			c.t.Fatalf("got response for id %s while waiting for %s: %s", m.ID, id, mustMarshal(m))
		}
		return m
	}
}

func (c *client) call(method string, params any) *jsonrpc.Message {
	c.t.Helper()
	return c.wait(c.request(method, params))
}

// handshake performs Claude Code's handshake (docs/PROTOCOL.md, MCP
// handshake).
func (c *client) handshake(pid int) *jsonrpc.Message {
	c.t.Helper()
	res := c.call("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{"roots": map[string]any{}, "elicitation": map[string]any{}},
		"clientInfo":      map[string]any{"name": "test-agent", "version": "1.0"},
	})
	c.notify("notifications/initialized", nil)
	c.notify("ide_connected", map[string]any{"pid": pid})
	return res
}

// callTool calls a tool and returns its result, failing on a JSON-RPC error.
func (c *client) callTool(name string, args any) *toolResult {
	c.t.Helper()
	m := c.call("tools/call", map[string]any{"name": name, "arguments": args})
	if m.Error != nil {
		c.t.Fatalf("tools/call %s: %v", name, m.Error)
	}
	return decodeResult(c.t, m)
}

type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

func (r *toolResult) texts() []string {
	out := make([]string, len(r.Content))
	for i, c := range r.Content {
		out[i] = c.Text
	}
	return out
}

func decodeResult(t testing.TB, m *jsonrpc.Message) *toolResult {
	t.Helper()
	var r toolResult
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatalf("decoding tool result %s: %v", m.Result, err)
	}
	if r.Content == nil {
		t.Fatalf("tool result without content: %s", m.Result)
	}
	return &r
}

func mustMarshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// events records server events for tests to wait on.
type events struct {
	ch chan ideserver.Event
}

func newEvents() *events { return &events{ch: make(chan ideserver.Event, 256)} }

func (e *events) hook(ev ideserver.Event) { e.ch <- ev }

func (e *events) waitFor(t testing.TB, kind ideserver.EventKind) ideserver.Event {
	t.Helper()
	timeout := time.After(testTimeout)
	for {
		select {
		case ev := <-e.ch:
			if ev.Kind == kind {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %v event", kind)
		}
	}
}

// decodeServerMessage decodes a message from the server and checks its
// shape. It accepts an error response with a null id, which JSON-RPC 2.0
// prescribes for a request that could not be parsed (jsonrpc.Decode, made
// for clients, refuses it).
func decodeServerMessage(data []byte) (*jsonrpc.Message, error) {
	var m jsonrpc.Message
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	if m.JSONRPC != "2.0" {
		return nil, fmt.Errorf("jsonrpc %q", m.JSONRPC)
	}
	switch {
	case m.Method != "":
		if m.Result != nil || m.Error != nil {
			return nil, fmt.Errorf("notification with result or error")
		}
	case len(m.ID) == 0:
		return nil, fmt.Errorf("response without id")
	case (m.Result == nil) == (m.Error == nil):
		return nil, fmt.Errorf("response needs exactly one of result and error")
	case string(m.ID) == "null" && m.Error == nil:
		return nil, fmt.Errorf("result with a null id")
	}
	return &m, nil
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func isCloseCode(err error, code int) bool {
	var ce *websocket.CloseError
	return errors.As(err, &ce) && ce.Code == code
}
