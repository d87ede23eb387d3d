package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// diagEnv is the process environment as a map, with gopls isolated.
func diagEnv(t *testing.T, extra ...string) map[string]string {
	env := environMap(os.Environ())
	env["GOPLSCACHE"] = t.TempDir()
	env["GOPROXY"] = "off"
	env["CLAUDE_CONFIG_DIR"] = t.TempDir() // no installed plugins but the test's own
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}

// runIn runs the dispatcher in-process with dir as working directory.
func runIn(t *testing.T, dir string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	inv := &invocation{Stdout: &stdout, Stderr: &stderr, Env: env, Getwd: func() (string, error) { return dir, nil }}
	code := run(context.Background(), args, inv)
	return code, stdout.String(), stderr.String()
}

// buildScriptls builds package lsp's scripted language server.
func buildScriptls(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "scriptls")
	if out, err := exec.Command("go", "build", "-o", bin, "../../lsp/testdata/scriptls").CombinedOutput(); err != nil {
		t.Fatalf("building scriptls: %v\n%s", err, out)
	}
	return bin
}

func writeConfig(t *testing.T, dir string, servers map[string]any) string {
	t.Helper()
	data, err := json.Marshal(servers)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "lsp.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDiagUsage(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := runIn(t, dir, nil, "diag"); code != exitUsage || !strings.Contains(errOut, "no files") {
		t.Errorf("no files: exit %d, %q", code, errOut)
	}
	if code, _, _ := runIn(t, dir, nil, "diag", "--timeout", "0s", "a.go"); code != exitUsage {
		t.Errorf("zero timeout: exit %d", code)
	}
	if code, out, _ := runIn(t, dir, nil, "diag", "-h"); code != exitOK || !strings.Contains(out, "even if diagnostics were found") {
		t.Errorf("help: exit %d, %q", code, out)
	}
}

func TestDiagWithoutGopls(t *testing.T) {
	dir := t.TempDir()
	env := diagEnv(t, "GOPLS="+filepath.Join(dir, "no-gopls"))
	code, out, errOut := runIn(t, dir, env, "diag", "main.go", "script.py")
	if code != exitUnavailable {
		t.Errorf("exit %d, want %d", code, exitUnavailable)
	}
	if out != "" {
		t.Errorf("stdout %q, want nothing", out)
	}
	for _, want := range []string{"go install golang.org/x/tools/gopls@v0.23.0", "script.py: no server is configured; install and enable a Claude Code plugin"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q does not contain %q", errOut, want)
		}
	}
}

func TestDiagScriptedServer(t *testing.T) {
	bin := buildScriptls(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, map[string]any{
		"script": map[string]any{"command": bin, "args": []string{"-progress"}, "extensionToLanguage": map[string]string{".s": "script"}},
	})
	for name, text := range map[string]string{"a.s": "ok\n  ERROR\n", "b.s": "clean\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := diagEnv(t)

	code, out, errOut := runIn(t, dir, env, "diag", "--config", "lsp.json", "a.s", "b.s")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"<new-diagnostics>", "a.s:\n  ✘ [Line 2:3] found ERROR [E1] (scriptls)",
		"Checked:\n  a.s (script, progress-ended): published for version 1; its work-done progress ended\n" +
			"  b.s (script, progress-ended): published for version 1; its work-done progress ended\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout %q does not contain %q", out, want)
		}
	}

	// A clean file alone: nothing to report, and the output says so.
	code, out, _ = runIn(t, dir, env, "diag", "--config", cfg, "b.s")
	if code != exitOK || !strings.HasPrefix(out, "No diagnostics.\nChecked:\n  b.s (script, progress-ended): published for version 1") {
		t.Errorf("clean: exit %d, %q", code, out)
	}

	// JSON, with a file no server serves: exit 2, the others reported.
	code, out, errOut = runIn(t, dir, env, "diag", "--config", cfg, "--json", "a.s", "notes.txt")
	// Served: .s, and .go by the built-in gopls (flags add servers).
	if code != exitUnavailable || !strings.Contains(errOut, "extension .txt is not configured (served: .go .s)") {
		t.Errorf("unserved file: exit %d, stderr %q", code, errOut)
	}
	var res struct {
		Attachment *struct {
			Files []struct {
				Path        string
				Diagnostics []struct{ Message string }
			}
		}
		Files []struct {
			Path, Server, Freshness, Error string
			Version                        int
			Fresh                          bool
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("JSON output %q: %v", out, err)
	}
	if res.Attachment == nil || len(res.Attachment.Files) != 1 || res.Attachment.Files[0].Diagnostics[0].Message != "found ERROR" {
		t.Errorf("attachment %+v", res.Attachment)
	}
	if len(res.Files) != 2 || res.Files[0].Freshness != "progress-ended" || res.Files[0].Version != 1 || !res.Files[0].Fresh ||
		res.Files[0].Server != "script" || !strings.Contains(res.Files[1].Error, "no language server") {
		t.Errorf("files %+v", res.Files)
	}
}

// TestDiagInvalidAndFlooded: a server's invalid diagnostics cost only
// themselves and the block says they were dropped; a flood of 5,000 shows
// 10 and counts the other 4,990, those the per-publish cap dropped
// included.
func TestDiagInvalidAndFlooded(t *testing.T) {
	bin := buildScriptls(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.s"), []byte("ok\n  ERROR\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := diagEnv(t)
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"-invalid"}, []string{"a.s:\n  ✘ [Line 2:3] found ERROR [E1] (scriptls)",
			filepath.Join(dir, "a.s") + ": 2 invalid diagnostics from script were dropped (diagnostics[1].severity: number 99 is not a severity (1 to 4))"}},
		{[]string{"-flood", "5000"}, []string{"  ✘ [Line 1:1] flood 0 (scriptls)", "… 4990 more not shown\n</new-diagnostics>"}},
	} {
		cfg := writeConfig(t, dir, map[string]any{
			"script": map[string]any{"command": bin, "args": tt.args, "extensionToLanguage": map[string]string{".s": "script"}},
		})
		code, out, errOut := runIn(t, dir, env, "diag", "--config", cfg, "a.s")
		if code != exitOK {
			t.Fatalf("%v: exit %d, stderr %q", tt.args, code, errOut)
		}
		for _, want := range tt.want {
			if !strings.Contains(out, want) {
				t.Errorf("%v: stdout %q does not contain %q", tt.args, out, want)
			}
		}
	}
}

func TestDiagServerFailure(t *testing.T) {
	bin := buildScriptls(t)
	dir := t.TempDir()
	writeConfig(t, dir, map[string]any{
		"bad":  map[string]any{"command": bin, "args": []string{"-malformed-on-open"}, "restartOnCrash": false, "extensionToLanguage": map[string]string{".s": "s"}},
		"nope": map[string]any{"command": 42},
	})
	if err := os.WriteFile(filepath.Join(dir, "a.s"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runIn(t, dir, diagEnv(t), "diag", "--config", "lsp.json", "a.s")
	if code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	for _, want := range []string{`warning:`, `server "nope": command`, "malformed LSP frame"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q does not contain %q", errOut, want)
		}
	}

	writeConfig(t, dir, map[string]any{"nope": map[string]any{"command": 42}})
	if code, _, errOut := runIn(t, dir, diagEnv(t), "diag", "--config", "lsp.json", "a.s"); code != exitUnavailable ||
		!strings.Contains(errOut, "configures no usable language server") {
		t.Errorf("no usable server: exit %d, %q", code, errOut)
	}
}

// TestDiagBrokenModule is the README's main job: gopls on the example
// module with deliberate errors.
func TestDiagBrokenModule(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runIn(t, root, diagEnv(t), "diag", "examples/brokenmod/main.go", "examples/brokenmod/greet.go")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q (gopls %s is needed: go install golang.org/x/tools/gopls@v0.23.0)", code, errOut, "v0.23.0")
	}
	for _, want := range []string{
		"examples/brokenmod/greet.go:\n  ✘ [Line 5:9] cannot use len(name) (value of type int) as string value in return statement",
		`✘ [Line 8:18] cannot use "three" (untyped string constant) as int value`,
		"✘ [Line 9:21] undefined: total",
		"Checked:\n  examples/brokenmod/main.go (gopls, progress-ended): published for version 1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout does not contain %q:\n%s", want, out)
		}
	}
}

// TestDiagNotCurrent: a server that never publishes (or publishes too
// late) leaves the files' diagnostics unknown: diag says so on each file's
// line, never "No diagnostics." alone, notes it, and exits 3; a file whose
// server did answer is still reported as checked.
func TestDiagNotCurrent(t *testing.T) {
	bin := buildScriptls(t)
	dir := t.TempDir()
	writeConfig(t, dir, map[string]any{
		"mute": map[string]any{"command": bin, "args": []string{"-never-publish"}, "extensionToLanguage": map[string]string{".m": "m"}},
		"ok":   map[string]any{"command": bin, "extensionToLanguage": map[string]string{".s": "s"}},
	})
	for name, text := range map[string]string{"a.m": "ERROR\n", "b.s": "clean\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := diagEnv(t)
	code, out, errOut := runIn(t, dir, env, "diag", "--config", "lsp.json", "--timeout", "1s", "a.m", "b.s")
	if code != exitUnknown {
		t.Errorf("exit %d, want %d; stderr %q", code, exitUnknown, errOut)
	}
	for _, want := range []string{
		"a.m: diagnostics unknown: mute has not reported any for it",
		"Checked:\n  a.m (mute, timed-out): NOT KNOWN TO BE CURRENT: no publish for it from mute within ",
		"  b.s (ok, published): published for version 1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout %q does not contain %q", out, want)
		}
	}
	if strings.Contains(out, "No diagnostics.") {
		t.Errorf("stdout says no diagnostics: %q", out)
	}
	// Alone, with nothing at all received.
	code, out, _ = runIn(t, dir, env, "diag", "--config", "lsp.json", "--timeout", "1s", "a.m")
	if code != exitUnknown || strings.Contains(out, "No diagnostics.") || !strings.Contains(out, "NOT KNOWN TO BE CURRENT") {
		t.Errorf("alone: exit %d, %q", code, out)
	}
	// JSON says it per file.
	code, out, _ = runIn(t, dir, env, "diag", "--config", "lsp.json", "--timeout", "1s", "--json", "a.m", "b.s")
	var res struct {
		Files []struct {
			Freshness, Reason, Status string
			Fresh                     bool
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("JSON %q: %v", out, err)
	}
	if code != exitUnknown || len(res.Files) != 2 || res.Files[0].Fresh || res.Files[0].Freshness != "timed-out" || res.Files[0].Status != "unknown" ||
		!res.Files[1].Fresh || res.Files[1].Reason != "published for version 1" || res.Files[1].Status != "complete" {
		t.Errorf("JSON: exit %d, %+v", code, res.Files)
	}
}

// TestDiagRealServers: the table, from the command line: pyright,
// typescript-language-server and clangd on files with two errors each
// print both (at their character columns, after an emoji), say how they
// knew, and exit 0; the clean files are checked too. gopls is
// TestDiagBrokenModule.
func TestDiagRealServers(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	npm := func(name string) string {
		for _, d := range []string{os.Getenv("LSP_BIN"), filepath.Join(root, "tools", "lsp", "node_modules", ".bin")} {
			if p := filepath.Join(d, name); d != "" {
				if _, err := os.Stat(p); err == nil {
					return p
				}
			}
		}
		t.Fatalf("%s not found: run `make lsp-servers`", name)
		return ""
	}
	clangd, err := exec.LookPath("clangd")
	if err != nil {
		t.Fatalf("clangd not found: run `make lsp-servers`: %v", err)
	}
	for _, tt := range []struct {
		lang, ext, command string
		args               []string
		want               []string
	}{
		{"python", ".py", npm("pyright-langserver"), []string{"--stdio"},
			[]string{`✘ [Line 2:22] "undefined_name" is not defined`, `✘ [Line 3:12] Type "str" is not assignable to return type "int"`}},
		{"typescript", ".ts", npm("typescript-language-server"), []string{"--stdio"},
			[]string{"✘ [Line 2:30] Cannot find name 'nowhereDefined'.", "✘ [Line 4:14] Type 'string' is not assignable to type 'number'."}},
		{"c", ".c", clangd, nil,
			[]string{"✘ [Line 2:46] Use of undeclared identifier 'undefined_name'", "✘ [Line 4:28] Expected ';' after return statement"}},
	} {
		t.Run(tt.lang, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src := filepath.Join(root, "lsp", "testdata", "conformance", tt.lang)
			ents, err := os.ReadDir(src)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				data, err := os.ReadFile(filepath.Join(src, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			writeConfig(t, dir, map[string]any{tt.lang: map[string]any{
				"command": tt.command, "args": tt.args, "extensionToLanguage": map[string]string{tt.ext: tt.lang},
			}})
			code, out, errOut := runIn(t, dir, diagEnv(t), "diag", "--config", "lsp.json", "broken"+tt.ext, "clean"+tt.ext)
			if code != exitOK {
				t.Errorf("exit %d, stderr %q, stdout %q", code, errOut, out)
			}
			for _, want := range append(tt.want, "Checked:\n  broken"+tt.ext+" ("+tt.lang+", ", "  clean"+tt.ext+" ("+tt.lang+", ") {
				if !strings.Contains(out, want) {
					t.Errorf("stdout does not contain %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "NOT KNOWN") || strings.Contains(out, "No diagnostics") || strings.Contains(out, "clean"+tt.ext+":\n") {
				t.Errorf("stdout:\n%s", out)
			}
		})
	}
}

// On a terminal, diag draws its progress line on standard error only, and
// erases it before the output; with -q nothing is drawn.
func TestDiagProgressLine(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	delay, isTerm := progressDelay, stderrIsTerminal
	t.Cleanup(func() { progressDelay, stderrIsTerminal = delay, isTerm })
	progressDelay = 0 // every step shows, however quick
	stderrIsTerminal = func(io.Writer) bool { return true }
	args := []string{"diag", "--timeout", "5m", "examples/brokenmod/main.go"} // a busy machine is slow

	code, out, errOut := runIn(t, root, diagEnv(t), args...)
	if code != exitOK || !strings.Contains(out, "undefined: total") || strings.Contains(out, "\x1b") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// gopls starts and loads for seconds, over many ticks, but what the
	// ticks catch is up to the scheduler: every drawing is checked.
	if errOut != "" {
		if !strings.HasSuffix(errOut, "\r\x1b[K") {
			t.Errorf("the progress line was not erased at the end: %q", errOut)
		}
		for _, d := range strings.Split(errOut, "\r\x1b[K") {
			if d != "" && !strings.HasPrefix(d, "gopls: ") {
				t.Errorf("a drawing that is not gopls's: %q", d)
			}
		}
	}

	code, out, errOut = runIn(t, root, diagEnv(t), append(args, "-q")...)
	if code != exitOK || !strings.Contains(out, "undefined: total") || errOut != "" {
		t.Errorf("-q: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
