package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/idebridge/idebridge/idebridge"
	idbmcp "github.com/idebridge/idebridge/mcp"
)

// Our client against an independent MCP implementation: the official SDK's
// legacy SSE server, in process, on loopback.

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// sdkServer serves s over SSE and counts the client's POSTed responses
// (answers to the server's own requests, such as ping).
type sdkServer struct {
	url       string
	responses atomic.Int32
}

func startSDK(t *testing.T, s *mcp.Server) *sdkServer {
	t.Helper()
	ss := &sdkServer{}
	h := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte(`"result"`)) && !bytes.Contains(body, []byte(`"method"`)) {
				ss.responses.Add(1)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	ss.url = srv.URL + "/sse"
	return ss
}

func dialSDK(t *testing.T, ss *sdkServer, opts *idebridge.ClientOptions) *idebridge.Client {
	t.Helper()
	c, err := idebridge.DialURL(testCtx(t), ss.url, "", opts)
	if err != nil {
		t.Fatalf("DialURL: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestSDKHandshakeAndPagination(t *testing.T) {
	s := newSDKServer(&mcp.ServerOptions{PageSize: 2})
	for i := range 4 {
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("extra%d", i), InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	c := dialSDK(t, startSDK(t, s), nil)
	if c.ProtocolVersion() != idbmcp.ProtocolVersion {
		t.Errorf("the SDK answered %q; it speaks %s, so it should agree", c.ProtocolVersion(), idbmcp.ProtocolVersion)
	}
	if c.ServerInfo().Name != "sdk-server" {
		t.Errorf("serverInfo %+v", c.ServerInfo())
	}
	tools, err := c.Tools(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 5 {
		t.Fatalf("%d tools through pages of 2, want 5: %+v", len(tools), tools)
	}
	seen := map[string]bool{}
	for _, tl := range tools {
		if seen[tl.Name] {
			t.Errorf("tool %s listed twice", tl.Name)
		}
		seen[tl.Name] = true
	}
	r, err := c.CallTool(testCtx(t), "echo", echoArgs{Text: "hello <&> ✻"})
	if err != nil || r.Text() != "hello <&> ✻" {
		t.Fatalf("echo: %+v, %v", r, err)
	}
}

func TestSDKToolErrors(t *testing.T) {
	s := newSDKServer(nil)
	s.AddTool(&mcp.Tool{Name: "fails", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "boom"}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "errs", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("handler failed")
	})
	c := dialSDK(t, startSDK(t, s), nil)
	var te *idbmcp.ToolError
	if _, err := c.CallTool(testCtx(t), "fails", nil); !errors.As(err, &te) || te.Message != "boom" || te.Result == nil || te.Code != 0 {
		t.Errorf("isError result: %v", err)
	}
	// The SDK reports a handler's error as an isError result.
	if _, err := c.CallTool(testCtx(t), "errs", nil); !errors.As(err, &te) || !strings.Contains(te.Message, "handler failed") {
		t.Errorf("handler error: %v", err)
	}
	if _, err := c.CallTool(testCtx(t), "nope", nil); !errors.As(err, &te) || te.Code == 0 {
		t.Errorf("unknown tool: %v", err)
	}
	if _, err := c.CallTool(testCtx(t), "echo", echoArgs{Text: "still fine"}); err != nil {
		t.Errorf("after tool errors: %v", err)
	}
}

func TestSDKServerPings(t *testing.T) {
	// The SDK closes a session whose client does not answer a ping within
	// half the keep-alive interval; at 20 ms (10 ms to answer) a busy
	// machine under -race missed one and the session ended. 400 ms leaves
	// a loaded machine 200 ms, and the test still sees several pings.
	s := newSDKServer(&mcp.ServerOptions{KeepAlive: 400 * time.Millisecond})
	s.AddTool(&mcp.Tool{Name: "ping-client", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := req.Session.Ping(ctx, nil); err != nil {
			return nil, fmt.Errorf("the client did not answer ping: %w", err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong received"}}}, nil
	})
	ss := startSDK(t, s)
	c := dialSDK(t, ss, &idebridge.ClientOptions{PingInterval: -1})
	r, err := c.CallTool(testCtx(t), "ping-client", nil)
	if err != nil || r.Text() != "pong received" {
		t.Fatalf("server-initiated ping inside a call: %+v, %v", r, err)
	}
	// The SDK's keep-alive closes a session whose client misses one ping;
	// answer four of them and the session still stands.
	for ss.responses.Load() < 4 {
		select {
		case <-c.Done():
			t.Fatalf("connection ended: %v", c.Err())
		case <-testCtx(t).Done():
			t.Fatal("the server stopped pinging")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if _, err := c.CallTool(testCtx(t), "echo", echoArgs{Text: "x"}); err != nil || c.Err() != nil {
		t.Fatalf("after the server's pings: %v, %v", err, c.Err())
	}
}

func TestSDKProgressNotificationsIgnored(t *testing.T) {
	s := newSDKServer(nil)
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for i := range 3 {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: "tok", Progress: float64(i + 1), Total: 3, Message: "working"})
			if err != nil {
				return nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	})
	c := dialSDK(t, startSDK(t, s), nil)
	r, err := c.CallTool(testCtx(t), "slow", nil)
	if err != nil || r.Text() != "done" {
		t.Fatalf("call with progress notifications: %+v, %v", r, err)
	}
	for range 3 {
		select {
		case n := <-c.Notifications():
			if n.Method != "notifications/progress" {
				t.Errorf("notification %s", n.Method)
			}
			if _, err := n.SelectionChanged(); err == nil {
				t.Error("a progress notification decoded as selection_changed")
			}
		case <-testCtx(t).Done():
			t.Fatal("progress notifications not delivered")
		}
	}
	if _, err := c.CallTool(testCtx(t), "echo", echoArgs{Text: "x"}); err != nil {
		t.Fatal(err)
	}
}

func TestSDKCancellation(t *testing.T) {
	s := newSDKServer(nil)
	started := make(chan struct{}, 1)
	ended := make(chan error, 1)
	s.AddTool(&mcp.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		started <- struct{}{}
		<-ctx.Done()
		ended <- ctx.Err()
		return nil, ctx.Err()
	})
	c := dialSDK(t, startSDK(t, s), nil)
	ctx, cancel := context.WithCancel(testCtx(t))
	errc := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "block", nil)
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the SDK's handler ended with %v", err)
		}
	case <-testCtx(t).Done():
		t.Fatal("the SDK's handler was never cancelled: notifications/cancelled did not arrive")
	}
	if _, err := c.CallTool(testCtx(t), "echo", echoArgs{Text: "after"}); err != nil {
		t.Fatal(err)
	}
}

// TestSDKClientAndOursAgree: the SDK's client and ours get the same answers
// from the SDK server's echo tool, so the SSE benchmarks compare like with
// like.
func TestSDKClientAndOursAgree(t *testing.T) {
	ss := startSDK(t, newSDKServer(nil))
	ours := dialSDK(t, ss, nil)
	sdk := mcp.NewClient(&mcp.Implementation{Name: "sdk-client", Version: "1"}, nil)
	sess, err := sdk.Connect(testCtx(t), &mcp.SSEClientTransport{Endpoint: ss.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	for _, text := range []string{"", "a", "multi\nline", string(bytes.Repeat([]byte("x"), 100000))} {
		r, err := ours.CallTool(testCtx(t), "echo", echoArgs{Text: text})
		if err != nil {
			t.Fatal(err)
		}
		sr, err := sess.CallTool(testCtx(t), &mcp.CallToolParams{Name: "echo", Arguments: echoArgs{Text: text}})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := r.Text(), sr.Content[0].(*mcp.TextContent).Text; got != want || got != text {
			t.Errorf("ours %q, SDK %q, sent %q", got, want, text)
		}
	}
}
