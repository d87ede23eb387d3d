package warm

import (
	"bytes"
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
)

// httpMCP is a Streamable HTTP MCP client of the runtime's, in the
// legacy era (initialize opens a session).
type httpMCP struct {
	t     *testing.T
	c     *http.Client
	url   string // with its project parameter
	token string // "" on the unix socket
	host  string // the Host header ("" : the URL's)
	sid   string
	id    int
}

func tcpClient(t *testing.T, st *Status, dir string) *httpMCP {
	t.Helper()
	if st.HTTP == nil || st.HTTP.URL == "" || st.HTTP.TokenFile == "" {
		t.Fatalf("status has no TCP endpoint: %+v", st.HTTP)
	}
	tok, err := ReadHTTPToken(st.HTTP.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	return &httpMCP{t: t, c: &http.Client{Timeout: testTimeout}, url: HTTPURL(st.HTTP.URL, dir), token: tok}
}

func unixClient(t *testing.T, socket, dir string) *httpMCP {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &httpMCP{t: t, c: &http.Client{Timeout: testTimeout, Transport: tr}, url: HTTPURL("http://localhost"+HTTPPath, dir)}
}

// do sends one request; it returns the status and the JSON-RPC message
// of the answer (the last event of an event stream), or the body.
func (h *httpMCP) do(method string, body any) (int, []byte) {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.url, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if h.host != "" {
		req.Host = h.host
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	if h.sid != "" {
		req.Header.Set("Mcp-Session-Id", h.sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := h.c.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, h.url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var last []byte
		for line := range bytes.Lines(b) {
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				last = bytes.TrimSpace(d)
			}
		}
		b = last
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		h.sid = id
	}
	return resp.StatusCode, b
}

func (h *httpMCP) rpc(method string, params any) (int, []byte) {
	h.id++
	return h.do(http.MethodPost, map[string]any{"jsonrpc": "2.0", "id": h.id, "method": method, "params": params})
}

func (h *httpMCP) initialize(name string) {
	h.t.Helper()
	code, b := h.rpc("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": name, "version": "1"}})
	if code != http.StatusOK || h.sid == "" {
		h.t.Fatalf("initialize: %d %s", code, b)
	}
	if code, b := h.do(http.MethodPost, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); code != http.StatusAccepted {
		h.t.Fatalf("notifications/initialized: %d %s", code, b)
	}
}

// call calls a tool and returns its text.
func (h *httpMCP) call(name string, args map[string]any) string {
	h.t.Helper()
	code, b := h.rpc("tools/call", map[string]any{"name": name, "arguments": args})
	var m struct {
		Result struct {
			Content []struct{ Text string }
			IsError bool
		}
	}
	if code != http.StatusOK || json.Unmarshal(b, &m) != nil || m.Result.IsError || len(m.Result.Content) == 0 {
		h.t.Fatalf("%s %v: %d %s", name, args, code, b)
	}
	return m.Result.Content[0].Text
}

// httpServe runs a runtime with TCP on a loopback port and returns it
// with its status.
func httpServe(t *testing.T, o *ServeOptions) (*Options, *Status, chan error) {
	t.Helper()
	if o.Dir == "" {
		o.Dir = runtimeDir(t)
	}
	o.Build = "b1"
	if o.Idle == 0 {
		o.Idle = -1
	}
	if o.HTTP.Addr == "" {
		o.HTTP.Addr = "127.0.0.1:0"
	}
	_, done, _ := serveInProcess(t, o)
	co := &Options{Dir: o.Dir, Build: "b1"}
	st, err := GetStatus(context.Background(), co)
	if err != nil {
		t.Fatal(err)
	}
	return co, st, done
}

// fixedProject makes every HTTP request's project p's setup in its
// directory.
func fixedProject(p *Project) func(string) (*Project, error) {
	return func(dir string) (*Project, error) {
		q := *p
		q.Dir = dir
		return &q, nil
	}
}

// TestHTTPTokenAndRefusals: on TCP a request needs the bearer token (401
// without it or with a wrong one); the token is kept 0600 and the same
// across runtimes; a Host or Origin that is not loopback is refused
// (403), as are a request naming no project (400), another path (404)
// and GET (405). The unix socket needs no token.
func TestHTTPTokenAndRefusals(t *testing.T) {
	dir := runtimeDir(t)
	proj := noServers(t)
	co, st, done := httpServe(t, &ServeOptions{Dir: dir, HTTP: HTTPOptions{Project: fixedProject(proj)}})
	if fi, err := os.Stat(st.HTTP.TokenFile); err != nil || fi.Mode().Perm() != 0o600 || filepath.Dir(st.HTTP.TokenFile) != filepath.Clean(dir) {
		t.Fatalf("token file %s: %v %v", st.HTTP.TokenFile, fi, err)
	}
	ok := tcpClient(t, st, proj.Dir)
	ok.initialize("token-test")
	list := func(h *httpMCP) (int, string) {
		code, b := h.rpc("tools/list", map[string]any{})
		return code, string(b)
	}
	if code, b := list(ok); code != 200 || !strings.Contains(b, `"hover"`) {
		t.Fatalf("tools/list with the token: %d %s", code, b)
	}
	for _, tok := range []string{"", strings.Repeat("0", 64), ok.token + "x"} {
		bad := *ok
		bad.token = tok
		if code, b := list(&bad); code != http.StatusUnauthorized {
			t.Errorf("token %q: %d %s, want 401", tok, code, b)
		}
	}
	for _, host := range []string{"evil.example", "192.0.2.1:80"} {
		bad := *ok
		bad.host = host
		if code, b := list(&bad); code != http.StatusForbidden {
			t.Errorf("Host %s: %d %s, want 403", host, code, b)
		}
	}
	noProject := *ok
	noProject.sid = ""
	noProject.url = st.HTTP.URL
	if code, b := noProject.rpc("initialize", map[string]any{}); code != http.StatusBadRequest || !strings.Contains(string(b), "?project=") {
		t.Errorf("no project: %d %s, want 400 saying how to name one", code, b)
	}
	rel := noProject
	rel.url = st.HTTP.URL + "?project=rel/dir"
	if code, b := rel.rpc("initialize", map[string]any{}); code != http.StatusBadRequest {
		t.Errorf("a relative project: %d %s, want 400", code, b)
	}
	other := *ok
	other.url = strings.Replace(ok.url, HTTPPath, "/other", 1)
	if code, _ := list(&other); code != http.StatusNotFound {
		t.Errorf("another path: %d, want 404", code)
	}
	if code, _ := ok.do(http.MethodGet, nil); code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d, want 405", code)
	}
	u := unixClient(t, st.HTTP.Socket, proj.Dir)
	u.initialize("unix-test")
	if code, b := list(u); code != 200 || !strings.Contains(b, `"hover"`) {
		t.Fatalf("tools/list on the unix socket: %d %s", code, b)
	}

	// The HTTP socket is not taken for a runtime's (Running dials every
	// *.sock, and waits for its hello).
	if socks, _ := filepath.Glob(filepath.Join(dir, "*.sock")); len(socks) != 1 {
		t.Errorf("sockets named *.sock: %v, want the runtime's alone", socks)
	}
	if rts, err := Running(context.Background(), co); err != nil || len(rts) != 1 || rts[0].Build != "b1" {
		t.Errorf("Running: %+v, %v; want the one runtime", rts, err)
	}

	// A runtime after this one keeps the token.
	if _, err := Stop(context.Background(), co); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	done <- nil // for serveInProcess's cleanup
	_, st2, _ := httpServe(t, &ServeOptions{Dir: dir, HTTP: HTTPOptions{Project: fixedProject(proj)}})
	if tok, _ := ReadHTTPToken(st2.HTTP.TokenFile); tok != ok.token {
		t.Errorf("the next runtime's token %q, want the first's", tok)
	}
}

// TestHTTPNonLoopbackRefused: Serve refuses a TCP address that is not
// loopback, and listens on none.
func TestHTTPNonLoopbackRefused(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:8765", "example.com:80", "[::]:0", "nonsense"} {
		dir := runtimeDir(t)
		err := Serve(context.Background(), &ServeOptions{Dir: dir, Build: "b1", HTTP: HTTPOptions{Addr: addr}})
		if err == nil || !strings.Contains(err.Error(), "loopback") && !strings.Contains(err.Error(), "127.0.0.1:PORT") {
			t.Errorf("--http %s: %v, want a refusal naming loopback", addr, err)
		}
		if addr != "nonsense" && !errors.Is(err, ErrNotLoopback) {
			t.Errorf("--http %s: %v, want ErrNotLoopback", addr, err)
		}
	}
}

// TestHTTPSessionLifecycle: an HTTP session counts in status (its client
// named) and holds the runtime; DELETE ends it at once; one abandoned
// (no request for the session idle time) ends on its own, and its id is
// then unknown (404); over MaxSessions an initialize is answered 503.
func TestHTTPSessionLifecycle(t *testing.T) {
	proj := noServers(t)
	co, st, _ := httpServe(t, &ServeOptions{HTTP: HTTPOptions{Project: fixedProject(proj), SessionIdle: 500 * time.Millisecond, MaxSessions: 2}})
	sessions := func() []SessionStatus {
		st, err := GetStatus(context.Background(), co)
		if err != nil {
			t.Fatal(err)
		}
		if st.Sessions == 0 {
			return nil
		}
		if len(st.Projects) != 1 || len(st.Projects[0].Sessions) != st.Sessions {
			t.Fatalf("status: %+v", st)
		}
		return st.Projects[0].Sessions
	}
	a := tcpClient(t, st, proj.Dir)
	a.initialize("client-a")
	b := unixClient(t, st.HTTP.Socket, proj.Dir)
	b.initialize("client-b")
	ss := sessions()
	if len(ss) != 2 || ss[0].Transport != "http" || ss[0].Client != "client-a 1" || ss[1].Client != "client-b 1" || ss[1].PID != os.Getpid() {
		t.Fatalf("sessions %+v, want client-a and client-b over HTTP, b's pid %d", ss, os.Getpid())
	}
	c := tcpClient(t, st, proj.Dir)
	if code, body := c.rpc("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "client-c", "version": "1"}}); code != http.StatusServiceUnavailable || !strings.Contains(string(body), "its most") {
		t.Errorf("a third session over MaxSessions 2: %d %s, want 503", code, body)
	}

	if code, body := a.do(http.MethodDelete, nil); code != http.StatusOK {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	if ss := sessions(); len(ss) != 1 || ss[0].Client != "client-b 1" {
		t.Fatalf("after DELETE: %+v, want client-b's alone", ss)
	}
	if code, _ := a.rpc("tools/list", map[string]any{}); code != http.StatusNotFound {
		t.Errorf("a deleted session's request: %d, want 404", code)
	}

	// b is abandoned: it ends within a few session idle times, released
	// from the project's server too.
	for end := time.Now().Add(testTimeout); len(sessions()) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the abandoned session is still there: %+v", sessions())
		}
	}
	if code, _ := b.rpc("tools/list", map[string]any{}); code != http.StatusNotFound {
		t.Errorf("an abandoned session's request: %d, want 404", code)
	}
	st2, _ := GetStatus(context.Background(), co)
	if len(st2.Projects) != 1 || len(st2.Projects[0].Clients) != 0 {
		t.Errorf("the project's server still lists clients: %+v", st2.Projects)
	}
	c.sid = ""
	c.initialize("client-c")
}

// TestHTTPIdleExit: the runtime lives while an HTTP session does, and
// exits once it ended and the idle time passed.
func TestHTTPIdleExit(t *testing.T) {
	proj := noServers(t)
	o := &ServeOptions{Dir: runtimeDir(t), Build: "b1", Idle: 300 * time.Millisecond,
		HTTP: HTTPOptions{Project: fixedProject(proj), SessionIdle: 2 * time.Second}}
	socket, done, _ := serveInProcess(t, o)
	h := unixClient(t, strings.TrimSuffix(socket, ".sock")+".http", proj.Dir)
	h.initialize("idle-test")
	start := time.Now()
	select {
	case err := <-done:
		t.Fatalf("the runtime exited with an HTTP session (after %s): %v", time.Since(start), err)
	case <-time.After(time.Second):
	}
	h.do(http.MethodDelete, nil)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
		done <- nil // for serveInProcess's cleanup
	case <-time.After(testTimeout):
		t.Fatal("no idle exit after the HTTP session ended")
	}
}
