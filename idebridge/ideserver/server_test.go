package ideserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/lockfile"
	"github.com/idebridge/idebridge/mcp"
)

func TestLockfileLifecycle(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(t.TempDir(), "ide")
	srv, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{ws}, LockfileDir: dir, IDEName: "Test IDE"})
	if err != nil {
		t.Fatal(err)
	}
	if srv.LockfilePath() != "" || srv.Port() != 0 || srv.URL() != "" {
		t.Fatalf("before Start: path %q port %d url %q", srv.LockfilePath(), srv.Port(), srv.URL())
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); !errors.Is(err, ideserver.ErrAlreadyStarted) {
		t.Errorf("second Start: %v, want ErrAlreadyStarted", err)
	}
	path := srv.LockfilePath()
	if want := filepath.Join(dir, srvPortName(srv)); path != want {
		t.Fatalf("lockfile %s, want %s", path, want)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("lockfile mode %v, want 0600", st.Mode().Perm())
	}
	dst, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if dst.Mode().Perm() != 0o700 {
		t.Errorf("lockfile dir mode %v, want 0700", dst.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lf, err := lockfile.Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	want := &lockfile.Lockfile{
		Port: srv.Port(), WorkspaceFolders: []string{ws}, PID: os.Getpid(), IDEName: "Test IDE",
		Transport: "ws", AuthToken: srv.AuthToken(), Path: path,
	}
	if diff := cmp.Diff(want, lf); diff != "" {
		t.Errorf("lockfile (-want +got):\n%s", diff)
	}
	if len(srv.AuthToken()) < 64 {
		t.Errorf("generated token %q is shorter than 32 bytes hex", srv.AuthToken())
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lockfile still there after Close: %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := srv.Start(context.Background()); !errors.Is(err, ideserver.ErrServerClosed) {
		t.Errorf("Start after Close: %v, want ErrServerClosed", err)
	}
	checkNoServerGoroutines(t)
}

func srvPortName(srv *ideserver.Server) string {
	return strings.TrimSuffix(strings.TrimPrefix(srv.URL(), "ws://127.0.0.1:"), "/") + ".lock"
}

func TestTokensDiffer(t *testing.T) {
	a := startServer(t, &ideserver.Options{NoLockfile: true})
	b := startServer(t, &ideserver.Options{NoLockfile: true})
	if a.AuthToken() == b.AuthToken() {
		t.Fatal("two servers generated the same token")
	}
	c := startServer(t, &ideserver.Options{NoLockfile: true, AuthToken: "fixed"})
	if c.AuthToken() != "fixed" {
		t.Fatalf("AuthToken %q, want the configured one", c.AuthToken())
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	ws := t.TempDir()
	file := filepath.Join(ws, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"0.0.0.0", "192.168.1.10", "example.com", "::", "10.0.0.1"} {
		_, err := ideserver.New(&ideserver.Options{Host: host, WorkspaceFolders: []string{ws}, NoLockfile: true})
		if !errors.Is(err, ideserver.ErrNotLoopback) {
			t.Errorf("Host %q: %v, want ErrNotLoopback", host, err)
		}
	}
	for _, host := range []string{"", "localhost", "127.0.0.1", "127.0.0.2", "::1", "[::1]"} {
		if _, err := ideserver.New(&ideserver.Options{Host: host, WorkspaceFolders: []string{ws}, NoLockfile: true}); err != nil {
			t.Errorf("Host %q: %v", host, err)
		}
	}
	bad := []ideserver.Options{
		{Transport: "stdio", WorkspaceFolders: []string{ws}, NoLockfile: true},
		{Port: 70000, WorkspaceFolders: []string{ws}, NoLockfile: true},
		{WorkspaceFolders: []string{filepath.Join(ws, "missing")}, NoLockfile: true},
		{WorkspaceFolders: []string{file}, NoLockfile: true},
		{ToolsPageSize: -1, WorkspaceFolders: []string{ws}, NoLockfile: true},
	}
	for _, o := range bad {
		if _, err := ideserver.New(&o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
}

func TestDefaultLockfileDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	// The default directory is used when LockfileDir is empty.
	cfg := t.TempDir()
	srv, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{t.TempDir()}, Getenv: env(map[string]string{"CLAUDE_CONFIG_DIR": cfg})})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if dir := filepath.Dir(srv.LockfilePath()); dir != filepath.Join(cfg, "ide") {
		t.Errorf("lockfile written in %s, want %s/ide", dir, cfg)
	}
}

func TestHandshake(t *testing.T) {
	ev := newEvents()
	srv := startServer(t, &ideserver.Options{OnEvent: ev.hook, ServerName: "test-ide", ServerVersion: "9.9"})
	c := dial(t, srv)
	if ev.waitFor(t, ideserver.EventConnected).Client.Transport != "ws" {
		t.Error("connected event without transport ws")
	}
	if got := c.c.Subprotocol(); got != "mcp" {
		t.Errorf("subprotocol %q, want mcp", got)
	}
	res := c.handshake(4242)
	var init struct {
		ProtocolVersion string         `json:"protocolVersion"`
		Capabilities    map[string]any `json:"capabilities"`
		ServerInfo      struct{ Name, Version string }
	}
	if err := json.Unmarshal(res.Result, &init); err != nil {
		t.Fatal(err)
	}
	if init.ProtocolVersion != "2024-11-05" {
		t.Errorf("protocolVersion %q, want 2024-11-05 for a 2025-11-25 client", init.ProtocolVersion)
	}
	if init.ServerInfo.Name != "test-ide" || init.ServerInfo.Version != "9.9" {
		t.Errorf("serverInfo %+v", init.ServerInfo)
	}
	if _, ok := init.Capabilities["tools"]; !ok {
		t.Errorf("capabilities %v lack tools", init.Capabilities)
	}
	if e := ev.waitFor(t, ideserver.EventInitialized); e.Client.Name != "test-agent" || e.Client.ProtocolVersion != "2025-11-25" {
		t.Errorf("initialized event client %+v", e.Client)
	}
	if e := ev.waitFor(t, ideserver.EventIDEConnected); e.Client.PID != 4242 {
		t.Errorf("ide_connected pid %d, want 4242", e.Client.PID)
	}
	clients := srv.Clients()
	if len(clients) != 1 || clients[0].PID != 4242 || clients[0].Name != "test-agent" || clients[0].Version != "1.0" {
		t.Errorf("Clients() = %+v", clients)
	}
	// ping answers {} by default.
	if m := c.call("ping", nil); m.Error != nil || string(m.Result) != "{}" {
		t.Errorf("ping: %s", mustMarshal(m))
	}
	c.close()
	if e := ev.waitFor(t, ideserver.EventDisconnected); e.Client.PID != 4242 {
		t.Errorf("disconnected event client %+v", e.Client)
	}
}

func TestConfiguredProtocolVersion(t *testing.T) {
	srv := startServer(t, &ideserver.Options{ProtocolVersion: "2025-06-18"})
	c := dial(t, srv)
	var init struct{ ProtocolVersion string }
	if err := json.Unmarshal(c.handshake(1).Result, &init); err != nil {
		t.Fatal(err)
	}
	if init.ProtocolVersion != "2025-06-18" {
		t.Errorf("protocolVersion %q, want the configured 2025-06-18", init.ProtocolVersion)
	}
}

func TestAuthToken(t *testing.T) {
	srv := startServer(t, nil)
	for name, h := range map[string]http.Header{
		"missing":   authHeader(""),
		"wrong":     authHeader("not-the-token"),
		"prefix":    authHeader(srv.AuthToken()[:10]),
		"longer":    authHeader(srv.AuthToken() + "x"),
		"bearer":    authHeader("Bearer " + srv.AuthToken()),
		"lowercase": authHeader(strings.ToUpper(srv.AuthToken())),
	} {
		c, resp, err := dialRaw(srv.URL(), h, nil)
		if err == nil {
			c.Close()
			t.Errorf("%s token: connected", name)
			continue
		}
		if resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s token: %v (response %v), want HTTP 400", name, err, resp)
		}
	}
	if n := len(srv.Clients()); n != 0 {
		t.Errorf("%d clients after refused dials", n)
	}
	dial(t, srv).handshake(1)
}

func TestHostAndOriginChecks(t *testing.T) {
	srv := startServer(t, nil)
	port := strings.TrimSuffix(strings.TrimPrefix(srv.URL(), "ws://127.0.0.1:"), "/")
	tests := []struct {
		name   string
		host   string // "" keeps the dialled one
		origin string // "" sends none
		ok     bool
	}{
		{"plain", "", "", true},
		{"localhost host", "localhost:" + port, "", true},
		{"ipv6 loopback host", "[::1]:" + port, "", true},
		{"loopback origin", "", "http://localhost:3000", true},
		{"loopback ip origin", "", "http://127.0.0.1:" + port, true},
		{"rebinding host", "evil.example:" + port, "", false},
		{"rebinding host no port", "evil.example", "", false},
		{"lan host", "192.168.1.2:" + port, "", false},
		{"foreign origin", "", "https://evil.example", false},
		{"null origin", "", "null", false},
		{"file origin", "", "file://", false},
		{"webview origin", "", "vscode-webview://abc", false},
		{"origin with loopback-looking name", "", "http://127.0.0.1.evil.example", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := authHeader(srv.AuthToken())
			if tt.origin != "" {
				h.Set("Origin", tt.origin)
			}
			if tt.host != "" {
				h.Set("Host", tt.host)
			}
			c, resp, err := dialRaw(srv.URL(), h, nil)
			if tt.ok {
				if err != nil {
					t.Fatalf("refused: %v (%v)", err, resp)
				}
				c.Close()
				return
			}
			if err == nil {
				c.Close()
				t.Fatal("accepted")
			}
			if resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("%v (response %v), want HTTP 403", err, resp)
			}
		})
	}
}

func TestUnknownMethodsAndBadMessages(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.handshake(1)

	m := c.call("resources/list", nil)
	if m.Error == nil || m.Error.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("unknown method: %s", mustMarshal(m))
	}
	m = c.call("tools/call", map[string]any{"name": "noSuchTool", "arguments": map[string]any{}})
	// The Neovim plugin's exact answer.
	if want := `{"code":-32601,"message":"Tool not found: noSuchTool"}`; mustMarshal(m.Error) != want {
		t.Errorf("unknown tool: %s, want error %s", mustMarshal(m), want)
	}
	c.sendRaw([]byte(`{"jsonrpc":"2.0","id":5,"method":`))
	if m := c.next(); m.Error == nil || m.Error.Code != jsonrpc.CodeParseError || string(m.ID) != "null" {
		t.Errorf("truncated JSON: %s", mustMarshal(m))
	}
	c.sendRaw([]byte(`[1,2]`))
	if m := c.next(); m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidRequest || string(m.ID) != "null" {
		t.Errorf("array: %s", mustMarshal(m))
	}
	c.sendRaw([]byte(`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`))
	if m := c.next(); m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("object id: %s", mustMarshal(m))
	}
	m = c.call("tools/call", "not an object")
	if m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("bad params: %s", mustMarshal(m))
	}
	// Responses and unknown notifications get no answer; the connection
	// stays usable.
	c.sendRaw([]byte(`{"jsonrpc":"2.0","id":77,"result":{}}`))
	c.notify("notifications/whatever", map[string]any{"x": 1})
	c.notify("notifications/cancelled", map[string]any{"requestId": 999})
	if m := c.call("ping", nil); m.Error != nil {
		t.Errorf("ping after noise: %s", mustMarshal(m))
	}
	// String ids come back as strings.
	c.sendRaw([]byte(`{"jsonrpc":"2.0","id":"abc","method":"ping"}`))
	if m := c.next(); string(m.ID) != `"abc"` {
		t.Errorf("string id answered as %s", m.ID)
	}
}

func TestRefusePing(t *testing.T) {
	srv := startServer(t, &ideserver.Options{RefusePing: true})
	c := dial(t, srv)
	c.handshake(1)
	m := c.call("ping", nil)
	// The Neovim plugin's answer.
	if want := `{"code":-32601,"message":"Method not found","data":"Unknown method: ping"}`; mustMarshal(m.Error) != want {
		t.Errorf("ping: %s, want error %s", mustMarshal(m), want)
	}
}

func TestToolsListPagination(t *testing.T) {
	for _, size := range []int{0, 1, 2, 3, 7, 100} {
		srv := startServer(t, &ideserver.Options{ToolsPageSize: size, NoLockfile: true})
		c := dial(t, srv)
		c.handshake(1)
		var names []string
		cursor := ""
		pages := 0
		for {
			var params any
			if cursor != "" {
				params = map[string]any{"cursor": cursor}
			}
			m := c.call("tools/list", params)
			if m.Error != nil {
				t.Fatalf("page size %d: %v", size, m.Error)
			}
			var page struct {
				Tools []struct {
					Name        string          `json:"name"`
					Description string          `json:"description"`
					InputSchema json.RawMessage `json:"inputSchema"`
				} `json:"tools"`
				NextCursor *string `json:"nextCursor"`
			}
			if err := json.Unmarshal(m.Result, &page); err != nil {
				t.Fatal(err)
			}
			pages++
			if size > 0 && len(page.Tools) > size {
				t.Errorf("page size %d: page of %d tools", size, len(page.Tools))
			}
			for _, tl := range page.Tools {
				names = append(names, tl.Name)
				var schema map[string]any
				if err := json.Unmarshal(tl.InputSchema, &schema); err != nil || schema["type"] != "object" {
					t.Errorf("tool %s schema %s", tl.Name, tl.InputSchema)
				}
			}
			if page.NextCursor == nil {
				break
			}
			if *page.NextCursor == "" {
				t.Fatal("empty nextCursor")
			}
			cursor = *page.NextCursor
		}
		want := slices.DeleteFunc(ideserver.DefaultTools(), func(n string) bool { return n == "close_tab" })
		if !slices.Equal(names, want) {
			t.Errorf("page size %d: tools %v, want %v", size, names, want)
		}
		if size > 0 {
			if wantPages := (len(want) + size - 1) / size; pages != wantPages {
				t.Errorf("page size %d: %d pages, want %d", size, pages, wantPages)
			}
		}
		for _, bad := range []string{"garbage", "b2Zmc2V0Ojk5", "!!"} {
			if m := c.call("tools/list", map[string]any{"cursor": bad}); m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("cursor %q: %s", bad, mustMarshal(m))
			}
		}
	}
}

func TestNotifyBroadcast(t *testing.T) {
	srv := startServer(t, nil)
	if err := srv.Notify("", nil); err == nil {
		t.Error("Notify without a method succeeded")
	}
	a, b := dial(t, srv), dial(t, srv)
	a.handshake(1)
	b.handshake(2)
	uninit := dial(t, srv) // never initializes: gets no notifications
	sel := map[string]any{
		"text": "x", "filePath": "/p/main.go", "fileUrl": "file:///p/main.go",
		"selection": map[string]any{"start": map[string]int{"line": 1, "character": 0}, "end": map[string]int{"line": 1, "character": 1}, "isEmpty": false},
	}
	for i := range 3 {
		if err := srv.Notify("selection_changed", sel); err != nil {
			t.Fatal(err)
		}
		if err := srv.Notify("at_mentioned", map[string]any{"filePath": "/p/main.go", "lineStart": i, "lineEnd": i}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []*client{a, b} {
		for i := range 3 {
			m := c.next()
			if m.Method != "selection_changed" || !m.IsNotification() {
				t.Fatalf("got %s, want selection_changed", mustMarshal(m))
			}
			var p map[string]any
			if err := json.Unmarshal(m.Params, &p); err != nil || p["filePath"] != "/p/main.go" {
				t.Errorf("params %s", m.Params)
			}
			m = c.next()
			var at struct{ LineStart int }
			if m.Method != "at_mentioned" || json.Unmarshal(m.Params, &at) != nil || at.LineStart != i {
				t.Fatalf("got %s, want at_mentioned %d", mustMarshal(m), i)
			}
		}
	}
	if m := uninit.call("ping", nil); m.Error != nil {
		t.Errorf("ping: %s", mustMarshal(m))
	}
	if len(uninit.notes) != 0 {
		t.Errorf("uninitialized client got notifications: %v", uninit.notes)
	}
	// Raw params pass through; nil params are omitted.
	if err := srv.Notify("log_event", json.RawMessage(`{"eventName":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if err := srv.Notify("custom/empty", nil); err != nil {
		t.Fatal(err)
	}
	if m := a.next(); string(m.Params) != `{"eventName":"x"}` {
		t.Errorf("raw params %s", m.Params)
	}
	if m := a.next(); m.Method != "custom/empty" || m.Params != nil {
		t.Errorf("nil params: %s", mustMarshal(m))
	}
}

func TestNotifyLifecycleErrors(t *testing.T) {
	srv, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{t.TempDir()}, NoLockfile: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Notify("x", nil); !errors.Is(err, ideserver.ErrNotStarted) {
		t.Errorf("before Start: %v", err)
	}
	if err := srv.Notify("x", func() {}); err == nil {
		t.Error("unencodable params accepted")
	}
	srv.Close()
	if err := srv.Notify("x", nil); !errors.Is(err, ideserver.ErrServerClosed) {
		t.Errorf("after Close: %v", err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	srv := startServer(t, nil)
	if err := srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: "echo"}, Handler: echoHandler}); err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv)
	c.handshake(1)
	const n = 64
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.send(map[string]any{"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call",
				"params": map[string]any{"name": "echo", "arguments": map[string]any{"text": strings.Repeat("x", i)}}})
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for range n {
		m := c.next()
		var id int
		if err := json.Unmarshal(m.ID, &id); err != nil {
			t.Fatalf("id %s", m.ID)
		}
		r := decodeResult(t, m)
		if want := strings.Repeat("x", id-1000); len(r.Content) != 1 || r.Content[0].Text != want {
			t.Errorf("id %d: %v", id, r.texts())
		}
		if seen[string(m.ID)] {
			t.Errorf("id %s answered twice", m.ID)
		}
		seen[string(m.ID)] = true
	}
}

func echoHandler(_ context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
	var a struct{ Text string }
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	return mcp.TextResult(a.Text), nil
}

func TestBinaryFrameClosesConnection(t *testing.T) {
	ev := newEvents()
	srv := startServer(t, &ideserver.Options{OnEvent: ev.hook})
	c := dial(t, srv)
	c.handshake(1)
	if err := c.c.WriteMessage(websocket.BinaryMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); err != nil {
		t.Fatal(err)
	}
	for range c.in {
	}
	if err := <-c.errc; !websocket.IsCloseError(err, websocket.CloseUnsupportedData) {
		t.Errorf("read error %v, want close 1003", err)
	}
	if e := ev.waitFor(t, ideserver.EventDisconnected); e.Err == nil {
		t.Error("disconnect event without an error")
	}
}
