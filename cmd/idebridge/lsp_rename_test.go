package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runBuilt runs the built command in dir with env and returns its exit
// code, stdout and stderr.
func runBuilt(t *testing.T, dir string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	bin, err := buildCommand()
	if err != nil {
		t.Fatalf("building idebridge: %v", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// readAll reads every regular file under dir.
func readAll(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		out[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// unchanged fails unless dir holds exactly before.
func unchanged(t *testing.T, dir string, before map[string]string) {
	t.Helper()
	after := readAll(t, dir)
	for p, text := range before {
		if after[p] != text {
			t.Errorf("%s was written:\n%s", p, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s was left behind", p)
		}
	}
}

// TestLSPRenameApplyOutsideProject (issue 19, rows 2 and 4) runs the
// built `idebridge lsp rename --apply` in a project outside the checkout:
// a rename reaching a module replaced by ../lib, or a project file that
// is a symbolic link to a file outside, is refused whole, naming the
// files outside; nothing is written.
func TestLSPRenameApplyOutsideProject(t *testing.T) {
	top := t.TempDir()
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real
	}
	app, lib := filepath.Join(top, "app"), filepath.Join(top, "lib")
	for name, text := range map[string]string{
		"app/go.mod":  "module example.com/app\n\ngo 1.22\n\nrequire example.com/lib v0.0.0\n\nreplace example.com/lib => ../lib\n",
		"app/main.go": "package main\n\nimport \"example.com/lib\"\n\nfunc main() {\n\tprintln(lib.Greet())\n}\n",
		"lib/go.mod":  "module example.com/lib\n\ngo 1.22\n",
		"lib/lib.go":  "package lib\n\n// Greet greets.\nfunc Greet() string { return \"hello\" }\n",
	} {
		writeTestFile(t, filepath.Join(top, name), text)
	}
	env := navEnv(t, "CLAUDE_CONFIG_DIR="+t.TempDir(), "GOFLAGS=-mod=mod", "GOPROXY=off")
	before := readAll(t, top)
	code, out, errOut := runBuilt(t, app, env, "lsp", "rename", "main.go:6:Greet", "Hello", "--apply", "--no-ide", "--no-plugins")
	if code != exitFailure || !strings.Contains(errOut, "a file lies outside "+app+": "+filepath.Join(lib, "lib.go")+"; nothing was written") {
		t.Errorf("rename into ../lib: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	unchanged(t, top, before)

	// A project file that is a link to a file outside, with the text the
	// rename expects.
	dir := navModule(t)
	outside := filepath.Join(t.TempDir(), "use.go")
	use := filepath.Join(dir, "use.go")
	data, err := os.ReadFile(use)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, outside, string(data))
	if err := os.Remove(use); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, use); err != nil {
		t.Fatal(err)
	}
	before = readAll(t, dir)
	code, out, errOut = runBuilt(t, dir, env, "lsp", "rename", "shapes.go:5:Area", "Size", "--apply", "--no-ide", "--no-plugins")
	if code != exitFailure || !strings.Contains(errOut, use+" ("+outside+"); nothing was written") {
		t.Errorf("rename through a link out of the project: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	unchanged(t, dir, before)
	if got, _ := os.ReadFile(outside); string(got) != string(data) {
		t.Errorf("the file outside was written:\n%s", got)
	}
}

func writeTestFile(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
