package ideserver_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// echoRequestOf is a tools/call of tool with an n-byte argument.
func echoRequestOf(tool string, n int) []byte {
	return []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"text":"` + strings.Repeat("x", n) + `"}}}`)
}

var (
	echoRequest = echoRequestOf("echo", 1024)
	// The echo tool runs on its own goroutine, echoInline on the read
	// goroutine (Tool.Inline); the raw echo floor gets the same bytes.
	echoSizes = []struct {
		name string
		req  []byte
	}{
		{"16B", echoRequestOf("echo", 16)}, {"16B-inline", echoRequestOf("echoInline", 16)},
		{"1KiB", echoRequest}, {"1KiB-inline", echoRequestOf("echoInline", 1024)},
		{"64KiB", echoRequestOf("echo", 64<<10)},
	}
)

// reportP50 records per-op durations and reports their median.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	b.ReportMetric(float64(l[len(l)/2].Nanoseconds()), "p50-ns/op")
	b.ReportMetric(float64(l[len(l)*99/100].Nanoseconds()), "p99-ns/op")
}

// BenchmarkToolCallWS is one tools/call round trip through the server over
// WebSocket, from a raw gorilla client; compare with BenchmarkRawEchoWS.
func BenchmarkToolCallWS(b *testing.B) {
	srv := startServer(b, &ideserver.Options{NoLockfile: true})
	if err := srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: "echo"}, Handler: echoHandler}); err != nil {
		b.Fatal(err)
	}
	if err := srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: "echoInline"}, Handler: echoHandler, Inline: true}); err != nil {
		b.Fatal(err)
	}
	conn, _, err := dialRaw(srv.URL(), authHeader(srv.AuthToken()), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	for _, size := range echoSizes {
		b.Run(size.name, func(b *testing.B) { wsRoundTrips(b, conn, size.req) })
	}
}

func wsRoundTrips(b *testing.B, conn *websocket.Conn, req []byte) {
	lat := make(latencies, 0, b.N)
	b.SetBytes(int64(len(req)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := conn.WriteMessage(websocket.TextMessage, req); err != nil {
			b.Fatal(err)
		}
		_, reply, err := conn.ReadMessage()
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		if len(reply) == 0 {
			b.Fatal("empty reply")
		}
	}
	b.StopTimer()
	lat.report(b)
}

// BenchmarkRawEchoWS is the floor: a gorilla server that echoes the same
// bytes back, with no JSON-RPC at all.
func BenchmarkRawEchoWS(b *testing.B) {
	up := websocket.Upgrader{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			typ, data, err := c.ReadMessage()
			if err != nil {
				return
			}
			if err := c.WriteMessage(typ, data); err != nil {
				return
			}
		}
	}))
	defer hs.Close()
	conn, _, err := dialRaw("ws"+strings.TrimPrefix(hs.URL, "http"), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	for _, size := range echoSizes {
		if !strings.HasSuffix(size.name, "-inline") {
			b.Run(size.name, func(b *testing.B) { wsRoundTrips(b, conn, size.req) })
		}
	}
}

// BenchmarkToolCallSSE is one tools/call round trip over legacy SSE: a POST
// answered 202 and the reply read from the event stream.
func BenchmarkToolCallSSE(b *testing.B) {
	srv := startServer(b, &ideserver.Options{NoLockfile: true, Transport: "sse"})
	if err := srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: "echo"}, Handler: echoHandler}); err != nil {
		b.Fatal(err)
	}
	c := dialSSE(b, srv)
	lat := make(latencies, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if resp := c.postRaw(echoRequest, nil); resp.StatusCode != http.StatusAccepted {
			b.Fatal(resp.Status)
		}
		if m := c.next(); string(m.ID) != "7" {
			b.Fatalf("reply %s", mustMarshal(m))
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	lat.report(b)
}

// BenchmarkNotifyBroadcast sends one selection_changed to 4 clients.
func BenchmarkNotifyBroadcast(b *testing.B) {
	srv := startServer(b, &ideserver.Options{NoLockfile: true})
	var clients []*client
	for i := range 4 {
		c := dial(b, srv)
		c.handshake(i)
		clients = append(clients, c)
	}
	params := map[string]any{"text": "", "filePath": "/p/main.go", "fileUrl": "file:///p/main.go",
		"selection": map[string]any{"start": map[string]int{"line": 1, "character": 0}, "end": map[string]int{"line": 1, "character": 0}, "isEmpty": true}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := srv.Notify("selection_changed", params); err != nil {
			b.Fatal(err)
		}
		for _, c := range clients {
			c.next()
		}
	}
}
