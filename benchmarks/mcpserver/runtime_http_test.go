//go:build unix

package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"slices"
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
	ep, stderr := s.runtimeHTTP(t, env)

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

// runtimeHTTP starts `idebridge runtime serve --http 127.0.0.1:0` in env's
// runtime directory and returns the scene's project URL and the token, as
// `idebridge runtime http --json` gives them.
func (s *scene) runtimeHTTP(t testing.TB, env []string) (ep struct{ URL, Token string }, stderr *syncBuffer) {
	t.Helper()
	serve := exec.Command(idebridgeBin(t), "runtime", "serve", "--http", "127.0.0.1:0")
	serve.Env = env
	stderr = &syncBuffer{}
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
	return ep, stderr
}

// BenchmarkRuntimeHTTPVsStdio measures one warm tool call on gopls through
// the shared runtime two ways, on the same gopls (one project, shared): a
// stdio `idebridge mcp` (the SDK's command transport; the proxy, then the
// runtime's socket) and the SDK's Streamable HTTP client straight to the
// runtime's TCP endpoint (legacy era, a session, no standalone stream).
// Each iteration makes one call on each, in alternating order; the metrics
// are their medians and the ratio of HTTP to stdio.
func BenchmarkRuntimeHTTPVsStdio(b *testing.B) {
	s := newScene(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*testTimeout)
	defer cancel()
	env := s.runtimeEnv(b)
	ep, stderr := s.runtimeHTTP(b, env)
	stdio, _ := s.mcpProcess(b, ctx, env)
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-bench", Version: "1.0"}, nil)
	hc := &http.Client{Transport: bearer{token: ep.Token, base: http.DefaultTransport}}
	viaHTTP, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ep.URL, HTTPClient: hc, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatalf("connecting to %s: %v\nstderr:\n%s", ep.URL, err, stderr)
	}
	defer viaHTTP.Close()
	for range 5 {
		for _, c := range transportCalls {
			callComplete(b, ctx, stdio, c.name, c.args)
			callComplete(b, ctx, viaHTTP, c.name, c.args)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	median := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	for _, c := range transportCalls {
		b.Run(c.name, func(b *testing.B) {
			var sd, hd []time.Duration
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					sd = append(sd, callComplete(b, ctx, stdio, c.name, c.args))
					hd = append(hd, callComplete(b, ctx, viaHTTP, c.name, c.args))
				} else {
					hd = append(hd, callComplete(b, ctx, viaHTTP, c.name, c.args))
					sd = append(sd, callComplete(b, ctx, stdio, c.name, c.args))
				}
			}
			sm, hm := median(sd), median(hd)
			b.ReportMetric(ms(sm), "stdio-median-ms")
			b.ReportMetric(ms(hm), "http-median-ms")
			b.ReportMetric(float64(hm)/float64(sm), "http/stdio")
		})
	}
}
