package ideserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

func openDiffArgs(path, contents, tab string) map[string]any {
	return map[string]any{"old_file_path": path, "new_file_path": path, "new_file_contents": contents, "tab_name": tab}
}

func TestOpenDiffPolicies(t *testing.T) {
	ws := t.TempDir()
	path := filepath.Join(ws, "main.go")
	writeFile(t, path, "package main\n")
	proposed := "package main\n\nfunc main() { println(1) }\n"
	tests := []struct {
		name   string
		policy ideserver.DiffPolicy
		want   []string
	}{
		{"accept", ideserver.AcceptDiffs, []string{"FILE_SAVED", proposed}},
		{"reject", ideserver.RejectDiffs, []string{"DIFF_REJECTED", "tab-1"}},
		{"default rejects", nil, []string{"DIFF_REJECTED", "tab-1"}},
		{"callback edits", ideserver.DiffPolicyFunc(func(_ context.Context, r *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
			return ideserver.SaveDiff(strings.ToUpper(r.NewContents)), nil
		}), []string{"FILE_SAVED", strings.ToUpper(proposed)}},
		{"callback saves empty file", ideserver.DiffPolicyFunc(func(context.Context, *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
			return ideserver.SaveDiff(""), nil
		}), []string{"FILE_SAVED", ""}},
		{"callback closes tab", ideserver.DiffPolicyFunc(func(context.Context, *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
			return ideserver.DiffDecision{Action: ideserver.DiffCloseTab}, nil
		}), []string{"TAB_CLOSED"}},
		{"zero decision rejects", ideserver.DiffPolicyFunc(func(context.Context, *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
			return ideserver.DiffDecision{}, nil
		}), []string{"DIFF_REJECTED", "tab-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t, &ideserver.Options{WorkspaceFolders: []string{ws}, DiffPolicy: tt.policy, NoLockfile: true})
			c := dial(t, srv)
			c.handshake(1)
			got := c.callTool("openDiff", openDiffArgs(path, proposed, "tab-1")).texts()
			if !slices.Equal(got, tt.want) {
				t.Errorf("openDiff: %q, want %q", got, tt.want)
			}
			// The IDE never writes the file itself.
			if b := readFile(t, path); b != "package main\n" {
				t.Errorf("file changed to %q", b)
			}
			// The answered tab stays open until the agent closes it.
			if got := c.callTool("closeAllDiffTabs", nil).texts(); !slices.Equal(got, []string{"CLOSED_1_DIFF_TABS"}) {
				t.Errorf("closeAllDiffTabs after the diff: %v", got)
			}
		})
	}
}

func TestOpenDiffRequestAndErrors(t *testing.T) {
	ws := t.TempDir()
	path := filepath.Join(ws, "a.txt")
	writeFile(t, path, "old text\n")
	reqs := make(chan *ideserver.DiffRequest, 4)
	srv := startServer(t, &ideserver.Options{WorkspaceFolders: []string{ws}, DiffPolicy: ideserver.DiffPolicyFunc(
		func(_ context.Context, r *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
			reqs <- r
			if r.TabName == "fail" {
				return ideserver.DiffDecision{}, errors.New("user interface crashed")
			}
			return ideserver.SaveDiff(r.NewContents), nil
		})})
	c := dial(t, srv)
	c.handshake(77)
	c.callTool("openDiff", openDiffArgs(path, "new text\n", "t1"))
	r := <-reqs
	if r.OldPath != path || r.NewPath != path || r.OldContents != "old text\n" || !r.OldExists ||
		r.NewContents != "new text\n" || r.TabName != "t1" || r.Client.PID != 77 || r.Client.Name != "test-agent" {
		t.Errorf("request %+v", r)
	}
	newFile := filepath.Join(ws, "new.txt")
	c.callTool("openDiff", openDiffArgs(newFile, "fresh\n", "t2"))
	if r := <-reqs; r.OldExists || r.OldContents != "" {
		t.Errorf("new file request %+v", r)
	}
	m := c.call("tools/call", map[string]any{"name": "openDiff", "arguments": openDiffArgs(path, "x", "fail")})
	<-reqs
	if m.Error == nil || m.Error.Code != jsonrpc.CodeServerError || !strings.Contains(m.Error.Message, "user interface crashed") {
		t.Errorf("failing policy: %s", mustMarshal(m))
	}
	for _, args := range []map[string]any{
		{"new_file_path": path, "new_file_contents": "x", "tab_name": "t"},
		{"old_file_path": path, "new_file_contents": "x", "tab_name": "t"},
		{"old_file_path": path, "new_file_path": path, "tab_name": "t"},
		{"old_file_path": path, "new_file_path": path, "new_file_contents": "x"},
	} {
		m := c.call("tools/call", map[string]any{"name": "openDiff", "arguments": args})
		if m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("openDiff %v: %s", args, mustMarshal(m))
		}
	}
}

// blockingPolicy blocks every openDiff until its context ends, reporting
// each request and each context cause.
type blockingPolicy struct {
	started chan *ideserver.DiffRequest
	ended   chan error
}

func newBlockingPolicy() *blockingPolicy {
	return &blockingPolicy{started: make(chan *ideserver.DiffRequest, 16), ended: make(chan error, 16)}
}

func (p *blockingPolicy) Decide(ctx context.Context, r *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
	p.started <- r
	<-ctx.Done()
	p.ended <- context.Cause(ctx)
	// A late "accept" must not win over the closed tab.
	return ideserver.SaveDiff(r.NewContents), ctx.Err()
}

func recvErr(t *testing.T, ch chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(testTimeout):
		t.Fatal("policy context never ended")
	}
	return nil
}

func TestPendingDiffsClosedByAgent(t *testing.T) {
	p := newBlockingPolicy()
	srv := startServer(t, &ideserver.Options{DiffPolicy: p})
	c := dial(t, srv)
	c.handshake(1)
	path := filepath.Join(srv.WorkspaceFolders()[0], "x.go")

	// closeAllDiffTabs (turn start, ESC) rejects every pending diff.
	id1 := c.request("tools/call", map[string]any{"name": "openDiff", "arguments": openDiffArgs(path, "1", "tab-a")})
	id2 := c.request("tools/call", map[string]any{"name": "openDiff", "arguments": openDiffArgs(path, "2", "tab-b")})
	<-p.started
	<-p.started
	idAll := c.request("tools/call", map[string]any{"name": "closeAllDiffTabs", "arguments": map[string]any{}})
	got := map[string][]string{}
	for range 3 {
		m := c.next()
		got[string(m.ID)] = decodeResult(t, m).texts()
	}
	if !slices.Equal(got[string(id1)], []string{"DIFF_REJECTED", "tab-a"}) || !slices.Equal(got[string(id2)], []string{"DIFF_REJECTED", "tab-b"}) {
		t.Errorf("pending diffs answered %v", got)
	}
	if !slices.Equal(got[string(idAll)], []string{"CLOSED_2_DIFF_TABS"}) {
		t.Errorf("closeAllDiffTabs answered %v", got[string(idAll)])
	}
	for range 2 {
		if err := recvErr(t, p.ended); !errors.Is(err, ideserver.ErrDiffClosed) {
			t.Errorf("policy context cause %v, want ErrDiffClosed", err)
		}
	}

	// close_tab on a pending diff rejects it.
	id := c.request("tools/call", map[string]any{"name": "openDiff", "arguments": openDiffArgs(path, "3", "tab-c")})
	<-p.started
	idClose := c.request("tools/call", map[string]any{"name": "close_tab", "arguments": map[string]any{"tab_name": "tab-c"}})
	got = map[string][]string{}
	for range 2 {
		m := c.next()
		got[string(m.ID)] = decodeResult(t, m).texts()
	}
	if !slices.Equal(got[string(id)], []string{"DIFF_REJECTED", "tab-c"}) || !slices.Equal(got[string(idClose)], []string{"TAB_CLOSED"}) {
		t.Errorf("close_tab on a pending diff: %v", got)
	}
	recvErr(t, p.ended)

	// A second openDiff with the same tab name replaces the first.
	first := c.request("tools/call", map[string]any{"name": "openDiff", "arguments": openDiffArgs(path, "4", "same")})
	<-p.started
	c.request("tools/call", map[string]any{"name": "openDiff", "arguments": openDiffArgs(path, "5", "same")})
	m := c.next()
	if string(m.ID) != string(first) || !slices.Equal(decodeResult(t, m).texts(), []string{"DIFF_REJECTED", "same"}) {
		t.Errorf("replaced diff: %s", mustMarshal(m))
	}
	recvErr(t, p.ended)
	<-p.started
	// The second is still pending; Close (at cleanup) answers it.
}

func TestCloseWithPendingDiff(t *testing.T) {
	p := newBlockingPolicy()
	ev := newEvents()
	ws := t.TempDir()
	srv, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{ws}, LockfileDir: t.TempDir(), DiffPolicy: p, OnEvent: ev.hook})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv)
	c.handshake(1)
	id := c.request("tools/call", map[string]any{"name": "openDiff", "arguments": openDiffArgs(filepath.Join(ws, "f"), "x", "tab")})
	<-p.started
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	// The pending diff was answered before the connection closed.
	m := c.next()
	if string(m.ID) != string(id) || !slices.Equal(decodeResult(t, m).texts(), []string{"DIFF_REJECTED", "tab"}) {
		t.Errorf("pending diff at Close: %s", mustMarshal(m))
	}
	if err := recvErr(t, p.ended); !errors.Is(err, ideserver.ErrServerClosed) {
		t.Errorf("policy cause %v, want ErrServerClosed", err)
	}
	for range c.in {
	}
	if err := <-c.errc; !isCloseCode(err, 1001) {
		t.Errorf("connection ended with %v, want close 1001", err)
	}
	ev.waitFor(t, ideserver.EventDisconnected)
	if n := len(srv.Clients()); n != 0 {
		t.Errorf("%d clients after Close", n)
	}
	checkNoServerGoroutines(t)
}

func TestCancellation(t *testing.T) {
	srv := startServer(t, nil)
	started := make(chan struct{}, 1)
	causes := make(chan error, 1)
	if err := srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: "slow"}, Handler: func(ctx context.Context, _ *ideserver.ToolCall) (*mcp.ToolResult, error) {
		started <- struct{}{}
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return mcp.TextResult("too late"), nil
	}}); err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv)
	c.handshake(1)
	id := c.request("tools/call", map[string]any{"name": "slow"})
	<-started
	c.notify("notifications/cancelled", map[string]any{"requestId": json.RawMessage(id), "reason": "user pressed ESC"})
	if err := recvErr(t, causes); !errors.Is(err, ideserver.ErrRequestCancelled) {
		t.Errorf("cause %v, want ErrRequestCancelled", err)
	}
	// No answer for the cancelled call: the next message answers the ping.
	if m := c.call("ping", nil); m.Error != nil {
		t.Errorf("ping: %s", mustMarshal(m))
	}

	// A pending openDiff is cancelled the same way, without an answer.
	p := newBlockingPolicy()
	srv2 := startServer(t, &ideserver.Options{DiffPolicy: p})
	c2 := dial(t, srv2)
	c2.handshake(1)
	id = c2.request("tools/call", map[string]any{"name": "openDiff", "arguments": openDiffArgs(filepath.Join(srv2.WorkspaceFolders()[0], "f"), "x", "t")})
	<-p.started
	c2.notify("notifications/cancelled", map[string]any{"requestId": json.RawMessage(id)})
	if err := recvErr(t, p.ended); !errors.Is(err, ideserver.ErrRequestCancelled) {
		t.Errorf("diff cause %v, want ErrRequestCancelled", err)
	}
	if m := c2.call("ping", nil); m.Error != nil {
		t.Errorf("ping: %s", mustMarshal(m))
	}
}

func TestClientDisconnectCancelsHandlers(t *testing.T) {
	p := newBlockingPolicy()
	ev := newEvents()
	srv := startServer(t, &ideserver.Options{DiffPolicy: p, OnEvent: ev.hook})
	c := dial(t, srv)
	c.handshake(1)
	c.request("tools/call", map[string]any{"name": "openDiff", "arguments": openDiffArgs(filepath.Join(srv.WorkspaceFolders()[0], "f"), "x", "t")})
	<-p.started
	c.close()
	if err := recvErr(t, p.ended); !errors.Is(err, ideserver.ErrClientGone) {
		t.Errorf("cause %v, want ErrClientGone", err)
	}
	ev.waitFor(t, ideserver.EventDisconnected)
}

func TestShutdownGraceful(t *testing.T) {
	srv := startServer(t, nil)
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	if err := srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: "work"}, Handler: func(ctx context.Context, _ *ideserver.ToolCall) (*mcp.ToolResult, error) {
		started <- struct{}{}
		select {
		case <-release:
			return mcp.TextResult("done"), nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}}); err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv)
	c.handshake(1)
	id := c.request("tools/call", map[string]any{"name": "work"})
	<-started

	// A Shutdown whose context ends first reports it; the handler is then
	// cancelled with ErrServerClosed and still answered.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := srv.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown with a done context: %v", err)
	}
	m := c.next()
	if string(m.ID) != string(id) || m.Error == nil || !strings.Contains(m.Error.Message, "server closed") {
		t.Errorf("cancelled handler answered %s", mustMarshal(m))
	}
	close(release)
}

func TestShutdownWaitsForHandlers(t *testing.T) {
	srv := startServer(t, nil)
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	if err := srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: "work"}, Handler: func(ctx context.Context, _ *ideserver.ToolCall) (*mcp.ToolResult, error) {
		started <- struct{}{}
		<-release
		return mcp.TextResult("done"), ctx.Err()
	}}); err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv)
	c.handshake(1)
	id := c.request("tools/call", map[string]any{"name": "work"})
	<-started
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(context.Background()) }()
	// New calls are refused while shutting down...
	for {
		m := c.call("tools/call", map[string]any{"name": "closeAllDiffTabs"})
		if m.Error != nil {
			if !strings.Contains(m.Error.Message, "shutting down") {
				t.Errorf("call during shutdown: %s", mustMarshal(m))
			}
			break
		}
		time.Sleep(time.Millisecond) // Shutdown has not begun yet
	}
	// ...while the running one finishes with a live context.
	close(release)
	m := c.next()
	if string(m.ID) != string(id) || m.Error != nil || !slices.Equal(decodeResult(t, m).texts(), []string{"done"}) {
		t.Errorf("graceful handler answered %s", mustMarshal(m))
	}
	if err := <-done; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}
