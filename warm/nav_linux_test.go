package warm

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idebridge/idebridge/lsp"
)

// TestNavigate runs navigation requests through a runtime on gopls: each
// result is the type lsp gives, equal (rendered and as JSON) to a Manager
// of the test's own; a file no server serves fails with an error that is
// lsp.ErrNoServer and holds its *lsp.NoServerError; rename is refused.
func TestNavigate(t *testing.T) {
	gopls, err := lsp.FindGopls(os.Getenv)
	if err != nil {
		t.Fatalf("this test needs gopls: %v", err)
	}
	env := append(os.Environ(), "GOPLSCACHE="+t.TempDir(), "GOPROXY=off")
	dir := runtimeDir(t)
	serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: -1, Env: env})
	mod := goModule(t)
	cfg := lsp.GoplsConfig(gopls, mod)
	p := &Project{Dir: mod, Configs: []lsp.ServerConfig{cfg}, NoIDE: true}
	o := &Options{Dir: dir, Build: "b1"}
	m, err := lsp.NewManager([]lsp.ServerConfig{cfg}, &lsp.ManagerOptions{ProjectDir: mod, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	at := lsp.Pos{Path: filepath.Join(mod, "greet.go"), Line: 4, Symbol: "greet"}
	for _, req := range []lsp.NavRequest{
		{Op: lsp.OpReferences, At: at, IncludeDeclaration: true},
		{Op: lsp.OpDefinition, At: lsp.Pos{Path: filepath.Join(mod, "main.go"), Line: 6, Symbol: "greet"}},
		{Op: lsp.OpHover, At: at},
		{Op: lsp.OpDocumentSymbols, At: lsp.Pos{Path: filepath.Join(mod, "main.go")}},
		{Op: lsp.OpIncomingCalls, At: at},
	} {
		got, rt, err := Navigate(ctx, o, p, req)
		if err != nil || rt == nil {
			t.Fatalf("%s through the runtime: %v", req.Op, err)
		}
		want, err := m.Navigate(ctx, req)
		if err != nil {
			t.Fatalf("%s in the test: %v", req.Op, err)
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		ro := &lsp.NavRenderOptions{ProjectDir: mod}
		if string(gj) != string(wj) || got.Render(ro) != want.Render(ro) {
			t.Errorf("%s: through the runtime %T\n%s\nin the test %T\n%s", req.Op, got, gj, want, wj)
		}
	}

	_, _, err = Navigate(ctx, o, p, lsp.NavRequest{Op: lsp.OpHover, At: lsp.Pos{Path: filepath.Join(mod, "notes.txt"), Line: 1, Column: 1}})
	var ne *NavError
	var ns *lsp.NoServerError
	if !errors.As(err, &ne) || !errors.Is(err, lsp.ErrNoServer) || !errors.As(err, &ns) || ns.Extension != ".txt" {
		t.Errorf("a file no server serves: %v (%T), want a *NavError that is lsp.ErrNoServer", err, err)
	}
	if _, _, err := Navigate(ctx, o, p, lsp.NavRequest{Op: lsp.OpRename, At: at, NewName: "hello"}); err == nil || errors.As(err, &ne) {
		t.Errorf("rename through the runtime: %v, want refused", err)
	}
}

// TestNavigateCancelled: a client that gives up (Ctrl-C) closes its
// connection, which cancels its request in the runtime: the request's
// session ends though its server never answers.
func TestNavigateCancelled(t *testing.T) {
	dir := runtimeDir(t)
	serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: -1})
	mod := t.TempDir()
	file := filepath.Join(mod, "a.txt")
	if err := os.WriteFile(file, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A server that never answers its initialize.
	cfg := lsp.ServerConfig{Name: "mute", Command: "sleep", Args: []string{"3600"}, ExtensionToLanguage: map[string]string{".txt": "plaintext"}}
	p := &Project{Dir: mod, Configs: []lsp.ServerConfig{cfg}, NoIDE: true}
	o := &Options{Dir: dir, Build: "b1"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := Navigate(ctx, o, p, lsp.NavRequest{Op: lsp.OpHover, At: lsp.Pos{Path: file, Line: 1, Column: 1}})
		done <- err
	}()
	sessions := func() int {
		st, err := GetStatus(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		return st.Sessions
	}
	deadline := time.Now().Add(testTimeout)
	for sessions() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the runtime")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Navigate after cancel: %v, want context.Canceled", err)
	}
	for sessions() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the runtime still serves the cancelled request")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOneRequestSessionEndsWithAnswer: a navigation or diagnostics
// request's session has ended by the time its client has the answer, so
// status read right after it counts no session (before, the session
// ended after the answer was written, and a status read at once could
// still count it).
func TestOneRequestSessionEndsWithAnswer(t *testing.T) {
	dir := runtimeDir(t)
	serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: -1})
	o := &Options{Dir: dir, Build: "b1"}
	p := noServers(t)
	file := filepath.Join(p.Dir, "notes.txt")
	if err := os.WriteFile(file, []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 40 {
		what := "nav"
		if i%2 == 0 {
			if _, _, err := Navigate(ctx, o, p, lsp.NavRequest{Op: lsp.OpHover, At: lsp.Pos{Path: file, Line: 1, Column: 1}}); !errors.Is(err, lsp.ErrNoServer) {
				t.Fatalf("Navigate: %v, want lsp.ErrNoServer", err)
			}
		} else {
			what = "diag"
			res, _, err := Diagnose(ctx, o, p, DiagRequest{Files: []string{file}})
			if err != nil || !errors.Is(res.Files[0].Err, lsp.ErrNoServer) {
				t.Fatalf("Diagnose: %+v, %v; want the file's lsp.ErrNoServer", res, err)
			}
		}
		st, err := GetStatus(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if st.Sessions != 0 {
			t.Fatalf("request %d (%s): status right after its answer counts %d sessions, want 0", i, what, st.Sessions)
		}
	}
}
