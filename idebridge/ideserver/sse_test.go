package ideserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/lockfile"
)

type sseEvent struct {
	name string // "" for a comment
	data string
}

// sseClient is a raw legacy-SSE MCP client.
type sseClient struct {
	t        testing.TB
	base     string // http://127.0.0.1:port
	token    string
	endpoint string
	body     interface{ Close() error }
	events   chan sseEvent
	nextID   int
}

var noProxy = &http.Client{Transport: &http.Transport{Proxy: nil}}

func sseGet(url string, h http.Header) (*http.Response, error) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return nil, err
	}
	req.Header = h
	req.Header.Set("Accept", "text/event-stream")
	return noProxy.Do(req)
}

func dialSSE(t testing.TB, srv *ideserver.Server) *sseClient {
	t.Helper()
	resp, err := sseGet(srv.URL(), authHeader(srv.AuthToken()))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		resp.Body.Close()
		t.Fatalf("GET /sse: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	c := &sseClient{t: t, base: strings.TrimSuffix(srv.URL(), "/sse"), token: srv.AuthToken(), body: resp.Body, events: make(chan sseEvent, 1024)}
	t.Cleanup(func() { resp.Body.Close() })
	go func() {
		defer close(c.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		var ev sseEvent
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" || data != nil {
					ev.data = strings.Join(data, "\n")
					c.events <- ev
				}
				ev, data = sseEvent{}, nil
			case strings.HasPrefix(line, ":"):
				c.events <- sseEvent{data: line}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			default:
				t.Errorf("unexpected SSE line %q", line)
			}
		}
	}()
	ev := c.nextEvent()
	if ev.name != "endpoint" || !strings.HasPrefix(ev.data, "/messages?session=") {
		t.Fatalf("first event %+v, want endpoint", ev)
	}
	c.endpoint = ev.data
	return c
}

// nextEvent returns the next event or comment; ok false at end of stream.
func (c *sseClient) nextEvent() sseEvent {
	c.t.Helper()
	select {
	case ev, ok := <-c.events:
		if !ok {
			c.t.Fatal("SSE stream ended")
		}
		return ev
	case <-time.After(testTimeout):
		c.t.Fatal("no SSE event")
	}
	return sseEvent{}
}

// next returns the next JSON-RPC message, skipping comments.
func (c *sseClient) next() *jsonrpc.Message {
	c.t.Helper()
	for {
		ev := c.nextEvent()
		if ev.name == "" {
			continue
		}
		if ev.name != "message" {
			c.t.Fatalf("event %q, want message", ev.name)
		}
		m, err := decodeServerMessage([]byte(ev.data))
		if err != nil {
			c.t.Fatalf("bad message %q: %v", ev.data, err)
		}
		return m
	}
}

func (c *sseClient) postRaw(body []byte, h http.Header) *http.Response {
	c.t.Helper()
	req, err := http.NewRequest("POST", c.base+c.endpoint, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if h != nil {
		req.Header = h
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := noProxy.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func (c *sseClient) post(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	if resp := c.postRaw(b, authHeader(c.token)); resp.StatusCode != http.StatusAccepted {
		c.t.Fatalf("POST: %s", resp.Status)
	}
}

func (c *sseClient) call(method string, params any) *jsonrpc.Message {
	c.t.Helper()
	c.nextID++
	c.post(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	for {
		m := c.next()
		if m.IsNotification() {
			continue
		}
		if want, _ := json.Marshal(c.nextID); string(m.ID) != string(want) {
			c.t.Fatalf("response to %s while waiting for %d", m.ID, c.nextID)
		}
		return m
	}
}

func TestSSEFlow(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "main.go"), "package main\n")
	ev := newEvents()
	p := newBlockingPolicy()
	srv := startServer(t, &ideserver.Options{Transport: "sse", WorkspaceFolders: []string{ws}, OnEvent: ev.hook, DiffPolicy: p, PingInterval: 20 * time.Millisecond})
	if !strings.HasSuffix(srv.URL(), "/sse") || srv.Transport() != "sse" {
		t.Fatalf("URL %s transport %s", srv.URL(), srv.Transport())
	}
	data, err := os.ReadFile(srv.LockfilePath())
	if err != nil {
		t.Fatal(err)
	}
	if lf, err := lockfile.Parse(srv.LockfilePath(), data); err != nil || lf.Transport != lockfile.TransportSSE || !strings.Contains(string(data), `"transport":"sse"`) {
		t.Fatalf("lockfile %s: %v", data, err)
	}
	c := dialSSE(t, srv)
	if e := ev.waitFor(t, ideserver.EventConnected); e.Client.Transport != "sse" {
		t.Errorf("connected %+v", e.Client)
	}
	m := c.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "sse-agent", "version": "1"}})
	if !strings.Contains(string(m.Result), `"protocolVersion":"2024-11-05"`) {
		t.Errorf("initialize: %s", m.Result)
	}
	c.post(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	c.post(map[string]any{"jsonrpc": "2.0", "method": "ide_connected", "params": map[string]any{"pid": 31}})
	if e := ev.waitFor(t, ideserver.EventIDEConnected); e.Client.PID != 31 || e.Client.Name != "sse-agent" {
		t.Errorf("ide_connected %+v", e.Client)
	}
	m = c.call("tools/call", map[string]any{"name": "openFile", "arguments": map[string]any{"filePath": "main.go"}})
	if r := decodeResult(t, m); len(r.Content) != 1 || !strings.Contains(r.Content[0].Text, `"lineCount":1`) {
		t.Errorf("openFile: %s", m.Result)
	}
	if err := srv.Notify("selection_changed", map[string]any{"filePath": "x"}); err != nil {
		t.Fatal(err)
	}
	if m := c.next(); m.Method != "selection_changed" {
		t.Errorf("notification %s", mustMarshal(m))
	}
	// Keep-alive comments arrive between messages.
	for {
		if ev := c.nextEvent(); ev.name == "" && strings.HasPrefix(ev.data, ":") {
			break
		}
	}
	// A pending openDiff is answered DIFF_REJECTED when the server closes,
	// and then the stream ends.
	c.nextID++
	c.post(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": "tools/call", "params": map[string]any{"name": "openDiff", "arguments": openDiffArgs(filepath.Join(ws, "main.go"), "x", "tab")}})
	<-p.started
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if m := c.next(); m.Error != nil || !slices.Equal(decodeResult(t, m).texts(), []string{"DIFF_REJECTED", "tab"}) {
		t.Errorf("pending diff at Close: %s", mustMarshal(m))
	}
	for ev := range c.events {
		if ev.name != "" {
			t.Errorf("event after Close: %+v", ev)
		}
	}
	ev.waitFor(t, ideserver.EventDisconnected)
}

func TestSSEAuthAndRouting(t *testing.T) {
	srv := startServer(t, &ideserver.Options{Transport: "sse", MaxMessageSize: 1 << 16})
	for name, h := range map[string]http.Header{"missing": authHeader(""), "wrong": authHeader("nope")} {
		resp, err := sseGet(srv.URL(), h)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s token: %s, want 401", name, resp.Status)
		}
	}
	h := authHeader(srv.AuthToken())
	h.Set("Origin", "https://evil.example")
	if resp, err := sseGet(srv.URL(), h); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign origin: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	c := dialSSE(t, srv)
	ping := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	// The session id authorises a POST; a token, if sent, must be right.
	if resp := c.postRaw(ping, http.Header{}); resp.StatusCode != http.StatusAccepted {
		t.Errorf("POST without token: %s", resp.Status)
	}
	if m := c.next(); string(m.Result) != "{}" {
		t.Errorf("ping: %s", mustMarshal(m))
	}
	if resp := c.postRaw(ping, authHeader("wrong")); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST with a wrong token: %s", resp.Status)
	}
	if resp := c.postRaw(bytes.Repeat([]byte("x"), 1<<17), authHeader(c.token)); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("oversize POST: %s", resp.Status)
	}
	bad := *c
	bad.endpoint = "/messages?session=0123456789abcdef0123456789abcdef"
	if resp := bad.postRaw(ping, authHeader(c.token)); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown session: %s", resp.Status)
	}
	bad.endpoint = "/messages"
	if resp := bad.postRaw(ping, authHeader(c.token)); resp.StatusCode != http.StatusNotFound {
		t.Errorf("no session: %s", resp.Status)
	}
	for _, tt := range []struct{ method, path string }{{"GET", "/messages"}, {"POST", "/sse"}, {"GET", "/"}, {"GET", "/other"}} {
		req, _ := http.NewRequestWithContext(context.Background(), tt.method, c.base+tt.path, nil)
		req.Header = authHeader(c.token)
		resp, err := noProxy.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("%s %s: %s", tt.method, tt.path, resp.Status)
		}
	}
	// A WebSocket server has no SSE endpoints.
	wsSrv := startServer(t, nil)
	resp, err := sseGet(strings.Replace(wsSrv.URL(), "ws://", "http://", 1)+"sse", authHeader(wsSrv.AuthToken()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /sse on a WebSocket server: %s", resp.Status)
	}
}

func TestSSEClientGoesAway(t *testing.T) {
	ev := newEvents()
	p := newBlockingPolicy()
	srv := startServer(t, &ideserver.Options{Transport: "sse", OnEvent: ev.hook, DiffPolicy: p})
	c := dialSSE(t, srv)
	c.call("initialize", map[string]any{})
	c.post(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": map[string]any{"name": "openDiff", "arguments": openDiffArgs(filepath.Join(srv.WorkspaceFolders()[0], "f"), "x", "t")}})
	<-p.started
	c.body.Close()
	ev.waitFor(t, ideserver.EventDisconnected)
	if err := recvErr(t, p.ended); err == nil {
		t.Error("policy context not cancelled")
	}
	// Its session is gone.
	if resp := c.postRaw([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST after the stream closed: %s", resp.Status)
	}
}
