//go:build linux

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
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/sourcegraph/jsonrpc2"
)

// rawLSP is the conformance suite's independent witness: the least a
// client can do to see what a language server publishes, written apart
// from package lsp (its own framing through jsonrpc2's VS Code codec, its
// own URIs, its own column conversion, no pull diagnostics so that every
// server publishes). It records every publishDiagnostics as it arrives.
type rawLSP struct {
	cmd  *exec.Cmd
	conn *jsonrpc2.Conn
	dir  string

	mu     sync.Mutex
	texts  map[string]string   // uri -> text as sent
	sets   map[string][]string // uri -> last published set, normalized
	pubs   map[string]int      // uri -> publishes received
	last   time.Time           // last publish
	notify chan struct{}       // signalled at every publish
}

func rawURI(p string) string { return (&url.URL{Scheme: "file", Path: p}).String() }

type rawStdio struct {
	io.ReadCloser
	io.WriteCloser
}

func (s rawStdio) Close() error {
	s.WriteCloser.Close()
	return s.ReadCloser.Close()
}

// startRawLSP starts command in dir and initializes it.
func startRawLSP(t *testing.T, dir string, env []string, initOpts json.RawMessage, command string, args ...string) *rawLSP {
	t.Helper()
	c := &rawLSP{cmd: exec.Command(command, args...), dir: dir, texts: map[string]string{}, sets: map[string][]string{},
		pubs: map[string]int{}, notify: make(chan struct{}, 1)}
	c.cmd.Dir, c.cmd.Env = dir, env
	// Its own process group, killed at the end: servers start workers
	// (typescript-language-server runs tsserver).
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := c.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.conn = jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(rawStdio{out, in}, jsonrpc2.VSCodeObjectCodec{}),
		jsonrpc2.HandlerWithError(c.handle), jsonrpc2.SetLogger(log.New(io.Discard, "", 0)))
	t.Cleanup(c.close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	params := map[string]any{
		"processId": os.Getpid(),
		"rootUri":   rawURI(dir),
		"capabilities": map[string]any{
			"textDocument": map[string]any{
				"publishDiagnostics": map[string]any{"versionSupport": true},
				"synchronization":    map[string]any{"didSave": true},
			},
			"workspace": map[string]any{"configuration": true, "workspaceFolders": true},
			"window":    map[string]any{"workDoneProgress": true},
		},
		"workspaceFolders": []map[string]string{{"uri": rawURI(dir), "name": "conformance"}},
	}
	if len(initOpts) > 0 {
		params["initializationOptions"] = initOpts
	}
	if err := c.conn.Call(ctx, "initialize", params, nil); err != nil {
		t.Fatalf("raw client: initializing %s: %v", command, err)
	}
	if err := c.conn.Notify(ctx, "initialized", struct{}{}); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *rawLSP) handle(_ context.Context, _ *jsonrpc2.Conn, r *jsonrpc2.Request) (any, error) {
	switch r.Method {
	case "textDocument/publishDiagnostics":
		var p struct {
			URI         string `json:"uri"`
			Diagnostics []struct {
				Range struct {
					Start struct{ Line, Character int } `json:"start"`
					End   struct{ Line, Character int } `json:"end"`
				} `json:"range"`
				Severity int    `json:"severity"`
				Message  string `json:"message"`
			} `json:"diagnostics"`
		}
		if r.Params == nil || json.Unmarshal(*r.Params, &p) != nil {
			return nil, nil
		}
		uri, err := url.PathUnescape(p.URI)
		if err != nil {
			uri = p.URI
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		lines := strings.Split(strings.ReplaceAll(c.texts[uri], "\r\n", "\n"), "\n")
		col := func(line, units int) int {
			if line < 0 || line >= len(lines) {
				return units + 1
			}
			return utf16ToRunes(lines[line], units) + 1
		}
		set := map[string]bool{}
		for _, d := range p.Diagnostics {
			sev := d.Severity
			if sev == 0 {
				sev = 1
			}
			set[fmt.Sprintf("%d:%d-%d:%d %d %s", d.Range.Start.Line+1, col(d.Range.Start.Line, d.Range.Start.Character),
				d.Range.End.Line+1, col(d.Range.End.Line, d.Range.End.Character), sev, strings.TrimSpace(d.Message))] = true
		}
		out := []string{}
		for s := range set {
			out = append(out, s)
		}
		sort.Strings(out)
		c.sets[uri] = out
		c.pubs[uri]++
		c.last = time.Now()
		select {
		case c.notify <- struct{}{}:
		default:
		}
		return nil, nil
	case "workspace/configuration":
		var p struct{ Items []json.RawMessage }
		if r.Params != nil {
			_ = json.Unmarshal(*r.Params, &p)
		}
		return make([]any, len(p.Items)), nil
	case "workspace/workspaceFolders":
		return []map[string]string{{"uri": rawURI(c.dir), "name": "conformance"}}, nil
	}
	return nil, nil
}

// utf16ToRunes converts a UTF-16 column on line to a count of characters
// (clamped to the line).
func utf16ToRunes(line string, units int) int {
	n, u := 0, 0
	for _, r := range line {
		w := len(utf16.Encode([]rune{r}))
		if u+w > units {
			return n
		}
		u += w
		n++
	}
	return n
}

func (c *rawLSP) open(path, lang, text string) {
	uri := rawURI(path)
	c.mu.Lock()
	c.texts[uri] = text
	c.mu.Unlock()
	_ = c.conn.Notify(context.Background(), "textDocument/didOpen", map[string]any{
		"textDocument": map[string]any{"uri": uri, "languageId": lang, "version": 1, "text": text},
	})
}

func (c *rawLSP) change(path, text string, version int) {
	uri := rawURI(path)
	c.mu.Lock()
	c.texts[uri] = text
	c.mu.Unlock()
	_ = c.conn.Notify(context.Background(), "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": version},
		"contentChanges": []map[string]string{{"text": text}},
	})
}

func (c *rawLSP) save(path string) {
	_ = c.conn.Notify(context.Background(), "textDocument/didSave", map[string]any{
		"textDocument": map[string]string{"uri": rawURI(path)},
	})
}

// counts returns how many publishes each of paths has had.
func (c *rawLSP) counts(paths ...string) []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]int, len(paths))
	for i, p := range paths {
		out[i] = c.pubs[rawURI(p)]
	}
	return out
}

// settle waits until every path in need has had a publish beyond its
// count in before, and then until the server has published nothing at all
// for quiet; at most limit in all. It returns the last set of each path
// and whether the server ever published for it.
func (c *rawLSP) settle(t *testing.T, quiet, limit time.Duration, need []string, before []int, paths ...string) (map[string][]string, map[string]bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	start := time.Now()
	for {
		c.mu.Lock()
		ready := true
		for i, p := range need {
			if c.pubs[rawURI(p)] <= before[i] {
				ready = false
			}
		}
		last := c.last
		c.mu.Unlock()
		if last.Before(start) {
			last = start
		}
		if ready && time.Since(last) >= quiet {
			break
		}
		if time.Now().After(deadline) {
			if !ready {
				break // the caller sees the missing publish in its result
			}
			t.Fatalf("raw client: the server did not go quiet for %v within %v", quiet, limit)
		}
		select {
		case <-c.notify:
		case <-time.After(50 * time.Millisecond):
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	sets, seen := map[string][]string{}, map[string]bool{}
	for _, p := range paths {
		u := rawURI(p)
		sets[p] = append([]string(nil), c.sets[u]...)
		seen[p] = c.pubs[u] > 0
	}
	return sets, seen
}

func (c *rawLSP) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.conn.Call(ctx, "shutdown", nil, nil)
	_ = c.conn.Notify(ctx, "exit", nil)
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	<-done
	_ = c.conn.Close()
}
