package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The benchmark servers run in a child process (this test binary started
// again with MCPBENCH_SERVER set), so that the parent's -benchmem figures
// are the client's alone.

func TestMain(m *testing.M) {
	if kind := os.Getenv("MCPBENCH_SERVER"); kind != "" {
		os.Exit(runServer(kind))
	}
	os.Exit(m.Run())
}

// runServer serves kind ("ws-echo" or "sdk-sse") on a loopback port, prints
// "ADDR host:port", and stops when standard input closes.
func runServer(kind string) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var h http.Handler
	switch kind {
	case "ws-echo":
		h = http.HandlerFunc(serveWSEcho)
	case "sdk-sse":
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return newSDKServer(nil) }, nil)
	default:
		fmt.Fprintln(os.Stderr, "unknown server", kind)
		return 2
	}
	go http.Serve(ln, h)
	fmt.Println("ADDR", ln.Addr().String())
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// startChild starts a benchmark server process and returns its address.
func startChild(tb testing.TB, kind string) string {
	tb.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "MCPBENCH_SERVER="+kind)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if addr, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
			go io.Copy(io.Discard, stdout)
			return addr
		}
	}
	tb.Fatalf("benchmark server %s did not start: %v", kind, sc.Err())
	return ""
}

// echoArgs are the echo tool's arguments; it answers their text.
type echoArgs struct {
	Text string `json:"text"`
}

// serveWSEcho is a minimal IDE-like MCP server over gorilla WebSocket: the
// handshake, and an echo tool. Both WebSocket benchmarks run against it.
func serveWSEcho(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{Subprotocols: []string{"mcp"}, ReadBufferSize: 64 << 10, WriteBufferSize: 64 << 10}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments echoArgs `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(data, &m) != nil || len(m.ID) == 0 {
			continue
		}
		var result any
		switch m.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2024-11-05", "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "ws-echo", "version": "1"}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}}
		case "tools/call":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": m.Params.Arguments.Text}}}
		default:
			result = map[string]any{}
		}
		out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
		if err := ws.WriteMessage(websocket.TextMessage, out); err != nil {
			return
		}
	}
}

// newSDKServer is the SDK server both SSE clients talk to: the echo tool,
// plus the tools the interop tests use. opts may set the page size or the
// keep-alive.
func newSDKServer(opts *mcp.ServerOptions) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "sdk-server", Version: "1.8.0"}, opts)
	schema := map[string]any{"type": "object"}
	s.AddTool(&mcp.Tool{Name: "echo", Description: "answers its text", InputSchema: schema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a echoArgs
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil
	})
	return s
}
