package idebridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
	"github.com/idebridge/idebridge/mcpclient"
)

func TestHandshakeWS(t *testing.T) {
	f := newFakeIDE(t)
	f.Tools = []mcp.Tool{{Name: "openDiff"}, {Name: "getDiagnostics"}, {Name: "close_tab"}, {Name: "openFile"}, {Name: "saveDocument"}}
	f.PageSize = 2
	c := dialFake(t, f, &ClientOptions{ClientName: "agent-x", ClientVersion: "9.9", PID: 4242})
	conn := f.conn()

	if got := conn.Header.Get(mcp.AuthHeader); got != f.Token {
		t.Errorf("auth header %q, want %q", got, f.Token)
	}
	if got := conn.Header.Get("Sec-WebSocket-Protocol"); got != "mcp" {
		t.Errorf("subprotocol header %q, want mcp", got)
	}
	init := <-conn.Received
	if init.Method != "initialize" || string(init.ID) != "0" {
		t.Fatalf("first message %s id %s, want initialize id 0", init.Method, init.ID)
	}
	var ip struct {
		ProtocolVersion string             `json:"protocolVersion"`
		Capabilities    json.RawMessage    `json:"capabilities"`
		ClientInfo      mcp.Implementation `json:"clientInfo"`
	}
	if err := json.Unmarshal(init.Params, &ip); err != nil {
		t.Fatal(err)
	}
	if ip.ProtocolVersion != "2025-11-25" || string(ip.Capabilities) != "{}" || ip.ClientInfo.Name != "agent-x" || ip.ClientInfo.Version != "9.9" {
		t.Errorf("initialize params %s", init.Params)
	}
	if m := <-conn.Received; m.Method != "notifications/initialized" || m.IsRequest() {
		t.Errorf("second message %s (request %v), want the notifications/initialized notification", m.Method, m.IsRequest())
	}
	if m := <-conn.Received; m.Method != "ide_connected" || string(m.Params) != `{"pid":4242}` || m.IsRequest() {
		t.Errorf("third message %s %s, want ide_connected {\"pid\":4242}", m.Method, m.Params)
	}
	// tools/list without params, then the cursor pages.
	var cursors []string
	for range 3 {
		m := <-conn.Received
		if m.Method != "tools/list" {
			t.Fatalf("got %s, want tools/list", m.Method)
		}
		cursors = append(cursors, string(m.Params))
	}
	if diff := cmp.Diff([]string{"", `{"cursor":"2"}`, `{"cursor":"4"}`}, cursors); diff != "" {
		t.Errorf("tools/list params (-want +got):\n%s", diff)
	}

	if c.ProtocolVersion() != "2024-11-05" {
		t.Errorf("ProtocolVersion %q", c.ProtocolVersion())
	}
	if c.ServerInfo().Name != "fake-ide" {
		t.Errorf("ServerInfo %+v", c.ServerInfo())
	}
	tools, err := c.Tools(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	if diff := cmp.Diff([]string{"openDiff", "getDiagnostics", "close_tab", "openFile", "saveDocument"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	// Cached: no new tools/list.
	if _, err := c.Tools(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	// list_changed invalidates the cache.
	f.Tools = append(f.Tools, mcp.Tool{Name: "executeCode"})
	conn.Notify("notifications/tools/list_changed", map[string]any{})
	if _, err := c.CallTool(testCtx(t), "echo", nil); err != nil { // orders the notification before Tools
		t.Fatal(err)
	}
	tools, err = c.Tools(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 6 {
		t.Errorf("after list_changed: %d tools, want 6", len(tools))
	}
	var lists int
	for len(conn.Received) > 0 {
		if m := <-conn.Received; m.Method == "tools/list" {
			lists++
		}
	}
	if lists != 3 {
		t.Errorf("%d tools/list requests after list_changed, want 3 (one listing of 3 pages; the cached call sent none)", lists)
	}
}

func TestProtocolVersions(t *testing.T) {
	for _, v := range mcp.SupportedProtocolVersions() {
		f := newFakeIDE(t)
		f.Protocol = v
		c := dialFake(t, f, nil)
		if c.ProtocolVersion() != v {
			t.Errorf("version %s: client reports %s", v, c.ProtocolVersion())
		}
	}
	f := newFakeIDE(t)
	f.Protocol = "2099-01-01"
	_, err := DialURL(testCtx(t), f.URL, f.Token, nil)
	if !errors.Is(err, ErrUnsupportedProtocol) || !strings.Contains(err.Error(), "2099-01-01") {
		t.Fatalf("error %v, want ErrUnsupportedProtocol naming 2099-01-01", err)
	}
}

func TestAuthFailed(t *testing.T) {
	for _, mode := range []string{"400", "1008"} {
		t.Run(mode, func(t *testing.T) {
			f := newFakeIDE(t)
			f.AuthMode = mode
			_, err := DialURL(testCtx(t), f.URL, "wrong-token", nil)
			if !errors.Is(err, ErrAuthFailed) {
				t.Fatalf("error %v, want ErrAuthFailed", err)
			}
		})
	}
}

func TestCallToolResultsAndErrors(t *testing.T) {
	f := newFakeIDE(t)
	f.OnCall = func(c *fakeConn, m *jsonrpc.Message, name string, args json.RawMessage) {
		switch name {
		case "ok":
			c.Reply(m.ID, map[string]any{"content": []any{
				map[string]any{"type": "text", "text": "a"},
				map[string]any{"type": "image", "data": "AAAA", "mimeType": "image/png"},
				map[string]any{"type": "text", "text": "b"},
			}})
		case "isError":
			c.Reply(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "it broke"}}, "isError": true})
		case "rpcError":
			c.sendJSON(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "Tool not found: rpcError", "data": "more"}})
		case "quirk":
			c.Send([]byte(`{"result":{"message":"Buffer operation error","code":-32000,"data":"Failed"},"id":` + string(m.ID) + `,"jsonrpc":"2.0"}`))
		case "args":
			c.Reply(m.ID, textResult(string(args)))
		}
	}
	c := dialFake(t, f, nil)
	ctx := testCtx(t)

	r, err := c.CallTool(ctx, "ok", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Text() != "a\nb" || len(r.Content) != 3 || r.Content[1].MimeType != "image/png" || len(r.Raw) == 0 {
		t.Errorf("result %+v", r)
	}

	_, err = c.CallTool(ctx, "isError", nil)
	var te *mcp.ToolError
	if !errors.As(err, &te) || te.Tool != "isError" || te.Message != "it broke" || te.Code != 0 || te.Result == nil {
		t.Errorf("isError: %#v", err)
	}
	_, err = c.CallTool(ctx, "rpcError", nil)
	if !errors.As(err, &te) || te.Code != -32601 || te.Message != "Tool not found: rpcError" || string(te.Data) != `"more"` {
		t.Errorf("rpcError: %#v", err)
	}
	_, err = c.CallTool(ctx, "quirk", nil)
	if !errors.As(err, &te) || te.Code != -32000 || te.Message != "Buffer operation error" {
		t.Errorf("quirk: %#v", err)
	}

	for _, tc := range []struct {
		args any
		want string
	}{
		{nil, `{}`},
		{json.RawMessage(`{"a":1}`), `{"a":1}`},
		{[]byte(`{"b":[true]}`), `{"b":[true]}`},
		{map[string]any{"html": "<&>"}, `{"html":"<&>"}`},
		{struct {
			X int `json:"x"`
		}{3}, `{"x":3}`},
	} {
		r, err := c.CallTool(ctx, "args", tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if r.Text() != tc.want {
			t.Errorf("args %v sent as %s, want %s", tc.args, r.Text(), tc.want)
		}
	}
	if _, err := c.CallTool(ctx, "args", json.RawMessage(`{bad`)); err == nil {
		t.Error("invalid raw arguments were sent")
	}
	if _, err := c.CallTool(ctx, "args", func() {}); err == nil {
		t.Error("unencodable arguments were sent")
	}
	// The connection survives all of the above.
	if _, err := c.CallTool(ctx, "ok", nil); err != nil {
		t.Fatal(err)
	}
}

func TestCallTimeoutAndCancel(t *testing.T) {
	f := newFakeIDE(t)
	release := make(chan struct{})
	neverIDs := make(chan string, 4)
	f.OnCall = func(c *fakeConn, m *jsonrpc.Message, name string, args json.RawMessage) {
		switch name {
		case "never":
			neverIDs <- string(m.ID)
		case "openDiff":
			<-release // answered only after another call timed out
			c.Reply(m.ID, textResult("FILE_SAVED", "text"))
		default:
			c.Reply(m.ID, textResult("ok"))
		}
	}
	c := dialFake(t, f, &ClientOptions{CallTimeout: 50 * time.Millisecond})
	conn := f.conn()

	// openDiff has no default deadline: it outlives a call that timed out.
	type res struct {
		o   *DiffOutcome
		err error
	}
	diffDone := make(chan res, 1)
	go func() {
		o, err := c.OpenDiff(testCtx(t), OpenDiffArgs{OldPath: "/p/a.go", NewContents: "text", TabName: "t1"})
		diffDone <- res{o, err}
	}()
	conn.waitFor("tools/call", "openDiff")

	_, err := c.CallTool(testCtx(t), "never", nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("never-answered call: %v, want context.DeadlineExceeded", err)
	}
	cancelled := conn.waitFor("notifications/cancelled", "")
	call := <-neverIDs
	if !strings.Contains(string(cancelled.Params), `"requestId":`+call) {
		t.Errorf("notifications/cancelled %s does not name request %s", cancelled.Params, call)
	}
	close(release)
	if r := <-diffDone; r.err != nil || r.o.Status != EditAccepted || r.o.FinalText != "text" {
		t.Fatalf("openDiff after another call timed out: %+v, %v", r.o, r.err)
	}

	// A context cancelled by the caller ends the call and cancels it.
	ctx, cancel := context.WithCancel(testCtx(t))
	errc := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "never", nil)
		errc <- err
	}()
	conn.waitFor("tools/call", "never")
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v, want context.Canceled", err)
	}
	conn.waitFor("notifications/cancelled", "")

	// A late reply to an abandoned call is dropped; the client goes on.
	if _, err := c.CallTool(testCtx(t), "fine", nil); err != nil {
		t.Fatal(err)
	}
}

func TestConnectionLostFailsPendingCalls(t *testing.T) {
	for _, how := range []string{"kill", "close frame", "half-open"} {
		t.Run(how, func(t *testing.T) {
			f := newFakeIDE(t)
			f.OnCall = func(*fakeConn, *jsonrpc.Message, string, json.RawMessage) {} // never answers
			opts := &ClientOptions{CallTimeout: -1, PingInterval: -1}
			if how == "half-open" {
				opts.PingInterval = 30 * time.Millisecond
			}
			c := dialFake(t, f, opts)
			conn := f.conn()
			const n = 8
			errs := make(chan error, n)
			for i := range n {
				go func() {
					var err error
					if i%2 == 0 {
						_, err = c.OpenDiff(context.Background(), OpenDiffArgs{OldPath: "/x", NewContents: "y"})
					} else {
						_, err = c.CallTool(context.Background(), "slow", nil)
					}
					errs <- err
				}()
			}
			for range n {
				conn.waitFor("tools/call", "")
			}
			switch how {
			case "kill":
				conn.Kill()
			case "close frame":
				conn.ws.WriteControl(9 /* ping first, to show pings do not confuse */, nil, time.Now().Add(time.Second))
				conn.ws.WriteMessage(8, []byte{0x03, 0xe9}) // close 1001 going away
			case "half-open":
				conn.Freeze()
			}
			for range n {
				if err := <-errs; !errors.Is(err, ErrConnectionLost) {
					t.Errorf("pending call: %v, want ErrConnectionLost", err)
				}
			}
			<-c.Done()
			if !errors.Is(c.Err(), ErrConnectionLost) {
				t.Errorf("Err() = %v", c.Err())
			}
			if _, err := c.CallTool(context.Background(), "after", nil); !errors.Is(err, ErrConnectionLost) {
				t.Errorf("call after the loss: %v", err)
			}
			if _, ok := <-c.Notifications(); ok {
				t.Error("notifications channel not closed")
			}
		})
	}
}

func TestConcurrentCalls(t *testing.T) {
	f := newFakeIDE(t)
	var mu sync.Mutex
	var held []func()
	f.OnCall = func(c *fakeConn, m *jsonrpc.Message, name string, args json.RawMessage) {
		// Answer in batches, in reverse order, with notifications between.
		mu.Lock()
		held = append(held, func() {
			c.Notify("selection_changed", map[string]any{"text": name})
			c.Reply(m.ID, textResult(name+":"+string(args)))
		})
		if len(held) == 10 {
			for i := len(held) - 1; i >= 0; i-- {
				held[i]()
			}
			held = nil
		}
		mu.Unlock()
	}
	c := dialFake(t, f, &ClientOptions{NotificationBuffer: -1})
	const workers, each = 10, 20
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				name := fmt.Sprintf("w%d-%d", w, i)
				r, err := c.CallTool(testCtx(t), name, map[string]int{"i": i})
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				if want := fmt.Sprintf(`%s:{"i":%d}`, name, i); r.Text() != want {
					t.Errorf("%s got %q, want %q", name, r.Text(), want)
				}
			}
		}()
	}
	wg.Wait()
}

func TestNotifications(t *testing.T) {
	f := newFakeIDE(t)
	f.OnCall = func(c *fakeConn, m *jsonrpc.Message, name string, args json.RawMessage) {
		for i := range 10 {
			c.Notify("selection_changed", map[string]any{"text": fmt.Sprint(i), "filePath": "/p/a.go",
				"selection": map[string]any{"start": map[string]int{"line": i, "character": 1}, "end": map[string]int{"line": i, "character": 2}, "isEmpty": false}})
		}
		c.Notify("at_mentioned", map[string]any{"filePath": "/p/b.go", "lineStart": 3, "lineEnd": 5})
		c.Notify("something_new", []int{1})
		c.Reply(m.ID, textResult("done"))
	}
	c := dialFake(t, f, &ClientOptions{NotificationBuffer: 4})
	if _, err := c.CallTool(testCtx(t), "go", nil); err != nil {
		t.Fatal(err)
	}
	// The read loop handled the 12 notifications before the reply: the
	// buffer of 4 kept the newest.
	if got := c.DroppedNotifications(); got != 8 {
		t.Errorf("dropped %d, want 8", got)
	}
	var got []string
	for range 4 {
		n := <-c.Notifications()
		got = append(got, n.Method)
		switch n.Method {
		case mcp.MethodSelectionChanged:
			s, err := n.SelectionChanged()
			if err != nil {
				t.Fatal(err)
			}
			if s.Text != "9" && s.Text != "8" || s.FilePath != "/p/a.go" || s.Selection == nil || s.Selection.Start.Line != s.Selection.End.Line {
				t.Errorf("selection %+v", s)
			}
			if _, err := n.AtMentioned(); err == nil {
				t.Error("AtMentioned decoded a selection_changed")
			}
		case mcp.MethodAtMentioned:
			a, err := n.AtMentioned()
			if err != nil {
				t.Fatal(err)
			}
			if a.FilePath != "/p/b.go" || a.LineStart == nil || *a.LineStart != 3 || *a.LineEnd != 5 {
				t.Errorf("at_mentioned %+v", a)
			}
		}
	}
	if diff := cmp.Diff([]string{"selection_changed", "selection_changed", "at_mentioned", "something_new"}, got); diff != "" {
		t.Errorf("kept notifications (-want +got):\n%s", diff)
	}
}

func TestRequestsFromIDE(t *testing.T) {
	f := newFakeIDE(t)
	c := dialFake(t, f, nil)
	conn := f.conn()
	conn.Send([]byte(`{"jsonrpc":"2.0","id":"srv-1","method":"ping"}`))
	conn.Send([]byte(`{"jsonrpc":"2.0","id":77,"method":"roots/list"}`))
	conn.Send([]byte(`{"jsonrpc":"2.0","id":12345,"result":{}}`)) // unknown id: dropped
	conn.Send([]byte(`not json at all`))                          // dropped
	conn.Send([]byte(`{"jsonrpc":"2.0","id":[1],"result":{}}`))   // invalid: dropped
	answers := map[string]*jsonrpc.Message{}
	timeout := time.After(10 * time.Second)
	for len(answers) < 2 {
		select {
		case m := <-conn.Received:
			if m.IsResponse() {
				answers[string(m.ID)] = m
			}
		case <-timeout:
			t.Fatal("the client did not answer the IDE's requests")
		}
	}
	if m := answers[`"srv-1"`]; m == nil || string(m.Result) != "{}" {
		t.Errorf("ping answered %+v", m)
	}
	if m := answers["77"]; m == nil || m.Error == nil || m.Error.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("roots/list answered %+v", m)
	}
	if _, err := c.CallTool(testCtx(t), "still-fine", nil); err != nil {
		t.Fatal(err)
	}
}

func TestMessageTooLarge(t *testing.T) {
	f := newFakeIDE(t)
	f.OnCall = func(c *fakeConn, m *jsonrpc.Message, name string, args json.RawMessage) {
		if name == "big" {
			c.Reply(m.ID, textResult(strings.Repeat("x", 4096)))
			return
		}
		c.Reply(m.ID, textResult("small"))
	}
	c := dialFake(t, f, &ClientOptions{MaxMessageSize: 2048})
	ctx := testCtx(t)
	_, err := c.CallTool(ctx, "small", map[string]string{"s": strings.Repeat("y", 3000)})
	var tooBig *mcpclient.MessageTooLargeError
	if !errors.As(err, &tooBig) || tooBig.Incoming || tooBig.Limit != 2048 || tooBig.Size <= 3000 {
		t.Fatalf("outgoing: %v, want *mcpclient.MessageTooLargeError", err)
	}
	if errors.Is(err, ErrConnectionLost) {
		t.Error("an outgoing message that is too large must not end the connection")
	}
	if _, err := c.CallTool(ctx, "small", nil); err != nil {
		t.Fatalf("after refusing a large message: %v", err)
	}
	_, err = c.CallTool(ctx, "big", nil)
	if !errors.As(err, &tooBig) || !tooBig.Incoming || !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("incoming: %v, want *mcpclient.MessageTooLargeError and ErrConnectionLost", err)
	}
}

func TestCloseIsIdempotentAndUnblocks(t *testing.T) {
	before := runtime.NumGoroutine()
	f := newFakeIDE(t)
	f.OnCall = func(*fakeConn, *jsonrpc.Message, string, json.RawMessage) {}
	c, err := DialURL(testCtx(t), f.URL, f.Token, &ClientOptions{PingInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	conn := f.conn()
	errc := make(chan error, 1)
	go func() {
		_, err := c.OpenDiff(context.Background(), OpenDiffArgs{OldPath: "/a", NewContents: "b"})
		errc <- err
	}()
	conn.waitFor("tools/call", "openDiff")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("pending call after Close: %v, want ErrClosed", err)
	}
	if !errors.Is(c.Err(), ErrClosed) {
		t.Errorf("Err() = %v", c.Err())
	}
	if _, err := c.CallTool(context.Background(), "x", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v", err)
	}
	if _, ok := <-c.Notifications(); ok {
		t.Error("notifications channel still open")
	}
	// Every goroutine of the client is gone once Close returned; the fake
	// server's connection ends when it reads the close frame.
	<-conn.done
	waitGoroutines(t, before+2) // the httptest server's own
}

// waitGoroutines waits until at most n goroutines run; it fails the test if
// that never happens (a leak), never because of how long it took.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want <= %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestClientOptionsRule: a negative MaxMessageSize, which has no "off",
// is refused before anything is dialed.
func TestClientOptionsRule(t *testing.T) {
	f := newFakeIDE(t)
	_, err := DialURL(testCtx(t), f.URL, f.Token, &ClientOptions{MaxMessageSize: -1})
	if err == nil || !strings.Contains(err.Error(), "MaxMessageSize") {
		t.Fatalf("negative MaxMessageSize: %v", err)
	}
	select {
	case <-f.conns:
		t.Error("the client connected despite invalid options")
	default:
	}
}

func TestConnectCandidate(t *testing.T) {
	f := newFakeIDE(t)
	port := f.srv.Listener.Addr().(interface{ String() string }).String()
	_, portStr, _ := strings.Cut(port, ":")
	var p int
	fmt.Sscan(portStr, &p)
	c, err := Connect(testCtx(t), Candidate{Port: p, Transport: "ws", AuthToken: f.Token}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.ServerInfo().Name != "fake-ide" {
		t.Errorf("ServerInfo %+v", c.ServerInfo())
	}
	if _, err := Connect(testCtx(t), Candidate{}, nil); err == nil {
		t.Error("a candidate with neither URL nor port connected")
	}
	if _, err := DialURL(testCtx(t), "ftp://127.0.0.1:1/", "", nil); err == nil {
		t.Error("ftp URL accepted")
	}
}

func TestPIDDefaultAndOff(t *testing.T) {
	f := newFakeIDE(t)
	dialFake(t, f, nil)
	conn := f.conn()
	m := conn.waitFor("ide_connected", "")
	if want := fmt.Sprintf(`{"pid":%d}`, os.Getpid()); string(m.Params) != want {
		t.Errorf("ide_connected %s, want %s", m.Params, want)
	}

	f2 := newFakeIDE(t)
	c := dialFake(t, f2, &ClientOptions{PID: -1})
	if _, err := c.CallTool(testCtx(t), "x", nil); err != nil {
		t.Fatal(err)
	}
	conn2 := f2.conn()
	for len(conn2.Received) > 0 {
		if m := <-conn2.Received; m.Method == "ide_connected" {
			t.Error("ide_connected sent with PID -1")
		}
	}
}

// TestSharedReaderStress mixes concurrent calls, replies out of order and
// late, notifications, cancelled calls and idle gaps (in which the
// background reader takes the reader role back and is interrupted again):
// every call ends with its own answer or its own cancellation, and the
// connection stays healthy.
func TestSharedReaderStress(t *testing.T) {
	f := newFakeIDE(t)
	f.OnCall = func(c *fakeConn, m *jsonrpc.Message, name string, args json.RawMessage) {
		var a struct {
			N     int `json:"n"`
			Delay int `json:"delay"`
		}
		json.Unmarshal(args, &a)
		time.Sleep(time.Duration(a.Delay) * 100 * time.Microsecond)
		if a.N%3 == 0 {
			c.Notify("selection_changed", map[string]any{"text": fmt.Sprint(a.N)})
		}
		c.Reply(m.ID, textResult(fmt.Sprint(a.N)))
	}
	c := dialFake(t, f, &ClientOptions{NotificationBuffer: 8})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				n := w*1000 + i
				ctx := testCtx(t)
				var cancel context.CancelFunc = func() {}
				if i%5 == 0 {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(i%3)*200*time.Microsecond)
				}
				r, err := c.CallTool(ctx, "work", map[string]int{"n": n, "delay": (n * 7) % 20})
				cancel()
				switch {
				case err == nil:
					if r.Text() != fmt.Sprint(n) {
						t.Errorf("call %d got the answer %q", n, r.Text())
					}
				case errors.Is(err, context.DeadlineExceeded) && i%5 == 0:
				default:
					t.Errorf("call %d: %v", n, err)
				}
				if i%7 == 0 {
					time.Sleep(3 * time.Millisecond) // an idle gap
				}
			}
		}()
	}
	wg.Wait()
	if c.Err() != nil {
		t.Fatalf("connection ended: %v", c.Err())
	}
	if _, err := c.CallTool(testCtx(t), "work", map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
}

// TestNotificationWhileIdle: with no call pending, the background reader
// delivers what the IDE sends.
func TestNotificationWhileIdle(t *testing.T) {
	f := newFakeIDE(t)
	c := dialFake(t, f, nil)
	conn := f.conn()
	if _, err := c.CallTool(testCtx(t), "x", nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // past the reader hand-back delay
	conn.Notify("at_mentioned", map[string]any{"filePath": "/p/a.go"})
	select {
	case n := <-c.Notifications():
		if a, err := n.AtMentioned(); err != nil || a.FilePath != "/p/a.go" {
			t.Fatalf("%+v, %v", a, err)
		}
	case <-testCtx(t).Done():
		t.Fatal("no notification delivered while idle")
	}
}
