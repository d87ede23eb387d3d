package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// navModule writes a Go module to navigate: a name that occurs twice on a
// line, and a rename that changes two files.
func navModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	for name, text := range map[string]string{
		"go.mod": "module example.com/nav\n\ngo 1.22\n",
		"shapes.go": "package nav\n\n// Shape is anything with an area.\ntype Shape interface {\n\tArea() float64\n}\n\n" +
			"// Square is a shape.\ntype Square struct{ Side float64 }\n\n// Area returns the area.\nfunc (s Square) Area() float64 { return s.Side * s.Side }\n",
		"use.go": "package nav\n\n// Total sums the areas of shapes.\nfunc Total(shapes []Shape) float64 {\n\ttotal := 0.0\n" +
			"\tfor _, s := range shapes {\n\t\ttotal = total + s.Area()\n\t}\n\treturn total\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// navEnv is diag's environment without the variables that make discovery
// think it runs in an IDE's terminal.
func navEnv(t *testing.T, extra ...string) map[string]string {
	env := diagEnv(t, extra...)
	for _, k := range []string{"TERM_PROGRAM", "CURSOR_TRACE_ID", "VSCODE_GIT_ASKPASS_MAIN", "TERMINAL_EMULATOR", "__CFBundleIdentifier", "CLAUDE_CODE_SSE_PORT", "WSL_DISTRO_NAME"} {
		delete(env, k)
	}
	return env
}

func TestLSPNavCommands(t *testing.T) {
	dir := navModule(t)
	env := navEnv(t)
	code, out, errOut := runIn(t, dir, env, "lsp", "refs", "use.go:7:total#2", "--no-plugins")
	want := "References to total (use.go:7:11), from gopls: 4 in 1 file\n\n" +
		"use.go:5:2: total := 0.0\nuse.go:7:3: total = total + s.Area()\nuse.go:7:11: total = total + s.Area()\nuse.go:9:9: return total\n"
	if code != exitOK || out != want {
		t.Errorf("refs: exit %d\n%s\nwant:\n%s\nstderr: %s", code, out, want, errOut)
	}
	code, out, _ = runIn(t, dir, env, "lsp", "refs", "use.go:7:total#2", "--no-decl", "--max", "1", "--no-plugins")
	if code != exitOK || !strings.Contains(out, "use.go:7:3: ") || !strings.Contains(out, "… 2 more in 1 file") || strings.Contains(out, "5:2") {
		t.Errorf("refs --no-decl --max 1: exit %d\n%s", code, out)
	}

	code, out, errOut = runIn(t, dir, env, "lsp", "refs", "use.go:7:total", "--no-plugins")
	if code != exitFailure || out != "" || !strings.Contains(errOut, `"total" occurs 2 times on line 7 (columns 3, 11)`) || !strings.Contains(errOut, "     7 | \t\ttotal = total + s.Area()") {
		t.Errorf("refs of an ambiguous symbol: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	code, _, errOut = runIn(t, dir, env, "lsp", "def", "use.go", "--no-plugins")
	if code != exitUsage || !strings.Contains(errOut, "no line number") {
		t.Errorf("def without a line: exit %d, %s", code, errOut)
	}

	code, out, _ = runIn(t, dir, env, "lsp", "def", "use.go:7:s.Area", "--json", "--no-plugins")
	var def struct {
		Op        string
		Server    string
		Locations []struct {
			Path         string
			Line, Column int
			Text         string
		}
	}
	if err := json.Unmarshal([]byte(out), &def); err != nil || code != exitOK {
		t.Fatalf("def --json: exit %d, %v:\n%s", code, err, out)
	}
	if def.Op != "definition" || def.Server != "gopls" || len(def.Locations) != 1 || def.Locations[0].Path != filepath.Join(dir, "shapes.go") ||
		def.Locations[0].Line != 5 || def.Locations[0].Column != 2 || def.Locations[0].Text != "\tArea() float64" {
		t.Errorf("def --json: %+v", def)
	}

	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"impl", "shapes.go:5:Area"}, []string{"Implementations of Area (shapes.go:5:2), from gopls: 1 in 1 file", "shapes.go:12:17: func (s Square) Area() float64"}},
		{[]string{"hover", "use.go:4:Total"}, []string{"Hover for Total (use.go:4:6), from gopls:", "func Total(shapes []Shape) float64", "Total sums the areas of shapes."}},
		{[]string{"symbols", "shapes.go"}, []string{"Symbols in shapes.go, from gopls: 5", "interface Shape interface{...}  shapes.go:4:6", "  method Area func() float64  shapes.go:5:2"}},
		{[]string{"wsymbols", "use.go", "Total"}, []string{`Workspace symbols matching "Total", from gopls:`, "use.go:4:6: function Total"}},
		{[]string{"calls", "shapes.go:5:Area"}, []string{"Calls to Area (shapes.go:5:2), from gopls: 1 caller", "function Total", "  use.go:7:21: total = total + s.Area()", "gopls found no callees of Area (shapes.go:5:2)."}},
		{[]string{"def", "use.go:4:shapes", "--type"}, []string{"Type definition of shapes (use.go:4:12), from gopls: 1 in 1 file", "shapes.go:4:6: type Shape interface {"}},
	} {
		code, out, errOut := runIn(t, dir, env, append(append([]string{"lsp"}, tt.args...), "--no-plugins")...)
		if code != exitOK {
			t.Errorf("%v: exit %d: %s", tt.args, code, errOut)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v lacks %q:\n%s", tt.args, w, out)
			}
		}
	}
	code, _, errOut = runIn(t, dir, env, "lsp", "def", "use.go:7:Area", "--decl", "--no-plugins")
	if code != exitFailure || !strings.Contains(errOut, "gopls does not offer declaration") {
		t.Errorf("def --decl on gopls: exit %d, %s", code, errOut)
	}
	code, _, errOut = runIn(t, dir, env, "lsp", "refs", "notes.txt:1:1", "--no-plugins")
	if code != exitUnavailable || !strings.Contains(errOut, "no language server for") {
		t.Errorf("refs in a file no server serves: exit %d, %s", code, errOut)
	}
}

// TestLSPTypesAndPages runs `lsp types` (both directions, and one) and
// pages `lsp refs` with --offset and --limit: each page names its part
// of the exact total and the offset of the next, and the pages together
// list each reference once.
func TestLSPTypesAndPages(t *testing.T) {
	dir := navModule(t)
	env := navEnv(t)
	code, out, errOut := runIn(t, dir, env, "lsp", "types", "shapes.go:9:Square", "--no-plugins")
	want := "Supertypes of Square (shapes.go:9:6), from gopls: 1 type\n\ninterface Shape example.com/nav  shapes.go:4:6\n\n" +
		"gopls found no subtypes of Square (shapes.go:9:6).\n"
	if code != exitOK || out != want {
		t.Errorf("types: exit %d\n%s\nwant:\n%s\nstderr: %s", code, out, want, errOut)
	}
	code, out, errOut = runIn(t, dir, env, "lsp", "types", "shapes.go:4:Shape", "--sub", "--json", "--no-plugins")
	var sub []struct {
		Op    string
		Items []struct{ Name string }
		Types []struct {
			Name     string
			Location struct{ Path string }
		}
	}
	if err := json.Unmarshal([]byte(out), &sub); err != nil || code != exitOK {
		t.Fatalf("types --sub --json: exit %d, %v:\n%s\n%s", code, err, out, errOut)
	}
	if len(sub) != 1 || sub[0].Op != "subtypes" || len(sub[0].Items) != 1 || sub[0].Items[0].Name != "Shape" ||
		len(sub[0].Types) != 1 || sub[0].Types[0].Name != "Square" || sub[0].Types[0].Location.Path != filepath.Join(dir, "shapes.go") {
		t.Errorf("types --sub --json: %+v", sub)
	}
	if code, _, errOut = runIn(t, dir, env, "lsp", "types", "shapes.go:4:Shape", "--sub", "--super", "--no-plugins"); code != exitUsage || !strings.Contains(errOut, "exclude each other") {
		t.Errorf("types --sub --super: exit %d, %s", code, errOut)
	}

	// total: declaration, 5:2; then 7:3, 7:11, 9:9.
	var seen []string
	for offset := 0; offset < 4; offset += 3 {
		code, out, errOut = runIn(t, dir, env, "lsp", "refs", "use.go:7:total#2", "--offset", fmt.Sprint(offset), "--limit", "3", "--no-plugins")
		if code != exitOK {
			t.Fatalf("refs --offset %d: exit %d: %s", offset, code, errOut)
		}
		head := map[int]string{0: "showing 1-3 of 4 (3 in 1 file)", 3: "showing 4 of 4 (1 in 1 file)"}[offset]
		if !strings.HasPrefix(out, "References to total (use.go:7:11), from gopls: 4; "+head+"\n") {
			t.Errorf("refs --offset %d --limit 3:\n%s", offset, out)
		}
		if more := "(1 more: run again with --offset 3 for the next ones.)\n"; (offset == 0) != strings.HasSuffix(out, more) {
			t.Errorf("refs --offset %d --limit 3: the next page is said wrong:\n%s", offset, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "use.go:") {
				seen = append(seen, strings.SplitN(line, ": ", 2)[0])
			}
		}
	}
	if want := []string{"use.go:5:2", "use.go:7:3", "use.go:7:11", "use.go:9:9"}; !slices.Equal(seen, want) {
		t.Errorf("the pages list %q, want %q", seen, want)
	}
	code, out, _ = runIn(t, dir, env, "lsp", "refs", "use.go:7:total#2", "--offset", "2", "--json", "--no-plugins")
	var page struct {
		Total, Offset int
		Locations     []struct{ Line, Column int }
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil || code != exitOK || page.Total != 4 || page.Offset != 2 || len(page.Locations) != 2 || page.Locations[0].Column != 11 {
		t.Errorf("refs --offset 2 --json: exit %d, %v: %+v\n%s", code, err, page, out)
	}
}

// TestLSPRenameThroughHeadlessIDE renames Area to Size (two files) with
// --apply while a headless IDE, the built command's `ide serve --diff
// prompt` fed "y" and "n" on a pipe, reviews each file: the first is
// written, the second is not.
func TestLSPRenameThroughHeadlessIDE(t *testing.T) {
	bin, err := buildCommand()
	if err != nil {
		t.Fatalf("building idebridge: %v", err)
	}
	dir := navModule(t)
	cfg := t.TempDir()
	env := navEnv(t, "CLAUDE_CONFIG_DIR="+cfg)
	shapes, use := filepath.Join(dir, "shapes.go"), filepath.Join(dir, "use.go")
	before := map[string]string{}
	for _, p := range []string{shapes, use} {
		data, _ := os.ReadFile(p)
		before[p] = string(data)
	}

	// Without --apply nothing is written, IDE or not.
	code, out, errOut := runIn(t, dir, env, "lsp", "rename", "shapes.go:5:Area", "Size", "--no-plugins")
	if code != exitOK || !strings.Contains(out, "Rename of Area (shapes.go:5:2) to Size, from gopls: 2 edits in 2 files. Nothing is written yet.") ||
		!strings.Contains(out, "--- a/use.go\n+++ b/use.go\n") || !strings.Contains(out, "-\t\ttotal = total + s.Area()\n+\t\ttotal = total + s.Size()\n") ||
		!strings.Contains(out, "Run again with --apply") {
		t.Errorf("rename: exit %d\n%s\nstderr: %s", code, out, errOut)
	}

	cmd := exec.Command(bin, "ide", "serve", "--workspace", dir, "--diff", "prompt", "--lockfile-dir", filepath.Join(cfg, "ide"))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "CLAUDE_CONFIG_DIR=" + cfg}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var prompts serveBuffer
	cmd.Stderr = &prompts
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatalf("ide serve's first line: %v\n%s", err, prompts.String())
	}
	go io.Copy(io.Discard, stdout)
	go func() { exited <- cmd.Wait() }()
	// The answers, one a question: shapes.go is proposed first.
	if _, err := io.WriteString(stdin, "y\nn\n"); err != nil {
		t.Fatal(err)
	}

	code, out, errOut = runIn(t, dir, env, "lsp", "rename", "shapes.go:5:Area", "Size", "--apply", "--no-plugins")
	if code != exitOK {
		t.Errorf("rename --apply: exit %d\n%s\nstderr: %s\nIDE:\n%s", code, out, errOut, prompts.String())
	}
	if !strings.Contains(errOut, "showing each file in") {
		t.Errorf("rename --apply did not use the IDE: %s", errOut)
	}
	if !strings.Contains(out, "Rename: 1 of 2 files written.\nshapes.go: written\nuse.go: rejected by the user; unchanged\n") {
		t.Errorf("rename --apply outcome:\n%s", out)
	}
	got, _ := os.ReadFile(shapes)
	// gopls renames Square's method only where a Square is used as a
	// Shape, which this module never does.
	if want := strings.Replace(before[shapes], "\tArea() float64", "\tSize() float64", 1); string(got) != want {
		t.Errorf("shapes.go after accepting:\n%s\nwant:\n%s", got, want)
	}
	if got, _ := os.ReadFile(use); string(got) != before[use] {
		t.Errorf("use.go changed although rejected:\n%s", got)
	}
	// The IDE showed each file's diff and asked twice.
	p := prompts.String()
	if strings.Count(p, "Apply?") != 2 || !strings.Contains(p, "proposes to change "+shapes) || !strings.Contains(p, "proposes to change "+use) ||
		!strings.Contains(p, "+\t\ttotal = total + s.Size()") {
		t.Errorf("the IDE's prompts:\n%s", p)
	}
}

// TestLSPRenameInterrupted interrupts `lsp rename --apply` (the built
// command) while the headless IDE shows the first file's diff: the review
// is cancelled as ESC does (closeAllDiffTabs), the first file is
// cancelled, the second never proposed, and neither is written.
func TestLSPRenameInterrupted(t *testing.T) {
	bin, err := buildCommand()
	if err != nil {
		t.Fatalf("building idebridge: %v", err)
	}
	dir := navModule(t)
	cfg := t.TempDir()
	shapes, use := filepath.Join(dir, "shapes.go"), filepath.Join(dir, "use.go")
	before := map[string]string{}
	for _, p := range []string{shapes, use} {
		data, _ := os.ReadFile(p)
		before[p] = string(data)
	}
	ide := exec.Command(bin, "ide", "serve", "--workspace", dir, "--diff", "prompt", "--lockfile-dir", filepath.Join(cfg, "ide"))
	ide.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "CLAUDE_CONFIG_DIR=" + cfg}
	stdin, err := ide.StdinPipe() // never answered
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := ide.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var prompts serveBuffer
	ide.Stderr = &prompts
	if err := ide.Start(); err != nil {
		t.Fatal(err)
	}
	ideDone := make(chan error, 1)
	t.Cleanup(func() {
		ide.Process.Signal(os.Interrupt)
		select {
		case <-ideDone:
		case <-time.After(10 * time.Second):
			ide.Process.Kill()
		}
	})
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatalf("ide serve's first line: %v\n%s", err, prompts.String())
	}
	go io.Copy(io.Discard, stdout)
	go func() { ideDone <- ide.Wait() }()

	env := navEnv(t, "CLAUDE_CONFIG_DIR="+cfg)
	rename := exec.Command(bin, "lsp", "rename", "shapes.go:5:Area", "Size", "--apply", "--no-plugins")
	rename.Dir = dir
	for k, v := range env {
		rename.Env = append(rename.Env, k+"="+v)
	}
	var out, errOut serveBuffer
	rename.Stdout, rename.Stderr = &out, &errOut
	if err := rename.Start(); err != nil {
		t.Fatal(err)
	}
	renameDone := make(chan error, 1)
	go func() { renameDone <- rename.Wait() }()
	prompts.waitFor(t, "Apply?")
	if err := rename.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-renameDone:
		if err != nil {
			t.Errorf("lsp rename after the interrupt: %v\n%s\n%s", err, out.String(), errOut.String())
		}
	case <-time.After(serveTestTimeout):
		rename.Process.Kill()
		t.Fatalf("lsp rename did not end after the interrupt\n%s\n%s", out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "Rename: 0 of 2 files written.\nshapes.go: cancelled; unchanged\nuse.go: not proposed (the review was cancelled); unchanged\n") {
		t.Errorf("outcome after the interrupt:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}
	for p, text := range before {
		if got, _ := os.ReadFile(p); string(got) != text {
			t.Errorf("%s changed:\n%s", filepath.Base(p), got)
		}
	}
	if strings.Count(prompts.String(), "Apply?") != 1 {
		t.Errorf("the IDE was asked %d times:\n%s", strings.Count(prompts.String(), "Apply?"), prompts.String())
	}
}
