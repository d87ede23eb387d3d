package warm

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idebridge/idebridge/lsp"
)

// session is an MCP client on a runtime session.
type session struct {
	t    *testing.T
	conn *net.UnixConn
	br   *bufio.Reader
	mu   sync.Mutex
	id   int
}

func openSession(t *testing.T, o *Options, p *Project) *session {
	t.Helper()
	conn, br, _, err := Open(context.Background(), o, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	s := &session{t: t, conn: conn, br: br}
	if _, err := s.rpc("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "warm-test", "version": "1"}}); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(conn, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

// rpc sends one request and waits for its answer (one at a time per
// session).
func (s *session) rpc(method string, params any) (json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.id, "method": method, "params": params})
	s.conn.SetDeadline(time.Now().Add(testTimeout))
	if _, err := s.conn.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := s.br.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		var m struct {
			ID     *int
			Result json.RawMessage
			Error  json.RawMessage
		}
		if err := json.Unmarshal(line, &m); err != nil || m.ID == nil {
			continue
		}
		if *m.ID != s.id {
			return nil, fmt.Errorf("answer to %d while %d pending", *m.ID, s.id)
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error)
		}
		return m.Result, nil
	}
}

// call calls a tool and returns its text.
func (s *session) call(name string, args map[string]any) string {
	s.t.Helper()
	res, err := s.rpc("tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		s.t.Fatal(err)
	}
	var r struct {
		Content []struct{ Text string }
		IsError bool
	}
	json.Unmarshal(res, &r)
	if r.IsError || len(r.Content) == 0 {
		s.t.Fatalf("%s %v: %s", name, args, res)
	}
	return r.Content[0].Text
}

func goModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("greet.go", "package main\n\n// greet says hello.\nfunc greet(name string) string { return \"hi \" + name }\n")
	write("main.go", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(greet(\"a\"))\n}\n")
	return dir
}

// TestStagedEditInvisibleToOtherSessions: while one session previews an
// edit (its text staged in gopls, shared by every session of the
// project), another session's hovers never see the staged text: the
// calls of the project wait for the edit to end.
func TestStagedEditInvisibleToOtherSessions(t *testing.T) {
	gopls, err := lsp.FindGopls(os.Getenv)
	if err != nil {
		t.Fatalf("this test needs gopls: %v", err)
	}
	dir := runtimeDir(t)
	serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: -1, Env: append(os.Environ(), "GOPLSCACHE="+t.TempDir(), "GOPROXY=off")})
	mod := goModule(t)
	cfg := lsp.GoplsConfig(gopls, mod)
	p := &Project{Dir: mod, Configs: []lsp.ServerConfig{cfg}, NoIDE: true}
	o := &Options{Dir: dir, Build: "b1"}
	a := openSession(t, o, p)
	b := openSession(t, o, p)
	hover := map[string]any{"file": "main.go", "line": 6, "column": 14}
	if h := b.call("hover", hover); !strings.Contains(h, "greet says hello") {
		t.Fatalf("hover before the edit: %q", h)
	}
	st, err := GetStatus(context.Background(), o)
	if err != nil || len(st.Projects) != 1 || len(st.Projects[0].Servers) != 1 || len(st.Projects[0].Sessions) != 2 {
		t.Fatalf("status: %+v, %v; want one project, one server, two sessions", st, err)
	}

	edit := map[string]any{"edits": []map[string]any{{"file": "greet.go", "old_string": "greet says hello.", "new_string": "STAGED says bye."}}}
	stop := make(chan struct{})
	var seen []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if h := b.call("hover", hover); strings.Contains(h, "STAGED") {
				seen = append(seen, h)
			}
		}
	}()
	for range 5 {
		if d := a.call("preview_edit", edit); !strings.Contains(d, "STAGED") {
			t.Errorf("preview_edit answered %q, want the diff", d)
		}
	}
	close(stop)
	wg.Wait()
	if len(seen) > 0 {
		t.Errorf("another session's hover saw the staged text %d times, first: %q", len(seen), seen[0])
	}
	if b, _ := os.ReadFile(filepath.Join(mod, "greet.go")); strings.Contains(string(b), "STAGED") {
		t.Error("preview_edit wrote the file")
	}
}

// TestSetupsShareServers: projects of one directory and server
// configuration that differ in anything else (an agent's Remote beside
// `idebridge mcp`'s session, with another IDE note and server version)
// share one gopls, which outlives the project that started it while the
// other still uses it, and stops with the last.
func TestSetupsShareServers(t *testing.T) {
	gopls, err := lsp.FindGopls(os.Getenv)
	if err != nil {
		t.Fatalf("this test needs gopls: %v", err)
	}
	dir := runtimeDir(t)
	serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: 300 * time.Millisecond,
		Env: append(os.Environ(), "GOPLSCACHE="+t.TempDir(), "GOPROXY=off")})
	mod := goModule(t)
	cfgs := []lsp.ServerConfig{lsp.GoplsConfig(gopls, mod)}
	o := &Options{Dir: dir, Build: "b1"}
	a := openSession(t, o, &Project{Dir: mod, Configs: cfgs, NoIDE: true, NoIDEReason: "the command's"})
	if h := a.call("hover", map[string]any{"file": "main.go", "line": 6, "column": 14}); !strings.Contains(h, "greet says hello") {
		t.Fatalf("session's hover: %q", h)
	}
	ctx := context.Background()
	r, err := Dial(ctx, o, &Project{Dir: mod, Configs: cfgs, NoIDE: true, NoIDEReason: "the agent's", ServerVersion: "9.9.9"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	at := lsp.Pos{Path: filepath.Join(mod, "main.go"), Line: 6, Symbol: "greet"}
	if h, err := r.Hover(ctx, at); err != nil || !strings.Contains(h.Markdown, "greet says hello") {
		t.Fatalf("Remote's hover: %+v, %v", h, err)
	}
	st, err := GetStatus(ctx, o)
	if err != nil || len(st.Projects) != 2 {
		t.Fatalf("status: %+v, %v; want two projects", st, err)
	}
	var pids []int
	for _, p := range st.Projects {
		for _, s := range p.Servers {
			pids = append(pids, s.PID)
		}
	}
	if len(pids) != 2 || pids[0] != pids[1] || pids[0] <= 0 {
		t.Fatalf("the projects' servers have pids %v; want one gopls for both", pids)
	}
	pid := pids[0]

	// The session's project ends after the idle time; the Remote's keeps
	// the gopls it shares.
	a.conn.Close()
	deadline := time.Now().Add(testTimeout)
	for {
		st, err := GetStatus(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Projects) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idle project did not end: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if h, err := r.Hover(ctx, at); err != nil || !strings.Contains(h.Markdown, "greet says hello") {
		t.Fatalf("Remote's hover after the other project ended: %+v, %v", h, err)
	}
	ss, err := r.Servers(ctx)
	if err != nil || len(ss) != 1 || ss[0].PID != pid {
		t.Fatalf("Remote's servers after the other project ended: %+v, %v; want gopls %d still", ss, err, pid)
	}

	// The last project ends: gopls stops.
	r.Close()
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline.Add(testTimeout)) {
			t.Fatalf("gopls %d still runs after the last project ended", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
