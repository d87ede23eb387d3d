package ideserver_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// Request ids must be unique among a session's requests in flight (MCP,
// basic: "MUST NOT match the ID of any other request the sender has issued
// and not yet received a response for"). A client that reuses the id of a
// running tools/call gets an error for the reuse, and the call it reused
// keeps running and stays cancellable: 20,000 calls with one id run one
// handler, not 20,000, and cancelling that id ends it.
func TestDuplicateInflightIDRefused(t *testing.T) {
	srv := newStreamServer(t, &ideserver.Options{NoDefaultTools: true})
	var running, ended atomic.Int64
	started := make(chan struct{}, 1)
	mustRegister(t, srv, ideserver.Tool{
		Tool: mcp.Tool{Name: "block"},
		Handler: func(ctx context.Context, _ *ideserver.ToolCall) (*mcp.ToolResult, error) {
			running.Add(1)
			defer ended.Add(1)
			select {
			case started <- struct{}{}:
			default:
			}
			<-ctx.Done()
			return nil, ctx.Err()
		},
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx := testContext(t)
	done := make(chan error, 1)
	go func() {
		done <- srv.ServeStream(ctx, inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })

	const n = 20000
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block"}}` + "\n"
	if _, err := io.WriteString(inW, call); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(testTimeout):
		t.Fatal("the first call did not start")
	}
	go func() {
		w := bufio.NewWriter(inW)
		for range n - 1 {
			w.WriteString(call)
		}
		w.Flush()
	}()
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	refused := 0
	deadline := time.AfterFunc(testTimeout, func() { outR.Close() })
	for refused < n-1 && sc.Scan() {
		m, err := decodeServerMessage(sc.Bytes())
		if err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		if string(m.ID) != "7" || m.Error == nil || m.Error.Code != mcp.CodeInvalidRequest || !strings.Contains(string(m.Error.Data), "already in flight") {
			t.Fatalf("answer %d to a reused id: %s", refused+1, mustMarshal(m))
		}
		refused++
	}
	deadline.Stop()
	if refused != n-1 {
		t.Fatalf("%d of %d calls reusing a running call's id were refused; %d handlers ran", refused, n-1, running.Load())
	}
	if r := running.Load(); r != 1 {
		t.Fatalf("%d handlers ran for one id", r)
	}
	if g := runtime.NumGoroutine(); g > 200 {
		t.Errorf("%d goroutines after the refusals", g)
	}
	// The one that runs is the one cancelled.
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`+"\n")
	for end := time.Now().Add(testTimeout); ended.Load() != 1; {
		if time.Now().After(end) {
			t.Fatal("the running call was not cancelled")
		}
		time.Sleep(time.Millisecond)
	}
	// The id is free again once its call ended.
	io.WriteString(inW, call)
	select {
	case <-started:
	case <-time.After(testTimeout):
		t.Fatal("the id was not free again after its call ended")
	}
	inW.Close()
	if err := <-done; err != nil && !errors.Is(err, io.ErrClosedPipe) {
		t.Fatal(fmt.Errorf("ServeStream: %w", err))
	}
}

// Issue 19 row 8: an answer never grows with the input. A tool name of a
// megabyte is quoted clipped in "Tool not found"; a handler's error and
// its isError result that quote a megabyte of input are clipped on the
// wire. (TestMCPHugeInputs sends 8 MiB to the real command.)
func TestErrorTextsClipped(t *testing.T) {
	srv := newStreamServer(t, &ideserver.Options{NoDefaultTools: true})
	mustRegister(t, srv, ideserver.Tool{
		Tool: mcp.Tool{Name: "quote"},
		Handler: func(_ context.Context, c *ideserver.ToolCall) (*mcp.ToolResult, error) {
			var a struct {
				Path string `json:"path"`
				Fail bool   `json:"fail"`
			}
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			if a.Fail {
				return nil, errors.New("cannot open " + a.Path)
			}
			return mcp.ErrorResult("no file " + a.Path + " (" + a.Path + ")"), nil
		},
	})
	c := serveStream(t, testContext(t), srv)
	big := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		name   string
		params map[string]any
	}{
		{"tool name", map[string]any{"name": big}},
		{"error", map[string]any{"name": "quote", "arguments": map[string]any{"path": big, "fail": true}}},
		{"isError result", map[string]any{"name": "quote", "arguments": map[string]any{"path": big}}},
		{"argument name", map[string]any{"name": "quote", "arguments": map[string]any{big: 1}}},
	} {
		id := c.request(mcp.MethodCallTool, tc.params)
		c.wait(id)
		c.mu.Lock()
		last := c.lines[len(c.lines)-1]
		c.mu.Unlock()
		if len(last) > 8<<10 || !strings.Contains(last, "bytes)") && tc.name != "argument name" {
			t.Errorf("%s: answer of %d bytes: %.300s", tc.name, len(last), last)
		}
	}
}

// Issue 19 row 8: calls holding large arguments are bounded together by
// one message's worth (MaxMessageSize): three calls of 6 MiB arguments
// under an 8 MiB limit, while the first runs, leave the other two
// refused, not three copies held. (TestMCPHugeInputs does it with 60 MiB
// under the default limit, on the real command.)
func TestLargeArgumentsBounded(t *testing.T) {
	srv := newStreamServer(t, &ideserver.Options{NoDefaultTools: true, MaxMessageSize: 8 << 20})
	release := make(chan struct{})
	var ran atomic.Int64
	mustRegister(t, srv, ideserver.Tool{
		Tool: mcp.Tool{Name: "hold"},
		Handler: func(ctx context.Context, _ *ideserver.ToolCall) (*mcp.ToolResult, error) {
			ran.Add(1)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return mcp.TextResult("ok"), nil
		},
	})
	c := serveStream(t, testContext(t), srv)
	big := strings.Repeat("y", 6<<20)
	ids := make([]string, 3)
	for i := range ids {
		ids[i] = string(c.request(mcp.MethodCallTool, map[string]any{"name": "hold", "arguments": map[string]any{"data": big}}))
	}
	for range 2 {
		m := c.next()
		if m.Error == nil || !strings.Contains(m.Error.Message, "server busy") {
			t.Fatalf("a call over the argument budget: %.300s", mustMarshal(m))
		}
	}
	close(release)
	if m := c.next(); m.Error != nil || string(m.ID) != ids[0] {
		t.Fatalf("the running call: %.300s", mustMarshal(m))
	}
	if n := ran.Load(); n != 1 {
		t.Errorf("%d handlers ran", n)
	}
	// Its bytes are given back: the next large call runs.
	if m := c.call(mcp.MethodCallTool, map[string]any{"name": "hold", "arguments": map[string]any{"data": big}}); m.Error != nil {
		t.Fatalf("a large call after the first ended: %.300s", mustMarshal(m))
	}
}
