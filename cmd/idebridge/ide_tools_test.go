package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// toolsScene is a workspace and a CLAUDE_CONFIG_DIR in which headless IDEs
// (ideserver, real WebSocket or SSE servers on loopback) write lockfiles,
// for the ide tools, call and watch commands.
type toolsScene struct {
	cfg, ws string
	env     map[string]string
}

func newToolsScene(t *testing.T) *toolsScene {
	cfg := t.TempDir()
	return &toolsScene{cfg: cfg, ws: t.TempDir(), env: map[string]string{"CLAUDE_CONFIG_DIR": cfg}}
}

func (s *toolsScene) ide(t *testing.T, opts *ideserver.Options) *ideserver.Server {
	t.Helper()
	o := ideserver.Options{}
	if opts != nil {
		o = *opts
	}
	o.WorkspaceFolders = []string{s.ws}
	o.LockfileDir = filepath.Join(s.cfg, "ide")
	srv, err := ideserver.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// run runs the command line with stdin.
func (s *toolsScene) run(t *testing.T, ctx context.Context, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	inv := &invocation{Stdin: strings.NewReader(stdin), Stdout: &stdout, Stderr: &stderr, Env: s.env, Getwd: func() (string, error) { return s.ws, nil }}
	code := run(ctx, args, inv)
	return code, stdout.String(), stderr.String()
}

func TestIDETools(t *testing.T) {
	for _, tr := range []string{"ws", "sse"} {
		t.Run(tr, func(t *testing.T) {
			s := newToolsScene(t)
			s.ide(t, &ideserver.Options{Transport: tr, ToolsPageSize: 2})
			code, out, errOut := s.run(t, context.Background(), "", "ide", "tools")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, want := range []string{"openDiff", "openFile", "getWorkspaceFolders", "closeAllDiffTabs"} {
				if !strings.Contains(out, want) {
					t.Errorf("tool list lacks %s:\n%s", want, out)
				}
			}
			code, out, errOut = s.run(t, context.Background(), "", "ide", "tools", "--json")
			if code != exitOK {
				t.Fatalf("--json: exit %d: %s", code, errOut)
			}
			var tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			}
			if err := json.Unmarshal([]byte(out), &tools); err != nil {
				t.Fatalf("%v:\n%s", err, out)
			}
			var sawDiff bool
			for _, tl := range tools {
				if tl.Name == "openDiff" {
					sawDiff = strings.Contains(string(tl.InputSchema), "new_file_contents")
				}
			}
			if !sawDiff {
				t.Errorf("openDiff with its schema missing from %s", out)
			}
		})
	}
}

func TestIDEToolsChoosing(t *testing.T) {
	s := newToolsScene(t)
	code, _, errOut := s.run(t, context.Background(), "", "ide", "tools")
	if code != exitUnavailable || !strings.Contains(errOut, "no usable IDE") {
		t.Errorf("no IDE: exit %d, stderr %q", code, errOut)
	}
	a := s.ide(t, nil)
	s.ide(t, nil)
	code, _, errOut = s.run(t, context.Background(), "", "ide", "tools")
	if code != exitUnavailable || !strings.Contains(errOut, "choose one with --port") || !strings.Contains(errOut, strconv.Itoa(a.Port())) {
		t.Errorf("two IDEs: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := s.run(t, context.Background(), "", "ide", "tools", "--port", strconv.Itoa(a.Port())); code != exitOK {
		t.Errorf("--port: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := s.run(t, context.Background(), "", "ide", "tools", "--port", "1"); code != exitUnavailable || !strings.Contains(errOut, "no IDE lockfile for port 1") {
		t.Errorf("--port of no IDE: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := s.run(t, context.Background(), "", "ide", "tools", "extra"); code != exitUsage {
		t.Errorf("extra argument: exit %d", code)
	}
}

func TestIDECall(t *testing.T) {
	for _, tr := range []string{"ws", "sse"} {
		t.Run(tr, func(t *testing.T) {
			s := newToolsScene(t)
			srv := s.ide(t, &ideserver.Options{Transport: tr, DiffPolicy: ideserver.AcceptDiffs})
			srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: "block"}, Handler: func(ctx context.Context, _ *ideserver.ToolCall) (*mcp.ToolResult, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			}})
			ctx := context.Background()

			code, out, errOut := s.run(t, ctx, "", "ide", "call", "getWorkspaceFolders")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var res struct {
				Content []struct{ Type, Text string }
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Content) != 1 {
				t.Fatalf("%v: %s", err, out)
			}
			var folders struct {
				RootPath string `json:"rootPath"`
			}
			if err := json.Unmarshal([]byte(res.Content[0].Text), &folders); err != nil || folders.RootPath != s.ws {
				t.Errorf("rootPath %q (%v), want %q", folders.RootPath, err, s.ws)
			}

			// Arguments from standard input: a large openDiff.
			big := strings.Repeat("line of the proposal\n", 50000)
			args, _ := json.Marshal(map[string]string{"old_file_path": filepath.Join(s.ws, "a.txt"), "new_file_path": filepath.Join(s.ws, "a.txt"), "new_file_contents": big, "tab_name": "t1"})
			code, out, errOut = s.run(t, ctx, string(args), "ide", "call", "openDiff", "-")
			if code != exitOK || !strings.Contains(out, "FILE_SAVED") || !json.Valid([]byte(out)) {
				t.Fatalf("openDiff from stdin: exit %d, stderr %q, %d bytes out", code, errOut, len(out))
			}

			code, _, errOut = s.run(t, ctx, "", "ide", "call", "noSuchTool", "{}")
			if code != exitFailure || !strings.Contains(errOut, "Tool not found: noSuchTool") {
				t.Errorf("unknown tool: exit %d, stderr %q", code, errOut)
			}
			// --timeout counts the connection too: long enough that it is
			// the blocking call, not the connection, that runs out of it
			// on a busy machine (at 100 ms a loaded run's dial timed out).
			code, _, errOut = s.run(t, ctx, "", "ide", "call", "block", "--timeout", "2s")
			if code != exitFailure || !strings.Contains(errOut, "deadline exceeded") {
				t.Errorf("--timeout: exit %d, stderr %q", code, errOut)
			}
			for _, bad := range [][]string{{"ide", "call"}, {"ide", "call", "x", "[1]"}, {"ide", "call", "x", "{bad"}, {"ide", "call", "x", "{}", "y"}} {
				if code, _, _ := s.run(t, ctx, "", bad...); code != exitUsage {
					t.Errorf("%q: exit %d, want %d", bad, code, exitUsage)
				}
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for the writer and a polling reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestIDEWatch(t *testing.T) {
	s := newToolsScene(t)
	srv := s.ide(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	inv := &invocation{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Env: s.env, Getwd: func() (string, error) { return s.ws, nil }}
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"ide", "watch"}, inv) }()

	// Notify until the watcher, once connected, has printed two lines.
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(stdout.String(), "\n") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no notifications printed; stderr %q", stderr.String())
		}
		srv.Notify("selection_changed", map[string]any{"text": "x", "filePath": "/p/a.go", "selection": nil})
		time.Sleep(20 * time.Millisecond)
	}
	line, _, _ := strings.Cut(stdout.String(), "\n")
	var n struct {
		Method string `json:"method"`
		Params struct {
			FilePath string `json:"filePath"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(line), &n); err != nil || n.Method != "selection_changed" || n.Params.FilePath != "/p/a.go" {
		t.Errorf("line %q: %+v, %v", line, n, err)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("interrupted watch: exit %d, stderr %q", code, stderr.String())
	}

	// The IDE going away ends the watch with status 1.
	for len(srv.Clients()) != 0 { // the first watcher is gone
		if time.Now().After(deadline) {
			t.Fatal("the first watcher never left")
		}
		time.Sleep(5 * time.Millisecond)
	}
	done2 := make(chan int, 1)
	var stdout2, stderr2 syncBuffer
	inv2 := &invocation{Stdin: strings.NewReader(""), Stdout: &stdout2, Stderr: &stderr2, Env: s.env, Getwd: func() (string, error) { return s.ws, nil }}
	go func() { done2 <- run(context.Background(), []string{"ide", "watch"}, inv2) }()
	// Connected is not enough: the IDE must go away after the handshake,
	// which the first notification printed proves.
	for !strings.Contains(stdout2.String(), "\n") {
		if time.Now().After(deadline) {
			t.Fatalf("the watcher never printed a notification; stderr %q", stderr2.String())
		}
		srv.Notify("selection_changed", map[string]any{"text": "y", "filePath": "/p/b.go", "selection": nil})
		time.Sleep(20 * time.Millisecond)
	}
	srv.Close()
	if code := <-done2; code != exitFailure || !strings.Contains(stderr2.String(), "connection to the IDE lost") {
		t.Errorf("IDE gone: exit %d, stderr %q", code, stderr2.String())
	}
}
