package ideserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

// httpMCP serves srv over Streamable HTTP on ln for the test's life.
type httpMCP struct {
	t      *testing.T
	url    string
	token  string
	client *http.Client
}

func serveHTTP(t *testing.T, srv *ideserver.Server, ln net.Listener, client *http.Client, url string) *httpMCP {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeStreamableHTTP(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) && !errors.Is(err, ideserver.ErrServerClosed) {
			t.Errorf("ServeStreamableHTTP: %v", err)
		}
	})
	return &httpMCP{t: t, url: url, token: srv.AuthToken(), client: client}
}

func serveHTTPTCP(t *testing.T, srv *ideserver.Server) *httpMCP {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveHTTP(t, srv, ln, &http.Client{Timeout: testTimeout}, "http://"+ln.Addr().String()+ideserver.MCPPath)
}

// post sends body with the token and headers; it returns the response
// and its body read whole.
func (h *httpMCP) post(body string, hdr map[string]string) (*http.Response, string) {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.url, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+h.token)
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatalf("POST: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		h.t.Fatal(err)
	}
	return resp, string(b)
}

// modernPost sends a 2026-07-28 request with the headers it needs.
func (h *httpMCP) modernPost(id int, method string, params map[string]any, hdr map[string]string) (*http.Response, *jsonrpc.Message) {
	h.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if params["_meta"] == nil {
		params["_meta"] = modernMeta(mcp.ModernProtocolVersion)
	}
	all := map[string]string{mcp.HeaderProtocolVersion: mcp.ModernProtocolVersion, mcp.HeaderMethod: method}
	if name, ok := params["name"].(string); ok {
		all[mcp.HeaderName] = name
	}
	for k, v := range hdr {
		all[k] = v
	}
	resp, body := h.post(mustMarshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}), all)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		h.t.Fatalf("%s answered %s: %q", method, ct, body)
	}
	m, err := decodeServerMessage([]byte(body))
	if err != nil {
		h.t.Fatalf("%s answered %q: %v", method, body, err)
	}
	return resp, m
}

// The modern era over Streamable HTTP: every POST on its own, headers
// checked against the body, errors with the statuses the specification
// gives them; the token, Host and Origin checked first.
func TestStreamableHTTPModern(t *testing.T) {
	srv := newStreamServer(t, &ideserver.Options{NoDefaultTools: true})
	mustRegister(t, srv, echoTool())
	h := serveHTTPTCP(t, srv)

	resp, m := h.modernPost(1, mcp.MethodDiscover, nil, nil)
	if resp.StatusCode != 200 || m.Error != nil || !strings.Contains(string(m.Result), `"supportedVersions":["2026-07-28"`) {
		t.Fatalf("server/discover: %d %s", resp.StatusCode, mustMarshal(m))
	}
	if _, m = h.modernPost(2, mcp.MethodListTools, nil, nil); m.Error != nil || !strings.Contains(string(m.Result), `"name":"echo"`) ||
		!strings.Contains(string(m.Result), `"ttlMs":`) {
		t.Fatalf("tools/list: %s", mustMarshal(m))
	}
	_, m = h.modernPost(3, mcp.MethodCallTool, map[string]any{"name": "echo", "arguments": map[string]int{"x": 2}}, nil)
	if m.Error != nil || !strings.Contains(string(m.Result), `"resultType":"complete"`) || !strings.Contains(string(m.Result), `{\"x\":2} from modern-test`) {
		t.Fatalf("tools/call: %s", mustMarshal(m))
	}
	// Mcp-Name in the Base64 sentinel form.
	if _, m = h.modernPost(4, mcp.MethodCallTool, map[string]any{"name": "echo"}, map[string]string{mcp.HeaderName: "=?base64?ZWNobw==?="}); m.Error != nil {
		t.Fatalf("tools/call with a Base64 Mcp-Name: %s", mustMarshal(m))
	}

	for _, tc := range []struct {
		name   string
		method string
		params map[string]any
		hdr    map[string]string
		status int
		code   int64
	}{
		{"version header missing", mcp.MethodListTools, nil, map[string]string{mcp.HeaderProtocolVersion: ""}, 400, mcp.CodeHeaderMismatch},
		{"version header differs", mcp.MethodListTools, nil, map[string]string{mcp.HeaderProtocolVersion: "2025-11-25"}, 400, mcp.CodeHeaderMismatch},
		{"method header differs", mcp.MethodListTools, nil, map[string]string{mcp.HeaderMethod: "tools/call"}, 400, mcp.CodeHeaderMismatch},
		{"name header differs", mcp.MethodCallTool, map[string]any{"name": "echo"}, map[string]string{mcp.HeaderName: "other"}, 400, mcp.CodeHeaderMismatch},
		{"unsupported version", mcp.MethodListTools, map[string]any{"_meta": modernMeta("2099-01-01")},
			map[string]string{mcp.HeaderProtocolVersion: "2099-01-01"}, 400, mcp.CodeUnsupportedProtocolVersion},
		{"no capabilities", mcp.MethodListTools, map[string]any{"_meta": map[string]any{mcp.MetaProtocolVersion: mcp.ModernProtocolVersion}}, nil, 400, mcp.CodeInvalidParams},
		{"unknown method", "resources/list", nil, nil, 404, mcp.CodeMethodNotFound},
		{"initialize, removed in 2026-07-28", mcp.MethodInitialize, nil, nil, 404, mcp.CodeMethodNotFound},
		{"unknown tool", mcp.MethodCallTool, map[string]any{"name": "nope"}, nil, 200, mcp.CodeInvalidParams},
	} {
		resp, m := h.modernPost(9, tc.method, tc.params, tc.hdr)
		if resp.StatusCode != tc.status || m.Error == nil || m.Error.Code != tc.code || string(m.ID) != "9" {
			t.Errorf("%s: %d %s; want %d and code %d", tc.name, resp.StatusCode, mustMarshal(m), tc.status, tc.code)
		}
	}

	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	for _, tc := range []struct {
		name   string
		hdr    map[string]string
		status int
	}{
		{"no token", map[string]string{"Authorization": ""}, 401},
		{"wrong token", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"remote origin", map[string]string{"Origin": "http://evil.example"}, 403},
		{"remote host", map[string]string{"Host": "evil.example"}, 403},
		{"no session and no _meta", nil, 400},
		{"unknown session", map[string]string{mcp.HeaderSessionID: "0123"}, 404},
		{"not JSON", map[string]string{"Content-Type": "text/plain"}, 415},
	} {
		req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(list))
		req.Header.Set("Authorization", "Bearer "+h.token)
		req.Header.Set("Content-Type", "application/json")
		for k, v := range tc.hdr {
			if k == "Host" {
				req.Host = v
			} else if v == "" {
				req.Header.Del(k)
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.status)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, h.url, nil)
	req.Header.Set("Authorization", "Bearer "+h.token)
	if resp, err := h.client.Do(req); err != nil || resp.StatusCode != 405 {
		t.Errorf("GET: %v %v", resp, err)
	}
}

// The legacy era over Streamable HTTP: initialize opens a session whose id
// later POSTs carry; DELETE ends it.
func TestStreamableHTTPLegacySession(t *testing.T) {
	srv := newStreamServer(t, &ideserver.Options{NoDefaultTools: true, ProtocolVersion: mcp.ProtocolVersion, NegotiateProtocolVersion: true})
	mustRegister(t, srv, echoTool())
	h := serveHTTPTCP(t, srv)
	resp, body := h.post(mustMarshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "legacy", "version": "1"}}}), nil)
	sid := resp.Header.Get(mcp.HeaderSessionID)
	if resp.StatusCode != 200 || sid == "" || !strings.Contains(body, `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize: %d %q session %q", resp.StatusCode, body, sid)
	}
	hdr := map[string]string{mcp.HeaderSessionID: sid, mcp.HeaderProtocolVersion: "2025-06-18"}
	if resp, _ := h.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr); resp.StatusCode != 202 {
		t.Fatalf("notifications/initialized: %d", resp.StatusCode)
	}
	resp, body = h.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"k":"v"}}}`, hdr)
	if resp.StatusCode != 200 || !strings.Contains(body, `{\"k\":\"v\"} from legacy@2025-06-18`) || strings.Contains(body, "resultType") {
		t.Fatalf("tools/call: %d %q", resp.StatusCode, body)
	}
	if got := srv.Clients(); len(got) != 1 || got[0].Transport != ideserver.TransportStreamableHTTP || got[0].Name != "legacy" {
		t.Errorf("Clients: %+v", got)
	}
	req, _ := http.NewRequest(http.MethodDelete, h.url, nil)
	req.Header.Set("Authorization", "Bearer "+h.token)
	req.Header.Set(mcp.HeaderSessionID, sid)
	if resp, err := h.client.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	if resp, _ := h.post(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, hdr); resp.StatusCode != 404 {
		t.Fatalf("a request of an ended session: %d", resp.StatusCode)
	}
	if got := srv.Clients(); len(got) != 0 {
		t.Errorf("Clients after DELETE: %+v", got)
	}
}

// Over a unix socket, with progress: a call whose request carries a
// progress token is answered with an event stream, its progress before
// its answer; closing the POST cancels a running call.
func TestStreamableHTTPUnixProgressCancel(t *testing.T) {
	dir, err := os.MkdirTemp("", "idb-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "mcp.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	cancelled := make(chan error, 1)
	started := make(chan struct{}, 1)
	srv := newStreamServer(t, &ideserver.Options{NoDefaultTools: true, ProgressInterval: -1})
	mustRegister(t, srv, ideserver.Tool{
		Tool: mcp.Tool{Name: "work"},
		Handler: func(ctx context.Context, c *ideserver.ToolCall) (*mcp.ToolResult, error) {
			ideserver.ReportProgress(ctx, 1, 2, "half")
			ideserver.ReportProgress(ctx, 2, 2, "all")
			if string(c.Arguments) == `{"block":true}` {
				started <- struct{}{}
				<-ctx.Done()
				cancelled <- context.Cause(ctx)
				return nil, ctx.Err()
			}
			return mcp.TextResult("done"), nil
		},
	})
	client := &http.Client{Timeout: testTimeout, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
	h := serveHTTP(t, srv, ln, client, "http://localhost"+ideserver.MCPPath)
	meta := modernMeta(mcp.ModernProtocolVersion)
	meta["progressToken"] = "p1"
	resp, body := h.post(mustMarshal(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "tools/call",
		"params": map[string]any{"name": "work", "_meta": meta}}),
		map[string]string{mcp.HeaderProtocolVersion: mcp.ModernProtocolVersion, mcp.HeaderMethod: "tools/call", mcp.HeaderName: "work"})
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("progress call: %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var events []string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			events = append(events, d)
		}
	}
	if len(events) != 3 || !strings.Contains(events[0], `"progress":1,"total":2,"message":"half"`) ||
		!strings.Contains(events[1], `"progress":2`) || !strings.Contains(events[2], `"id":5,"result":{"resultType":"complete"`) {
		t.Fatalf("events:\n%s", strings.Join(events, "\n"))
	}

	// A POST the client gives up on cancels its call.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.url, strings.NewReader(
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"work","arguments":{"block":true},"_meta":`+mustMarshal(modernMeta(mcp.ModernProtocolVersion))+`}}`))
	req.Header.Set("Authorization", "Bearer "+h.token)
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.ModernProtocolVersion)
	req.Header.Set(mcp.HeaderMethod, "tools/call")
	req.Header.Set(mcp.HeaderName, "work")
	errc := make(chan error, 1)
	go func() {
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	select {
	case <-started:
	case <-time.After(testTimeout):
		t.Fatal("the blocking call did not start")
	}
	cancel()
	<-errc
	select {
	case cause := <-cancelled:
		if !errors.Is(cause, ideserver.ErrClientGone) {
			t.Errorf("cancelled with %v", cause)
		}
	case <-time.After(testTimeout):
		t.Fatal("closing the POST did not cancel the call")
	}
}

// The endpoint file holds what a client needs, for the user alone.
func TestWriteEndpointFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run", "mcp.json")
	e := &ideserver.Endpoint{URL: "http://127.0.0.1:1/mcp", Transport: "streamable-http", AuthToken: "tok", PID: 7}
	if err := ideserver.WriteEndpointFile(path, e); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", st.Mode(), err)
	}
	if dst, _ := os.Stat(filepath.Dir(path)); dst.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v", dst.Mode())
	}
	var got ideserver.Endpoint
	b, _ := os.ReadFile(path)
	if json.Unmarshal(b, &got) != nil || got.AuthToken != "tok" || got.URL != e.URL {
		t.Errorf("file %s", b)
	}
}
