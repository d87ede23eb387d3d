package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDemoServeAndCallGetDiagnostics is the README's second demo on the
// built binary: `idebridge ide serve` in one process, and `idebridge ide
// call getDiagnostics '{"uri":"file://..."}'` in another, print gopls's
// diagnostics for a broken Go file; then `idebridge ide diff` fixes the
// file through the same headless IDE and `ide call` sees it clean.
func TestDemoServeAndCallGetDiagnostics(t *testing.T) {
	// A binary of its own: the one buildCommand shares is removed by the
	// test that uses it.
	bin := filepath.Join(t.TempDir(), "idebridge")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building idebridge: %v\n%s", err, out)
	}
	dir, mainGo := brokenModule(t)
	env := append(os.Environ(), "CLAUDE_CONFIG_DIR="+t.TempDir(), "GOPLSCACHE="+t.TempDir(), "GOPROXY=off")

	serve := exec.Command(bin, "ide", "serve", "--diff", "accept")
	serve.Dir, serve.Env = dir, env
	stdout, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr serveBuffer
	serve.Stderr = &stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		serve.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("ide serve exited with %v\nstderr:\n%s", err, stderr.String())
			}
		case <-time.After(serveTestTimeout):
			serve.Process.Kill()
			<-exited
			t.Error("ide serve did not stop on SIGINT")
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	go func() { exited <- serve.Wait() }()
	if err != nil {
		t.Fatalf("first line: %v\nstderr:\n%s", err, stderr.String())
	}
	var info serveInfo
	if err := json.Unmarshal([]byte(line), &info); err != nil {
		t.Fatalf("first line %q: %v", line, err)
	}

	run := func(args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, env
		var out, errOut bytes.Buffer
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
	args := `{"uri":"file://` + mainGo + `"}`
	for _, extra := range [][]string{nil, {"--port", strconv.Itoa(info.Port)}} {
		code, out, errOut := run(append([]string{"ide", "call", "getDiagnostics", args}, extra...)...)
		// A cold gopls on a busy machine may not be done within the
		// headless IDE's wait: its answer then says so in a note, and
		// asking again gets more, as the README says.
		for deadline := time.Now().Add(serveTestTimeout); code == exitOK && strings.Contains(out, `"note"`) && time.Now().Before(deadline); {
			code, out, errOut = run(append([]string{"ide", "call", "getDiagnostics", args}, extra...)...)
		}
		if code != exitOK || !strings.Contains(out, "undefined: undefinedThing") || !strings.Contains(out, "Error") {
			t.Fatalf("ide call %v: exit %d\nstdout:\n%s\nstderr:\n%s", extra, code, out, errOut)
		}
	}

	fixed := filepath.Join(t.TempDir(), "fixed.go")
	if err := os.WriteFile(fixed, []byte("package main\n\nfunc main() {\n\tprintln(\"fixed\")\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run("ide", "diff", "main.go", fixed); code != exitOK || !strings.HasPrefix(out, "accepted: wrote "+mainGo) {
		t.Fatalf("ide diff: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if code, out, errOut := run("ide", "call", "getDiagnostics", args); code != exitOK || strings.Contains(out, "undefinedThing") {
		t.Fatalf("ide call after the fix: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
