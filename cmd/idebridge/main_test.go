package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/idebridge/idebridge/warm"
)

// The test commands live under "zz-test" so they never collide with real
// ones; they record what the dispatcher handed them.
func init() {
	register(&command{
		Name:    "zz-test echo",
		Usage:   "[--n N] [--flag] ARGS...",
		Summary: "print the parsed flags and positional arguments",
		Setup: func(fs *flag.FlagSet) runFunc {
			n := fs.Int("n", 0, "a number")
			b := fs.Bool("flag", false, "a switch")
			return func(_ context.Context, inv *invocation, args []string) int {
				fmt.Fprintf(inv.Stdout, "n=%d flag=%v args=%q\n", *n, *b, args)
				return exitOK
			}
		},
	})
	register(&command{
		Name:    "zz-test panic",
		Summary: "panic, to check that run recovers",
		Setup: func(*flag.FlagSet) runFunc {
			return func(context.Context, *invocation, []string) int { panic("boom") }
		},
	})
	register(&command{
		Name:    "zz-test wait",
		Summary: "print ready, wait for the context to end, print cancelled",
		Setup: func(*flag.FlagSet) runFunc {
			return func(ctx context.Context, inv *invocation, _ []string) int {
				fmt.Fprintln(inv.Stdout, "ready")
				<-ctx.Done()
				fmt.Fprintln(inv.Stdout, "cancelled")
				return exitOK
			}
		},
	})
	register(&command{
		Name:    "zz-test env",
		Summary: "print an environment variable and the working directory",
		Setup: func(*flag.FlagSet) runFunc {
			return func(_ context.Context, inv *invocation, args []string) int {
				wd, _ := inv.Getwd()
				fmt.Fprintf(inv.Stdout, "%s=%s wd=%s\n", args[0], inv.Getenv(args[0]), wd)
				return exitOK
			}
		},
	})
}

// runCapture runs the dispatcher in-process and returns status and output.
func runCapture(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	inv := &invocation{Stdout: &stdout, Stderr: &stderr, Env: env}
	code := run(context.Background(), args, inv)
	return code, stdout.String(), stderr.String()
}

func TestDispatchInterspersedFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"zz-test", "echo", "a", "b"}, `n=0 flag=false args=["a" "b"]`},
		{[]string{"zz-test", "echo", "--n", "3", "a"}, `n=3 flag=false args=["a"]`},
		{[]string{"zz-test", "echo", "getDiagnostics", `{"uri":"file:///x"}`, "--n", "1234"}, `n=1234 flag=false args=["getDiagnostics" "{\"uri\":\"file:///x\"}"]`},
		{[]string{"zz-test", "echo", "a", "--flag", "b", "-n=7", "c"}, `n=7 flag=true args=["a" "b" "c"]`},
		{[]string{"zz-test", "echo", "a", "--", "--n", "5"}, `n=0 flag=false args=["a" "--n" "5"]`},
	}
	for _, tt := range tests {
		code, out, errOut := runCapture(t, nil, tt.args...)
		if code != exitOK {
			t.Errorf("%q: exit %d, stderr %q", tt.args, code, errOut)
		}
		if got := strings.TrimSpace(out); got != tt.want {
			t.Errorf("%q:\n got %s\nwant %s", tt.args, got, tt.want)
		}
	}
}

func TestDispatchUsageErrors(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no args", nil, exitUsage, "usage: idebridge"},
		{"unknown command", []string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{"unknown subcommand", []string{"zz-test", "nope"}, exitUsage, `unknown command "zz-test nope"`},
		{"group alone", []string{"zz-test"}, exitUsage, `"zz-test" needs a subcommand`},
		{"bad flag", []string{"zz-test", "echo", "--nope"}, exitUsage, "flag provided but not defined: -nope"},
		{"bad flag value", []string{"zz-test", "echo", "--n", "x"}, exitUsage, `invalid value "x"`},
		{"help for unknown", []string{"help", "nope"}, exitUsage, `no help for "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCapture(t, nil, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d", code, tt.wantCode)
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stderr %q does not contain %q", errOut, tt.wantErr)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		code, out, _ := runCapture(t, nil, args...)
		if code != exitOK || !strings.Contains(out, "zz-test echo ARGS...") || !strings.Contains(out, "Exit status") {
			t.Errorf("%q: exit %d, output %q", args, code, out)
		}
	}
	for _, args := range [][]string{{"zz-test", "echo", "-h"}, {"zz-test", "echo", "a", "--help"}, {"help", "zz-test", "echo"}} {
		code, out, _ := runCapture(t, nil, args...)
		if code != exitOK || !strings.Contains(out, "usage: idebridge zz-test echo") || !strings.Contains(out, "-n int") {
			t.Errorf("%q: exit %d, output %q", args, code, out)
		}
	}
	code, out, _ := runCapture(t, nil, "zz-test", "--help")
	if code != exitOK || !strings.Contains(out, "zz-test panic") || !strings.Contains(out, "zz-test echo") {
		t.Errorf("group help: exit %d, output %q", code, out)
	}
}

// The overview fits 80 columns and leaves flags to each command's help;
// help asked for goes to standard output (exit 0), help after a usage
// error to standard error (exit 64), for every command.
func TestHelpLayoutAndStreams(t *testing.T) {
	code, out, errOut := runCapture(t, nil, "--help")
	if code != exitOK || errOut != "" {
		t.Fatalf("--help: exit %d, stderr %q", code, errOut)
	}
	for _, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > helpWidth {
			t.Errorf("--help line of %d columns: %q", n, line)
		}
	}
	for _, flag := range []string{"--config", "--json", "--port"} {
		if strings.Contains(out, flag) && !strings.Contains(out, "(with "+flag) {
			t.Errorf("--help repeats the flag %s; flags belong to `help CMD`", flag)
		}
	}
	for _, want := range []string{"The editor", "Language servers", "For MCP clients", "  lsp def POS "} {
		if !strings.Contains(out, want) {
			t.Errorf("--help has no %q:\n%s", want, out)
		}
	}
	for name := range commands {
		words := strings.Fields(name)
		for _, args := range [][]string{append([]string{"help"}, words...), append(words, "-h")} {
			code, out, errOut := runCapture(t, nil, args...)
			if code != exitOK || errOut != "" || !strings.HasPrefix(out, "usage: idebridge "+name) {
				t.Errorf("%q: exit %d, stderr %q, stdout %.60q", args, code, errOut, out)
			}
			if strings.HasPrefix(name, "zz-test") {
				continue
			}
			usage, _, _ := strings.Cut(out, "\n\n")
			for _, line := range strings.Split(usage, "\n") {
				if len([]rune(line)) > helpWidth {
					t.Errorf("%q: usage line of %d columns: %q", args, len([]rune(line)), line)
				}
			}
		}
		code, out, errOut = runCapture(t, nil, append(words, "--no-such-flag")...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "usage: idebridge "+name) {
			t.Errorf("%s --no-such-flag: exit %d, stdout %.60q, stderr %.60q", name, code, out, errOut)
		}
	}
}

func TestRunRecoversPanic(t *testing.T) {
	code, _, errOut := runCapture(t, nil, "zz-test", "panic")
	if code != exitFailure || !strings.Contains(errOut, "internal error: boom") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestInvocationEnvironment(t *testing.T) {
	var stdout bytes.Buffer
	inv := &invocation{
		Stdout: &stdout, Stderr: &stdout,
		Env:   map[string]string{"FOO": "bar"},
		Getwd: func() (string, error) { return "/some/where", nil },
	}
	if code := run(context.Background(), []string{"zz-test", "env", "FOO"}, inv); code != exitOK {
		t.Fatalf("exit %d: %s", code, stdout.String())
	}
	if got, want := strings.TrimSpace(stdout.String()), "FOO=bar wd=/some/where"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestEnvironMap(t *testing.T) {
	got := environMap([]string{"A=1", "B=x=y", "A=2", "=C:=C:\\", "EMPTY=", "NOEQ"})
	want := map[string]string{"A": "1", "B": "x=y", "EMPTY": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("environMap (-want +got):\n%s", diff)
	}
}

// TestMain lets the test binary act as the idebridge command when
// IDEBRIDGE_TEST_MAIN is set, so that tests can run main in a real process
// (exit statuses, real stdout) without building the command.
func TestMain(m *testing.M) {
	if os.Getenv("IDEBRIDGE_TEST_MAIN") == "1" {
		os.Args = append([]string{"idebridge"}, strings.Fields(os.Getenv("IDEBRIDGE_TEST_ARGS"))...)
		main()
		return
	}
	// The commands the tests run go through the shared runtime by
	// default: give them one of the package's own, never the user's, and
	// stop what they started in it at the end.
	rtDir := ""
	if os.Getenv("IDEBRIDGE_RUNTIME_DIR") == "" {
		d, err := os.MkdirTemp("", "idebridge-test-rt")
		if err == nil {
			rtDir = d
			os.Setenv("IDEBRIDGE_RUNTIME_DIR", rtDir)
		}
	}
	code := m.Run()
	if rtDir != "" {
		stopRuntimesIn(rtDir)
		os.RemoveAll(rtDir)
	}
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

// stopRuntimesIn stops every runtime answering in the runtime directory
// dir, of any build.
func stopRuntimesIn(dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rts, _ := warm.Running(ctx, &warm.Options{Dir: dir})
	for _, rt := range rts {
		if _, err := warm.Stop(ctx, &warm.Options{Dir: dir, Build: rt.Build}); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the runtime %d in %s: %v\n", rt.PID, dir, err)
		}
	}
}

// runMain runs main in a child process with args and extra environment.
func runMain(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append([]string{"IDEBRIDGE_TEST_MAIN=1", "IDEBRIDGE_TEST_ARGS=" + strings.Join(args, " ")}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %v: %v", args, err)
	}
	return code, stdout.String(), stderr.String()
}

func TestMainProcessExitStatus(t *testing.T) {
	code, out, _ := runMain(t, nil, "zz-test", "echo", "x", "--n", "2")
	if code != exitOK || strings.TrimSpace(out) != `n=2 flag=false args=["x"]` {
		t.Errorf("echo: exit %d, stdout %q", code, out)
	}
	code, _, errOut := runMain(t, nil, "nope")
	if code != exitUsage || !strings.Contains(errOut, "unknown command") {
		t.Errorf("unknown: exit %d, stderr %q", code, errOut)
	}
}
