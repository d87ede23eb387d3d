package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds the token file's bearer token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// httpSession starts `idebridge mcp --http 127.0.0.1:0` on the scene, reads
// the URL and token from its token file, and connects the SDK's
// Streamable HTTP client transport (keep-alive, no standalone SSE stream).
func (s *scene) httpSession(tb testing.TB, ctx context.Context, stderr *syncBuffer) (*mcp.ClientSession, *rawHTTP) {
	tb.Helper()
	tokenFile := filepath.Join(tb.TempDir(), "mcp.json")
	cmd := exec.Command(idebridgeBin(tb), "mcp", "--no-ide", "--project", s.dir, "--http", "127.0.0.1:0", "--token-file", tokenFile)
	cmd.Env = s.env
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	tb.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(testTimeout):
			cmd.Process.Kill()
			<-done
		}
	})
	var ep struct {
		URL       string `json:"url"`
		AuthToken string `json:"authToken"`
	}
	for deadline := time.Now().Add(testTimeout); ; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(tokenFile); err == nil && json.Unmarshal(b, &ep) == nil && ep.URL != "" {
			break
		}
		select {
		case <-done:
			tb.Fatalf("idebridge mcp --http exited; stderr:\n%s", stderr)
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("no token file %s; stderr:\n%s", tokenFile, stderr)
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-bench", Version: "1.0"}, nil)
	hc := &http.Client{Transport: bearer{token: ep.AuthToken, base: http.DefaultTransport}}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ep.URL, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		tb.Fatalf("the SDK's Streamable HTTP client could not connect to %s: %v\nstderr:\n%s", ep.URL, err, stderr)
	}
	return cs, &rawHTTP{url: ep.URL, c: hc}
}

// rawHTTP is a plain net/http client (keep-alive) making modern-era
// (2026-07-28) tool calls: one POST each, no session, no SDK.
type rawHTTP struct {
	url string
	c   *http.Client
	id  int
}

func (r *rawHTTP) call(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	r.id++
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r.id, "method": "tools/call", "params": map[string]any{
		"name": name, "arguments": args,
		"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}},
	}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", name)
	resp, err := r.c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var msg struct {
		Result *mcp.CallToolResult `json:"result"`
		Error  json.RawMessage     `json:"error"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &msg) != nil || msg.Result == nil {
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, raw)
	}
	return msg.Result, nil
}

// transportCalls are the warm navigation calls measured on both transports.
var transportCalls = []struct {
	name string
	args map[string]any
}{
	{"hover", map[string]any{"file": "greet.go", "line": 12, "symbol": "Greet"}},
	{"definition", map[string]any{"file": "main.go", "line": 7, "symbol": "greet", "occurrence": 2}},
	{"references", map[string]any{"file": "greet.go", "line": 14, "symbol": "greet"}},
}

// BenchmarkToolCallStdioVsHTTP measures one warm tool call on gopls through
// the built `idebridge mcp` over stdio (the SDK's command transport) and
// over Streamable HTTP (the SDK's Streamable HTTP client, legacy era), the
// same client library on both, each transport its own server process on
// the same module; and, as a third, a plain net/http keep-alive client
// making modern-era (2026-07-28) POSTs to the same HTTP server, which
// separates the SDK client's cost from the server's. Each iteration makes
// one call on each, in alternating order; the metrics are the medians of
// each and their ratios to stdio (the goal: HTTP within 1.2x of stdio).
func BenchmarkToolCallStdioVsHTTP(b *testing.B) {
	s := newScene(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*testTimeout)
	defer cancel()
	var stdioErr, httpErr syncBuffer
	stdio, _ := s.session(b, ctx, &stdioErr)
	defer stdio.Close()
	httpc, raw := s.httpSession(b, ctx, &httpErr)
	defer httpc.Close()

	type caller func(name string, args map[string]any) (*mcp.CallToolResult, error)
	sdk := func(cs *mcp.ClientSession) caller {
		return func(name string, args map[string]any) (*mcp.CallToolResult, error) {
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		}
	}
	onStdio, onHTTP, onRaw := sdk(stdio), sdk(httpc), caller(func(name string, args map[string]any) (*mcp.CallToolResult, error) {
		return raw.call(ctx, name, args)
	})
	callOnce := func(tb testing.TB, cs caller, name string, args map[string]any) time.Duration {
		start := time.Now()
		res, err := cs(name, args)
		d := time.Since(start)
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		if res.IsError || res.StructuredContent == nil {
			raw, _ := json.Marshal(res)
			tb.Fatalf("%s answered %s", name, raw)
		}
		var st struct{ Status string }
		raw, _ := json.Marshal(res.StructuredContent)
		if json.Unmarshal(raw, &st); st.Status != "complete" {
			tb.Fatalf("%s: status %q, want complete (gopls not warm?): %s", name, st.Status, raw)
		}
		return d
	}
	// Warm both gopls processes and both connections.
	for range 5 {
		for _, c := range transportCalls {
			callOnce(b, onStdio, c.name, c.args)
			callOnce(b, onHTTP, c.name, c.args)
			callOnce(b, onRaw, c.name, c.args)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	median := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	for _, c := range transportCalls {
		b.Run(c.name, func(b *testing.B) {
			var sd, hd, rd []time.Duration
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					sd = append(sd, callOnce(b, onStdio, c.name, c.args))
					hd = append(hd, callOnce(b, onHTTP, c.name, c.args))
					rd = append(rd, callOnce(b, onRaw, c.name, c.args))
				} else {
					rd = append(rd, callOnce(b, onRaw, c.name, c.args))
					hd = append(hd, callOnce(b, onHTTP, c.name, c.args))
					sd = append(sd, callOnce(b, onStdio, c.name, c.args))
				}
			}
			sm, hm, rm := median(sd), median(hd), median(rd)
			b.ReportMetric(ms(sm), "stdio-median-ms")
			b.ReportMetric(ms(hm), "http-median-ms")
			b.ReportMetric(ms(rm), "rawhttp-median-ms")
			b.ReportMetric(float64(hm)/float64(sm), "http/stdio")
			b.ReportMetric(float64(rm)/float64(sm), "rawhttp/stdio")
		})
	}
}
