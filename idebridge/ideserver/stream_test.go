package ideserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

// streamClient drives a ServeStream session through two pipes, as an MCP
// client drives a server it started over stdio.
type streamClient struct {
	t   testing.TB
	in  *io.PipeWriter // the server's input
	out *io.PipeReader // the server's output
	msg chan *jsonrpc.Message
	// lines gets every raw line the server wrote, for checks on framing.
	mu    sync.Mutex
	lines []string
	// done gets ServeStream's error.
	done chan error

	nextID int
}

// serveStream runs srv.ServeStream(ctx) on pipes and returns the client
// end. The pipes are closed at cleanup.
func serveStream(t testing.TB, ctx context.Context, srv *ideserver.Server) *streamClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &streamClient{t: t, in: inW, out: outR, msg: make(chan *jsonrpc.Message, 1024), done: make(chan error, 1)}
	go func() {
		err := srv.ServeStream(ctx, inR, outW)
		outW.Close()
		c.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<30)
		for sc.Scan() {
			line := sc.Text()
			c.mu.Lock()
			c.lines = append(c.lines, line)
			c.mu.Unlock()
			m, err := decodeServerMessage([]byte(line))
			if err != nil {
				t.Errorf("server wrote a line that is not one message %.200q: %v", line, err)
				continue
			}
			c.msg <- m
		}
		close(c.msg)
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
	})
	return c
}

func (c *streamClient) writeLine(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, s+"\n"); err != nil {
		c.t.Fatalf("writing to the server: %v", err)
	}
}

func (c *streamClient) request(method string, params any) json.RawMessage {
	c.t.Helper()
	c.nextID++
	id := json.RawMessage(fmt.Sprint(c.nextID))
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	c.writeLine(mustMarshal(m))
	return id
}

func (c *streamClient) notify(method string, params any) {
	c.t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	c.writeLine(mustMarshal(m))
}

func (c *streamClient) next() *jsonrpc.Message {
	c.t.Helper()
	select {
	case m, ok := <-c.msg:
		if !ok {
			c.t.Fatal("the server's output ended while waiting for a message")
		}
		return m
	case <-time.After(testTimeout):
		c.t.Fatal("no message from the server")
	}
	return nil
}

// wait returns the response to id, skipping notifications.
func (c *streamClient) wait(id json.RawMessage) *jsonrpc.Message {
	c.t.Helper()
	for {
		m := c.next()
		if m.IsNotification() {
			continue
		}
		if string(m.ID) != string(id) {
			c.t.Fatalf("got the response to %s while waiting for %s: %s", m.ID, id, mustMarshal(m))
		}
		return m
	}
}

func (c *streamClient) call(method string, params any) *jsonrpc.Message {
	c.t.Helper()
	return c.wait(c.request(method, params))
}

// end waits for ServeStream to return.
func (c *streamClient) end() error {
	c.t.Helper()
	select {
	case err := <-c.done:
		return err
	case <-time.After(testTimeout):
		c.t.Fatal("ServeStream did not return")
	}
	return nil
}

func newStreamServer(t testing.TB, opts *ideserver.Options) *ideserver.Server {
	t.Helper()
	if len(opts.WorkspaceFolders) == 0 {
		opts.WorkspaceFolders = []string{t.TempDir()}
	}
	opts.NoLockfile = true
	srv, err := ideserver.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	leakCheckOnce(t)
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return srv
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// The whole session of an MCP client over stdio: negotiation,
// instructions, paginated tools, a call, a cancelled call, and EOF ending
// the session with a running call cancelled and awaited.
func TestStreamSession(t *testing.T) {
	events := newEvents()
	srv := newStreamServer(t, &ideserver.Options{
		NoDefaultTools:           true,
		ProtocolVersion:          mcp.ProtocolVersion,
		NegotiateProtocolVersion: true,
		Instructions:             "Use echo.",
		ToolsPageSize:            1,
		OnEvent:                  events.hook,
	})
	mustRegister(t, srv, ideserver.Tool{
		Tool: mcp.Tool{Name: "echo", Description: "Echo the text."},
		Handler: func(_ context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
			var a struct{ Text string }
			if err := call.Bind(&a); err != nil {
				return nil, err
			}
			return mcp.TextResult(a.Text), nil
		},
	})
	causes := make(chan error, 4)
	started := make(chan struct{}, 4)
	mustRegister(t, srv, ideserver.Tool{
		Tool: mcp.Tool{Name: "block", Description: "Wait until cancelled."},
		Handler: func(ctx context.Context, _ *ideserver.ToolCall) (*mcp.ToolResult, error) {
			started <- struct{}{}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return mcp.TextResult("too late"), nil
		},
	})
	c := serveStream(t, testContext(t), srv)

	init := c.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "stdio-client", "version": "2"},
	})
	var ir mcp.InitializeResult
	if init.Error != nil || json.Unmarshal(init.Result, &ir) != nil {
		t.Fatalf("initialize: %s", mustMarshal(init))
	}
	if ir.ProtocolVersion != "2025-06-18" || ir.Instructions != "Use echo." {
		t.Errorf("initialize answered version %q, instructions %q; want the client's 2025-06-18 and the option's", ir.ProtocolVersion, ir.Instructions)
	}
	c.notify("notifications/initialized", nil)
	ev := events.waitFor(t, ideserver.EventInitialized)
	if ev.Client.Transport != ideserver.TransportStdio || ev.Client.Name != "stdio-client" {
		t.Errorf("client info %+v, want transport stdio and the client's name", ev.Client)
	}

	var names []string
	cursor := ""
	for range 5 {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		m := c.call("tools/list", params)
		var page mcp.ListToolsResult
		if m.Error != nil || json.Unmarshal(m.Result, &page) != nil {
			t.Fatalf("tools/list: %s", mustMarshal(m))
		}
		for _, tl := range page.Tools {
			names = append(names, tl.Name)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if strings.Join(names, ",") != "echo,block" {
		t.Errorf("tools over pages: %v, want only the registered echo and block (NoDefaultTools)", names)
	}

	m := c.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "line one\nline two"}})
	if r := decodeResult(t, m); len(r.Content) != 1 || r.Content[0].Text != "line one\nline two" {
		t.Errorf("echo: %s", m.Result)
	}

	// A cancelled call is not answered; the session goes on.
	id := c.request("tools/call", map[string]any{"name": "block"})
	<-started
	c.notify("notifications/cancelled", map[string]any{"requestId": json.RawMessage(id)})
	if cause := <-causes; !errors.Is(cause, ideserver.ErrRequestCancelled) {
		t.Errorf("cancelled call's cause %v, want ErrRequestCancelled", cause)
	}
	if m := c.call("ping", nil); m.Error != nil {
		t.Errorf("ping after a cancelled call: %s", mustMarshal(m))
	}

	// EOF with a call running: the call is cancelled, awaited, and the
	// session ends cleanly.
	c.request("tools/call", map[string]any{"name": "block"})
	<-started
	c.in.Close()
	if err := c.end(); err != nil {
		t.Errorf("ServeStream after EOF: %v, want nil", err)
	}
	if cause := <-causes; !errors.Is(cause, ideserver.ErrClientGone) {
		t.Errorf("running call's cause at EOF %v, want ErrClientGone", cause)
	}
	if ev := events.waitFor(t, ideserver.EventDisconnected); ev.Err != nil {
		t.Errorf("disconnected with %v, want a clean end", ev.Err)
	}
	for m := range c.msg {
		if !m.IsNotification() {
			t.Errorf("answer after EOF to a cancelled call: %s", mustMarshal(m))
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range c.lines {
		if strings.ContainsAny(l, "\n\r") || !json.Valid([]byte(l)) {
			t.Errorf("line %q is not one JSON message", l)
		}
	}
}

func mustRegister(t testing.TB, srv *ideserver.Server, tool ideserver.Tool) {
	t.Helper()
	if err := srv.RegisterTool(tool); err != nil {
		t.Fatalf("RegisterTool: %v", err)
	}
}

// Bad lines cost only themselves: each is answered with an error (id
// null) and the next message is served. Blank lines are skipped and CRLF
// endings accepted; a request that ended the input without a newline is
// still answered.
func TestStreamMalformedLines(t *testing.T) {
	srv := newStreamServer(t, &ideserver.Options{})
	c := serveStream(t, testContext(t), srv)
	for _, tc := range []struct {
		line string
		code int64
	}{
		{"this is not json", mcp.CodeParseError},
		{`{"jsonrpc":"2.0","id":1,"method":`, mcp.CodeParseError},
		{`{"jsonrpc":"2.0","id":1}`, mcp.CodeInvalidRequest},
		{`[1,2,3]`, mcp.CodeInvalidRequest},
		{"\x00\xff\xfe", mcp.CodeParseError},
	} {
		c.writeLine(tc.line)
		m := c.next()
		if m.Error == nil || m.Error.Code != tc.code || string(m.ID) != "null" {
			t.Errorf("line %q answered %s, want error %d with id null", tc.line, mustMarshal(m), tc.code)
		}
	}
	c.writeLine("")
	c.writeLine("   \t")
	c.writeLine("\r")
	if _, err := io.WriteString(c.in, `{"jsonrpc":"2.0","id":"crlf","method":"ping"}`+"\r\n"); err != nil {
		t.Fatal(err)
	}
	if m := c.next(); string(m.ID) != `"crlf"` || m.Error != nil {
		t.Errorf("ping with CRLF answered %s", mustMarshal(m))
	}
	// Default tools are served over a stream too (the IDE's own set).
	m := c.call("tools/call", map[string]any{"name": mcp.ToolGetWorkspaceFolders})
	if m.Error != nil || !strings.Contains(string(m.Result), "folders") {
		t.Errorf("getWorkspaceFolders over a stream: %s", mustMarshal(m))
	}
	if _, err := io.WriteString(c.in, `{"jsonrpc":"2.0","id":"last","method":"ping"}`); err != nil {
		t.Fatal(err)
	}
	c.in.Close()
	if m := c.next(); string(m.ID) != `"last"` || m.Error != nil {
		t.Errorf("last ping without a newline answered %s", mustMarshal(m))
	}
	if err := c.end(); err != nil {
		t.Errorf("ServeStream after EOF: %v", err)
	}
}

// A line far over MaxMessageSize is refused without being held: the
// session allocates a small fraction of it, answers one error, and serves
// the next message.
func TestStreamHugeLineBounded(t *testing.T) {
	const limit = 4 << 10
	const huge = 32 << 20
	srv := newStreamServer(t, &ideserver.Options{MaxMessageSize: limit})
	c := serveStream(t, testContext(t), srv)
	if m := c.call("ping", nil); m.Error != nil {
		t.Fatalf("ping: %s", mustMarshal(m))
	}
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := io.WriteString(c.in, `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"`); err != nil {
		t.Fatal(err)
	}
	for written := 0; written < huge; written += len(chunk) {
		if _, err := c.in.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	c.writeLine(`"}}`)
	m := c.next()
	runtime.ReadMemStats(&after)
	if m.Error == nil || m.Error.Code != mcp.CodeInvalidRequest || string(m.ID) != "null" || !strings.Contains(string(m.Error.Data), "limit of 4096 bytes") {
		t.Errorf("huge line answered %s, want invalid request naming the limit", mustMarshal(m))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > huge/4 {
		t.Errorf("reading a %d-byte line over a %d-byte limit allocated %d bytes; the line must not be held", huge, limit, alloc)
	}
	if m := c.call("ping", nil); m.Error != nil {
		t.Errorf("ping after the huge line: %s", mustMarshal(m))
	}
	// A line just at the limit is served.
	pad := strings.Repeat("y", limit-len(`{"jsonrpc":"2.0","id":9,"method":"ping","params":{"p":""}}`))
	c.writeLine(`{"jsonrpc":"2.0","id":9,"method":"ping","params":{"p":"` + pad + `"}}`)
	if m := c.next(); string(m.ID) != "9" || m.Error != nil {
		t.Errorf("a line of exactly the limit answered %s", mustMarshal(m))
	}
}

// Close ends a stream session (ErrServerClosed) and cancels its calls; a
// server that never started needs no Start to serve or to close.
func TestStreamServerClose(t *testing.T) {
	srv := newStreamServer(t, &ideserver.Options{NoDefaultTools: true})
	causes := make(chan error, 1)
	started := make(chan struct{})
	mustRegister(t, srv, ideserver.Tool{
		Tool: mcp.Tool{Name: "block"},
		Handler: func(ctx context.Context, _ *ideserver.ToolCall) (*mcp.ToolResult, error) {
			close(started)
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return nil, ctx.Err()
		},
	})
	c := serveStream(t, testContext(t), srv)
	c.request("tools/call", map[string]any{"name": "block"})
	<-started
	// RegisterTool tells the stream client the list changed, although
	// the server never started.
	c.call("initialize", map[string]any{"protocolVersion": mcp.LegacyProtocolVersion})
	mustRegister(t, srv, ideserver.Tool{Tool: mcp.Tool{Name: "later"}, Handler: func(context.Context, *ideserver.ToolCall) (*mcp.ToolResult, error) { return nil, nil }})
	if m := c.next(); m.Method != mcp.MethodToolsListChanged {
		t.Errorf("after RegisterTool got %s, want %s", mustMarshal(m), mcp.MethodToolsListChanged)
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.end(); !errors.Is(err, ideserver.ErrServerClosed) {
		t.Errorf("ServeStream after Close: %v, want ErrServerClosed", err)
	}
	if cause := <-causes; !errors.Is(cause, ideserver.ErrServerClosed) {
		t.Errorf("running call's cause %v, want ErrServerClosed", cause)
	}
	if err := srv.ServeStream(context.Background(), strings.NewReader(""), io.Discard); !errors.Is(err, ideserver.ErrServerClosed) {
		t.Errorf("ServeStream on a closed server: %v, want ErrServerClosed", err)
	}
}

// The context ends a session; the read in progress is left to end when
// the input is closed.
func TestStreamContextEnds(t *testing.T) {
	srv := newStreamServer(t, &ideserver.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	c := serveStream(t, ctx, srv)
	if m := c.call("ping", nil); m.Error != nil {
		t.Fatalf("ping: %s", mustMarshal(m))
	}
	cancel()
	if err := c.end(); !errors.Is(err, context.Canceled) {
		t.Errorf("ServeStream after cancel: %v, want context.Canceled", err)
	}
	c.in.Close() // ends the abandoned read, for the leak check
}

// A client that stops reading cannot hold the server: answers wait at
// most WriteTimeout for room, then the session is dropped with an error.
func TestStreamClientStopsReading(t *testing.T) {
	srv := newStreamServer(t, &ideserver.Options{WriteTimeout: 100 * time.Millisecond})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe() // nobody reads outR
	done := make(chan error, 1)
	go func() { done <- srv.ServeStream(context.Background(), inR, outW) }()
	go func() {
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i); err != nil {
				return
			}
		}
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "took no message") {
			t.Errorf("ServeStream with a client that does not read: %v, want the write timeout", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("ServeStream blocked on a client that does not read")
	}
	inW.Close()
	outR.Close()
}

// A failed write ends the session with that error.
func TestStreamWriteFails(t *testing.T) {
	srv := newStreamServer(t, &ideserver.Options{})
	inR, inW := io.Pipe()
	defer inW.Close()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStream(context.Background(), inR, failWriter{}) }()
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	select {
	case err := <-done:
		if !errors.Is(err, errBrokenPipe) {
			t.Errorf("ServeStream with a failing writer: %v, want its error", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("ServeStream did not end on a failed write")
	}
}

var errBrokenPipe = errors.New("broken pipe")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errBrokenPipe }
