package warm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idebridge/idebridge/lsp"
)

// remoteModule is goModule with an interface and its implementation, for
// Implementation and the type hierarchy.
func remoteModule(t *testing.T) string {
	t.Helper()
	mod := goModule(t)
	src := "package main\n\n// Shape has an area.\ntype Shape interface{ Area() int }\n\n// Square is a Shape.\ntype Square struct{ Side int }\n\n// Area is the square's.\nfunc (s Square) Area() int { return s.Side * s.Side }\n\nvar _ Shape = Square{}\n"
	if err := os.WriteFile(filepath.Join(mod, "shapes.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return mod
}

// goplsProject is a gopls Project on a fresh module, with the environment
// its runtime and a test Manager run gopls in.
func goplsProject(t *testing.T) (p *Project, env []string) {
	t.Helper()
	gopls, err := lsp.FindGopls(os.Getenv)
	if err != nil {
		t.Fatalf("this test needs gopls: %v", err)
	}
	env = append(os.Environ(), "GOPLSCACHE="+t.TempDir(), "GOPROXY=off")
	mod := remoteModule(t)
	return &Project{Dir: mod, Configs: []lsp.ServerConfig{lsp.GoplsConfig(gopls, mod)}, NoIDE: true}, env
}

// navAsk asks n every question of the test, as an agent written against
// Navigator would, and returns the answers as JSON.
func navAsk(ctx context.Context, t *testing.T, n Navigator) []string {
	t.Helper()
	dir := n.ProjectDir()
	greet := lsp.Pos{Path: filepath.Join(dir, "greet.go"), Line: 4, Symbol: "greet"}
	use := lsp.Pos{Path: filepath.Join(dir, "main.go"), Line: 6, Symbol: "greet"}
	shape := lsp.Pos{Path: filepath.Join(dir, "shapes.go"), Line: 4, Symbol: "Shape"}
	square := lsp.Pos{Path: filepath.Join(dir, "shapes.go"), Line: 7, Symbol: "Square"}
	var out []string
	add := func(what string, v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		b, _ := json.Marshal(v)
		out = append(out, what+" "+string(b))
	}
	d, err := n.Definition(ctx, use)
	add("definition", d, err)
	refs, err := n.References(ctx, greet, true)
	add("references", refs, err)
	h, err := n.Hover(ctx, greet)
	add("hover", h, err)
	ds, err := n.DocumentSymbols(ctx, filepath.Join(dir, "shapes.go"))
	add("documentSymbols", ds, err)
	ws, err := n.WorkspaceSymbols(ctx, "Square", filepath.Join(dir, "main.go"))
	add("workspaceSymbols", ws, err)
	impl, err := n.Implementation(ctx, shape)
	add("implementation", impl, err)
	in, err := n.IncomingCalls(ctx, greet)
	add("incomingCalls", in, err)
	outc, err := n.OutgoingCalls(ctx, lsp.Pos{Path: filepath.Join(dir, "main.go"), Line: 5, Symbol: "main"})
	add("outgoingCalls", outc, err)
	sup, err := n.Supertypes(ctx, square)
	add("supertypes", sup, err)
	page, err := n.Navigate(ctx, lsp.NavRequest{Op: lsp.OpReferences, At: greet, IncludeDeclaration: true, Limit: 1})
	add("references page", page, err)
	return out
}

// TestRemoteAnswersAsManager: a Remote answers every navigation question
// with lsp's own types, equal to an in-process Manager's on the same
// project; its errors keep their identity; rename is refused; Servers
// names the runtime's gopls.
func TestRemoteAnswersAsManager(t *testing.T) {
	p, env := goplsProject(t)
	dir := runtimeDir(t)
	serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: -1, Env: env})
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	defer cancel()
	r, err := Dial(ctx, &Options{Dir: dir, Build: "b1"}, p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m, err := lsp.NewManager(p.Configs, &lsp.ManagerOptions{ProjectDir: p.Dir, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())

	got, want := navAsk(ctx, t, r), navAsk(ctx, t, m)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("through the runtime:\n%s\nin the process:\n%s", got[i], want[i])
		}
	}
	if !strings.Contains(got[2], "greet says hello") {
		t.Errorf("hover: %s", got[2])
	}

	_, err = r.Hover(ctx, lsp.Pos{Path: filepath.Join(p.Dir, "notes.txt"), Line: 1, Column: 1})
	var ne *NavError
	var ns *lsp.NoServerError
	if !errors.As(err, &ne) || !errors.Is(err, lsp.ErrNoServer) || !errors.As(err, &ns) || ns.Extension != ".txt" {
		t.Errorf("a file no server serves: %v (%T), want a *NavError that is lsp.ErrNoServer", err, err)
	}
	_, err = r.Hover(ctx, lsp.Pos{Path: filepath.Join(p.Dir, "greet.go"), Line: 4, Symbol: "nosuchname"})
	if !errors.Is(err, lsp.ErrBadPos) {
		t.Errorf("a symbol not on its line: %v, want lsp.ErrBadPos", err)
	}
	if _, err := r.Navigate(ctx, lsp.NavRequest{Op: lsp.OpRename, At: lsp.Pos{Path: filepath.Join(p.Dir, "greet.go"), Line: 4, Symbol: "greet"}, NewName: "hello"}); !errors.Is(err, lsp.ErrUnsupported) {
		t.Errorf("rename through a Remote: %v, want refused as lsp.ErrUnsupported", err)
	}
	ss, err := r.Servers(ctx)
	if err != nil || len(ss) != 1 || ss[0].Name != p.Configs[0].Name || ss[0].State != lsp.StateRunning || ss[0].PID == 0 {
		t.Errorf("Servers: %+v, %v; want the runtime's gopls, running", ss, err)
	}
	if local := m.Servers(); len(local) != 1 || local[0].PID == ss[0].PID {
		t.Errorf("the test's own gopls %+v is the runtime's %+v", local, ss)
	}
}

// TestRemoteConcurrentCalls: calls made at once on one Remote are all
// answered, each with its own answer, over one session.
func TestRemoteConcurrentCalls(t *testing.T) {
	p, env := goplsProject(t)
	dir := runtimeDir(t)
	serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: -1, Env: env})
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	defer cancel()
	o := &Options{Dir: dir, Build: "b1"}
	r, err := Dial(ctx, o, p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	greet := lsp.Pos{Path: filepath.Join(p.Dir, "greet.go"), Line: 4, Symbol: "greet"}
	square := lsp.Pos{Path: filepath.Join(p.Dir, "shapes.go"), Line: 7, Symbol: "Square"}
	wantGreet, err := r.Hover(ctx, greet)
	if err != nil {
		t.Fatal(err)
	}
	wantSquare, err := r.Hover(ctx, square)
	if err != nil {
		t.Fatal(err)
	}
	const n = 32
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			at, want := greet, wantGreet
			if i%2 == 1 {
				at, want = square, wantSquare
			}
			h, err := r.Hover(ctx, at)
			if err == nil && h.Markdown != want.Markdown {
				err = errors.New("answered " + h.Markdown + ", want " + want.Markdown)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	st, err := GetStatus(ctx, o)
	if err != nil || st.Sessions != 1 {
		t.Errorf("status: %+v, %v; want the Remote's one session", st, err)
	}
}

// muteProject is a project whose one server, for .txt files, never
// answers its initialize.
func muteProject(t *testing.T) (*Project, string) {
	mod := t.TempDir()
	file := filepath.Join(mod, "a.txt")
	if err := os.WriteFile(file, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := lsp.ServerConfig{Name: "mute", Command: "sleep", Args: []string{"3600"}, ExtensionToLanguage: map[string]string{".txt": "plaintext"}}
	return &Project{Dir: mod, Configs: []lsp.ServerConfig{cfg}, NoIDE: true}, file
}

// waitStarting waits until the runtime has started the project's mute
// server: a call is in flight there.
func waitStarting(t *testing.T, o *Options) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		st, err := GetStatus(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range st.Projects {
			for _, s := range p.Servers {
				if s.Name == "mute" && s.State == lsp.StateStarting.String() {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the call never reached the runtime: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRemoteCancel: a call whose context is cancelled returns
// context.Canceled at once, and is cancelled in the runtime, which
// answers it (its slot is freed) though its server never answers; a
// deadline fails the call in the runtime with the runtime's own
// context.DeadlineExceeded. The Remote serves on.
func TestRemoteCancel(t *testing.T) {
	dir := runtimeDir(t)
	serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: -1})
	p, file := muteProject(t)
	o := &Options{Dir: dir, Build: "b1"}
	r, err := Dial(context.Background(), o, p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := r.Hover(ctx, lsp.Pos{Path: file, Line: 1, Column: 1})
		done <- err
	}()
	waitStarting(t, o)
	if len(r.slots) != 1 {
		t.Fatalf("%d calls in flight, want 1", len(r.slots))
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Hover after cancel: %v, want context.Canceled", err)
	}
	deadline := time.Now().Add(testTimeout)
	for len(r.slots) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the runtime never answered the cancelled call: it still runs there")
		}
		time.Sleep(20 * time.Millisecond)
	}

	tctx, tcancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer tcancel()
	_, err = r.Hover(tctx, lsp.Pos{Path: file, Line: 1, Column: 1})
	var ne *NavError
	if !errors.As(err, &ne) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Hover past its deadline: %v (%T), want the runtime's *NavError, context.DeadlineExceeded", err, err)
	}
	if _, err := r.Servers(context.Background()); err != nil {
		t.Errorf("Servers after the cancelled calls: %v", err)
	}
}

// TestRemoteRuntimeKilled: a runtime killed with SIGKILL fails the call
// in flight with ErrRuntimeLost (it is not sent again), and the next
// call starts a new runtime and is answered there.
func TestRemoteRuntimeKilled(t *testing.T) {
	p, env := goplsProject(t)
	mute, file := muteProject(t)
	p.Configs = append(p.Configs, mute.Configs[0])
	dir := runtimeDir(t)
	o := &Options{Dir: dir, Start: []string{os.Args[0]}, Env: append(env, "WARM_TEST_SERVE=1", EnvIdle+"=1m")}
	t.Cleanup(func() { Stop(context.Background(), o) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	defer cancel()
	r, err := Dial(ctx, o, p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	first := r.Runtime()
	if first == nil || !first.Started {
		t.Fatalf("the first runtime %+v: want started by Dial", first)
	}
	greet := lsp.Pos{Path: filepath.Join(p.Dir, "greet.go"), Line: 4, Symbol: "greet"}
	if _, err := r.Hover(ctx, greet); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := r.Hover(ctx, lsp.Pos{Path: file, Line: 1, Column: 1})
		done <- err
	}()
	waitStarting(t, o)
	if err := syscall.Kill(first.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrRuntimeLost) {
			t.Errorf("the call in flight when the runtime died: %v, want ErrRuntimeLost", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("the call in flight never ended")
	}
	h, err := r.Hover(ctx, greet)
	if err != nil || !strings.Contains(h.Markdown, "greet says hello") {
		t.Fatalf("the next call: %+v, %v; want answered by a new runtime", h, err)
	}
	second := r.Runtime()
	if second == nil || second.PID == first.PID || !second.Started {
		t.Errorf("runtime after the kill: %+v, want a new one this Remote started (the first was %d)", second, first.PID)
	}
}

// TestRemoteCloseEndsSession: a Remote's session lasts from Dial to
// Close, and Close ends it in the runtime at once; a call after Close
// fails with ErrRemoteClosed.
func TestRemoteCloseEndsSession(t *testing.T) {
	dir := runtimeDir(t)
	serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: -1})
	o := &Options{Dir: dir, Build: "b1"}
	p := noServers(t)
	r, err := Dial(context.Background(), o, p)
	if err != nil {
		t.Fatal(err)
	}
	st, err := GetStatus(context.Background(), o)
	if err != nil || st.Sessions != 1 || len(st.Projects) != 1 || st.Projects[0].Dir != p.Dir ||
		len(st.Projects[0].Sessions) != 1 || st.Projects[0].Sessions[0].PID != os.Getpid() {
		t.Fatalf("status with a Remote: %+v, %v; want its one session, of this process", st, err)
	}
	r.Close()
	deadline := time.Now().Add(testTimeout)
	for {
		st, err := GetStatus(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if st.Sessions == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session outlived Close: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := r.Servers(context.Background()); !errors.Is(err, ErrRemoteClosed) {
		t.Errorf("Servers after Close: %v, want ErrRemoteClosed", err)
	}
}

// TestOpsBadCalls: on an operations connection, a call of an unknown
// method, a call past the bound of calls in flight and a duplicate id are
// each refused with a reply naming its id; a line that is not a call ends
// the connection with a reply saying why; the runtime serves on.
func TestOpsBadCalls(t *testing.T) {
	dir := runtimeDir(t)
	sock, _, _ := serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: -1})
	p, file := muteProject(t)
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testTimeout))
	br := bufio.NewReader(c)
	var h hello
	if err := readLine(br, &h); err != nil {
		t.Fatal(err)
	}
	writeLine(c, request{Op: "ops", Project: p})
	var rep reply
	if err := readLine(br, &rep); err != nil || rep.Error != "" {
		t.Fatalf("ops handshake: %+v, %v", rep, err)
	}
	nav := &lsp.NavRequest{Op: lsp.OpHover, At: lsp.Pos{Path: file, Line: 1, Column: 1}}
	for id := uint64(1); id <= maxOpsInFlight; id++ {
		writeLine(c, opsCall{ID: id, Method: "nav", Nav: nav})
	}
	writeLine(c, opsCall{ID: 1, Method: "nav", Nav: nav})
	writeLine(c, opsCall{ID: 1000, Method: "nav", Nav: nav})
	writeLine(c, opsCall{ID: 1001, Method: "nope"})
	wants := map[uint64]string{1: "already in flight", 1000: "the most one connection", 1001: `unknown method "nope"`}
	for range len(wants) {
		var r opsReply
		if err := readLineMax(br, &r, maxNavLine); err != nil {
			t.Fatal(err)
		}
		if r.Err == nil || !strings.Contains(r.Err.Message, wants[r.ID]) || wants[r.ID] == "" {
			t.Errorf("reply %+v (error %+v), want one of %q", r, r.Err, wants)
		}
		delete(wants, r.ID)
	}
	// Each of the calls in flight, once cancelled, replies.
	for id := uint64(1); id <= maxOpsInFlight; id++ {
		writeLine(c, opsCall{ID: id, Method: "cancel"})
	}
	writeLine(c, opsCall{ID: 1002, Method: "nav"})
	seen := map[uint64]bool{}
	for len(seen) < maxOpsInFlight+1 {
		var r opsReply
		if err := readLineMax(br, &r, maxNavLine); err != nil {
			t.Fatalf("after %d replies: %v", len(seen), err)
		}
		if r.ID == 1002 {
			if r.Err == nil || !strings.Contains(r.Err.Message, "needs its request") {
				t.Errorf("a nav call without its request: %+v", r.Err)
			}
		} else if r.Err == nil || !r.Err.Canceled {
			t.Errorf("cancelled call %d: %+v, want cancelled", r.ID, r.Err)
		}
		seen[r.ID] = true
	}
	c.Write([]byte("not json\n"))
	var r opsReply
	if err := readLineMax(br, &r, maxNavLine); err != nil || r.ID != 0 || r.Err == nil || !strings.Contains(r.Err.Message, "bad call") {
		t.Errorf("a line that is not a call: %+v, %v; want a reply with id 0 saying so", r, err)
	}
	if _, err := br.ReadByte(); err == nil {
		t.Error("the connection goes on after a line that is not a call")
	}
	if st, err := GetStatus(context.Background(), &Options{Dir: dir, Build: "b1"}); err != nil {
		t.Fatalf("status after bad calls: %v", err)
	} else if st.Sessions != 0 {
		t.Errorf("the session outlived its connection: %+v", st)
	}
}

// TestRemoteHelperProcess is a client process of TestRemoteClientKilled:
// it dials a Remote and waits to be killed.
func TestRemoteHelperProcess(t *testing.T) {
	dir, project := os.Getenv("WARM_TEST_REMOTE_DIR"), os.Getenv("WARM_TEST_REMOTE_PROJECT")
	if dir == "" {
		return // not a helper
	}
	r, err := Dial(context.Background(), &Options{Dir: dir, Build: "b1"}, &Project{Dir: project, Configs: []lsp.ServerConfig{}, NoIDE: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	os.Stdout.WriteString("ready\n")
	time.Sleep(testTimeout)
}

// TestRemoteClientKilled: a process holding a Remote that is killed with
// SIGKILL has its session ended at once: the system closes its socket.
func TestRemoteClientKilled(t *testing.T) {
	dir := runtimeDir(t)
	serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: -1})
	o := &Options{Dir: dir, Build: "b1"}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRemoteHelperProcess$")
	cmd.Env = append(os.Environ(), "WARM_TEST_REMOTE_DIR="+dir, "WARM_TEST_REMOTE_PROJECT="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("the client process: %q, %v", line, err)
	}
	st, err := GetStatus(context.Background(), o)
	if err != nil || st.Sessions != 1 || st.Projects[0].Sessions[0].PID != cmd.Process.Pid {
		t.Fatalf("status: %+v, %v; want the client process's session", st, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testTimeout)
	for {
		st, err := GetStatus(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if st.Sessions == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed client's session lives on: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRemotePyright: a Remote answers as an in-process Manager on
// pyright too.
func TestRemotePyright(t *testing.T) {
	var bin string
	for _, d := range []string{os.Getenv("LSP_BIN"), filepath.Join("..", "tools", "lsp", "node_modules", ".bin")} {
		if p := filepath.Join(d, "pyright-langserver"); d != "" {
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				bin, _ = filepath.Abs(p)
				break
			}
		}
	}
	if bin == "" {
		t.Fatal("this test needs pyright-langserver: set LSP_BIN or run `make lsp-servers`")
	}
	mod := t.TempDir()
	for name, text := range map[string]string{
		"greet.py": "def greet(name: str) -> str:\n    \"\"\"Says hello.\"\"\"\n    return \"hi \" + name\n",
		"main.py":  "from greet import greet\n\nprint(greet(\"a\"))\nprint(greet(\"b\"))\n",
	} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := lsp.NewServerConfig("pyright", bin, []string{"--stdio"}, map[string]string{".py": "python"})
	p := &Project{Dir: mod, Configs: []lsp.ServerConfig{cfg}, NoIDE: true}
	dir := runtimeDir(t)
	serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	defer cancel()
	r, err := Dial(ctx, &Options{Dir: dir, Build: "b1"}, p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m, err := lsp.NewManager(p.Configs, &lsp.ManagerOptions{ProjectDir: mod})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	greet := lsp.Pos{Path: filepath.Join(mod, "greet.py"), Line: 1, Symbol: "greet"}
	use := lsp.Pos{Path: filepath.Join(mod, "main.py"), Line: 3, Symbol: "greet"}
	ask := func(n Navigator) []string {
		var out []string
		for _, req := range []lsp.NavRequest{
			{Op: lsp.OpDefinition, At: use},
			{Op: lsp.OpReferences, At: greet, IncludeDeclaration: true},
			{Op: lsp.OpHover, At: greet},
			{Op: lsp.OpDocumentSymbols, At: lsp.Pos{Path: greet.Path}},
		} {
			res, err := n.Navigate(ctx, req)
			if err != nil {
				t.Fatalf("%s: %v", req.Op, err)
			}
			b, _ := json.Marshal(res)
			out = append(out, string(b))
		}
		return out
	}
	got, want := ask(r), ask(m)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("through the runtime:\n%s\nin the process:\n%s", got[i], want[i])
		}
	}
	if !strings.Contains(got[2], "Says hello") {
		t.Errorf("hover: %s", got[2])
	}
}
