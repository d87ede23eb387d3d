package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idebridge/idebridge/warm"
)

// TestLSPNavThroughRuntime runs each navigation command (the built
// command, on gopls) through the runtime and with --no-runtime: stdout and
// exit status are the same, answers, errors and a file no server serves
// alike. The runtime then holds one project, the one `idebridge mcp` on
// the directory joins (they share its gopls), and IDEBRIDGE_RUNTIME=0
// starts no runtime.
func TestLSPNavThroughRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs gopls")
	}
	bin, err := buildCommand()
	if err != nil {
		t.Fatalf("building idebridge: %v", err)
	}
	dir := navModule(t)
	rtDir := filepath.Join(shortDir(t), "rt")
	env := rtEnv(t, rtDir, time.Minute)
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
	run := func(env []string, args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--no-plugins", "-q")...)
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
	for _, args := range [][]string{
		{"lsp", "refs", "use.go:7:total#2"},
		{"lsp", "refs", "use.go:7:total#2", "--no-decl", "--max", "1"},
		{"lsp", "refs", "use.go:7:total#2", "--offset", "1", "--limit", "2"},
		{"lsp", "refs", "use.go:7:total#2", "--json"},
		{"lsp", "refs", "use.go:7:total"}, // ambiguous: exit 1
		{"lsp", "refs", "notes.txt:1:1"},  // no server: exit 2
		{"lsp", "def", "use.go:7:s.Area"},
		{"lsp", "def", "use.go:7:s.Area", "--json"},
		{"lsp", "def", "use.go:4:shapes", "--type"},
		{"lsp", "def", "use.go:7:Area", "--decl"}, // gopls offers none: exit 1
		{"lsp", "hover", "use.go:4:Total"},
		{"lsp", "hover", "use.go:4:Total", "--json"},
		{"lsp", "symbols", "shapes.go"},
		{"lsp", "symbols", "shapes.go", "--json"},
		{"lsp", "wsymbols", "use.go", "Total"},
		{"lsp", "impl", "shapes.go:5:Area"},
		{"lsp", "calls", "shapes.go:5:Area"},
		{"lsp", "calls", "shapes.go:5:Area", "--in", "--json"},
		{"lsp", "types", "shapes.go:9:Square"},
	} {
		code, out, errOut := run(env, args...)
		lcode, lout, lerrOut := run(env, append(args, "--no-runtime")...)
		if code != lcode || out != lout {
			t.Errorf("%q through the runtime: exit %d\n%s\nstderr: %s\nin process: exit %d\n%s\nstderr: %s", args, code, out, errOut, lcode, lout, lerrOut)
		}
		if code == exitOK && out == "" {
			t.Errorf("%q printed nothing", args)
		}
	}

	socks, _ := filepath.Glob(filepath.Join(rtDir, "*.sock"))
	if len(socks) != 1 {
		t.Fatalf("runtime sockets %v, want one", socks)
	}
	build := strings.TrimSuffix(filepath.Base(socks[0]), ".sock")
	st, err := rtStatus(t, rtDir, build)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Projects) != 1 || st.Projects[0].Dir != dir || len(st.Projects[0].Servers) != 1 || st.Projects[0].Servers[0].PID == 0 {
		t.Fatalf("after the commands: status %+v, want one project, %s, with one running server", st, dir)
	}
	gopls := st.Projects[0].Servers[0].PID

	// `idebridge mcp` on the directory joins the commands' project.
	startRTClient(t, bin, dir, env) // initialized: its session has joined
	st, err = rtStatus(t, rtDir, build)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Projects) != 1 || len(st.Projects[0].Sessions) != 1 || len(st.Projects[0].Servers) != 1 || st.Projects[0].Servers[0].PID != gopls {
		t.Fatalf("idebridge mcp after the commands: status %+v, want its session on their project and gopls %d", st, gopls)
	}

	// IDEBRIDGE_RUNTIME=0 runs in the process: no runtime starts.
	offDir := filepath.Join(shortDir(t), "rt")
	off := rtEnv(t, offDir, time.Minute)
	off = append(off, "IDEBRIDGE_RUNTIME=0")
	if code, out, errOut := run(off, "lsp", "hover", "use.go:4:Total"); code != exitOK || !strings.Contains(out, "Total sums the areas") {
		t.Errorf("IDEBRIDGE_RUNTIME=0: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	if socks, _ := filepath.Glob(filepath.Join(offDir, "*.sock")); len(socks) != 0 {
		t.Errorf("IDEBRIDGE_RUNTIME=0 started a runtime: %v", socks)
	}
}

// TestLSPNavRuntimeSkew: with a runtime of another build on this build's
// socket, `lsp refs` answers in its own process, as with --no-runtime,
// says why on standard error, and leaves that runtime untouched.
func TestLSPNavRuntimeSkew(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs gopls")
	}
	bin, err := buildCommand()
	if err != nil {
		t.Fatalf("building idebridge: %v", err)
	}
	rtDir, _, _ := otherBuildRuntime(t, bin)
	dir := navModule(t)
	env := rtEnv(t, rtDir, time.Minute)
	run := func(args ...string) (int, string, string) {
		cmd := exec.Command(bin, append([]string{"lsp", "refs", "use.go:7:total#2", "--no-plugins"}, args...)...)
		cmd.Dir, cmd.Env = dir, env
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		cmd.Run()
		return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
	}
	lcode, lout, _ := run("--no-runtime")
	code, out, errOut := run()
	if code != lcode || out != lout || lcode != exitOK {
		t.Errorf("against another build's runtime: exit %d\n%s\nin process: exit %d\n%s", code, out, lcode, lout)
	}
	if !strings.Contains(errOut, "note: no runtime") || !strings.Contains(errOut, "another-build") || !strings.Contains(errOut, "running in this process") {
		t.Errorf("stderr %q; want a note naming the other build", errOut)
	}
	st, err := warm.GetStatus(context.Background(), &warm.Options{Dir: rtDir, Build: "another-build"})
	if err != nil || st.Sessions != 0 || len(st.Projects) != 0 {
		t.Errorf("the other build's runtime: %+v, %v; want it untouched", st, err)
	}
}
