package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idebridge/idebridge/warm"
)

// rtClient is a real `idebridge mcp` process (the built command) driven
// over its standard input and output.
type rtClient struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan string
	stderr *syncBuffer
	nextID int
}

func startRTClient(t *testing.T, bin, dir string, env []string, args ...string) *rtClient {
	t.Helper()
	if args == nil {
		args = []string{"--no-ide"}
	}
	cmd := exec.Command(bin, append([]string{"mcp", "--no-plugins"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &rtClient{t: t, cmd: cmd, in: in, lines: make(chan string, 64), stderr: &syncBuffer{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	var init struct{ ServerInfo struct{ Name string } }
	c.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "runtime-test", "version": "1"}}, &init)
	if init.ServerInfo.Name != "idebridge" {
		t.Fatalf("initialize answered %+v", init)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return c
}

func (c *rtClient) send(m map[string]any) {
	c.t.Helper()
	b, _ := json.Marshal(m)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("writing to idebridge mcp: %v\nstderr:\n%s", err, c.stderr)
	}
}

// request sends a request and decodes its result; an error answer is
// returned as an error.
func (c *rtClient) request(method string, params any, v any) error {
	c.t.Helper()
	c.nextID++
	id := c.nextID
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	timeout := time.After(mcpTimeout)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("idebridge mcp closed its output while %s was pending\nstderr:\n%s", method, c.stderr)
			}
			var m struct {
				ID     *int
				Result json.RawMessage
				Error  json.RawMessage
			}
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				c.t.Fatalf("not JSON: %q", line)
			}
			if m.ID == nil {
				continue
			}
			if *m.ID != id {
				c.t.Fatalf("an answer to %d while %d was pending: %s", *m.ID, id, line)
			}
			if m.Error != nil {
				return errors.New(string(m.Error))
			}
			return json.Unmarshal(m.Result, v)
		case <-timeout:
			c.t.Fatalf("no answer to %s\nstderr:\n%s", method, c.stderr)
		}
	}
}

// diagnostics asks for main.go's diagnostics and fails unless they name
// the unused variable.
func (c *rtClient) diagnostics() {
	c.t.Helper()
	c.diagnose("main.go", "declared and not used: unused")
}

// diagnose asks for a file's diagnostics and fails unless they say want.
func (c *rtClient) diagnose(file, want string) {
	c.t.Helper()
	var res struct {
		Content []struct{ Text string }
		IsError bool
	}
	// An answer not known to be current is asked again, as a client
	// does: a cold server on a busy machine may take longer than the
	// tool's bound (10 s).
	for try := 0; try < 5; try++ {
		if err := c.request("tools/call", map[string]any{"name": "diagnostics", "arguments": map[string]any{"files": []string{file}}}, &res); err != nil {
			c.t.Fatalf("diagnostics: %v\nstderr:\n%s", err, c.stderr)
		}
		if len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, "may be incomplete or stale") {
			break
		}
	}
	if res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, want) {
		c.t.Fatalf("diagnostics of %s answered %+v, want %q\nstderr:\n%s", file, res, want, c.stderr)
	}
}

// rtEnv is the environment of the runtime tests: mcpEnv's, with the
// runtime directory and idle time of the test's own.
func rtEnv(t *testing.T, rtDir string, idle time.Duration) []string {
	env := mcpEnv(t)
	delete(env, "IDEBRIDGE_RUNTIME")
	env["IDEBRIDGE_RUNTIME_DIR"] = rtDir
	env["IDEBRIDGE_RUNTIME_IDLE"] = idle.String()
	var out []string
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// shortDir is a directory for sockets: t.TempDir's paths can be too long
// for one.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "rt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// waitFor polls cond until it holds, failing after mcpTimeout.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(mcpTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// alive reports whether pid is a process that has not exited (a zombie
// has).
func alive(pid int) bool {
	// Every thread: a process's first thread shows as a zombie while the
	// others still exit, holding its files (its sockets) open.
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/stat")
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X') {
			return true
		}
	}
	return false
}

func rtStatus(t *testing.T, rtDir, build string) (*warm.Status, error) {
	t.Helper()
	return warm.GetStatus(t.Context(), &warm.Options{Dir: rtDir, Build: build})
}

// TestRuntimeSharedAcrossClients runs two `idebridge mcp` processes on one
// module: they share one runtime and one gopls; a client killed with
// SIGKILL has its session ended; a runtime killed with SIGKILL leaves no
// gopls behind and the surviving client's next call starts a new runtime
// and is answered; the runtime exits once idle.
func TestRuntimeSharedAcrossClients(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs gopls")
	}
	bin, err := buildCommand()
	if err != nil {
		t.Fatalf("building idebridge: %v", err)
	}
	dir := mcpModule(t)
	rtDir := filepath.Join(shortDir(t), "rt")
	env := rtEnv(t, rtDir, 3*time.Second)

	a := startRTClient(t, bin, dir, env)
	a.diagnostics()
	b := startRTClient(t, bin, dir, env)
	b.diagnostics()

	socks, _ := filepath.Glob(filepath.Join(rtDir, "*.sock"))
	if len(socks) != 1 {
		t.Fatalf("runtime sockets %v, want one", socks)
	}
	build := strings.TrimSuffix(filepath.Base(socks[0]), ".sock")
	st, err := rtStatus(t, rtDir, build)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Projects) != 1 || len(st.Projects[0].Sessions) != 2 || len(st.Projects[0].Servers) != 1 || st.Projects[0].Servers[0].PID == 0 {
		t.Fatalf("two clients on one project: status %+v, want one project with two sessions and one running server", st)
	}
	gopls := st.Projects[0].Servers[0].PID
	daemon := st.PID
	status := exec.Command(bin, "runtime", "status")
	status.Env = env
	if out, err := status.CombinedOutput(); err != nil || !strings.Contains(string(out), "project "+dir) ||
		!strings.Contains(string(out), "server gopls") || !strings.Contains(string(out), fmt.Sprintf("pid %d", gopls)) ||
		!regexp.MustCompile(`sessions\s+2: `).MatchString(string(out)) {
		t.Errorf("runtime status: %v\n%s", err, out)
	}
	if !alive(gopls) {
		t.Fatalf("gopls pid %d is not running", gopls)
	}

	// A client killed outright: its session ends as its socket closes.
	a.cmd.Process.Kill()
	a.cmd.Wait()
	waitFor(t, "the killed client's session to end", func() bool {
		st, err := rtStatus(t, rtDir, build)
		return err == nil && st.Sessions == 1 && len(st.Projects) == 1 && len(st.Projects[0].Sessions) == 1
	})

	// The runtime killed outright: its gopls dies with it, and the next
	// call starts a new runtime and is answered.
	if err := syscall.Kill(daemon, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "gopls to die with the runtime", func() bool { return !alive(gopls) && !alive(daemon) })
	b.diagnostics()
	st, err = rtStatus(t, rtDir, build)
	if err != nil {
		t.Fatal(err)
	}
	if st.PID == daemon || st.Sessions != 1 {
		t.Fatalf("after the runtime was killed: status %+v, want a new runtime with one session", st)
	}
	if !strings.Contains(b.stderr.String(), "reconnected to the runtime") {
		t.Errorf("the client's log does not say it reconnected:\n%s", b.stderr)
	}

	// The last client ends; the runtime exits once idle, with its gopls.
	newDaemon := st.PID
	newGopls := st.Projects[0].Servers[0].PID
	b.in.Close()
	if err := b.cmd.Wait(); err != nil {
		t.Errorf("idebridge mcp exit: %v\nstderr:\n%s", err, b.stderr)
	}
	waitFor(t, "the idle runtime to exit", func() bool {
		_, err := os.Stat(socks[0])
		return !alive(newDaemon) && !alive(newGopls) && errors.Is(err, os.ErrNotExist)
	})
	if _, err := rtStatus(t, rtDir, build); !errors.Is(err, warm.ErrNotRunning) {
		t.Errorf("status after the idle exit: %v, want ErrNotRunning", err)
	}
}

// TestRuntimeClientEndsOnSignal: `idebridge mcp` through the runtime exits
// at once on SIGTERM, though its client keeps its input open, and its
// session ends in the runtime.
func TestRuntimeClientEndsOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs gopls")
	}
	bin, err := buildCommand()
	if err != nil {
		t.Fatalf("building idebridge: %v", err)
	}
	dir := mcpModule(t)
	rtDir := filepath.Join(shortDir(t), "rt")
	env := rtEnv(t, rtDir, time.Minute)
	c := startRTClient(t, bin, dir, env)
	c.diagnostics()
	t.Cleanup(func() {
		stop := exec.Command(bin, "runtime", "stop")
		stop.Env = env
		stop.Run()
	})
	c.cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("idebridge mcp after SIGTERM: %v\nstderr:\n%s", err, c.stderr)
		}
	case <-time.After(mcpTimeout):
		t.Fatalf("idebridge mcp did not exit on SIGTERM\nstderr:\n%s", c.stderr)
	}
	socks, _ := filepath.Glob(filepath.Join(rtDir, "*.sock"))
	if len(socks) != 1 {
		t.Fatalf("runtime sockets %v, want one", socks)
	}
	build := strings.TrimSuffix(filepath.Base(socks[0]), ".sock")
	var st *warm.Status
	waitFor(t, "the session to end", func() bool {
		st, err = rtStatus(t, rtDir, build)
		return err == nil && st.Sessions == 0
	})

	// runtime stop, with gopls still running for the idle project: it
	// answers once the runtime has stopped it.
	if len(st.Projects) != 1 || len(st.Projects[0].Servers) != 1 || !alive(st.Projects[0].Servers[0].PID) {
		t.Fatalf("status %+v: want the idle project's gopls running", st)
	}
	gopls := st.Projects[0].Servers[0].PID
	stop := exec.Command(bin, "runtime", "stop")
	stop.Env = env
	out, err := stop.CombinedOutput()
	if err != nil || string(out) != fmt.Sprintf("stopped the runtime (pid %d)\n", st.PID) {
		t.Fatalf("runtime stop: %v\n%s", err, out)
	}
	if alive(gopls) {
		t.Errorf("gopls pid %d still runs after runtime stop answered", gopls)
	}
	if _, err := rtStatus(t, rtDir, build); !errors.Is(err, warm.ErrNotRunning) {
		t.Errorf("status after runtime stop: %v, want ErrNotRunning", err)
	}
}

// TestRuntimeSkewServesInProcess: a runtime of another build on this
// build's socket is refused, and `idebridge mcp` serves the session in its
// own process, saying why after its first log line.
func TestRuntimeSkewServesInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs gopls")
	}
	bin, err := buildCommand()
	if err != nil {
		t.Fatalf("building idebridge: %v", err)
	}
	rtDir, _, done := otherBuildRuntime(t, bin)
	dir := mcpModule(t)
	c := startRTClient(t, bin, dir, rtEnv(t, rtDir, time.Minute))
	c.diagnostics()
	log := c.stderr.String()
	first, rest, _ := strings.Cut(log, "\n")
	if !strings.HasPrefix(first, "idebridge mcp: project ") || !strings.Contains(rest, "warning: no runtime") ||
		!strings.Contains(rest, "another-build") || !strings.Contains(rest, "serving in this process") {
		t.Errorf("log of idebridge mcp against a runtime of another build:\n%s", log)
	}
	st, err := warm.GetStatus(context.Background(), &warm.Options{Dir: rtDir, Build: "another-build"})
	if err != nil || st.Sessions != 0 {
		t.Errorf("the other build's runtime: %+v, %v; want it untouched, no session", st, err)
	}

	// This build's status says which other runtimes run, and stop --all
	// stops them.
	env := rtEnv(t, rtDir, time.Minute)
	status := exec.Command(bin, "runtime", "status")
	status.Env = env
	out, err := status.CombinedOutput()
	if code := status.ProcessState.ExitCode(); code != exitUnavailable || !strings.Contains(string(out), "runtimes of other builds run: build another-build (pid "+strconv.Itoa(os.Getpid())+")") {
		t.Errorf("runtime status with only another build's runtime: exit %d, %v\n%s", code, err, out)
	}
	stop := exec.Command(bin, "runtime", "stop", "--all")
	stop.Env = env
	out, err = stop.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "stopped the runtime of build another-build") {
		t.Errorf("runtime stop --all: %v\n%s", err, out)
	}
	select {
	case err := <-done:
		done <- err // for the cleanup
		if err != nil {
			t.Errorf("the other build's Serve after stop --all: %v", err)
		}
	case <-time.After(mcpTimeout):
		t.Error("the other build's runtime did not stop")
	}
}

// TestRuntimeIDEOpenServesInProcess: with an IDE open on the project (a
// headless one), `idebridge mcp` keeps its IDE and serves in its own
// process, saying why; no runtime starts.
func TestRuntimeIDEOpenServesInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs gopls")
	}
	bin, err := buildCommand()
	if err != nil {
		t.Fatalf("building idebridge: %v", err)
	}
	dir := mcpModule(t)
	cfg := t.TempDir()
	ide := exec.Command(bin, "ide", "serve", "--workspace", dir, "--diff", "reject", "--lockfile-dir", filepath.Join(cfg, "ide"))
	ide.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "CLAUDE_CONFIG_DIR=" + cfg}
	ideOut, err := ide.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := ide.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ide.Process.Kill(); ide.Wait() })
	if _, err := bufio.NewReader(ideOut).ReadString('\n'); err != nil {
		t.Fatalf("ide serve's first line: %v", err)
	}
	rtDir := filepath.Join(shortDir(t), "rt")
	env := append(rtEnv(t, rtDir, time.Minute), "CLAUDE_CONFIG_DIR="+cfg)
	c := startRTClient(t, bin, dir, env, "--project", dir)
	c.diagnostics()
	log := c.stderr.String()
	if !strings.Contains(log, "IDE: idebridge on port") || !strings.Contains(log, "is open on the project and the shared runtime has no IDE link yet: serving in this process") {
		t.Errorf("log of idebridge mcp with an IDE open:\n%s", log)
	}
	if socks, _ := filepath.Glob(filepath.Join(rtDir, "*.sock")); len(socks) != 0 {
		t.Errorf("a runtime started: %v", socks)
	}
}

// TestRuntimeOptOut: --no-runtime, and IDEBRIDGE_RUNTIME=0, serve in the
// command's own process: no runtime starts.
func TestRuntimeOptOut(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs gopls")
	}
	bin, err := buildCommand()
	if err != nil {
		t.Fatalf("building idebridge: %v", err)
	}
	dir := mcpModule(t)
	rtDir := filepath.Join(shortDir(t), "rt")
	env := rtEnv(t, rtDir, time.Minute)
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{"--no-runtime", env, []string{"--no-ide", "--no-runtime"}},
		{"IDEBRIDGE_RUNTIME=0", append(slices.Clone(env), "IDEBRIDGE_RUNTIME=0"), nil},
	} {
		cl := startRTClient(t, bin, dir, c.env, c.args...)
		cl.diagnostics()
		if first, _, _ := strings.Cut(cl.stderr.String(), "\n"); strings.Contains(first, "runtime") {
			t.Errorf("%s: first log line %q mentions a runtime", c.name, first)
		}
		if socks, _ := filepath.Glob(filepath.Join(rtDir, "*.sock")); len(socks) != 0 {
			t.Errorf("%s: a runtime started: %v", c.name, socks)
		}
	}
}

// otherBuildRuntime serves a runtime of another build ("another-build")
// in a runtime directory of the test's own, reachable at the socket the
// command bin would use (its build identity, as warm.BuildID computes it
// for an executable), and returns that directory, bin's build and the
// channel that receives Serve's result (its cleanup receives from it: a
// test that receives first sends the result back). The runtime stops at
// the end of the test.
func otherBuildRuntime(t *testing.T, bin string) (rtDir, build string, done chan error) {
	t.Helper()
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	build = hex.EncodeToString(sum[:])[:16]
	rtDir = filepath.Join(shortDir(t), "rt")
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done = make(chan error, 1)
	go func() {
		done <- warm.Serve(ctx, &warm.ServeOptions{Dir: rtDir, Build: "another-build", Idle: -1, Ready: func(s string) { ready <- s }})
	}()
	t.Cleanup(func() { cancel(); <-done })
	var sock string
	select {
	case sock = <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	if err := os.Link(sock, filepath.Join(rtDir, build+".sock")); err != nil {
		t.Fatal(err)
	}
	return rtDir, build, done
}
