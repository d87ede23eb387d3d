package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `idebridge mcp --http ... --socket ...` serves Streamable HTTP on both,
// names the token file in its first log line, writes it 0600, answers a
// 2026-07-28 client over TCP and a legacy one over the unix socket with
// gopls's diagnostics, and removes the file when it stops.
func TestMCPStreamableHTTP(t *testing.T) {
	dir := mcpModule(t)
	sockDir, err := os.MkdirTemp("", "idb-mcp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "s.sock")
	tokFile := filepath.Join(t.TempDir(), "run", "mcp.json")
	stderr := &syncBuffer{}
	inv := &invocation{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderr, Env: mcpEnv(t), Getwd: func() (string, error) { return dir, nil }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"mcp", "--no-ide", "--http", "127.0.0.1:0", "--socket", sock, "--token-file", tokFile}, inv)
	}()
	t.Cleanup(cancel)

	var first string
	for end := time.Now().Add(mcpTimeout); first == ""; {
		if line, _, ok := strings.Cut(stderr.String(), "\n"); ok {
			first = line
		} else if time.Now().After(end) {
			t.Fatalf("no log line: %q", stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(first, "bearer token in "+tokFile) || !strings.Contains(first, "unix socket "+sock) {
		t.Fatalf("first log line: %s", first)
	}
	st, err := os.Stat(tokFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", st, err)
	}
	var ep struct{ URL, Socket, AuthToken string }
	b, _ := os.ReadFile(tokFile)
	if err := json.Unmarshal(b, &ep); err != nil || ep.AuthToken == "" || !strings.HasPrefix(ep.URL, "http://127.0.0.1:") || ep.Socket != sock {
		t.Fatalf("token file %s", b)
	}

	post := func(c *http.Client, url string, hdr map[string]string, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+ep.AuthToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", url, err)
		}
		defer resp.Body.Close()
		rb, _ := io.ReadAll(resp.Body)
		return resp, string(rb)
	}
	tcp := &http.Client{Timeout: mcpTimeout}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	var resp *http.Response
	var body string
	// A cold gopls on a loaded machine may not publish within the tool's
	// bound; the answer says so, and asking again is what a client does.
	for i := 0; i < 4 && (i == 0 || strings.Contains(body, "no publish for it")); i++ {
		resp, body = post(tcp, ep.URL, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "diagnostics"},
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"diagnostics","arguments":{"files":["main.go"]},`+meta+`}}`)
	}
	if resp.StatusCode != 200 || !strings.Contains(body, `"resultType":"complete"`) || !strings.Contains(body, "unused") {
		t.Fatalf("modern diagnostics over TCP: %d %s", resp.StatusCode, body)
	}

	unix := &http.Client{Timeout: mcpTimeout, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	resp, body = post(unix, "http://localhost/mcp", nil,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize over the socket: %d %s", resp.StatusCode, body)
	}
	for i := 0; i < 4 && (i == 0 || strings.Contains(body, "no publish for it")); i++ {
		resp, body = post(unix, "http://localhost/mcp", map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"},
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"diagnostics","arguments":{"files":["main.go"]}}}`)
	}
	if resp.StatusCode != 200 || !strings.Contains(body, "unused") || strings.Contains(body, "resultType") {
		t.Fatalf("legacy diagnostics over the socket: %d %s", resp.StatusCode, body)
	}

	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d; stderr:\n%s", code, stderr)
		}
	case <-time.After(mcpTimeout):
		t.Fatal("idebridge mcp did not stop")
	}
	if _, err := os.Stat(tokFile); !os.IsNotExist(err) {
		t.Errorf("the token file is left: %v", err)
	}
}
