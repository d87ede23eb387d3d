package idebridge

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/idebridge/idebridge/internal/env"
	"github.com/idebridge/idebridge/lockfile"
	"github.com/idebridge/idebridge/pathconv"
)

// handedOut records the closed ports given to tests, so that no two
// lockfiles of a test share a port and no listener takes one of them (the
// kernel readily reuses a port just released).
var handedOut = struct {
	sync.Mutex
	closed map[int]bool
}{closed: map[int]bool{}}

// listenLoopback starts a TCP listener on 127.0.0.1 that accepts and
// closes connections until the test ends, and returns its port.
func listenLoopback(t testing.TB) int {
	t.Helper()
	var ln net.Listener
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		handedOut.Lock()
		taken := handedOut.closed[l.Addr().(*net.TCPAddr).Port]
		handedOut.Unlock()
		if !taken {
			ln = l
			break
		}
		defer l.Close() // keep it bound so the next try gets another port
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return ln.Addr().(*net.TCPAddr).Port
}

// closedPort returns a loopback port that nothing listens on (it was just
// bound and released) and that no other call has returned.
func closedPort(t testing.TB) int {
	t.Helper()
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, ln)
		port := ln.Addr().(*net.TCPAddr).Port
		handedOut.Lock()
		fresh := !handedOut.closed[port]
		handedOut.closed[port] = true
		handedOut.Unlock()
		if fresh {
			return port
		}
	}
}

// writeLock writes a lockfile into dir with the given modification time.
func writeLock(t testing.TB, dir string, lf *lockfile.Lockfile, mtime time.Time) string {
	t.Helper()
	path, err := lockfile.Write(dir, lf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeRawLock writes raw content under a lockfile name, mode 0600.
func writeRawLock(t testing.TB, dir string, port int, content string, mtime time.Time) string {
	t.Helper()
	path := filepath.Join(dir, lockfile.PortName(port))
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return path
}

// discoverSetup is a fake home: a config dir whose ide/ subdirectory holds
// lockfiles, and a project directory to run from.
type discoverSetup struct {
	config, ideDir, proj string
	env                  map[string]string
}

func newDiscoverSetup(t testing.TB) *discoverSetup {
	t.Helper()
	root := t.TempDir()
	s := &discoverSetup{
		config: filepath.Join(root, "config"),
		proj:   filepath.Join(root, "proj"),
	}
	s.ideDir = filepath.Join(s.config, "ide")
	for _, d := range []string{s.ideDir, filepath.Join(s.proj, "sub")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s.env = map[string]string{"CLAUDE_CONFIG_DIR": s.config, "HOME": filepath.Join(root, "home")}
	return s
}

func (s *discoverSetup) opts() *DiscoverOptions {
	return &DiscoverOptions{Cwd: filepath.Join(s.proj, "sub"), Env: env.FromMap(s.env)}
}

func byPort(cands []Candidate) map[int]Candidate {
	m := map[int]Candidate{}
	for _, c := range cands {
		m[c.Port] = c
	}
	return m
}

func TestDiscoverChecks(t *testing.T) {
	s := newDiscoverSetup(t)
	now := time.Now().Truncate(time.Second)
	open1, open2, open3, open4 := listenLoopback(t), listenLoopback(t), listenLoopback(t), listenLoopback(t)
	closed1, closed2 := closedPort(t), closedPort(t)
	dead := deadPID(t)
	self := os.Getpid()
	malformed := closedPort(t)
	insecure := closedPort(t)

	writeLock(t, s.ideDir, &lockfile.Lockfile{Port: open1, PID: self, IDEName: "Visual Studio Code", Transport: "ws", AuthToken: "tok-1", WorkspaceFolders: []string{s.proj}}, now)
	writeLock(t, s.ideDir, &lockfile.Lockfile{Port: open2, PID: self, IDEName: "Cursor", Transport: "ws", WorkspaceFolders: []string{"/somewhere/else", s.proj + "x"}}, now.Add(-1*time.Minute))
	writeLock(t, s.ideDir, &lockfile.Lockfile{Port: open3, PID: dead, IDEName: "Windsurf", Transport: "ws", WorkspaceFolders: []string{s.proj}}, now.Add(-2*time.Minute))
	writeLock(t, s.ideDir, &lockfile.Lockfile{Port: closed1, PID: self, IDEName: "PyCharm", Transport: "sse", WorkspaceFolders: []string{s.proj}}, now.Add(-3*time.Minute))
	writeRawLock(t, s.ideDir, open4, s.proj+"\n", now.Add(-4*time.Minute))
	writeRawLock(t, s.ideDir, malformed, `{"pid": 12, "workspaceFolders": [`, now.Add(-5*time.Minute))
	insecurePath := writeLock(t, s.ideDir, &lockfile.Lockfile{Port: insecure, PID: self, IDEName: "Planted", Transport: "ws", WorkspaceFolders: []string{s.proj}}, now.Add(-6*time.Minute))
	if err := os.Chmod(insecurePath, 0o666); err != nil {
		t.Fatal(err)
	}
	writeLock(t, s.ideDir, &lockfile.Lockfile{Port: closed2, PID: dead, IDEName: "Everything wrong", Transport: "ws", WorkspaceFolders: []string{"/nope"}}, now.Add(-7*time.Minute))

	cands, err := Discover(context.Background(), s.opts())
	if err != nil {
		t.Fatal(err)
	}
	var order []int
	for _, c := range cands {
		order = append(order, c.Port)
	}
	if diff := cmp.Diff([]int{open1, open2, open3, closed1, open4, malformed, insecure, closed2}, order); diff != "" {
		t.Fatalf("candidates not newest first (-want +got):\n%s", diff)
	}

	type summary struct {
		Valid   bool
		Reasons []Reason
	}
	want := map[int]summary{
		open1:     {true, []Reason{}},
		open2:     {false, []Reason{ReasonWorkspaceMismatch}},
		open3:     {false, []Reason{ReasonPIDDead}},
		closed1:   {false, []Reason{ReasonPortClosed}},
		open4:     {true, []Reason{}},
		malformed: {false, []Reason{ReasonParseError}},
		insecure:  {false, []Reason{ReasonInsecurePermissions}},
		closed2:   {false, []Reason{ReasonWorkspaceMismatch, ReasonPIDDead, ReasonPortClosed}},
	}
	for _, c := range cands {
		if diff := cmp.Diff(want[c.Port], summary{c.Valid, c.Reasons}); diff != "" {
			t.Errorf("port %d (%s): (-want +got):\n%s\nmessage: %s", c.Port, c.IDEName, diff, c.Message)
		}
	}

	got := byPort(cands)
	v := got[open1]
	if v.URL != "ws://127.0.0.1:"+itoa(open1)+"/" || v.Host != "127.0.0.1" || v.AuthToken != "tok-1" || v.PID != self ||
		v.Transport != "ws" || v.Lockfile == nil || v.Paths != (pathconv.Identity{}) || v.Path != filepath.Join(s.ideDir, lockfile.PortName(open1)) || v.ModTime.IsZero() {
		t.Errorf("valid candidate: %+v", v)
	}
	if !strings.Contains(v.Message, "is usable") || !strings.Contains(v.Message, "workspace "+s.proj+" contains") {
		t.Errorf("valid message %q", v.Message)
	}
	if c := got[closed1]; c.URL != "http://127.0.0.1:"+itoa(closed1)+"/sse" || !strings.Contains(c.Message, "connection refused") {
		t.Errorf("sse candidate: URL %q message %q", c.URL, c.Message)
	}
	if c := got[open4]; !c.Lockfile.Legacy || c.Transport != "sse" || c.PID != 0 || c.IDEName != "" {
		t.Errorf("legacy candidate: %+v", c)
	}
	if c := got[open2]; c.Message != "none of the workspace folders /somewhere/else, "+s.proj+"x contains "+filepath.Join(s.proj, "sub") {
		t.Errorf("mismatch message %q", c.Message)
	}
	if c := got[open3]; c.Message != "pid "+itoa(dead)+" is not running" {
		t.Errorf("dead pid message %q", c.Message)
	}
	if c := got[malformed]; !strings.Contains(c.Message, "invalid JSON") || c.Lockfile != nil || c.URL != "" {
		t.Errorf("malformed: %+v", c)
	}
	if c := got[insecure]; !strings.Contains(c.Message, "writable by group or others") || c.AuthToken != "" {
		t.Errorf("insecure: %+v", c)
	}
	if c := got[closed2]; strings.Count(c.Message, "; ") != 2 || !strings.HasPrefix(c.Message, "workspace /nope does not contain") {
		t.Errorf("three reasons, message %q", c.Message)
	}

	valid := ValidCandidates(cands)
	if len(valid) != 2 || valid[0].Port != open1 || valid[1].Port != open4 {
		t.Errorf("ValidCandidates = %v", valid)
	}

	// AllowInsecure reads the planted lockfile like any other.
	opts := s.opts()
	opts.AllowInsecure = true
	cands, err = Discover(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if c := byPort(cands)[insecure]; !slices.Equal(c.Reasons, []Reason{ReasonPortClosed}) {
		t.Errorf("with AllowInsecure: %+v", c)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestDiscoverSSEPortAndSkipCheck(t *testing.T) {
	s := newDiscoverSetup(t)
	now := time.Now()
	a, b := listenLoopback(t), listenLoopback(t)
	writeLock(t, s.ideDir, &lockfile.Lockfile{Port: a, PID: os.Getpid(), Transport: "ws", WorkspaceFolders: []string{"/other"}}, now)
	writeLock(t, s.ideDir, &lockfile.Lockfile{Port: b, PID: os.Getpid(), Transport: "ws", WorkspaceFolders: []string{"/other"}}, now.Add(-time.Second))

	s.env[EnvSSEPort] = itoa(a)
	cands, err := Discover(context.Background(), s.opts())
	if err != nil {
		t.Fatal(err)
	}
	got := byPort(cands)
	if !got[a].Valid || got[b].Valid || !strings.Contains(got[a].Message, EnvSSEPort) {
		t.Errorf("with %s=%d: %+v", EnvSSEPort, a, cands)
	}

	delete(s.env, EnvSSEPort)
	for _, v := range []string{"1", "true", "yes", " ON "} {
		s.env[EnvSkipValidCheck] = v
		cands, err = Discover(context.Background(), s.opts())
		if err != nil {
			t.Fatal(err)
		}
		if len(ValidCandidates(cands)) != 2 {
			t.Errorf("with %s=%s: %+v", EnvSkipValidCheck, v, cands)
		}
	}
	s.env[EnvSkipValidCheck] = "0"
	cands, _ = Discover(context.Background(), s.opts())
	if len(ValidCandidates(cands)) != 0 {
		t.Errorf("with %s=0 the check must stay on: %+v", EnvSkipValidCheck, cands)
	}
}

// TestDiscoverAncestry runs inside a (pretend) VS Code terminal: only an
// IDE whose pid is a real ancestor of this test process is valid.
func TestDiscoverAncestry(t *testing.T) {
	s := newDiscoverSetup(t)
	s.env["TERM_PROGRAM"] = "vscode"
	now := time.Now()
	ancestor, stranger, legacy, ssePort := listenLoopback(t), listenLoopback(t), listenLoopback(t), listenLoopback(t)
	live := startLiveProcess(t)
	writeLock(t, s.ideDir, &lockfile.Lockfile{Port: ancestor, PID: os.Getppid(), Transport: "ws", WorkspaceFolders: []string{s.proj}}, now)
	writeLock(t, s.ideDir, &lockfile.Lockfile{Port: stranger, PID: live, Transport: "ws", WorkspaceFolders: []string{s.proj}}, now.Add(-time.Second))
	writeRawLock(t, s.ideDir, legacy, s.proj+"\n", now.Add(-2*time.Second))
	writeLock(t, s.ideDir, &lockfile.Lockfile{Port: ssePort, PID: live, Transport: "ws", WorkspaceFolders: []string{s.proj}}, now.Add(-3*time.Second))
	s.env[EnvSSEPort] = itoa(ssePort)

	cands, err := Discover(context.Background(), s.opts())
	if err != nil {
		t.Fatal(err)
	}
	got := byPort(cands)
	if !got[ancestor].Valid {
		t.Errorf("the parent's lockfile: %+v", got[ancestor])
	}
	if c := got[stranger]; c.Valid || !slices.Equal(c.Reasons, []Reason{ReasonNotAncestor}) || !strings.Contains(c.Message, "not an ancestor") {
		t.Errorf("a live non-ancestor: %+v", c)
	}
	if c := got[legacy]; c.Valid || !slices.Equal(c.Reasons, []Reason{ReasonNotAncestor}) || !strings.Contains(c.Message, "no pid") {
		t.Errorf("a lockfile without pid: %+v", c)
	}
	if c := got[ssePort]; !c.Valid {
		t.Errorf("the %s lockfile is exempt: %+v", EnvSSEPort, c)
	}

	// Under WSL the ancestry check does not apply.
	s.env["WSL_DISTRO_NAME"] = "Ubuntu"
	cands, err = Discover(context.Background(), s.opts())
	if err != nil {
		t.Fatal(err)
	}
	if len(ValidCandidates(cands)) != 4 {
		t.Errorf("under WSL: %+v", cands)
	}
	// Nor outside an IDE's terminal (an explicit Terminal overrides Env).
	opts := s.opts()
	opts.Terminal = &Terminal{}
	cands, _ = Discover(context.Background(), opts)
	if len(ValidCandidates(cands)) != 4 {
		t.Errorf("outside an IDE terminal: %+v", cands)
	}
}

// TestDiscoverAncestryDepth uses a simulated process tree: the walk goes
// exactly MaxAncestors parents up.
func TestDiscoverAncestryDepth(t *testing.T) {
	s := newDiscoverSetup(t)
	near, far := listenLoopback(t), listenLoopback(t)
	tree := chain(20) // 100 -> 101 -> ... -> 119 -> 1
	writeLock(t, s.ideDir, &lockfile.Lockfile{Port: near, PID: 100 + MaxAncestors, Transport: "ws", WorkspaceFolders: []string{s.proj}}, time.Now())
	writeLock(t, s.ideDir, &lockfile.Lockfile{Port: far, PID: 100 + MaxAncestors + 1, Transport: "ws", WorkspaceFolders: []string{s.proj}}, time.Now())
	opts := s.opts()
	opts.Terminal = &Terminal{IDE: "IntelliJ IDEA", Family: FamilyJetBrains}
	opts.Processes = tree
	opts.SelfPID = 100
	cands, err := Discover(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	got := byPort(cands)
	if !got[near].Valid {
		t.Errorf("the %dth ancestor: %+v", MaxAncestors, got[near])
	}
	if c := got[far]; !slices.Equal(c.Reasons, []Reason{ReasonNotAncestor}) {
		t.Errorf("the %dth ancestor: %+v", MaxAncestors+1, c)
	}
}

// TestDiscoverWSL pretends to run inside WSL with the Windows profiles
// under a temporary "mount": the Windows IDE's folders are converted, its
// pid is not checked, and it is reached on the Windows host.
func TestDiscoverWSL(t *testing.T) {
	s := newDiscoverSetup(t)
	users := filepath.Join(t.TempDir(), "Users")
	winIDE := filepath.Join(users, "me", ".claude", "ide")
	for _, d := range []string{winIDE, filepath.Join(users, "Public", ".claude", "ide")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s.env["WSL_DISTRO_NAME"] = "Ubuntu"
	now := time.Now()
	winPort, winClosed, wslPort := listenLoopback(t), closedPort(t), listenLoopback(t)
	winLock := &lockfile.Lockfile{Port: winPort, PID: deadPID(t), IDEName: "Visual Studio Code", Transport: "ws", RunningInWindows: true, AuthToken: "w", WorkspaceFolders: []string{`C:\Users\me\proj`}}
	writeLock(t, winIDE, winLock, now)
	writeLock(t, winIDE, &lockfile.Lockfile{Port: winClosed, PID: 4, Transport: "ws", RunningInWindows: true, WorkspaceFolders: []string{`C:\Users\me\proj`}}, now.Add(-time.Second))
	// The same IDE seen through the WSL-side directory too.
	writeLock(t, s.ideDir, winLock, now.Add(-2*time.Second))
	// A WSL-side IDE for a folder inside the distribution.
	writeLock(t, s.ideDir, &lockfile.Lockfile{Port: wslPort, PID: os.Getpid(), Transport: "ws", WorkspaceFolders: []string{"/home/me/other"}}, now.Add(-3*time.Second))
	// The mount makes modes up: a Windows-side directory open to all is not refused.
	if err := os.Chmod(winIDE, 0o777); err != nil {
		t.Fatal(err)
	}
	// A Public profile is never looked at.
	writeRawLock(t, filepath.Join(users, "Public", ".claude", "ide"), closedPort(t), "{", now)

	var hostCalls atomic.Int32
	opts := &DiscoverOptions{
		Cwd:        "/mnt/c/Users/me/proj/src",
		Env:        env.FromMap(s.env),
		DirOptions: &lockfile.DirOptions{WindowsUsersRoot: users},
		WindowsHost: func(context.Context) (string, error) {
			hostCalls.Add(1)
			return "127.0.0.1", nil
		},
	}
	if got := LockfileDirs(opts); !slices.Contains(got, winIDE) || !slices.Contains(got, s.ideDir) || len(got) != 2 {
		t.Errorf("LockfileDirs = %q", got)
	}
	cands, err := Discover(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 3 {
		t.Fatalf("want 3 candidates (the Windows IDE once), got %+v", cands)
	}
	got := byPort(cands)
	w := got[winPort]
	if !w.Valid || w.Host != "127.0.0.1" || w.Path != filepath.Join(winIDE, lockfile.PortName(winPort)) {
		t.Errorf("Windows IDE: %+v", w)
	}
	if _, ok := w.Paths.(*pathconv.WSL); !ok || w.Paths.ToLocal(`C:\Users\me\proj\a.go`) != "/mnt/c/Users/me/proj/a.go" || w.Paths.ToIDE("/home/me") != `\\wsl$\Ubuntu\home\me` {
		t.Errorf("Windows IDE converter: %T", w.Paths)
	}
	if c := got[winClosed]; !slices.Equal(c.Reasons, []Reason{ReasonPortClosed}) {
		t.Errorf("closed Windows IDE: %+v", c)
	}
	if c := got[wslPort]; !slices.Equal(c.Reasons, []Reason{ReasonWorkspaceMismatch}) || c.Paths != (pathconv.Identity{}) {
		t.Errorf("WSL-side IDE: %+v", c)
	}
	if n := hostCalls.Load(); n != 1 {
		t.Errorf("the Windows host was resolved %d times, want once per run", n)
	}

	// The override wins over the Windows host, for every IDE.
	s.env[EnvHostOverride] = "localhost"
	opts.Env = env.FromMap(s.env)
	cands, _ = Discover(context.Background(), opts)
	for _, c := range cands {
		if c.Host != "localhost" || !strings.Contains(c.URL, "//localhost:") {
			t.Errorf("with the override: host %q url %q", c.Host, c.URL)
		}
	}
	if n := hostCalls.Load(); n != 1 {
		t.Errorf("the Windows host was resolved although overridden")
	}
	delete(s.env, EnvHostOverride)
	opts.Env = env.FromMap(s.env)

	// When the Windows host cannot be found, 127.0.0.1 is tried and the
	// message says why the port may look closed.
	opts.WindowsHost = func(context.Context) (string, error) { return "", pathconv.ErrNoWindowsHost }
	cands, _ = Discover(context.Background(), opts)
	if c := byPort(cands)[winClosed]; c.Host != "127.0.0.1" || !strings.Contains(c.Message, "Windows host could not be found") {
		t.Errorf("without a Windows host: %+v", c)
	}
}

func TestDiscoverDirectoryErrors(t *testing.T) {
	s := newDiscoverSetup(t)
	port := listenLoopback(t)
	writeLock(t, s.ideDir, &lockfile.Lockfile{Port: port, PID: os.Getpid(), Transport: "ws", WorkspaceFolders: []string{s.proj}}, time.Now())
	notDir := filepath.Join(s.proj, "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	opts := s.opts()
	opts.Dirs = []string{s.ideDir, notDir, filepath.Join(s.proj, "missing")}
	cands, err := Discover(context.Background(), opts)
	var de *lockfile.DirError
	if !errors.As(err, &de) || de.Dir != notDir {
		t.Errorf("err = %v, want a *lockfile.DirError for %s", err, notDir)
	}
	if len(cands) != 1 || !cands[0].Valid {
		t.Errorf("the readable directory's candidates must still come back: %+v", cands)
	}
}

func TestDiscoverNothing(t *testing.T) {
	s := newDiscoverSetup(t)
	cands, err := Discover(context.Background(), s.opts())
	if err != nil || len(cands) != 0 {
		t.Errorf("Discover = %v, %v", cands, err)
	}
	opts := s.opts()
	opts.Env = []string{} // no CLAUDE_CONFIG_DIR, no HOME: nothing to scan
	if got := LockfileDirs(opts); len(got) != 0 {
		t.Errorf("LockfileDirs = %q", got)
	}
	if cands, err := Discover(context.Background(), opts); err != nil || len(cands) != 0 {
		t.Errorf("Discover without dirs = %v, %v", cands, err)
	}
}

// TestDiscoverRejectsNegativeOptions: a negative number in the options is
// an error naming the field, and nothing is probed or removed.
func TestDiscoverRejectsNegativeOptions(t *testing.T) {
	s := newDiscoverSetup(t)
	path := writeRawLock(t, s.ideDir, closedPort(t), "{", time.Now())
	dialed := false
	for field, set := range map[string]func(*DiscoverOptions){
		"ProbeTimeout": func(o *DiscoverOptions) { o.ProbeTimeout = -time.Second },
		"Concurrency":  func(o *DiscoverOptions) { o.Concurrency = -1 },
		"SelfPID":      func(o *DiscoverOptions) { o.SelfPID = -2 },
	} {
		opts := s.opts()
		opts.Dial = func(context.Context, string, string) (net.Conn, error) {
			dialed = true
			return nil, errors.New("must not dial")
		}
		set(opts)
		if cands, err := Discover(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "DiscoverOptions."+field+" is negative") || cands != nil {
			t.Errorf("Discover with a negative %s = %v, %v; want an error naming it", field, cands, err)
		}
		// A candidate RemoveStale would remove with valid options.
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		stale := []Candidate{{Port: 1, Path: path, ModTime: info.ModTime(), Reasons: []Reason{ReasonParseError}}}
		if removed, err := RemoveStale(context.Background(), stale, opts); err == nil || !strings.Contains(err.Error(), field) || removed != nil {
			t.Errorf("RemoveStale with a negative %s = %v, %v; want an error naming it", field, removed, err)
		}
	}
	if _, err := os.Stat(path); err != nil || dialed {
		t.Errorf("rejected options still acted: lockfile %v, dialed %v", err, dialed)
	}
}

func TestDiscoverCancelled(t *testing.T) {
	s := newDiscoverSetup(t)
	writeLock(t, s.ideDir, &lockfile.Lockfile{Port: closedPort(t), PID: os.Getpid(), WorkspaceFolders: []string{s.proj}}, time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Discover(ctx, s.opts()); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// barrierDial lets no probe finish until n probes are in flight at once,
// and records the most that ever were. Sequential probing would never
// reach the barrier: every probe would time out instead.
type barrierDial struct {
	n        int32
	inFlight atomic.Int32
	maxSeen  atomic.Int32
	reached  chan struct{}
	once     sync.Once
}

func (b *barrierDial) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	cur := b.inFlight.Add(1)
	defer b.inFlight.Add(-1)
	for {
		old := b.maxSeen.Load()
		if cur <= old || b.maxSeen.CompareAndSwap(old, cur) {
			break
		}
	}
	if cur >= b.n {
		b.once.Do(func() { close(b.reached) })
	}
	select {
	case <-b.reached:
		c1, c2 := net.Pipe()
		c2.Close()
		return c1, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func TestDiscoverProbesConcurrently(t *testing.T) {
	s := newDiscoverSetup(t)
	const n = 40
	for i := range n {
		writeLock(t, s.ideDir, &lockfile.Lockfile{Port: 20000 + i, PID: os.Getpid(), Transport: "ws", WorkspaceFolders: []string{s.proj}}, time.Now())
	}
	b := &barrierDial{n: n, reached: make(chan struct{})}
	opts := s.opts()
	opts.Dial = b.dial
	opts.ProbeTimeout = 10 * time.Second
	cands, err := Discover(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(ValidCandidates(cands)) != n {
		t.Errorf("%d of %d valid: probes did not run concurrently", len(ValidCandidates(cands)), n)
	}

	// Concurrency bounds the probes in flight.
	b = &barrierDial{n: 3, reached: make(chan struct{})}
	opts.Dial = b.dial
	opts.Concurrency = 3
	if _, err := Discover(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if got := b.maxSeen.Load(); got != 3 {
		t.Errorf("at most %d probes were in flight with Concurrency 3", got)
	}
}

func TestCandidateJSON(t *testing.T) {
	s := newDiscoverSetup(t)
	writeLock(t, s.ideDir, &lockfile.Lockfile{Port: listenLoopback(t), PID: os.Getpid(), IDEName: "X", Transport: "ws", AuthToken: "secret", WorkspaceFolders: []string{s.proj}}, time.Now())
	writeRawLock(t, s.ideDir, closedPort(t), "{", time.Now().Add(-time.Second))
	cands, err := Discover(context.Background(), s.opts())
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(cands)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "secret") {
		t.Errorf("the auth token leaked into JSON: %s", data)
	}
	var objs []map[string]any
	if err := json.Unmarshal(data, &objs); err != nil {
		t.Fatal(err)
	}
	want := []string{"ideName", "message", "path", "pid", "port", "reasons", "transport", "url", "valid", "workspaceFolders"}
	for _, o := range objs {
		var keys []string
		for k := range o {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if diff := cmp.Diff(want, keys); diff != "" {
			t.Errorf("JSON keys (-want +got):\n%s", diff)
		}
		if o["reasons"] == nil || o["workspaceFolders"] == nil {
			t.Errorf("null list in %v", o)
		}
	}
}
