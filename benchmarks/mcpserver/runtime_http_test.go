//go:build unix

package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The official SDK's Streamable HTTP client straight to the shared
// runtime (`idebridge runtime serve --http`), with the URL and token
// `idebridge runtime http --json` gives: its navigation calls are
// answered by the same gopls as a stdio `idebridge mcp` on the project
// (status: one project, one server, two sessions: the stdio one and the
// legacy-era HTTP one, the modern era's requests standing alone), and
// closing the SDK's legacy session ends the runtime's HTTP session.
func TestSDKStreamableHTTPToRuntime(t *testing.T) {
	s := newScene(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*testTimeout)
	defer cancel()
	env := s.runtimeEnv(t)
	serve := exec.Command(idebridgeBin(t), "runtime", "serve", "--http", "127.0.0.1:0")
	serve.Env = env
	stderr := &syncBuffer{}
	serve.Stderr = stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { serve.Wait(); close(done) }()
	t.Cleanup(func() {
		serve.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(testTimeout):
			serve.Process.Kill()
			<-done
		}
	})
	var ep struct{ URL, Token string }
	for deadline := time.Now().Add(testTimeout); ep.URL == ""; time.Sleep(50 * time.Millisecond) {
		c := exec.Command(idebridgeBin(t), "runtime", "http", "--json", "--project", s.dir)
		c.Env = env
		if out, err := c.Output(); err == nil {
			json.Unmarshal(out, &ep)
		}
		select {
		case <-done:
			t.Fatalf("idebridge runtime serve exited; stderr:\n%s", stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no HTTP endpoint; stderr:\n%s", stderr)
		}
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-http", Version: "1.0"}, nil)
	hc := &http.Client{Transport: bearer{token: ep.Token, base: http.DefaultTransport}}
	connect := func(version string) *mcp.ClientSession {
		t.Helper()
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ep.URL, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("the SDK's Streamable HTTP client (protocol %q) could not connect to %s: %v\nstderr:\n%s", version, ep.URL, err, stderr)
		}
		for _, c := range transportCalls {
			callComplete(t, ctx, cs, c.name, c.args)
		}
		return cs
	}
	// The SDK's own era (2026-07-28: each request stands alone), then a
	// legacy session (initialize, a session id, DELETE at the end).
	modern := connect("")
	defer modern.Close()
	viaHTTP := connect("2025-11-25")
	viaStdio, _ := s.mcpProcess(t, ctx, env)
	callComplete(t, ctx, viaStdio, "hover", transportCalls[0].args)

	type status struct {
		Sessions int
		Projects []struct {
			Sessions []struct{ Transport, Client string }
			Servers  []struct{ PID int }
		}
	}
	get := func() (st status) {
		c := exec.Command(idebridgeBin(t), "runtime", "status", "--json")
		c.Env = env
		out, err := c.Output()
		if err != nil || json.Unmarshal(out, &st) != nil {
			t.Fatalf("runtime status: %v\n%s", err, out)
		}
		return st
	}
	st := get()
	if st.Sessions != 2 || len(st.Projects) != 1 || len(st.Projects[0].Servers) != 1 || st.Projects[0].Sessions[0].Client != "go-sdk-http 1.0" {
		t.Fatalf("status %+v: want one project, one server, two sessions, the first the SDK's over HTTP", st)
	}
	if err := viaHTTP.Close(); err != nil {
		t.Errorf("closing the SDK session: %v", err)
	}
	if st := get(); st.Sessions != 1 || st.Projects[0].Sessions[0].Transport != "" {
		t.Errorf("after the SDK session closed: %+v, want the stdio session alone", st)
	}
}
