package warm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/lspdiag"
)

// TestDiagnose runs diagnostics requests through a runtime on gopls: the
// answer is what a Manager of the test's own, which opened the same file,
// delivers, and the file is closed in the runtime at the end; a second client asking for the same file gets the whole
// answer again (its own delivered memory; with the project's shared Drain
// the first client would have taken it); a file no server serves fails
// with an error that is lsp.ErrNoServer and holds its *lsp.NoServerError.
func TestDiagnose(t *testing.T) {
	gopls, err := lsp.FindGopls(os.Getenv)
	if err != nil {
		t.Fatalf("this test needs gopls: %v", err)
	}
	env := append(os.Environ(), "GOPLSCACHE="+t.TempDir(), "GOPROXY=off")
	dir := runtimeDir(t)
	serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: -1, Env: env})
	mod := goModule(t)
	broken := filepath.Join(mod, "broken.go")
	if err := os.WriteFile(broken, []byte("package main\n\nfunc f() {\n\tvar x int = \"s\"\n\t_ = x\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := lsp.GoplsConfig(gopls, mod)
	p := &Project{Dir: mod, Configs: []lsp.ServerConfig{cfg}, NoIDE: true}
	o := &Options{Dir: dir, Build: "b1"}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	req := DiagRequest{
		Files:  []string{broken},
		Settle: lsp.SettleOptions{Timeout: time.Minute, WaitForProgress: true},
		Limits: lspdiag.ReaderOptions{MaxPerFile: lspdiag.DefaultMaxPerFile, MaxTotal: lspdiag.DefaultMaxTotal},
	}

	// The process's own answer.
	m, err := lsp.NewManager([]lsp.ServerConfig{cfg}, &lsp.ManagerOptions{ProjectDir: mod, Env: env, SettleTimeout: time.Minute, WaitForProgress: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	if err := m.Open(ctx, broken); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Settle(ctx, broken); err != nil {
		t.Fatal(err)
	}
	wantAtt, _ := m.Drain()
	ro := &diag.RenderOptions{ProjectDir: mod}
	want := wantAtt.Render(ro)
	if !strings.Contains(want, `cannot use "s"`) {
		t.Fatalf("the test's own Manager:\n%s", want)
	}

	for client := range 2 {
		res, rt, err := Diagnose(ctx, o, p, req)
		if err != nil || rt == nil {
			t.Fatalf("client %d: %v", client, err)
		}
		f := res.Files[0]
		if f.Err != nil || f.Server != cfg.Name || f.Settle.Status != lsp.StatusComplete || !f.Settle.Fresh || f.Settle.Version < 1 {
			t.Errorf("client %d: file %+v", client, f)
		}
		// The request's file is its own: closed when it ends.
		st, err := GetStatus(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Projects) != 1 || len(st.Projects[0].OpenDocuments) != 0 {
			t.Errorf("client %d: after the request, status %+v, want one project with no document open", client, st)
		}
		if got := res.Attachment.Render(ro); got != want {
			t.Errorf("client %d through the runtime:\n%s\nin the test:\n%s", client, got, want)
		}
	}

	req.Files = []string{filepath.Join(mod, "notes.txt"), broken}
	res, _, err := Diagnose(ctx, o, p, req)
	if err != nil {
		t.Fatal(err)
	}
	var ne *NavError
	var ns *lsp.NoServerError
	if err := res.Files[0].Err; !errors.As(err, &ne) || !errors.Is(err, lsp.ErrNoServer) || !errors.As(err, &ns) || ns.Extension != ".txt" {
		t.Errorf("a file no server serves: %v (%T), want a *NavError that is lsp.ErrNoServer", err, err)
	}
	if res.Files[1].Err != nil || res.Attachment.Render(ro) != want {
		t.Errorf("beside it: %v\n%s", res.Files[1].Err, res.Attachment.Render(ro))
	}
	if _, _, err := Diagnose(ctx, o, p, DiagRequest{Files: []string{"rel.go"}}); !errors.As(err, &ne) {
		t.Errorf("a relative path: %v, want a *NavError", err)
	}
}

// TestRemoteDiagnose: a Remote's Diagnose answers what Diagnose does,
// every call the whole set (each with its own delivered memory), while an
// MCP session of the same project that drains in between changes
// nothing; errors keep their identity.
func TestRemoteDiagnose(t *testing.T) {
	o, p, req := diagRuntime(t)
	mod := p.Dir
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	ro := &diag.RenderOptions{ProjectDir: mod}
	want, _, err := Diagnose(ctx, o, p, req)
	if err != nil || !strings.Contains(want.Attachment.Render(ro), `cannot use "s"`) {
		t.Fatalf("Diagnose: %+v, %v", want, err)
	}
	r, err := Dial(ctx, o, p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := openSession(t, o, p)
	for call := range 3 {
		got, err := r.Diagnose(ctx, req)
		if err != nil {
			t.Fatalf("call %d: %v", call, err)
		}
		if g, w := got.Attachment.Render(ro), want.Attachment.Render(ro); g != w {
			t.Errorf("call %d through the Remote:\n%s\nwant:\n%s", call, g, w)
		}
		if f := got.Files[0]; f.Err != nil || f.Settle.Status != lsp.StatusComplete || !f.Settle.Fresh {
			t.Errorf("call %d: file %+v", call, f)
		}
		// Another session of the project asks too, draining the project's
		// servers in between.
		if d := s.call("diagnostics", map[string]any{"files": []string{"broken.go"}}); !strings.Contains(d, `cannot use "s"`) {
			t.Errorf("the MCP session's diagnostics: %q", d)
		}
	}
	res, err := r.Diagnose(ctx, DiagRequest{Files: []string{filepath.Join(mod, "notes.txt")}})
	var ns *lsp.NoServerError
	if err != nil || !errors.Is(res.Files[0].Err, lsp.ErrNoServer) || !errors.As(res.Files[0].Err, &ns) {
		t.Errorf("a file no server serves: %+v, %v", res, err)
	}
	var ne *NavError
	if _, err := r.Diagnose(ctx, DiagRequest{Files: []string{"rel.go"}}); !errors.As(err, &ne) {
		t.Errorf("a relative path: %v, want a *NavError", err)
	}
	if _, err := r.Diagnose(ctx, DiagRequest{}); !errors.As(err, &ne) {
		t.Errorf("no files: %v, want a *NavError", err)
	}
}

// diagRuntime serves a runtime in the test, with gopls, and returns its
// Options, a Project on a fresh module with broken.go (one error), and a
// request for broken.go as the command line makes it.
func diagRuntime(t *testing.T) (*Options, *Project, DiagRequest) {
	t.Helper()
	gopls, err := lsp.FindGopls(os.Getenv)
	if err != nil {
		t.Fatalf("this test needs gopls: %v", err)
	}
	env := append(os.Environ(), "GOPLSCACHE="+t.TempDir(), "GOPROXY=off")
	dir := runtimeDir(t)
	serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: -1, Env: env})
	mod := goModule(t)
	broken := filepath.Join(mod, "broken.go")
	if err := os.WriteFile(broken, []byte("package main\n\nfunc f() {\n\tvar x int = \"s\"\n\t_ = x\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &Project{Dir: mod, Configs: []lsp.ServerConfig{lsp.GoplsConfig(gopls, mod)}, NoIDE: true}
	return &Options{Dir: dir, Build: "b1"}, p, DiagRequest{
		Files:  []string{broken},
		Settle: lsp.SettleOptions{Timeout: time.Minute, WaitForProgress: true},
		Limits: lspdiag.ReaderOptions{MaxPerFile: lspdiag.DefaultMaxPerFile, MaxTotal: lspdiag.DefaultMaxTotal},
	}
}
