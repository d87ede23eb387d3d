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
