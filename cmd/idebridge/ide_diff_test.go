package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/idebridge/ideserver"
)

// diffScene is a workspace and a CLAUDE_CONFIG_DIR with headless IDEs
// writing their lockfiles there, for `ide diff` and `ide list --wait`.
type diffScene struct {
	cfg, ws string
	env     map[string]string
}

func newDiffScene(t *testing.T) *diffScene {
	cfg := t.TempDir()
	return &diffScene{cfg: cfg, ws: t.TempDir(), env: map[string]string{"CLAUDE_CONFIG_DIR": cfg}}
}

// ide starts a headless IDE on the scene's workspace deciding diffs with
// policy.
func (s *diffScene) ide(t *testing.T, policy ideserver.DiffPolicy) *ideserver.Server {
	t.Helper()
	srv, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{s.ws}, LockfileDir: filepath.Join(s.cfg, "ide"), DiffPolicy: policy})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), serveTestTimeout)
	defer cancel()
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func (s *diffScene) write(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(s.ws, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func (s *diffScene) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.ws, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestIDEDiffOutcomes(t *testing.T) {
	tests := []struct {
		name   string
		policy ideserver.DiffPolicy
		want   string // file afterwards
		line   string // standard output
	}{
		{"accepted", ideserver.AcceptDiffs, "new\n", "accepted: wrote %s (4 bytes)"},
		{"accepted with edits", ideserver.DiffPolicyFunc(func(context.Context, *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
			return ideserver.SaveDiff("edited\n"), nil
		}), "edited\n", "accepted with your edits: wrote %s (7 bytes)"},
		{"tab closed", ideserver.DiffPolicyFunc(func(context.Context, *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
			return ideserver.DiffDecision{Action: ideserver.DiffCloseTab}, nil
		}), "new\n", "tab closed: wrote the proposal to %s (4 bytes)"},
		{"rejected", ideserver.RejectDiffs, "old\n", "rejected: %s unchanged"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newDiffScene(t)
			s.ide(t, tt.policy)
			file := s.write(t, "main.go", "old\n")
			s.write(t, "proposal.go", "new\n")
			code, out, errOut := runIn(t, s.ws, s.env, "ide", "diff", "main.go", "proposal.go")
			if code != exitOK || strings.TrimSpace(out) != strings.Replace(tt.line, "%s", file, 1) {
				t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if got := s.read(t, "main.go"); got != tt.want {
				t.Errorf("main.go holds %q", got)
			}
		})
	}
}

// TestIDEDiffJSONAndPort: --json prints the outcome; --port picks one IDE
// of two; NEWFILE - reads standard input.
func TestIDEDiffJSONAndPort(t *testing.T) {
	s := newDiffScene(t)
	s.ide(t, ideserver.RejectDiffs)
	accepting := s.ide(t, ideserver.AcceptDiffs)
	file := s.write(t, "main.go", "old\n")

	var stdout, stderr bytes.Buffer
	inv := &invocation{Stdin: strings.NewReader("from stdin\n"), Stdout: &stdout, Stderr: &stderr, Env: s.env, Getwd: func() (string, error) { return s.ws, nil }}
	code := run(context.Background(), []string{"ide", "diff", "main.go", "-", "--port", strconv.Itoa(accepting.Port()), "--json"}, inv)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if got["status"] != "accepted" || got["written"] != true || got["path"] != file || got["bytes"] != 11.0 || got["port"] != float64(accepting.Port()) || got["viaIDE"] != true {
		t.Errorf("JSON %v", got)
	}
	if !strings.HasPrefix(got["tabName"].(string), "✻ [idebridge] main.go (") {
		t.Errorf("tab name %v", got["tabName"])
	}
	if s.read(t, "main.go") != "from stdin\n" {
		t.Errorf("main.go holds %q", s.read(t, "main.go"))
	}

	// Without --port, two usable IDEs: the user must choose.
	s.write(t, "p.txt", "x\n")
	code, _, errOut := runIn(t, s.ws, s.env, "ide", "diff", "main.go", "p.txt")
	if code != exitUnavailable || !strings.Contains(errOut, "2 usable IDEs") || !strings.Contains(errOut, "choose one with --port") {
		t.Errorf("two IDEs: exit %d, stderr %q", code, errOut)
	}
	// A port without a lockfile.
	code, _, errOut = runIn(t, s.ws, s.env, "ide", "diff", "main.go", "p.txt", "--port", "1")
	if code != exitUnavailable || !strings.Contains(errOut, "no IDE lockfile for port 1") {
		t.Errorf("unknown port: exit %d, stderr %q", code, errOut)
	}
}

// TestIDEDiffConflict: the file changes while the user looks; nothing is
// written, exit status 1, JSON says why.
func TestIDEDiffConflict(t *testing.T) {
	s := newDiffScene(t)
	s.ide(t, ideserver.DiffPolicyFunc(func(_ context.Context, req *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
		if err := os.WriteFile(req.OldPath, []byte("someone else\n"), 0o644); err != nil {
			return ideserver.DiffDecision{}, err
		}
		return ideserver.SaveDiff(req.NewContents), nil
	}))
	s.write(t, "main.go", "old\n")
	s.write(t, "proposal.go", "new\n")
	code, out, errOut := runIn(t, s.ws, s.env, "ide", "diff", "main.go", "proposal.go", "--json")
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %q (stderr %q)", err, out, errOut)
	}
	if code != exitFailure || got["written"] != false || !strings.Contains(got["error"].(string), "changed on disk") {
		t.Errorf("exit %d, JSON %v", code, got)
	}
	if s.read(t, "main.go") != "someone else\n" {
		t.Errorf("main.go holds %q", s.read(t, "main.go"))
	}
}

func TestIDEDiffUsageAndNoIDE(t *testing.T) {
	s := newDiffScene(t)
	s.write(t, "main.go", "old\n")
	for _, args := range [][]string{
		{"ide", "diff"},
		{"ide", "diff", "main.go"},
		{"ide", "diff", "main.go", "missing.go"},
		{"ide", "diff", "main.go", "main.go", "--port", "70000"},
		{"ide", "diff", ".", "main.go"},
	} {
		if code, _, errOut := runIn(t, s.ws, s.env, args...); code != exitUsage {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
	}
	code, _, errOut := runIn(t, s.ws, s.env, "ide", "diff", "main.go", "main.go")
	if code != exitUnavailable || !strings.Contains(errOut, "no usable IDE") {
		t.Errorf("no IDE: exit %d, stderr %q", code, errOut)
	}
}

// TestIDEDiffDiagnostics: --diagnostics prints what the edit introduced,
// from a headless IDE whose getDiagnostics is gopls.
func TestIDEDiffDiagnostics(t *testing.T) {
	s := newDiffScene(t)
	srv := s.ide(t, ideserver.AcceptDiffs)
	diags, err := ideserver.NewDiagnostics(srv, &ideserver.DiagnosticsOptions{Env: goplsTestEnviron(t), AnswerTimeout: time.Minute})
	if err != nil {
		t.Fatalf("this test needs gopls: %v", err)
	}
	t.Cleanup(func() { diags.Close(context.Background()) })
	if err := srv.RegisterTool(diags.Tool()); err != nil {
		t.Fatal(err)
	}
	s.write(t, "go.mod", "module example.com/d\n\ngo 1.22\n")
	s.write(t, "main.go", "package main\n\nfunc main() {\n\tprintln(x)\n}\n")
	s.write(t, "proposal.go.txt", "package main\n\n// A comment moves the old error down.\nfunc main() {\n\tprintln(x)\n\tprintln(y)\n}\n")
	code, out, errOut := runIn(t, s.ws, s.env, "ide", "diff", "main.go", "proposal.go.txt", "--diagnostics")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := "<new-diagnostics>\nThe following new diagnostic issues were detected:\n\nmain.go:\n  ✘ [Line 6:10] undefined: y [UndeclaredName] (compiler)\n</new-diagnostics>"
	if !strings.Contains(out, want) {
		t.Errorf("stdout:\n%s\nwant the block:\n%s", out, want)
	}
}

func goplsTestEnviron(t *testing.T) []string {
	return append(os.Environ(), "GOPLSCACHE="+t.TempDir(), "GOPROXY=off", "GOFLAGS=-mod=mod")
}

// TestIDEListWait: --wait keeps looking until exactly one IDE is usable,
// as auto-connect does; none or several by then is exit status 2.
func TestIDEListWait(t *testing.T) {
	s := newDiffScene(t)
	code, _, errOut := runIn(t, s.ws, s.env, "ide", "list", "--wait", "300ms")
	if code != exitUnavailable || !strings.Contains(errOut, "no usable IDE") {
		t.Errorf("nothing: exit %d, stderr %q", code, errOut)
	}

	started := make(chan *ideserver.Server, 1)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		srv, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{s.ws}, LockfileDir: filepath.Join(s.cfg, "ide")})
		if err == nil && srv.Start(context.Background()) != nil {
			srv = nil
		}
		started <- srv
	}()
	code, out, errOut := runIn(t, s.ws, s.env, "ide", "list", "--wait", "20s", "--json")
	srv := <-started
	if srv == nil {
		t.Fatal("the late IDE did not start")
	}
	defer srv.Close()
	var cands []idebridge.Candidate
	if err := json.Unmarshal([]byte(out), &cands); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if code != exitOK || len(cands) != 1 || !cands[0].Valid || cands[0].Port != srv.Port() {
		t.Errorf("late IDE: exit %d, %+v, stderr %q", code, cands, errOut)
	}

	s.ide(t, nil)
	code, out, errOut = runIn(t, s.ws, s.env, "ide", "list", "--wait", "300ms")
	if code != exitUnavailable || !strings.Contains(errOut, "2 usable IDEs") || !strings.Contains(out, "2 usable IDEs: a caller must choose") {
		t.Errorf("two IDEs: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, _ := runIn(t, s.ws, s.env, "ide", "list", "--wait", "-1s"); code != exitUsage {
		t.Errorf("negative wait: exit %d", code)
	}
}
