package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// editModule is a module where calc/a.go declares Add, which calc/b.go
// and app/c.go (another package) call.
func editModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	for name, text := range map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.22\n",
		"calc/a.go": "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
		"calc/b.go": "package calc\n\n// Twice doubles.\nfunc Twice(x int) int { return Add(x, x) }\n",
		"app/c.go":  "package app\n\nimport \"example.com/m/calc\"\n\n// Sum sums.\nfunc Sum() int { return calc.Add(1, 2) }\n",
	} {
		writeTestFile(t, filepath.Join(dir, name), text)
	}
	return dir
}

func writeEdits(t *testing.T, dir string, edits ...map[string]any) string {
	t.Helper()
	data, err := json.Marshal(edits)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "edits.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// `edit check` shows the error a signature change makes in another
// package, exits 1 for it, and writes nothing; with the fixes it exits 0;
// `edit apply` writes them all.
func TestEditCheckThenApply(t *testing.T) {
	dir := editModule(t)
	env := diagEnv(t, "GOFLAGS=-mod=mod")
	before := readAll(t, dir)
	breaking := map[string]any{"file": "calc/a.go", "old_string": "func Add(a, b int) int {\n\treturn a + b", "new_string": "func Add(a, b, c int) int {\n\treturn a + b + c"}
	code, out, errOut := runIn(t, dir, env, "edit", "check", writeEdits(t, dir, breaking), "--no-plugins", "-q")
	if code != exitFailure || !strings.Contains(out, "app/c.go: 1 introduced\n  + 6:38 error: not enough arguments in call to calc.Add") ||
		!strings.Contains(out, "calc/b.go: 1 introduced") || !strings.Contains(out, "+func Add(a, b, c int) int {") {
		t.Errorf("check of a breaking change: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	unchanged(t, dir, before)

	fixes := writeEdits(t, dir, breaking,
		map[string]any{"file": "calc/b.go", "old_string": "Add(x, x)", "new_string": "Add(x, x, 0)"},
		map[string]any{"file": "app/c.go", "old_string": "calc.Add(1, 2)", "new_string": "calc.Add(1, 2, 0)"})
	code, out, errOut = runIn(t, dir, env, "edit", "check", fixes, "--no-plugins", "-q")
	if code != exitOK || !strings.Contains(out, "no diagnostics introduced or resolved") {
		t.Errorf("check with the fixes: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	unchanged(t, dir, before)

	code, out, errOut = runIn(t, dir, env, "edit", "apply", fixes, "--no-plugins", "-q")
	if code != exitOK || !strings.Contains(out, "written: 3 files") {
		t.Errorf("apply: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "app", "c.go")); !strings.Contains(string(b), "calc.Add(1, 2, 0)") {
		t.Errorf("c.go after apply:\n%s", b)
	}
}

// Bad input is a usage error that names the problem; an edit that cannot
// apply is exit 1 naming it; nothing is written.
func TestEditBadInput(t *testing.T) {
	dir := editModule(t)
	env := diagEnv(t, "GOFLAGS=-mod=mod")
	before := readAll(t, dir)
	bad := filepath.Join(t.TempDir(), "bad.json")
	writeTestFile(t, bad, `[{"file": "calc/a.go", "old_sting": "x"}]`)
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"edit", "check"}, exitUsage, "want EDITS.json, got 0 arguments"},
		{[]string{"edit", "apply", bad}, exitUsage, `unknown field "old_sting"`},
		{[]string{"edit", "apply", filepath.Join(dir, "nope.json")}, exitUsage, "no such file"},
		// old_string without new_string is a mistake, not a deletion.
		{[]string{"edit", "apply", writeEdits(t, dir, map[string]any{"file": "calc/a.go", "old_string": "func Add"}), "--no-plugins", "-q"}, exitUsage, "edit 1: old_string needs new_string"},
		{[]string{"edit", "apply", writeEdits(t, dir, map[string]any{"file": "calc/a.go", "old_string": "nowhere", "new_string": "x"}), "--no-plugins", "-q"}, exitFailure, "old_string does not occur in the file"},
	} {
		code, out, errOut := runIn(t, dir, env, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.says) {
			t.Errorf("%v: exit %d, want %d saying %q\n%s\nstderr: %s", tc.args, code, tc.code, tc.says, out, errOut)
		}
	}
	unchanged(t, dir, before)
}

// With an IDE for the working directory (`ide serve`), `edit apply` shows
// every file in its diff viewer first: rejected, nothing is written and
// the error names the file; accepted, all are written and checked;
// --no-ide writes without asking.
func TestEditApplyReviewedInIDE(t *testing.T) {
	dir := editModule(t)
	env := diagEnv(t, "GOFLAGS=-mod=mod")
	before := readAll(t, dir)
	edits := writeEdits(t, dir,
		map[string]any{"file": "calc/a.go", "old_string": "func Add(a, b int) int {\n\treturn a + b", "new_string": "func Add(a, b, c int) int {\n\treturn a + b + c"},
		map[string]any{"file": "calc/b.go", "old_string": "Add(x, x)", "new_string": "Add(x, x, 0)"},
		map[string]any{"file": "app/c.go", "old_string": "calc.Add(1, 2)", "new_string": "calc.Add(1, 2, 0)"})

	reject := startServe(t, dir, env, nil, "--diff", "reject")
	code, out, errOut := runIn(t, dir, env, "edit", "apply", edits, "--no-plugins", "-q")
	if code != exitFailure || !strings.Contains(errOut, "calc/a.go was rejected in review; nothing was written") {
		t.Errorf("apply with the IDE rejecting: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	unchanged(t, dir, before)
	reject.stop()

	startServe(t, dir, env, nil, "--diff", "accept")
	code, out, errOut = runIn(t, dir, env, "edit", "apply", edits, "--no-plugins", "-q")
	if code != exitOK || !strings.Contains(out, "written: 3 files, reviewed in ") || !strings.Contains(out, "no diagnostics introduced or resolved") {
		t.Errorf("apply with the IDE accepting: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "app", "c.go")); !strings.Contains(string(b), "calc.Add(1, 2, 0)") {
		t.Errorf("c.go after apply:\n%s", b)
	}
	code, out, errOut = runIn(t, dir, env, "edit", "apply", writeEdits(t, dir, map[string]any{"file": "app/c.go", "old_string": "// Sum sums.", "new_string": "// Sum adds."}), "--no-plugins", "-q", "--no-ide")
	if code != exitOK || !strings.Contains(out, "written: 1 files\n") {
		t.Errorf("apply --no-ide: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	if code, _, errOut := runIn(t, dir, env, "edit", "apply", edits, "--no-ide", "--port", "5"); code != exitUsage || !strings.Contains(errOut, "--no-ide leaves no IDE") {
		t.Errorf("--no-ide with --port: exit %d, %s", code, errOut)
	}
}
