package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/idebridge/idebridge/internal/fileuri"
)

func TestManagerRouting(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, []ServerConfig{
		scriptConfig("ts", ".ts"),
		scriptConfig("dts", ".d.ts"),
		scriptConfig("first", ".X"),
		scriptConfig("second", ".x"), // conflicts with .X
	}, testOptions(dir))
	for path, want := range map[string]string{
		"a.ts": "ts", "b.d.ts": "dts", "C.TS": "ts", "lib.D.TS": "dts", "y.x": "first", "Y.X": "first",
	} {
		got, err := m.ServerFor(filepath.Join(dir, path))
		if err != nil || got != want {
			t.Errorf("ServerFor(%s) = %q, %v; want %q", path, got, err, want)
		}
	}
	for _, path := range []string{"Makefile", "a.go", ".ts", "ts"} {
		_, err := m.ServerFor(filepath.Join(dir, path))
		var ne *NoServerError
		if !errors.As(err, &ne) || !errors.Is(err, ErrNoServer) {
			t.Errorf("ServerFor(%s): %v, want a *NoServerError", path, err)
			continue
		}
		if !strings.Contains(err.Error(), "served: .d.ts .ts .x") {
			t.Errorf("error %q does not list the served extensions", err)
		}
	}
	if err := m.Open(context.Background(), filepath.Join(dir, "x.go")); !errors.Is(err, ErrNoServer) {
		t.Errorf("Open of an unserved file: %v", err)
	}
	probs := m.Problems()
	if len(probs) != 1 || !errors.Is(probs[0], ErrExtensionConflict) {
		t.Errorf("problems %v", probs)
	}
	if len(m.Servers()) != 3 {
		t.Errorf("servers %+v", m.Servers())
	}
	for _, st := range m.Servers() {
		if st.State != StateStopped || st.PID != 0 {
			t.Errorf("server started before use: %+v", st)
		}
	}
}

func TestManagerNoConfiguration(t *testing.T) {
	m := newManager(t, nil, testOptions(t.TempDir()))
	err := m.Open(context.Background(), "x.go")
	if !errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), "no server is configured") {
		t.Errorf("Open: %v", err)
	}
}

func TestManagerSafeMode(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(dir)
	opts.SafeMode = true
	m := newManager(t, []ServerConfig{scriptConfig("script", ".s")}, opts)
	a := writeSource(t, dir, "a.s", "ERROR")
	ctx := context.Background()
	if err := m.Open(ctx, a); !errors.Is(err, ErrSafeMode) {
		t.Errorf("Open: %v", err)
	}
	if err := m.Call(ctx, a, "test/echo", nil, nil); !errors.Is(err, ErrSafeMode) {
		t.Errorf("Call: %v", err)
	}
	if st := m.Servers()[0]; st.State != StateStopped {
		t.Errorf("server %+v", st)
	}
}

func TestManagerUnsupportedTransport(t *testing.T) {
	dir := t.TempDir()
	cfg := scriptConfig("sock", ".s")
	cfg.Transport = TransportSocket
	cfg.MaxRestarts = -1 // none
	m := newManager(t, []ServerConfig{cfg}, testOptions(dir))
	if err := m.Open(context.Background(), writeSource(t, dir, "a.s", "")); !errors.Is(err, ErrUnsupportedTransport) {
		t.Errorf("Open: %v", err)
	}
}

func TestManagerMissingCommand(t *testing.T) {
	dir := t.TempDir()
	cfg := NewServerConfig("ghost", filepath.Join(dir, "no-such-server"), nil, map[string]string{".s": "s"})
	cfg.MaxRestarts = -1 // none
	m := newManager(t, []ServerConfig{cfg}, testOptions(dir))
	err := m.Open(context.Background(), writeSource(t, dir, "a.s", ""))
	var se *ServerError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "no-such-server") {
		t.Errorf("Open: %v", err)
	}
}

func TestManagerLRUEvictionSendsDidClose(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "server.log")
	opts := testOptions(dir)
	opts.MaxOpenDocuments = 3
	m := newManager(t, []ServerConfig{scriptConfig("script", ".s", "-log", log)}, opts)
	ctx := context.Background()
	var paths []string
	for i := range 5 {
		p := writeSource(t, dir, fmt.Sprintf("f%d.s", i), "ERROR")
		paths = append(paths, p)
		if err := m.Open(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if got := m.OpenDocuments(); fmt.Sprint(got) != fmt.Sprint(paths[2:]) {
		t.Errorf("open documents %v, want %v", got, paths[2:])
	}
	closed := func() []string {
		var uris []string
		for _, p := range logged(t, log, "textDocument/didClose") {
			var c struct {
				TextDocument struct{ URI string } `json:"textDocument"`
			}
			_ = json.Unmarshal(p, &c)
			uris = append(uris, c.TextDocument.URI)
		}
		return uris
	}
	waitFor(t, "two didClose", func() bool { return len(closed()) == 2 })
	if got := closed(); got[0] != fileuri.FromPath(paths[0]) || got[1] != fileuri.FromPath(paths[1]) {
		t.Errorf("closed %v", got)
	}
	// Using f2 makes it the most recent; opening f0 again evicts f3.
	if err := m.Change(ctx, paths[2], "WARN"); err != nil {
		t.Fatal(err)
	}
	if err := m.Open(ctx, paths[0]); err != nil {
		t.Fatal(err)
	}
	if got := m.OpenDocuments(); fmt.Sprint(got) != fmt.Sprint([]string{paths[4], paths[2], paths[0]}) {
		t.Errorf("open documents %v", got)
	}
	waitFor(t, "third didClose", func() bool { return len(closed()) == 3 })
	if got := closed(); got[2] != fileuri.FromPath(paths[3]) {
		t.Errorf("closed %v", got)
	}
	// A reopened document continues its version numbers.
	var v struct {
		TextDocument struct{ Version int } `json:"textDocument"`
	}
	opens := logged(t, log, "textDocument/didOpen")
	_ = json.Unmarshal(opens[len(opens)-1], &v)
	if v.TextDocument.Version != 2 {
		t.Errorf("reopened at version %d, want 2", v.TextDocument.Version)
	}
	if _, err := m.Settle(ctx, paths[3]); !errors.Is(err, ErrNotOpen) {
		t.Errorf("Settle of an evicted file: %v", err)
	}
	if res := settle(t, m, paths[0]); res.Freshness != FreshPublished || res.Version != 2 {
		t.Errorf("settle reopened: %+v", res)
	}
}

func TestManagerReload(t *testing.T) {
	dir := t.TempDir()
	logA, logB := filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log")
	a := scriptConfig("a", ".a", "-log", logA)
	b := scriptConfig("b", ".b", "-log", logB)
	m := newManager(t, []ServerConfig{a, b}, testOptions(dir))
	ctx := context.Background()
	fa := writeSource(t, dir, "f.a", "ERROR")
	fb := writeSource(t, dir, "f.b", "ERROR")
	for _, p := range []string{fa, fb} {
		if err := m.Open(ctx, p); err != nil {
			t.Fatal(err)
		}
		settle(t, m, p)
	}
	pids := map[string]int{}
	for _, st := range m.Servers() {
		pids[st.Name] = st.PID
	}

	b2 := b
	b2.Args = append(append([]string(nil), b.Args...), "-encoding", "utf-8")
	c := scriptConfig("c", ".c")
	if probs := m.Reload(ctx, []ServerConfig{a, b2, c}); len(probs) != 0 {
		t.Fatalf("problems %v", probs)
	}
	sts := m.Servers()
	if len(sts) != 3 {
		t.Fatalf("servers %+v", sts)
	}
	if sts[0].Name != "a" || sts[0].State != StateRunning || sts[0].PID != pids["a"] {
		t.Errorf("unchanged server a: %+v", sts[0])
	}
	if sts[1].Name != "b" || sts[1].State != StateStopped {
		t.Errorf("changed server b: %+v", sts[1])
	}
	if processAlive(pids["b"]) {
		t.Error("old b still running")
	}
	if sts[2].Name != "c" || sts[2].State != StateStopped {
		t.Errorf("new server c: %+v", sts[2])
	}
	// a keeps its document: a change is a didChange, not a new didOpen.
	if got := m.OpenDocuments(); len(got) != 1 || got[0] != fa {
		t.Errorf("open documents %v", got)
	}
	if err := m.Change(ctx, fa, "fine"); err != nil {
		t.Fatal(err)
	}
	if n := len(logged(t, logA, "textDocument/didOpen")); n != 1 {
		t.Errorf("a got %d didOpen", n)
	}
	// b starts again with its new configuration on use.
	if err := m.Open(ctx, fb); err != nil {
		t.Fatal(err)
	}
	if st := m.Servers()[1]; st.State != StateRunning || st.PositionEncoding != EncodingUTF8 {
		t.Errorf("b after use: %+v", st)
	}
	// Removing a server stops it and forgets its documents.
	if probs := m.Reload(ctx, []ServerConfig{b2}); len(probs) != 0 {
		t.Fatal(probs)
	}
	if processAlive(pids["a"]) {
		t.Error("removed server a still running")
	}
	if got := m.OpenDocuments(); len(got) != 1 || got[0] != fb {
		t.Errorf("open documents after removing a: %v", got)
	}
	if err := m.Open(ctx, fa); !errors.Is(err, ErrNoServer) {
		t.Errorf("Open of a file of a removed server: %v", err)
	}
}

// TestManagerLeavesNoGoroutines runs a manager through starts, a crash, a
// restart, a cancelled request and shutdown, and checks that every
// goroutine it started has ended.
func TestManagerLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	dir := t.TempDir()
	m, err := NewManager([]ServerConfig{scriptConfig("crashy", ".c", "-crash-on", "2"), scriptConfig("ok", ".s")}, testOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := writeSource(t, dir, "a.c", "ERROR")
	s := writeSource(t, dir, "a.s", "ERROR")
	for _, p := range []string{c, s} {
		if err := m.Open(ctx, p); err != nil {
			t.Fatal(err)
		}
		settle(t, m, p)
	}
	_ = m.Call(ctx, c, "test/echo", nil, nil)
	if err := m.Call(ctx, c, "test/echo", nil, nil); !errors.Is(err, ErrServerExited) {
		t.Fatalf("crash: %v", err)
	}
	if err := m.Open(ctx, c); err != nil { // restarts
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	_ = m.Call(cctx, s, "test/slow", nil, nil)
	cancel()
	m.Drain()
	if err := m.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestManagerShutdownDuringSettle(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, []ServerConfig{scriptConfig("hung", ".s", "-hang-progress")}, testOptions(dir))
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "")
	if err := m.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	settle(t, m, a)
	if err := m.Change(ctx, a, "x"); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := m.Settle(ctx, a)
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond) // let Settle wait on the hung progress
	if err := m.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrManagerClosed) {
		t.Errorf("Settle during Shutdown: %v", err)
	}
}

// TestManagerReopenDoesNotRedeliver: a document closed (or evicted from
// the open-document LRU) and opened again unchanged gets the same
// diagnostics from its server; they were delivered already, so Drain
// must not hand them out again. A real reset stays explicit.
func TestManagerReopenDoesNotRedeliver(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(dir)
	opts.MaxOpenDocuments = 1
	m := newManager(t, []ServerConfig{scriptConfig("script", ".s")}, opts)
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "ERROR\n")
	b := writeSource(t, dir, "b.s", "fine\n")
	if err := m.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	settle(t, m, a)
	if got, _ := drainMessages(t, m); fmt.Sprint(got["a.s"]) != "[0:0-5 found ERROR]" {
		t.Fatalf("first drain %v", got)
	}
	// Evicted by b, then opened again.
	for _, p := range []string{b, a} {
		if err := m.Open(ctx, p); err != nil {
			t.Fatal(err)
		}
		if res := settle(t, m, p); res.Freshness != FreshPublished {
			t.Errorf("settle %s: %+v", p, res)
		}
	}
	if got, notes := drainMessages(t, m); len(got["a.s"]) != 0 || len(notes) != 0 {
		t.Errorf("after eviction and reopen: drained %v %q", got, notes)
	}
	// Closed, then opened again.
	if err := m.Close(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := m.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	settle(t, m, a)
	if got, _ := drainMessages(t, m); len(got["a.s"]) != 0 {
		t.Errorf("after close and reopen: drained %v", got)
	}
	// An explicit reset delivers again.
	m.Registry().Reset(fileuri.FromPath(a))
	if err := m.Change(ctx, a, "ERROR\n\n"); err != nil {
		t.Fatal(err)
	}
	settle(t, m, a)
	if got, _ := drainMessages(t, m); fmt.Sprint(got["a.s"]) != "[0:0-5 found ERROR]" {
		t.Errorf("after Reset: drained %v", got)
	}
}

// TestManagerOptionsRule: zero means the default; every negative number
// or duration is rejected at construction with an error naming the field,
// never a crash later.
func TestManagerOptionsRule(t *testing.T) {
	dir := t.TempDir()
	for name, o := range map[string]ManagerOptions{
		"MaxOpenDocuments": {MaxOpenDocuments: -1},
		"QuietPeriod":      {QuietPeriod: -time.Millisecond},
		"SettleTimeout":    {SettleTimeout: -1},
		"StartupTimeout":   {StartupTimeout: -time.Second},
		"ShutdownTimeout":  {ShutdownTimeout: -time.Second},
		"RestartBackoff":   {RestartBackoff: -time.Second},
		"RetryBackoff":     {RetryBackoff: -time.Second},
		"WriteTimeout":     {WriteTimeout: -time.Second},
	} {
		o.ProjectDir = dir
		m, err := NewManager([]ServerConfig{scriptConfig("script", ".s")}, &o)
		if m != nil || !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), name+" is negative") {
			t.Errorf("%s negative: %v, %v", name, m, err)
		}
	}
	// Zero values and nil options: the defaults, and a working manager.
	for _, o := range []*ManagerOptions{nil, {ProjectDir: dir}} {
		m, err := NewManager(nil, o)
		if err != nil {
			t.Fatal(err)
		}
		if m.opts.MaxOpenDocuments != DefaultMaxOpenDocuments || m.opts.QuietPeriod != DefaultQuietPeriod ||
			m.opts.SettleTimeout != DefaultSettleTimeout || m.opts.StartupTimeout != DefaultStartupTimeout ||
			m.opts.ShutdownTimeout != DefaultShutdownTimeout || m.opts.RestartBackoff != DefaultRestartBackoff ||
			m.opts.RetryBackoff != DefaultRetryBackoff || m.opts.WriteTimeout != DefaultWriteTimeout ||
			m.opts.ClientName != DefaultClientName || m.opts.ProjectDir == "" {
			t.Errorf("defaults %+v", m.opts)
		}
		_ = m.Shutdown(context.Background())
	}
}

// TestManagerExternalEdit: an open file changed on disk by someone else
// reaches the server before Settle and Drain speak; a file touched but
// unchanged sends nothing.
func TestManagerExternalEdit(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "server.log")
	m := newManager(t, []ServerConfig{scriptConfig("script", ".s", "-log", log)}, testOptions(dir))
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "fine\n")
	if err := m.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	settle(t, m, a)
	if att, ok := m.Drain(); ok {
		t.Fatalf("clean file drained %+v", att)
	}
	// A formatter rewrites the file.
	writeFile(t, a, "x ERROR\n")
	res := settle(t, m, a)
	if res.Freshness != FreshPublished || res.Version != 2 {
		t.Errorf("settle after the external edit: %+v", res)
	}
	if got, _ := drainMessages(t, m); fmt.Sprint(got["a.s"]) != "[0:2-7 found ERROR]" {
		t.Errorf("after the external edit: %v", got)
	}
	// Drain alone sees the next one: it sends it, and says the file is
	// still being analysed, or has its diagnostics already.
	writeFile(t, a, "WARN\n")
	got, notes := drainMessages(t, m)
	if fmt.Sprint(got["a.s"]) != "[0:0-4 found WARN]" && (len(notes) != 1 || !strings.Contains(notes[0], "a.s: diagnostics may be incomplete")) {
		t.Errorf("Drain after an external edit: %v %q", got, notes)
	}
	settle(t, m, a)
	drainMessages(t, m)
	// Touched, same contents: nothing sent.
	n := len(logged(t, log, "textDocument/didChange"))
	now := time.Now().Add(time.Second)
	if err := os.Chtimes(a, now, now); err != nil {
		t.Fatal(err)
	}
	settle(t, m, a)
	if got := len(logged(t, log, "textDocument/didChange")); got != n {
		t.Errorf("%d didChange after a touch, want %d", got, n)
	}
	// The agent's own unsaved text is not overwritten by a touch either.
	if err := m.Change(ctx, a, "ERROR unsaved\n"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	if err := os.Chtimes(a, now, now); err != nil {
		t.Fatal(err)
	}
	if res := settle(t, m, a); res.Version != 4 {
		t.Errorf("settle after the agent's change and a touch: %+v", res)
	}
}

// TestManagerWatchedFiles: files matching the watchers the server
// registered are reported with workspace/didChangeWatchedFiles before
// Settle, and the server's new diagnostics are waited for.
func TestManagerWatchedFiles(t *testing.T) {
	for _, rel := range []bool{false, true} {
		t.Run(fmt.Sprint("relative=", rel), func(t *testing.T) {
			dir := t.TempDir()
			log := filepath.Join(dir, "server.log")
			args := []string{"-log", log, "-watch", "**/*.cfg,**/*.s", "-mode-file", "mode.cfg"}
			if rel {
				args = append(args, "-watch-relative")
			}
			m := newManager(t, []ServerConfig{scriptConfig("script", ".s", args...)}, testOptions(dir))
			ctx := context.Background()
			a := writeSource(t, dir, "a.s", "USE\n")
			if err := m.Open(ctx, a); err != nil {
				t.Fatal(err)
			}
			settle(t, m, a)
			if att, ok := m.Drain(); ok {
				t.Fatalf("drained %+v before strict mode", att)
			}
			events := func() []string {
				var out []string
				for _, p := range logged(t, log, "workspace/didChangeWatchedFiles") {
					var c struct {
						Changes []struct {
							URI  string
							Type int
						}
					}
					_ = json.Unmarshal(p, &c)
					for _, e := range c.Changes {
						out = append(out, fmt.Sprintf("%s:%d", filepath.Base(e.URI), e.Type))
					}
				}
				return out
			}
			// Someone else writes the configuration file.
			writeSource(t, dir, "mode.cfg", "strict\n")
			if res := settle(t, m, a); !res.Freshness.Fresh() {
				t.Errorf("settle after the watched file appeared: %+v", res)
			}
			if got, _ := drainMessages(t, m); fmt.Sprint(got["a.s"]) != "[0:0-3 USE in strict mode]" {
				t.Errorf("after the watched file appeared: %v", got)
			}
			if got := fmt.Sprint(events()); got != "[mode.cfg:1]" {
				t.Errorf("events %s", got)
			}
			// Changed, then deleted; a new file that no watcher covers is
			// not reported; the open document's own writes are not either.
			writeSource(t, dir, "mode.cfg", "relaxed\n")
			writeSource(t, dir, "notes.txt", "x")
			writeFile(t, a, "USE\n") // same text: nothing to send
			settle(t, m, a)
			if err := os.Remove(filepath.Join(dir, "mode.cfg")); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeSource(t, dir, "sub/b.s", "x")
			m.Drain()
			waitFor(t, "events", func() bool { return len(events()) == 4 })
			// One poll reports creations first, then changes and deletions.
			if got := fmt.Sprint(events()); got != "[mode.cfg:1 mode.cfg:2 b.s:1 mode.cfg:3]" {
				t.Errorf("events %s", got)
			}
		})
	}
}
