package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// rawClient is the baseline: the least a client can do to get gopls's
// diagnostics for a change, with sourcegraph/jsonrpc2's VS Code codec. It
// answers gopls's requests from the read loop and signals each
// publishDiagnostics by URI and version.
type rawClient struct {
	cmd  *exec.Cmd
	conn *jsonrpc2.Conn

	mu      sync.Mutex
	waiters map[string]chan json.RawMessage // "uri@version" -> diagnostics
	seen    map[string]json.RawMessage
}

type stdio struct {
	io.ReadCloser
	io.WriteCloser
}

func (s stdio) Close() error {
	s.WriteCloser.Close()
	return s.ReadCloser.Close()
}

func fileURI(p string) string { return (&url.URL{Scheme: "file", Path: p}).String() }

func startRaw(tb testing.TB, gopls, dir string, env []string) *rawClient {
	tb.Helper()
	c := &rawClient{cmd: exec.Command(gopls), waiters: map[string]chan json.RawMessage{}, seen: map[string]json.RawMessage{}}
	c.cmd.Dir, c.cmd.Env = dir, env
	in, err := c.cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	c.conn = jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(stdio{out, in}, jsonrpc2.VSCodeObjectCodec{}),
		jsonrpc2.HandlerWithError(c.handle), jsonrpc2.SetLogger(log.New(io.Discard, "", 0)))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = c.conn.Call(ctx, "initialize", map[string]any{
		"processId": os.Getpid(),
		"rootUri":   fileURI(dir),
		"capabilities": map[string]any{
			"textDocument": map[string]any{"publishDiagnostics": map[string]any{"versionSupport": true}},
			"workspace":    map[string]any{"configuration": true},
			"window":       map[string]any{"workDoneProgress": true},
		},
		"workspaceFolders":      []map[string]string{{"uri": fileURI(dir), "name": "bench"}},
		"initializationOptions": map[string]any{"verboseWorkDoneProgress": true},
	}, nil)
	if err == nil {
		err = c.conn.Notify(ctx, "initialized", struct{}{})
	}
	if err != nil {
		c.close()
		tb.Fatalf("initializing gopls: %v", err)
	}
	tb.Cleanup(c.close)
	return c
}

func (c *rawClient) handle(_ context.Context, _ *jsonrpc2.Conn, r *jsonrpc2.Request) (any, error) {
	switch r.Method {
	case "textDocument/publishDiagnostics":
		var p struct {
			URI         string          `json:"uri"`
			Version     int             `json:"version"`
			Diagnostics json.RawMessage `json:"diagnostics"`
		}
		if r.Params != nil && json.Unmarshal(*r.Params, &p) == nil {
			key := fmt.Sprintf("%s@%d", p.URI, p.Version)
			c.mu.Lock()
			if ch := c.waiters[key]; ch != nil {
				ch <- p.Diagnostics
				delete(c.waiters, key)
			} else {
				c.seen[key] = p.Diagnostics
			}
			c.mu.Unlock()
		}
		return nil, nil
	case "workspace/configuration":
		var p struct{ Items []json.RawMessage }
		if r.Params != nil {
			_ = json.Unmarshal(*r.Params, &p)
		}
		return make([]any, len(p.Items)), nil
	}
	return nil, nil
}

// expect registers interest in the publish of uri at version; call it
// before sending the message that causes it.
func (c *rawClient) expect(uri string, version int) <-chan json.RawMessage {
	key := fmt.Sprintf("%s@%d", uri, version)
	ch := make(chan json.RawMessage, 1)
	c.mu.Lock()
	if d, ok := c.seen[key]; ok {
		ch <- d
		delete(c.seen, key)
	} else {
		c.waiters[key] = ch
	}
	c.mu.Unlock()
	return ch
}

func (c *rawClient) open(ctx context.Context, path, text string, version int) (<-chan json.RawMessage, error) {
	ch := c.expect(fileURI(path), version)
	return ch, c.conn.Notify(ctx, "textDocument/didOpen", map[string]any{
		"textDocument": map[string]any{"uri": fileURI(path), "languageId": "go", "version": version, "text": text},
	})
}

func (c *rawClient) change(ctx context.Context, path, text string, version int) (<-chan json.RawMessage, error) {
	ch := c.expect(fileURI(path), version)
	return ch, c.conn.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": fileURI(path), "version": version},
		"contentChanges": []map[string]string{{"text": text}},
	})
}

func (c *rawClient) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.conn.Call(ctx, "shutdown", nil, nil)
	_ = c.conn.Notify(ctx, "exit", nil)
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		_ = c.cmd.Process.Kill()
		<-done
	}
	_ = c.conn.Close()
}

// wait waits for a publish or fails.
func wait(tb testing.TB, ch <-chan json.RawMessage) json.RawMessage {
	tb.Helper()
	select {
	case d := <-ch:
		return d
	case <-time.After(time.Minute):
		tb.Fatal("no publishDiagnostics within a minute")
		return nil
	}
}
