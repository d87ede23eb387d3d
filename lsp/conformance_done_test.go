//go:build linux

package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// doneLSP is the witness of the extended conformance suite
// (conformance_servers_test.go): like rawLSP, a client written apart from
// package lsp that only pushes documents and records what the server
// publishes, but one that also knows when the server is done. It tracks
// every readiness signal a server gives, without knowing any server by
// name:
//   - work-done progress: a token the server created
//     (window/workDoneProgress/create) or began counts as work until it
//     ends;
//   - rust-analyzer's experimental/serverStatus (the capability
//     experimental.serverStatusNotification turns it on): work until
//     quiescent;
//   - any message at all from the server (a publish, a progress report, a
//     request to the client, a log line) restarts the quiet period.
//
// It offers no pull diagnostics, so that every server publishes, and the
// same navigation capabilities as package lsp, so that the answers it gets
// are the ones a Manager gets. Every message it sees is kept, with its
// time, for a failing test to show.
type doneLSP struct {
	cmd  *exec.Cmd
	conn *jsonrpc2.Conn
	dir  string
	t0   time.Time

	mu        sync.Mutex
	texts     map[string]string   // uri -> text as sent
	sets      map[string][]string // uri -> last published set, normalized
	pubs      map[string]int      // uri -> publishes received
	pubAt     map[string]time.Time
	created   map[string]time.Time
	begun     map[string]string // token -> title, while it runs
	statusSet bool              // a serverStatus was seen
	quiescent bool
	last      time.Time
	caps      map[string]json.RawMessage
	trace     []string
	notify    chan struct{}
	settings  map[string]json.RawMessage // section -> value
}

// startDoneLSP starts command in dir and initializes it.
// settings, when set, is sent with workspace/didChangeConfiguration, and
// its top-level keys answer workspace/configuration by section.
func startDoneLSP(t *testing.T, dir string, env []string, initOpts, settings json.RawMessage, command string, args ...string) *doneLSP {
	t.Helper()
	c := &doneLSP{cmd: exec.Command(command, args...), dir: dir, t0: time.Now(), texts: map[string]string{},
		sets: map[string][]string{}, pubs: map[string]int{}, pubAt: map[string]time.Time{}, created: map[string]time.Time{}, begun: map[string]string{},
		notify: make(chan struct{}, 1), settings: map[string]json.RawMessage{}}
	if len(settings) > 0 {
		if err := json.Unmarshal(settings, &c.settings); err != nil {
			t.Fatalf("settings: %v", err)
		}
	}
	c.cmd.Dir, c.cmd.Env = dir, env
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
		"rootPath":  dir,
		"capabilities": map[string]any{
			"textDocument": map[string]any{
				"publishDiagnostics": map[string]any{"versionSupport": true, "relatedInformation": true},
				"synchronization":    map[string]any{"didSave": true},
				"hover":              map[string]any{"contentFormat": []string{"markdown", "plaintext"}},
				"definition":         map[string]any{"linkSupport": true},
				"references":         map[string]any{},
				"documentSymbol":     map[string]any{"hierarchicalDocumentSymbolSupport": true},
			},
			"workspace":    map[string]any{"configuration": true, "workspaceFolders": true},
			"window":       map[string]any{"workDoneProgress": true},
			"experimental": map[string]any{"serverStatusNotification": true},
		},
		"workspaceFolders": []map[string]string{{"uri": rawURI(dir), "name": filepath.Base(dir)}},
	}
	if len(initOpts) > 0 {
		params["initializationOptions"] = initOpts
	}
	var res struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if err := c.conn.Call(ctx, "initialize", params, &res); err != nil {
		t.Fatalf("raw client: initializing %s: %v", command, err)
	}
	c.mu.Lock()
	c.caps = res.Capabilities
	c.mu.Unlock()
	if err := c.conn.Notify(ctx, "initialized", struct{}{}); err != nil {
		t.Fatal(err)
	}
	if len(settings) > 0 {
		if err := c.conn.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": settings}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// offers reports whether the server's capabilities enable provider.
func (c *doneLSP) offers(provider string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.caps[provider]
	return ok && !bytes.Equal(bytes.TrimSpace(v), []byte("false")) && !bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

func (c *doneLSP) logf(format string, args ...any) {
	c.trace = append(c.trace, fmt.Sprintf("%7.3fs ", time.Since(c.t0).Seconds())+fmt.Sprintf(format, args...))
}

func (c *doneLSP) handle(_ context.Context, _ *jsonrpc2.Conn, r *jsonrpc2.Request) (any, error) {
	var params json.RawMessage
	if r.Params != nil {
		params = *r.Params
	}
	c.mu.Lock()
	defer func() {
		c.last = time.Now()
		c.mu.Unlock()
		select {
		case c.notify <- struct{}{}:
		default:
		}
	}()
	switch r.Method {
	case "textDocument/publishDiagnostics":
		var p struct {
			URI         string `json:"uri"`
			Version     *int   `json:"version"`
			Diagnostics []struct {
				Range struct {
					Start struct{ Line, Character int } `json:"start"`
					End   struct{ Line, Character int } `json:"end"`
				} `json:"range"`
				Severity int    `json:"severity"`
				Message  string `json:"message"`
			} `json:"diagnostics"`
		}
		if json.Unmarshal(params, &p) != nil {
			return nil, nil
		}
		uri, err := url.PathUnescape(p.URI)
		if err != nil {
			uri = p.URI
		}
		text, ok := c.texts[uri]
		if !ok {
			if data, err := os.ReadFile(strings.TrimPrefix(uri, "file://")); err == nil {
				text = string(data)
			}
		}
		lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
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
		c.pubAt[uri] = time.Now()
		v := "-"
		if p.Version != nil {
			v = fmt.Sprint(*p.Version)
		}
		c.logf("publish %s v%s: %d", filepath.Base(uri), v, len(out))
	case "$/progress":
		var p struct {
			Token json.RawMessage `json:"token"`
			Value struct {
				Kind    string `json:"kind"`
				Title   string `json:"title"`
				Message string `json:"message"`
			} `json:"value"`
		}
		if json.Unmarshal(params, &p) != nil {
			return nil, nil
		}
		tok := string(p.Token)
		switch p.Value.Kind {
		case "begin":
			c.begun[tok] = p.Value.Title
		case "end":
			delete(c.begun, tok)
			delete(c.created, tok)
		}
		c.logf("progress %s %s %q %q", tok, p.Value.Kind, p.Value.Title, p.Value.Message)
	case "window/workDoneProgress/create":
		var p struct {
			Token json.RawMessage `json:"token"`
		}
		_ = json.Unmarshal(params, &p)
		c.created[string(p.Token)] = time.Now()
		c.logf("create progress %s", p.Token)
		return nil, nil
	case "experimental/serverStatus":
		var p struct {
			Health    string `json:"health"`
			Quiescent bool   `json:"quiescent"`
			Message   string `json:"message"`
		}
		_ = json.Unmarshal(params, &p)
		c.statusSet, c.quiescent = true, p.Quiescent
		c.logf("serverStatus %s quiescent=%v %q", p.Health, p.Quiescent, p.Message)
	case "workspace/configuration":
		var p struct {
			Items []struct {
				Section string `json:"section"`
			} `json:"items"`
		}
		_ = json.Unmarshal(params, &p)
		out := make([]json.RawMessage, len(p.Items))
		var secs []string
		for i, it := range p.Items {
			out[i] = json.RawMessage("null")
			if v, ok := c.settings[it.Section]; ok {
				out[i] = v
			}
			secs = append(secs, it.Section)
		}
		c.logf("request %s %q", r.Method, secs)
		return out, nil
	case "workspace/workspaceFolders":
		c.logf("request %s", r.Method)
		return []map[string]string{{"uri": rawURI(c.dir), "name": filepath.Base(c.dir)}}, nil
	case "window/logMessage", "window/showMessage":
		var p struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(params, &p)
		if len(p.Message) > 300 {
			p.Message = p.Message[:300] + "…"
		}
		c.logf("%s %q", r.Method, p.Message)
	default:
		if r.Notif {
			c.logf("notification %s", r.Method)
		} else {
			c.logf("request %s", r.Method)
		}
	}
	return nil, nil
}

// busy says what the server is still doing, or "".
func (c *doneLSP) busy() string {
	var work []string
	for tok, title := range c.begun {
		work = append(work, fmt.Sprintf("progress %s %q", tok, title))
	}
	for tok, at := range c.created {
		// A token created and never begun is work for a while; a
		// server that never uses it does not hold the witness forever.
		if _, ok := c.begun[tok]; !ok && time.Since(at) < 10*time.Second {
			work = append(work, "created progress "+tok)
		}
	}
	if c.statusSet && !c.quiescent {
		work = append(work, "serverStatus not quiescent")
	}
	sort.Strings(work)
	return strings.Join(work, ", ")
}

func (c *doneLSP) open(path, lang, text string) {
	uri := rawURI(path)
	c.mu.Lock()
	c.texts[uri] = text
	c.logf("didOpen %s", filepath.Base(path))
	c.mu.Unlock()
	_ = c.conn.Notify(context.Background(), "textDocument/didOpen", map[string]any{
		"textDocument": map[string]any{"uri": uri, "languageId": lang, "version": 1, "text": text},
	})
}

func (c *doneLSP) change(path, text string, version int) {
	uri := rawURI(path)
	c.mu.Lock()
	c.texts[uri] = text
	c.logf("didChange %s v%d", filepath.Base(path), version)
	c.mu.Unlock()
	_ = c.conn.Notify(context.Background(), "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": version},
		"contentChanges": []map[string]string{{"text": text}},
	})
}

func (c *doneLSP) save(path string) {
	c.mu.Lock()
	c.logf("didSave %s", filepath.Base(path))
	c.mu.Unlock()
	_ = c.conn.Notify(context.Background(), "textDocument/didSave", map[string]any{
		"textDocument": map[string]string{"uri": rawURI(path)},
	})
}

func (c *doneLSP) counts(paths ...string) []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]int, len(paths))
	for i, p := range paths {
		out[i] = c.pubs[rawURI(p)]
	}
	return out
}

// waitDone waits until every path in need has had a publish beyond its
// count in before, no work is going on (busy), and the server has sent
// nothing at all for quiet; at most limit. It returns how long it took
// to the last publish for a path in need (the time to the final answer),
// the last set of each of paths and whether the server ever published for
// it.
func (c *doneLSP) waitDone(t *testing.T, quiet, limit time.Duration, need []string, before []int, paths ...string) (time.Duration, map[string][]string, map[string]bool) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(limit)
	for {
		c.mu.Lock()
		ready := true
		for i, p := range need {
			if c.pubs[rawURI(p)] <= before[i] {
				ready = false
			}
		}
		busy := c.busy()
		last := c.last
		c.mu.Unlock()
		if last.Before(start) {
			last = start
		}
		if ready && busy == "" && time.Since(last) >= quiet {
			break
		}
		if time.Now().After(deadline) {
			if ready && busy == "" {
				t.Fatalf("raw client: the server did not go quiet for %v within %v", quiet, limit)
			}
			t.Logf("raw client: not done within %v (published for all: %v; busy: %s)", limit, ready, busy)
			break
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
	var took time.Duration
	for _, p := range need {
		if d := c.pubAt[rawURI(p)].Sub(start); d > took {
			took = d
		}
	}
	return took, sets, seen
}

// call sends a request and returns its raw result.
func (c *doneLSP) call(method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out json.RawMessage
	err := c.conn.Call(ctx, method, params, &out)
	return out, err
}

// lspPosition converts a 1-based line and character column of path (as
// on disk) to an LSP position in UTF-16 units.
func rawPosition(t *testing.T, path string, line, col int) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		t.Fatalf("%s has no line %d", path, line)
	}
	units := 0
	for i, r := range []rune(lines[line-1]) {
		if i >= col-1 {
			break
		}
		if r >= 0x10000 {
			units += 2
		} else {
			units++
		}
	}
	return map[string]int{"line": line - 1, "character": units}
}

// rawPlace writes an LSP range start as rel:line:col (characters, from
// the file on disk).
func rawPlace(dir, uri string, line, units int) string {
	p, err := url.PathUnescape(strings.TrimPrefix(uri, "file://"))
	if err != nil {
		p = strings.TrimPrefix(uri, "file://")
	}
	col := units + 1
	if data, err := os.ReadFile(p); err == nil {
		lines := strings.Split(string(data), "\n")
		if line >= 0 && line < len(lines) {
			col = utf16ToRunes(lines[line], units) + 1
		}
	}
	if r, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(r, "..") {
		p = r
	}
	return fmt.Sprintf("%s:%d:%d", p, line+1, col)
}

type rawRange struct {
	Start struct{ Line, Character int } `json:"start"`
}

// rawLocations normalizes Location | Location[] | LocationLink[] | null
// to sorted distinct places (a link's selection range when it has one).
func rawLocations(dir string, raw json.RawMessage) []string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return []string{}
	}
	if raw[0] == '{' {
		raw = append(append([]byte{'['}, raw...), ']')
	}
	var list []struct {
		URI                  string    `json:"uri"`
		Range                *rawRange `json:"range"`
		TargetURI            string    `json:"targetUri"`
		TargetRange          *rawRange `json:"targetRange"`
		TargetSelectionRange *rawRange `json:"targetSelectionRange"`
	}
	_ = json.Unmarshal(raw, &list)
	set := map[string]bool{}
	for _, l := range list {
		uri, r := l.URI, l.Range
		if l.TargetURI != "" {
			uri, r = l.TargetURI, l.TargetRange
			if l.TargetSelectionRange != nil {
				r = l.TargetSelectionRange
			}
		}
		if r == nil {
			continue
		}
		set[rawPlace(dir, uri, r.Start.Line, r.Start.Character)] = true
	}
	out := []string{}
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// rawHover returns the non-empty texts of a hover's contents.
func rawHover(raw json.RawMessage) []string {
	var h struct {
		Contents json.RawMessage `json:"contents"`
	}
	if json.Unmarshal(raw, &h) != nil || len(h.Contents) == 0 {
		return nil
	}
	var parts []json.RawMessage
	if json.Unmarshal(h.Contents, &parts) != nil {
		parts = []json.RawMessage{h.Contents}
	}
	var out []string
	for _, p := range parts {
		var s string
		if json.Unmarshal(p, &s) != nil {
			var o struct{ Value string }
			_ = json.Unmarshal(p, &o)
			s = o.Value
		}
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// rawSymbols flattens DocumentSymbol[] or SymbolInformation[] to sorted
// "name rel:line:col" (the selection range, else the range).
func rawSymbols(dir, uri string, raw json.RawMessage) []string {
	type sym struct {
		Name           string    `json:"name"`
		Range          *rawRange `json:"range"`
		SelectionRange *rawRange `json:"selectionRange"`
		Location       *struct {
			URI   string    `json:"uri"`
			Range *rawRange `json:"range"`
		} `json:"location"`
		Children []json.RawMessage `json:"children"`
	}
	out := []string{}
	var walk func(json.RawMessage)
	walk = func(r json.RawMessage) {
		var s sym
		if json.Unmarshal(r, &s) != nil {
			return
		}
		u, rg := uri, s.SelectionRange
		if rg == nil {
			rg = s.Range
		}
		if s.Location != nil {
			u, rg = s.Location.URI, s.Location.Range
		}
		if rg != nil {
			out = append(out, s.Name+" "+rawPlace(dir, u, rg.Start.Line, rg.Start.Character))
		}
		for _, ch := range s.Children {
			walk(ch)
		}
	}
	var list []json.RawMessage
	_ = json.Unmarshal(raw, &list)
	for _, r := range list {
		walk(r)
	}
	sort.Strings(out)
	return out
}

// traceTail returns the last n messages the witness saw.
func (c *doneLSP) traceTail(n int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	tr := c.trace
	if len(tr) > n {
		tr = tr[len(tr)-n:]
	}
	return strings.Join(tr, "\n")
}

func (c *doneLSP) close() {
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
