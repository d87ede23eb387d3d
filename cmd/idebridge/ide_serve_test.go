package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/idebridge/idebridge/lockfile"
	"github.com/idebridge/idebridge/mcp"
)

const serveTestTimeout = 30 * time.Second

// serveBuffer is a goroutine-safe buffer for the command's standard error,
// which the server's logger and the diff prompt write concurrently.
type serveBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *serveBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *serveBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *serveBuffer) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(serveTestTimeout)
	for !strings.Contains(s.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("standard error never showed %q:\n%s", want, s.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// serveRun is an in-process `idebridge ide serve`.
type serveRun struct {
	info   serveInfo
	stderr *serveBuffer
	stop   func() int // cancels, waits, returns the exit status
}

func startServe(t *testing.T, wd string, env map[string]string, stdin io.Reader, args ...string) *serveRun {
	t.Helper()
	pr, pw := io.Pipe()
	stderr := &serveBuffer{}
	inv := &invocation{Stdin: stdin, Stdout: pw, Stderr: stderr, Env: env, Getwd: func() (string, error) { return wd, nil }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		// A cold gopls on a busy machine may take longer than the
		// default wait: tests want the complete answer (args may still
		// set another).
		code := run(ctx, append([]string{"ide", "serve", "--diagnostics-wait", "1m"}, args...), inv)
		pw.Close()
		done <- code
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("no first line (exit %d): %v\nstderr:\n%s", <-done, err, stderr.String())
	}
	go io.Copy(io.Discard, pr)
	r := &serveRun{stderr: stderr}
	if err := json.Unmarshal([]byte(line), &r.info); err != nil {
		t.Fatalf("first line %q: %v", line, err)
	}
	var once sync.Once
	code := -1
	r.stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(serveTestTimeout):
				t.Fatal("ide serve did not stop")
			}
		})
		return code
	}
	t.Cleanup(func() { r.stop() })
	return r
}

// serveClient is a raw WebSocket MCP client that takes its token from the
// lockfile, as an agent does.
type serveClient struct {
	t  *testing.T
	c  *websocket.Conn
	id int
}

func dialServe(t *testing.T, info serveInfo) *serveClient {
	t.Helper()
	data, err := os.ReadFile(info.Lockfile)
	if err != nil {
		t.Fatal(err)
	}
	lf, err := lockfile.Parse(info.Lockfile, data)
	if err != nil {
		t.Fatal(err)
	}
	if lf.Port != info.Port || lf.Transport != info.Transport || lf.AuthToken == "" {
		t.Fatalf("lockfile %+v does not match %+v", lf, info)
	}
	d := websocket.Dialer{Subprotocols: []string{"mcp"}, Proxy: nil, HandshakeTimeout: serveTestTimeout}
	c, resp, err := d.Dial("ws://127.0.0.1:"+strconv.Itoa(lf.Port)+"/", http.Header{mcp.AuthHeader: {lf.AuthToken}})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	t.Cleanup(func() { c.Close() })
	sc := &serveClient{t: t, c: c}
	sc.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "serve-test", "version": "1"}})
	sc.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return sc
}

func (c *serveClient) send(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	if err := c.c.WriteMessage(websocket.TextMessage, b); err != nil {
		c.t.Fatal(err)
	}
}

// call sends a request and returns the raw result, skipping notifications.
func (c *serveClient) call(method string, params any) json.RawMessage {
	c.t.Helper()
	c.id++
	c.send(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	for {
		c.c.SetReadDeadline(time.Now().Add(serveTestTimeout))
		_, data, err := c.c.ReadMessage()
		if err != nil {
			c.t.Fatalf("%s: %v", method, err)
		}
		var m struct {
			ID     *int
			Result json.RawMessage
			Error  json.RawMessage
		}
		if err := json.Unmarshal(data, &m); err != nil {
			c.t.Fatal(err)
		}
		if m.ID == nil {
			continue
		}
		if *m.ID != c.id || m.Error != nil {
			c.t.Fatalf("%s: %s", method, data)
		}
		return m.Result
	}
}

func (c *serveClient) texts(tool string, args any) []string {
	c.t.Helper()
	var r struct{ Content []struct{ Text string } }
	if err := json.Unmarshal(c.call("tools/call", map[string]any{"name": tool, "arguments": args}), &r); err != nil {
		c.t.Fatal(err)
	}
	var out []string
	for _, b := range r.Content {
		out = append(out, b.Text)
	}
	return out
}

func TestServeInProcess(t *testing.T) {
	wd := t.TempDir()
	other := t.TempDir()
	cfg := t.TempDir()
	target := filepath.Join(wd, "main.go")
	if err := os.WriteFile(target, []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startServe(t, wd, map[string]string{"CLAUDE_CONFIG_DIR": cfg}, nil, "--workspace", ".", "--workspace", other, "--diff", "accept")
	if r.info.Transport != "ws" || !slices.Equal(r.info.WorkspaceFolders, []string{wd, other}) ||
		filepath.Dir(r.info.Lockfile) != filepath.Join(cfg, "ide") || r.info.URL != "ws://127.0.0.1:"+strconv.Itoa(r.info.Port)+"/" {
		t.Fatalf("first line %+v", r.info)
	}
	st, err := os.Stat(r.info.Lockfile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("lockfile: %v %v", st, err)
	}
	c := dialServe(t, r.info)
	proposed := "package main\n\nfunc main() {}\n"
	if got := c.texts("openDiff", map[string]any{"old_file_path": target, "new_file_path": target, "new_file_contents": proposed, "tab_name": "t1"}); !slices.Equal(got, []string{"FILE_SAVED", proposed}) {
		t.Errorf("openDiff: %q", got)
	}
	if code := r.stop(); code != exitOK {
		t.Errorf("exit %d; stderr:\n%s", code, r.stderr.String())
	}
	if _, err := os.Stat(r.info.Lockfile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lockfile left after stop: %v", err)
	}
	// Without -v nothing was logged.
	if s := r.stderr.String(); s != "" {
		t.Errorf("stderr without -v: %s", s)
	}
}

func TestServeVerboseSSE(t *testing.T) {
	wd := t.TempDir()
	r := startServe(t, wd, nil, nil, "--transport", "sse", "--lockfile-dir", "locks", "-v", "--diff", "reject")
	if r.info.Transport != "sse" || !strings.HasSuffix(r.info.URL, "/sse") || filepath.Dir(r.info.Lockfile) != filepath.Join(wd, "locks") {
		t.Fatalf("first line %+v", r.info)
	}
	data, err := os.ReadFile(r.info.Lockfile)
	if err != nil || !strings.Contains(string(data), `"transport":"sse"`) {
		t.Fatalf("lockfile %s: %v", data, err)
	}
	lf, _ := lockfile.Parse(r.info.Lockfile, data)
	// One MCP exchange over SSE: the endpoint event, then a POSTed
	// initialize answered on the stream.
	req, _ := http.NewRequest("GET", r.info.URL, nil)
	req.Header.Set(mcp.AuthHeader, lf.AuthToken)
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	readData := func() string {
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				return strings.TrimSpace(d)
			}
		}
	}
	endpoint := readData()
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sse-cli","version":"1"}}}`
	post, err := client.Post(strings.TrimSuffix(r.info.URL, "/sse")+endpoint, "application/json", strings.NewReader(body))
	if err != nil || post.StatusCode != http.StatusAccepted {
		t.Fatalf("POST: %v %v", post, err)
	}
	post.Body.Close()
	if got := readData(); !strings.Contains(got, `"protocolVersion":"2024-11-05"`) {
		t.Errorf("initialize answer %s", got)
	}
	r.stderr.waitFor(t, `"method":"initialize"`)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"closeAllDiffTabs","arguments":{}}}`
	if post, err = client.Post(strings.TrimSuffix(r.info.URL, "/sse")+endpoint, "application/json", strings.NewReader(call)); err != nil || post.StatusCode != http.StatusAccepted {
		t.Fatalf("POST tools/call: %v %v", post, err)
	}
	post.Body.Close()
	if got := readData(); !strings.Contains(got, "CLOSED_0_DIFF_TABS") {
		t.Errorf("closeAllDiffTabs answer %s", got)
	}
	r.stderr.waitFor(t, `"tool":"closeAllDiffTabs"`)
	resp.Body.Close()
	if code := r.stop(); code != exitOK {
		t.Errorf("exit %d", code)
	}
	var rec map[string]any
	for _, l := range strings.Split(strings.TrimSpace(r.stderr.String()), "\n") {
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Errorf("stderr line is not JSON: %q", l)
			continue
		}
		if rec["method"] == "initialize" && (rec["level"] != "DEBUG" || rec["id"] != 0.0 || rec["client"] != "" || rec["tool"] != nil) {
			t.Errorf("log record %v", rec)
		}
		if rec["method"] == "tools/call" && (rec["tool"] != "closeAllDiffTabs" || rec["id"] != 1.0 || rec["client"] != "sse-cli") {
			t.Errorf("tools/call log record %v, want its tool named", rec)
		}
	}
}

func TestServePrompt(t *testing.T) {
	defer func(f func(io.Reader) bool) { stdinIsTerminal = f }(stdinIsTerminal)
	stdinIsTerminal = func(io.Reader) bool { return true }
	wd := t.TempDir()
	target := filepath.Join(wd, "a.txt")
	if err := os.WriteFile(target, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	editor := filepath.Join(wd, "editor.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\necho 'edited by hand' >> \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	r := startServe(t, wd, map[string]string{"EDITOR": editor}, pr, "--lockfile-dir", t.TempDir())
	c := dialServe(t, r.info)
	args := map[string]any{"old_file_path": target, "new_file_path": target, "new_file_contents": "one\nTWO\n", "tab_name": "t"}
	ask := func(reply string) []string {
		t.Helper()
		asked := strings.Count(r.stderr.String(), "Apply?")
		go func() {
			// Answer once the question is on the terminal.
			deadline := time.Now().Add(serveTestTimeout)
			for strings.Count(r.stderr.String(), "Apply?") == asked && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			io.WriteString(pw, reply+"\n")
		}()
		return c.texts("openDiff", args)
	}
	if got := ask("y"); !slices.Equal(got, []string{"FILE_SAVED", "one\nTWO\n"}) {
		t.Errorf("y: %q", got)
	}
	for _, want := range []string{"--- a" + target + "\n+++ b" + target + "\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n", "serve-test proposes to change " + target} {
		if !strings.Contains(r.stderr.String(), want) {
			t.Errorf("prompt lacks %q:\n%s", want, r.stderr.String())
		}
	}
	if got := ask("n"); !slices.Equal(got, []string{"DIFF_REJECTED", "t"}) {
		t.Errorf("n: %q", got)
	}
	if got := ask("e"); !slices.Equal(got, []string{"FILE_SAVED", "one\nTWO\nedited by hand\n"}) {
		t.Errorf("e: %q", got)
	}
	if code := r.stop(); code != exitOK {
		t.Errorf("exit %d", code)
	}
}

func TestServePromptWithoutTerminalRejects(t *testing.T) {
	wd := t.TempDir()
	r := startServe(t, wd, nil, strings.NewReader("y\n"), "--lockfile-dir", t.TempDir())
	if !strings.Contains(r.stderr.String(), "not a terminal") {
		t.Errorf("no note about the terminal: %s", r.stderr.String())
	}
	c := dialServe(t, r.info)
	p := filepath.Join(wd, "x")
	if got := c.texts("openDiff", map[string]any{"old_file_path": p, "new_file_path": p, "new_file_contents": "x", "tab_name": "t"}); !slices.Equal(got, []string{"DIFF_REJECTED", "t"}) {
		t.Errorf("openDiff: %q", got)
	}
}

func TestServeUsageErrors(t *testing.T) {
	wd := t.TempDir()
	for _, args := range [][]string{
		{"--transport", "stdio"},
		{"--diff", "maybe"},
		{"extra"},
		{"--workspace", filepath.Join(wd, "missing")},
		{"--port", "-1"},
		{"--diagnostics-wait", "0s"},
		{"--diagnostics-wait", "-1s"},
	} {
		var stdout, stderr bytes.Buffer
		inv := &invocation{Stdout: &stdout, Stderr: &stderr, Env: map[string]string{}, Getwd: func() (string, error) { return wd, nil }}
		code := run(context.Background(), append([]string{"ide", "serve", "--lockfile-dir", t.TempDir()}, args...), inv)
		if code != exitUsage || stdout.Len() != 0 || stderr.Len() == 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout.String(), stderr.String())
		}
	}
	// A port in use is a server error.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var stderr bytes.Buffer
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	inv := &invocation{Stdout: io.Discard, Stderr: &stderr, Env: map[string]string{}, Getwd: func() (string, error) { return wd, nil }}
	if code := run(context.Background(), []string{"ide", "serve", "--port", port, "--lockfile-dir", t.TempDir()}, inv); code != exitFailure {
		t.Errorf("port in use: exit %d (%s)", code, stderr.String())
	}
}

// buildCommand builds the idebridge binary once per test run, in
// builtDir, which TestMain removes at the end.
var buildCommand = sync.OnceValues(func() (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "idebridge-bin")
	if err != nil {
		return "", err
	}
	builtDir = dir
	bin := filepath.Join(dir, "idebridge")
	out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", errors.New(string(out))
	}
	return bin, nil
})

// builtDir holds the binary buildCommand built, if it did.
var builtDir string

func TestServeBinarySignals(t *testing.T) {
	bin, err := buildCommand()
	if err != nil {
		t.Fatalf("building idebridge: %v", err)
	}
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			cfg := t.TempDir()
			ws := t.TempDir()
			cmd := exec.Command(bin, "ide", "serve", "--workspace", ws, "--diff", "reject", "-v")
			cmd.Env = append(os.Environ(), "CLAUDE_CONFIG_DIR="+cfg)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr serveBuffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			var waitErr error
			t.Cleanup(func() {
				cmd.Process.Kill()
				<-exited
			})
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil {
				t.Fatalf("first line: %v\nstderr:\n%s", err, stderr.String())
			}
			go func() {
				waitErr = cmd.Wait()
				close(exited)
			}()
			var info serveInfo
			if err := json.Unmarshal([]byte(line), &info); err != nil {
				t.Fatalf("first line %q: %v", line, err)
			}
			if info.PID != cmd.Process.Pid || filepath.Dir(info.Lockfile) != filepath.Join(cfg, "ide") || !slices.Equal(info.WorkspaceFolders, []string{ws}) {
				t.Errorf("first line %+v", info)
			}
			c := dialServe(t, info)
			if got := c.texts("getWorkspaceFolders", map[string]any{}); len(got) != 1 || !strings.Contains(got[0], `"success":true`) {
				t.Errorf("getWorkspaceFolders: %q", got)
			}
			stderr.waitFor(t, `"method":"tools/call"`)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exited:
				if waitErr != nil {
					t.Errorf("exit after %v: %v\nstderr:\n%s", sig, waitErr, stderr.String())
				}
			case <-time.After(serveTestTimeout):
				t.Fatalf("still running after %v", sig)
			}
			if _, err := os.Stat(info.Lockfile); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("lockfile left after %v: %v", sig, err)
			}
			if !strings.Contains(stderr.String(), `"client":"serve-test"`) {
				t.Errorf("-v log lacks the client name:\n%s", stderr.String())
			}
		})
	}
}
