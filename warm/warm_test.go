package warm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idebridge/idebridge/lsp"
)

// testTimeout bounds every wait; never an assertion about speed.
const testTimeout = 60 * time.Second

// TestMain lets the test binary be a runtime when WARM_TEST_SERVE is set,
// so that tests start real runtime processes as `idebridge mcp` does.
func TestMain(m *testing.M) {
	if os.Getenv("WARM_TEST_SERVE") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		if err := Serve(ctx, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// runtimeDir is a fresh runtime directory with a path short enough for a
// socket (t.TempDir's can be too long).
func runtimeDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "warm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return filepath.Join(d, "rt")
}

// serveInProcess runs Serve in a goroutine and waits until it listens.
func serveInProcess(t *testing.T, o *ServeOptions) (socket string, done chan error, cancel context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	o.Ready = func(s string) { ready <- s }
	done = make(chan error, 1)
	go func() { done <- Serve(ctx, o) }()
	select {
	case socket = <-ready:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	case <-time.After(testTimeout):
		t.Fatal("Serve did not listen")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(testTimeout):
			t.Error("Serve did not return after its context ended")
		}
	})
	return socket, done, cancel
}

// noServers is a project with no language server: sessions on it need no
// process but the runtime.
func noServers(t *testing.T) *Project {
	return &Project{Dir: t.TempDir(), Configs: []lsp.ServerConfig{}, NoIDE: true}
}

func TestServeRefusesUnsafeDirectory(t *testing.T) {
	open := filepath.Join(runtimeDir(t), "open")
	if err := os.MkdirAll(open, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o755)
	err := Serve(context.Background(), &ServeOptions{Dir: open, Build: "b1"})
	if !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), "0755") {
		t.Errorf("Serve in a 0755 directory: %v, want ErrUnsafeDir naming the mode", err)
	}
	if _, _, _, err := Open(context.Background(), &Options{Dir: open, Build: "b1"}, noServers(t)); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("Open in a 0755 directory: %v, want ErrUnsafeDir", err)
	}
	if os.Getuid() == 0 {
		theirs := filepath.Join(filepath.Dir(open), "theirs")
		os.Mkdir(theirs, 0o700)
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		err := Serve(context.Background(), &ServeOptions{Dir: theirs, Build: "b1"})
		if !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), "owned by uid 65534") {
			t.Errorf("Serve in another user's directory: %v, want ErrUnsafeDir naming the owner", err)
		}
	}
	link := filepath.Join(filepath.Dir(open), "link")
	real := filepath.Join(filepath.Dir(open), "real")
	os.Mkdir(real, 0o700)
	os.Symlink(real, link)
	if err := Serve(context.Background(), &ServeOptions{Dir: link, Build: "b1"}); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("Serve in a link to a directory: %v, want ErrUnsafeDir", err)
	}
}

func TestVersionSkewRefused(t *testing.T) {
	dir := runtimeDir(t)
	sock, _, _ := serveInProcess(t, &ServeOptions{Dir: dir, Build: "old-build", Idle: -1})
	// A runtime of another build where this build's socket should be.
	if err := os.Link(sock, filepath.Join(dir, "new-build.sock")); err != nil {
		t.Fatal(err)
	}
	_, _, _, err := Open(context.Background(), &Options{Dir: dir, Build: "new-build"}, noServers(t))
	if !errors.Is(err, ErrVersionSkew) || !strings.Contains(err.Error(), "old-build") || !strings.Contains(err.Error(), "new-build") {
		t.Fatalf("Open against another build: %v, want ErrVersionSkew naming both builds", err)
	}
	// The other build's runtime is left alone, and serves its own clients.
	st, err := GetStatus(context.Background(), &Options{Dir: dir, Build: "old-build"})
	if err != nil || st.Build != "old-build" {
		t.Fatalf("status of the old runtime: %+v, %v", st, err)
	}
}

func TestIdleExit(t *testing.T) {
	dir := runtimeDir(t)
	sock, done, _ := serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: 300 * time.Millisecond})
	conn, br, _, err := Open(context.Background(), &Options{Dir: dir, Build: "b1"}, noServers(t))
	if err != nil {
		t.Fatal(err)
	}
	// A session keeps it: it answers across several idle times.
	for range 3 {
		time.Sleep(300 * time.Millisecond)
		fmt.Fprintf(conn, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
		if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, `"result"`) {
			t.Fatalf("ping during the session: %q, %v", line, err)
		}
	}
	conn.Close()
	select {
	case err := <-done:
		done <- err // for the cleanup
		if err != nil {
			t.Fatalf("Serve after the idle time: %v, want nil", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("the runtime did not exit once idle")
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left after the idle exit: %v", err)
	}
}

// TestClientsStartOneRuntime opens sessions from several clients at once
// with no runtime running: one runtime process starts, and all share it.
func TestClientsStartOneRuntime(t *testing.T) {
	dir := runtimeDir(t)
	o := &Options{Dir: dir, Start: []string{os.Args[0]}, Env: append(os.Environ(), "WARM_TEST_SERVE=1", EnvIdle+"=1m")}
	p := noServers(t)
	const n = 4
	var wg sync.WaitGroup
	rts := make([]*Runtime, n)
	conns := make([]*net.UnixConn, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conns[i], _, rts[i], errs[i] = Open(context.Background(), o, p)
		}()
	}
	wg.Wait()
	started := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("client %d: %v", i, errs[i])
		}
		defer conns[i].Close()
		if rts[i].PID != rts[0].PID {
			t.Errorf("client %d reached runtime pid %d, client 0 pid %d", i, rts[i].PID, rts[0].PID)
		}
		if rts[i].Started {
			started++
		}
	}
	if started != 1 {
		t.Errorf("%d clients say they started the runtime, want 1", started)
	}
	st, err := GetStatus(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if st.Sessions != n || len(st.Projects) != 1 || len(st.Projects[0].Sessions) != n {
		t.Errorf("status %+v, want %d sessions on one project", st, n)
	}
	rt, err := Stop(context.Background(), o)
	if err != nil || rt.PID != rts[0].PID {
		t.Fatalf("Stop: %+v, %v", rt, err)
	}
	if _, err := GetStatus(context.Background(), o); !errors.Is(err, ErrNotRunning) {
		t.Errorf("status after Stop: %v, want ErrNotRunning", err)
	}
	// The sessions ended with it.
	for i := range n {
		conns[i].SetReadDeadline(time.Now().Add(testTimeout))
		if _, err := bufio.NewReader(conns[i]).ReadString('\n'); err == nil {
			t.Errorf("client %d's session still answers after Stop", i)
		}
	}
}

// TestBadRequests: a connection that sends garbage, or nothing, is
// answered or dropped, and the runtime goes on serving.
func TestBadRequests(t *testing.T) {
	dir := runtimeDir(t)
	sock, _, _ := serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: -1})
	for _, req := range []string{"not json\n", `{"op":"nope"}` + "\n", `{"op":"session"}` + "\n", `{"op":"session","project":{"dir":"relative"}}` + "\n"} {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		var h hello
		if err := readLine(br, &h); err != nil || h.Build != "b1" {
			t.Fatalf("hello: %+v, %v", h, err)
		}
		c.Write([]byte(req))
		var rep reply
		if err := readLine(br, &rep); err != nil || rep.Error == "" {
			t.Errorf("request %q: reply %+v, %v; want an error", req, rep, err)
		}
		c.Close()
	}
	if _, err := GetStatus(context.Background(), &Options{Dir: dir, Build: "b1"}); err != nil {
		t.Fatalf("status after bad requests: %v", err)
	}
}

// TestIdleProjectStops: a project whose last session ended is closed after
// the idle time while the runtime goes on serving another.
func TestIdleProjectStops(t *testing.T) {
	dir := runtimeDir(t)
	serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: 200 * time.Millisecond})
	o := &Options{Dir: dir, Build: "b1"}
	a, b := noServers(t), noServers(t)
	ca, _, _, err := Open(context.Background(), o, a)
	if err != nil {
		t.Fatal(err)
	}
	cb, _, _, err := Open(context.Background(), o, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	st, err := GetStatus(context.Background(), o)
	if err != nil || len(st.Projects) != 2 {
		t.Fatalf("status with two projects: %+v, %v", st, err)
	}
	ca.Close()
	deadline := time.Now().Add(testTimeout)
	for {
		st, err := GetStatus(context.Background(), o)
		if err != nil {
			t.Fatalf("the runtime stopped while a session was open: %v", err)
		}
		if len(st.Projects) == 1 {
			if st.Projects[0].Dir != b.Dir || st.Sessions != 1 {
				t.Fatalf("status %+v: want the project with the open session", st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idle project was not closed: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTooManyConnections: past maxConns the runtime refuses with a reply
// saying so, and serves again once connections end.
func TestTooManyConnections(t *testing.T) {
	dir := runtimeDir(t)
	sock, _, _ := serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: -1})
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range maxConns {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		// Each is counted once its hello comes.
		if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	o := &Options{Dir: dir, Build: "b1"}
	if _, err := GetStatus(context.Background(), o); err == nil || !strings.Contains(err.Error(), "connections already") {
		t.Fatalf("status past the bound: %v, want a refusal saying why", err)
	}
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	deadline := time.Now().Add(testTimeout)
	for {
		_, err := GetStatus(context.Background(), o)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status once the connections ended: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSecondRuntimeRefused: a second runtime of the same build and
// directory refuses to start, and the first keeps its socket.
func TestSecondRuntimeRefused(t *testing.T) {
	dir := runtimeDir(t)
	serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: -1})
	if err := Serve(context.Background(), &ServeOptions{Dir: dir, Build: "b1"}); !errors.Is(err, ErrRunning) {
		t.Fatalf("a second Serve: %v, want ErrRunning", err)
	}
	if _, err := GetStatus(context.Background(), &Options{Dir: dir, Build: "b1"}); err != nil {
		t.Fatalf("the first runtime after a second tried: %v", err)
	}
}

// TestRunningListsEveryBuild: Running finds the runtimes of every build in
// the directory, and Stop with a listed build stops that one.
func TestRunningListsEveryBuild(t *testing.T) {
	dir := runtimeDir(t)
	serveInProcess(t, &ServeOptions{Dir: dir, Build: "old", Idle: -1})
	serveInProcess(t, &ServeOptions{Dir: dir, Build: "new", Idle: -1})
	os.WriteFile(filepath.Join(dir, "stale.sock"), nil, 0o600) // no runtime behind it
	rts, err := Running(context.Background(), &Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var builds []string
	for _, rt := range rts {
		builds = append(builds, rt.Build)
	}
	if strings.Join(builds, " ") != "new old" {
		t.Fatalf("Running: builds %v, want [new old]", builds)
	}
	if _, err := Stop(context.Background(), &Options{Dir: dir, Build: "old"}); err != nil {
		t.Fatal(err)
	}
	rts, _ = Running(context.Background(), &Options{Dir: dir})
	if len(rts) != 1 || rts[0].Build != "new" {
		t.Errorf("Running after stopping old: %+v", rts)
	}
}
