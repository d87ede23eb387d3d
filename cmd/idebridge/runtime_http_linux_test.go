package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRuntimeHTTPSharedWithMCP: `idebridge runtime serve --http` in a
// runtime directory of the test's own; `runtime http --json` gives the URL
// and token; a Streamable HTTP client and a stdio `idebridge mcp` on one
// module share its one gopls (status: one project, one server, two
// sessions, the HTTP one naming its client), the project's servers being
// those `idebridge mcp` loads; a request without the token is refused; and
// a non-loopback --http is refused with a usage error.
func TestRuntimeHTTPSharedWithMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs gopls")
	}
	bin, err := buildCommand()
	if err != nil {
		t.Fatalf("building idebridge: %v", err)
	}
	dir := mcpModule(t)
	rtDir := filepath.Join(shortDir(t), "rt")
	env := rtEnv(t, rtDir, time.Minute)
	run := func(args ...string) (string, string, error) {
		c := exec.Command(bin, args...)
		c.Env, c.Dir = env, dir
		var out, errOut bytes.Buffer
		c.Stdout, c.Stderr = &out, &errOut
		err := c.Run()
		return out.String(), errOut.String(), err
	}

	var ee *exec.ExitError
	if _, errOut, err := run("runtime", "serve", "--http", "0.0.0.0:8765"); !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.Contains(errOut, "loopback only") {
		t.Errorf("runtime serve --http 0.0.0.0:8765: %v, %q; want a usage error saying loopback only", err, errOut)
	}

	serve := exec.Command(bin, "runtime", "serve", "--http", "127.0.0.1:0")
	serve.Env, serve.Dir = env, dir
	serveErr := &syncBuffer{}
	serve.Stderr = serveErr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Process.Kill()
		serve.Wait()
	})
	var ep runtimeHTTPOut
	waitFor(t, "the runtime's HTTP endpoint", func() bool {
		out, _, err := run("runtime", "http", "--json")
		return err == nil && json.Unmarshal([]byte(out), &ep) == nil && ep.URL != ""
	})
	if ep.Project != dir || !strings.HasPrefix(ep.URL, "http://127.0.0.1:") || len(ep.Token) != 64 || !strings.HasSuffix(ep.Socket, ".http") {
		t.Fatalf("runtime http --json: %+v", ep)
	}
	if out, _, err := run("runtime", "http"); err != nil || !strings.Contains(out, `"type": "http"`) || !strings.Contains(out, "Bearer "+ep.Token) || !strings.Contains(out, ep.URL) {
		t.Errorf("runtime http: %v\n%s", err, out)
	}

	stdio := startRTClient(t, bin, dir, env)
	stdio.diagnostics()

	post := func(tok, sid string, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, ep.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := (&http.Client{Timeout: mcpTimeout}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"http-test","version":"7"}}}`
	if resp, body := post("", "", initialize); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("initialize without the token: %d %s, want 401", resp.StatusCode, body)
	}
	resp, body := post(ep.Token, "", initialize)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	post(ep.Token, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp, body = post(ep.Token, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"definition","arguments":{"file":"main.go","line":7,"column":14}}}`)
	if resp.StatusCode != 200 || !strings.Contains(body, "greet.go:4") {
		t.Fatalf("definition over HTTP: %d %s", resp.StatusCode, body)
	}

	out, _, err := run("runtime", "status", "--json")
	var st struct {
		Sessions int
		Projects []struct {
			Dir      string
			Sessions []struct{ Transport, Client string }
			Servers  []struct{ Name string }
		}
	}
	if err != nil || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("runtime status --json: %v\n%s", err, out)
	}
	if st.Sessions != 2 || len(st.Projects) != 1 || len(st.Projects[0].Servers) != 1 || len(st.Projects[0].Sessions) != 2 ||
		st.Projects[0].Sessions[1].Transport != "http" || st.Projects[0].Sessions[1].Client != "http-test 7" {
		t.Fatalf("status: %s\nwant one project with one server and two sessions, the second the HTTP client", out)
	}
	if out, _, err := run("runtime", "status"); err != nil || !strings.Contains(out, "http http-test 7") || !strings.Contains(out, "Streamable HTTP on unix socket") {
		t.Errorf("runtime status: %v\n%s", err, out)
	}
}
