package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/idebridge/idebridge/idebridge"
)

// payload is the echo tool's text: about the size of a small tool call
// (a getDiagnostics answer, an openFile with a selection).
var payload = strings.Repeat("diagnostic text ", 32) // 512 bytes

// latencies records one duration per operation and reports the median.
type latencies []time.Duration

// cpuMeter reports the client's CPU time per operation: the servers run in
// another process, so this process's CPU is the client's alone. Unlike the
// latency, it hardly depends on how loaded the machine is.
type cpuMeter struct{ start time.Duration }

func startCPU() cpuMeter { return cpuMeter{processCPU()} }

func (m cpuMeter) report(b *testing.B) {
	if used := processCPU() - m.start; used > 0 && b.N > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N)/1000, "cpu-µs/op")
	}
}

func (l *latencies) report(b *testing.B) {
	if len(*l) == 0 {
		return
	}
	s := slices.Clone(*l)
	slices.Sort(s)
	b.ReportMetric(float64(s[len(s)/2].Nanoseconds())/1000, "p50-µs")
	b.ReportMetric(float64(s[len(s)*9/10].Nanoseconds())/1000, "p90-µs")
}

// BenchmarkWSCall is one tools/call round trip through idebridge's
// WebSocket client: encode, one frame out, the reply decoded into a
// ToolResult.
func BenchmarkWSCall(b *testing.B) {
	addr := startChild(b, "ws-echo")
	ctx := context.Background()
	c, err := idebridge.DialURL(ctx, "ws://"+addr+"/", "", &idebridge.ClientOptions{PingInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	args := echoArgs{Text: payload}
	lat := make(latencies, 0, 1<<16)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r, err := c.CallTool(ctx, "echo", args)
		lat = append(lat, time.Since(start))
		if err != nil || len(r.Content) != 1 || len(r.Content[0].Text) != len(payload) {
			b.Fatalf("%+v, %v", r, err)
		}
	}
	b.StopTimer()
	cpu.report(b)
	lat.report(b)
}

// BenchmarkWSRawEcho is the floor for BenchmarkWSCall: the same request
// bytes through a bare gorilla connection to the same server, the reply
// read as bytes and not decoded.
func BenchmarkWSRawEcho(b *testing.B) {
	addr := startChild(b, "ws-echo")
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/", http.Header{"Sec-WebSocket-Protocol": {"mcp"}})
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	params, _ := json.Marshal(map[string]any{"name": "echo", "arguments": echoArgs{Text: payload}})
	req := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":` + string(params) + `}`)
	lat := make(latencies, 0, 1<<16)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := ws.WriteMessage(websocket.TextMessage, req); err != nil {
			b.Fatal(err)
		}
		_, reply, err := ws.ReadMessage()
		lat = append(lat, time.Since(start))
		if err != nil || len(reply) < len(payload) {
			b.Fatalf("%q, %v", reply, err)
		}
	}
	b.StopTimer()
	cpu.report(b)
	lat.report(b)
}

// BenchmarkSSECallOurs is one tools/call round trip through idebridge's
// SSE client against the SDK's SSE server.
func BenchmarkSSECallOurs(b *testing.B) {
	addr := startChild(b, "sdk-sse")
	ctx := context.Background()
	c, err := idebridge.DialURL(ctx, "http://"+addr+"/sse", "", &idebridge.ClientOptions{PingInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	args := echoArgs{Text: payload}
	lat := make(latencies, 0, 1<<16)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r, err := c.CallTool(ctx, "echo", args)
		lat = append(lat, time.Since(start))
		if err != nil || r.Text() != payload {
			b.Fatalf("%+v, %v", r, err)
		}
	}
	b.StopTimer()
	cpu.report(b)
	lat.report(b)
}

// BenchmarkSSECallSDK is the same round trip through the SDK's own SSE
// client, against the same server.
func BenchmarkSSECallSDK(b *testing.B) {
	addr := startChild(b, "sdk-sse")
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk-client", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &mcp.SSEClientTransport{Endpoint: "http://" + addr + "/sse"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	params := &mcp.CallToolParams{Name: "echo", Arguments: echoArgs{Text: payload}}
	lat := make(latencies, 0, 1<<16)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r, err := sess.CallTool(ctx, params)
		lat = append(lat, time.Since(start))
		if err != nil || len(r.Content) != 1 || r.Content[0].(*mcp.TextContent).Text != payload {
			b.Fatalf("%+v, %v", r, err)
		}
	}
	b.StopTimer()
	cpu.report(b)
	lat.report(b)
}

// The machine the figures come from is shared and noisy: two benchmarks run
// one after the other can see different loads. The two benchmarks below
// alternate the contenders call by call on the same server and report each
// one's median and their ratio, which the README quotes.

// BenchmarkWSCallVsRawEcho alternates one idebridge call and one raw echo.
func BenchmarkWSCallVsRawEcho(b *testing.B) {
	addr := startChild(b, "ws-echo")
	ctx := context.Background()
	c, err := idebridge.DialURL(ctx, "ws://"+addr+"/", "", &idebridge.ClientOptions{PingInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/", http.Header{"Sec-WebSocket-Protocol": {"mcp"}})
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	args := echoArgs{Text: payload}
	params, _ := json.Marshal(map[string]any{"name": "echo", "arguments": args})
	req := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":` + string(params) + `}`)
	ours := make(latencies, 0, 1<<16)
	raw := make(latencies, 0, 1<<16)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := c.CallTool(ctx, "echo", args); err != nil {
			b.Fatal(err)
		}
		ours = append(ours, time.Since(start))
		start = time.Now()
		if err := ws.WriteMessage(websocket.TextMessage, req); err != nil {
			b.Fatal(err)
		}
		if _, _, err := ws.ReadMessage(); err != nil {
			b.Fatal(err)
		}
		raw = append(raw, time.Since(start))
	}
	b.StopTimer()
	reportPair(b, "ours", ours, "raw", raw)
}

// BenchmarkSSECallOursVsSDK alternates one idebridge call and one SDK call.
func BenchmarkSSECallOursVsSDK(b *testing.B) {
	addr := startChild(b, "sdk-sse")
	ctx := context.Background()
	c, err := idebridge.DialURL(ctx, "http://"+addr+"/sse", "", &idebridge.ClientOptions{PingInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk-client", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &mcp.SSEClientTransport{Endpoint: "http://" + addr + "/sse"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	args := echoArgs{Text: payload}
	params := &mcp.CallToolParams{Name: "echo", Arguments: args}
	ours := make(latencies, 0, 1<<16)
	sdk := make(latencies, 0, 1<<16)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := c.CallTool(ctx, "echo", args); err != nil {
			b.Fatal(err)
		}
		ours = append(ours, time.Since(start))
		start = time.Now()
		if _, err := sess.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
		sdk = append(sdk, time.Since(start))
	}
	b.StopTimer()
	reportPair(b, "ours", ours, "sdk", sdk)
}

func median(l latencies) time.Duration {
	s := slices.Clone(l)
	slices.Sort(s)
	return s[len(s)/2]
}

// reportPair reports both medians in µs and the ratio a/b of the medians.
func reportPair(b *testing.B, an string, a latencies, bn string, bl latencies) {
	if len(a) == 0 {
		return
	}
	ma, mb := median(a), median(bl)
	b.ReportMetric(float64(ma.Nanoseconds())/1000, an+"-p50-µs")
	b.ReportMetric(float64(mb.Nanoseconds())/1000, bn+"-p50-µs")
	b.ReportMetric(float64(ma)/float64(mb), an+"/"+bn)
}
