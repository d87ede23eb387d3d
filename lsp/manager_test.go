package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	m := NewManager([]ServerConfig{scriptConfig("crashy", ".c", "-crash-on", "2"), scriptConfig("ok", ".s")}, testOptions(dir))
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
