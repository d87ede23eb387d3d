package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idebridge/idebridge/warm"
)

// diagRun runs the built command in dir and returns its exit status,
// standard output and standard error.
func diagRun(t *testing.T, bin, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// stopRuntimesAtEnd stops, when the test ends, every runtime whose socket
// is in rtDir.
func stopRuntimesAtEnd(t *testing.T, rtDir string) {
	t.Cleanup(func() { // t.Context has ended by now
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		socks, _ := filepath.Glob(filepath.Join(rtDir, "*.sock"))
		for _, s := range socks {
			if _, err := warm.Stop(ctx, &warm.Options{Dir: rtDir, Build: strings.TrimSuffix(filepath.Base(s), ".sock")}); err != nil {
				t.Errorf("stopping the runtime: %v", err)
			}
		}
	})
}

// runtimeVersion is the document version a Checked line names.
var runtimeVersion = regexp.MustCompile(`for version [0-9]+`)

// diagBothWays runs `idebridge diag ARGS` through the runtime (failing
// if it ran in its own process) and with --no-runtime, and fails unless
// both print the same and exit alike. It returns the output.
//
// One difference is by design, and left out of the comparison: the
// version a Checked line names is the document's in the language server
// that answered, and the runtime's servers count every open of the file
// since they started (a request closes the files it opened, and package
// lsp never gives a document a version it used before, so that a late
// answer about the old text cannot pass for one about the new); a
// process of its own says 1.
func diagBothWays(t *testing.T, bin, dir string, env []string, args ...string) (int, string) {
	t.Helper()
	args = append([]string{"diag", "--no-plugins"}, args...)
	code, out, errOut := diagRun(t, bin, dir, env, args...)
	if strings.Contains(errOut, "no runtime") {
		t.Fatalf("%q did not go through the runtime: %s", args, errOut)
	}
	lcode, lout, lerrOut := diagRun(t, bin, dir, env, append(args, "--no-runtime", "-q")...)
	if code != lcode || runtimeVersion.ReplaceAllString(out, "for version N") != runtimeVersion.ReplaceAllString(lout, "for version N") {
		t.Errorf("%q through the runtime: exit %d\n%s\nstderr: %s\nin process: exit %d\n%s\nstderr: %s", args, code, out, errOut, lcode, lout, lerrOut)
	}
	return code, out
}

// TestDiagThroughRuntime runs `idebridge diag` (the built command, on
// gopls) through the runtime and with --no-runtime: stdout and exit status
// are the same for a broken file, a clean one, both, and a file no server
// serves; commands in a row against one runtime (each its own client)
// each get the whole answer, though the runtime's gopls already published
// it to the one before.
func TestDiagThroughRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs gopls")
	}
	bin, err := buildCommand()
	if err != nil {
		t.Fatalf("building idebridge: %v", err)
	}
	dir := t.TempDir()
	writeText(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	writeText(t, filepath.Join(dir, "main.go"), "package main\n\nfunc main() {}\n")
	writeText(t, filepath.Join(dir, "broken.go"), "package main\n\nfunc f() {\n\tvar x int = \"s\"\n\t_ = x\n}\n")
	writeText(t, filepath.Join(dir, "notes.txt"), "notes\n")
	rtDir := filepath.Join(shortDir(t), "rt")
	env := rtEnv(t, rtDir, time.Minute)
	stopRuntimesAtEnd(t, rtDir)

	const broken = `broken.go:
  ✘ [Line 4:14] cannot use "s"`
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"broken.go"}, exitOK},
		{[]string{"broken.go"}, exitOK}, // a second client
		{[]string{"main.go"}, exitOK},   // gopls reports broken.go with its workspace
		{[]string{"main.go", "broken.go"}, exitOK},
		{[]string{"notes.txt"}, exitUnavailable},
		{[]string{"broken.go"}, exitOK},
	} {
		code, out := diagBothWays(t, bin, dir, env, c.args...)
		if code != c.code || (code == exitOK && !strings.Contains(out, broken)) {
			t.Errorf("%q: exit %d, want %d\n%s", c.args, code, c.code, out)
		}
	}
	socks, _ := filepath.Glob(filepath.Join(rtDir, "*.sock"))
	if len(socks) != 1 {
		t.Fatalf("runtime sockets %v, want one", socks)
	}
}

// TestDiagThroughRuntimePyright: on pyright, which reports on open files
// only, `idebridge diag` prints the same through the runtime as in its
// own process; a file another client opened in the runtime's pyright
// (broken.py, by the command before, then by an MCP session that keeps
// it open) does not appear in this client's answer; and the next client
// asking for it gets it whole.
func TestDiagThroughRuntimePyright(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs pyright")
	}
	bin, err := buildCommand()
	if err != nil {
		t.Fatalf("building idebridge: %v", err)
	}
	pyright := filepath.Join(lspBin(t, "pyright-langserver"), "pyright-langserver")
	dir := t.TempDir()
	src := filepath.Join("..", "..", "lsp", "testdata", "conformance", "python")
	for _, name := range []string{"broken.py", "clean.py"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		writeText(t, filepath.Join(dir, name), string(data))
	}
	writeConfig(t, dir, map[string]any{"python": map[string]any{
		"command": pyright, "args": []string{"--stdio"}, "extensionToLanguage": map[string]string{".py": "python"},
	}})
	rtDir := filepath.Join(shortDir(t), "rt")
	env := rtEnv(t, rtDir, time.Minute)
	stopRuntimesAtEnd(t, rtDir)

	const want = `"undefined_name" is not defined`
	if code, out := diagBothWays(t, bin, dir, env, "--config", "lsp.json", "broken.py"); code != exitOK || !strings.Contains(out, want) {
		t.Errorf("broken.py: exit %d\n%s", code, out)
	}
	if code, out := diagBothWays(t, bin, dir, env, "--config", "lsp.json", "clean.py"); code != exitOK || strings.Contains(out, "broken.py") || !strings.Contains(out, "No diagnostics.") {
		t.Errorf("clean.py, after another client opened broken.py: exit %d\n%s", code, out)
	}
	// An MCP session holds broken.py open in the runtime's pyright, which
	// publishes for it as the session's document: not this client's.
	a := startRTClient(t, bin, dir, env, "--no-ide", "--config", "lsp.json")
	a.diagnose("broken.py", want)
	if code, out := diagBothWays(t, bin, dir, env, "--config", "lsp.json", "clean.py"); code != exitOK || strings.Contains(out, "broken.py") || !strings.Contains(out, "No diagnostics.") {
		t.Errorf("clean.py, while an MCP session has broken.py open: exit %d\n%s", code, out)
	}
	socks, _ := filepath.Glob(filepath.Join(rtDir, "*.sock"))
	if len(socks) != 1 {
		t.Fatalf("runtime sockets %v, want one", socks)
	}
	st, err := rtStatus(t, rtDir, strings.TrimSuffix(filepath.Base(socks[0]), ".sock"))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Projects) != 1 || !slices.Contains(st.Projects[0].OpenDocuments, filepath.Join(dir, "broken.py")) {
		t.Fatalf("status %+v, want one project, the session's and the commands', with broken.py open", st)
	}
	if code, out := diagBothWays(t, bin, dir, env, "--config", "lsp.json", "broken.py"); code != exitOK || !strings.Contains(out, want) {
		t.Errorf("broken.py again: exit %d\n%s", code, out)
	}
}
