package ideserver_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// BenchmarkToolCallStreamableHTTP is one tools/call round trip over
// Streamable HTTP on loopback TCP (a legacy session, keep-alive, the same
// requests as BenchmarkToolCallStream): compare the two for the cost of
// the HTTP transport over stdio.
func BenchmarkToolCallStreamableHTTP(b *testing.B) {
	srv := newStreamServer(b, &ideserver.Options{NoDefaultTools: true})
	for _, tool := range []ideserver.Tool{
		{Tool: mcp.Tool{Name: "echo"}, Handler: echoHandler},
		{Tool: mcp.Tool{Name: "echoInline"}, Handler: echoHandler, Inline: true},
	} {
		if err := srv.RegisterTool(tool); err != nil {
			b.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeStreamableHTTP(ctx, ln) }()
	defer func() { cancel(); <-done }()
	url := "http://" + ln.Addr().String() + ideserver.MCPPath
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	post := func(body []byte, session string) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+srv.AuthToken())
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set(mcp.HeaderSessionID, session)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		reply, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || len(reply) == 0 {
			b.Fatalf("status %d, %d bytes, %v", resp.StatusCode, len(reply), err)
		}
		return resp, reply
	}
	resp, _ := post([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`), "")
	session := resp.Header.Get(mcp.HeaderSessionID)
	for _, size := range echoSizes {
		b.Run(size.name, func(b *testing.B) {
			lat := make(latencies, 0, b.N)
			b.SetBytes(int64(len(size.req)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				post(size.req, session)
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			lat.report(b)
		})
	}
}
