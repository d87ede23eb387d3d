//go:build linux

package lsp

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idebridge/idebridge/diag"
)

// editFixture is a module where calc/a.go declares Add, which a.go itself,
// calc/b.go (the same package) and app/c.go (another package) call.
type editFixture struct {
	dir, a, b, c string
}

const (
	fixtureA = `package calc

// Add adds.
func Add(a, b int) int {
	return a + b
}

// Inc adds one.
func Inc(x int) int { return Add(x, 1) }

// Square is a square.
type Square struct{ W int }

// Area is its area.
func (s *Square) Area() int {
	return s.W * s.W
}

// Unused is called by nobody.
func Unused() int {
	return 7
}
`
	fixtureB = `package calc

// Twice doubles.
func Twice(x int) int { return Add(x, x) }
`
	fixtureC = `package app

import "example.com/m/calc"

// Sum sums.
func Sum() int { return calc.Add(1, 2) }
`
)

func newEditFixture(t *testing.T) *editFixture {
	t.Helper()
	dir := t.TempDir()
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	f := &editFixture{dir: dir, a: filepath.Join(dir, "calc", "a.go"), b: filepath.Join(dir, "calc", "b.go"), c: filepath.Join(dir, "app", "c.go")}
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	writeFile(t, f.a, fixtureA)
	writeFile(t, f.b, fixtureB)
	writeFile(t, f.c, fixtureC)
	return f
}

// treeSum checksums every file under dir, names and contents.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func newEditManager(t *testing.T, f *editFixture) *Manager {
	t.Helper()
	gopls := goplsForTest(t)
	return newManager(t, []ServerConfig{GoplsConfig(gopls, f.dir)}, &ManagerOptions{
		ProjectDir: f.dir, Env: goplsEnviron(t), SettleTimeout: time.Minute,
	})
}

func fileCheck(c *EditCheck, path string) *FileCheck {
	for i := range c.Files {
		if c.Files[i].Path == path {
			return &c.Files[i]
		}
	}
	return nil
}

func errorsIn(ds []diag.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		if d.Severity == diag.SeverityError {
			out = append(out, d.Message)
		}
	}
	return out
}

// diskErrors opens each file as it is on disk, settles it and returns its
// current errors.
func diskErrors(t *testing.T, m *Manager, paths ...string) map[string][]string {
	t.Helper()
	ctx := context.Background()
	out := map[string][]string{}
	for _, p := range paths {
		if err := m.Open(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range paths {
		if res, err := m.Settle(ctx, p); err != nil || res.Status != StatusComplete {
			t.Fatalf("settle %s: %+v %v", p, res, err)
		}
		ds, _, _ := m.currentSet(p)
		out[p] = errorsIn(ds)
	}
	return out
}

const addSignature = "func Add(a, b int) int {\n\treturn a + b\n"

// TestEditSetGopls stages edits on a real gopls: a signature change seen
// in its own file, its package and another package, with nothing written;
// a discard that leaves no stale error; a symbol's body replaced; deletes
// refused and done; a batch that breaks then fixes, applied.
func TestEditSetGopls(t *testing.T) {
	f := newEditFixture(t)
	m := newEditManager(t, f)
	ctx := context.Background()
	all := []string{f.a, f.b, f.c}

	t.Run("signature change breaks the dependents, disk untouched", func(t *testing.T) {
		sum := treeSum(t, f.dir)
		es := m.NewEditSet()
		err := es.Stage(ctx, []Edit{{File: f.a, OldString: addSignature, NewString: "func Add(a, b, c int) int {\n\treturn a + b + c\n"}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := es.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("check:\n%s", c.Render(f.dir))
		for _, p := range all {
			fc := fileCheck(c, p)
			if fc == nil {
				t.Fatalf("%s not checked: %+v", p, c.Files)
			}
			if got := errorsIn(fc.Introduced); len(got) != 1 || !strings.Contains(got[0], "not enough arguments") {
				t.Errorf("%s: introduced %q", p, got)
			}
			if fc.Status != StatusComplete {
				t.Errorf("%s: status %s (%s)", p, fc.Status, fc.Reason)
			}
		}
		if !fileCheck(c, f.a).Edited || fileCheck(c, f.c).Edited {
			t.Errorf("edited flags: %+v", c.Files)
		}
		if !strings.Contains(c.Diff, "+func Add(a, b, c int) int {") || !strings.Contains(c.Diff, "--- a/calc/a.go") {
			t.Errorf("diff:\n%s", c.Diff)
		}
		if got := treeSum(t, f.dir); got != sum {
			t.Fatal("the check wrote to the tree")
		}
		if err := es.Discard(ctx); err != nil {
			t.Fatal(err)
		}
		if got := treeSum(t, f.dir); got != sum {
			t.Fatal("the discard wrote to the tree")
		}
		for p, errs := range diskErrors(t, m, all...) {
			if len(errs) != 0 {
				t.Errorf("after discard, %s has errors %q", p, errs)
			}
		}
	})

	t.Run("a staged text replaced by another user is sent again", func(t *testing.T) {
		es := m.NewEditSet()
		defer es.Discard(ctx)
		if err := es.Stage(ctx, []Edit{{File: f.a, OldString: addSignature, NewString: "func Add(a, b, c int) int {\n\treturn a + b + c\n"}}); err != nil {
			t.Fatal(err)
		}
		// Another user of the manager (a getDiagnostics, say) sends the
		// disk's text of a.go.
		if err := m.Change(ctx, f.a, fixtureA); err != nil {
			t.Fatal(err)
		}
		c, err := es.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := errorsIn(fileCheck(c, f.c).Introduced); len(got) != 1 {
			t.Errorf("c.go introduced %q after a.go's staged text was replaced:\n%s", got, c.Render(f.dir))
		}
		if txt, _ := m.serverText(f.a); !strings.Contains(txt, "a + b + c") {
			t.Errorf("a.go in its server:\n%s", txt)
		}
	})

	t.Run("formatted by the server", func(t *testing.T) {
		es := m.NewEditSet()
		defer es.Discard(ctx)
		messy := "package calc\n\n// Twice doubles.\nfunc Twice(x int) int {   return Add(x,x) }\n"
		if err := es.Stage(ctx, []Edit{{File: f.b, NewText: &messy}, {File: f.b, Format: true}}); err != nil {
			t.Fatal(err)
		}
		if d := es.Diff(); d != "" {
			t.Errorf("formatting the messy text did not give the disk's back:\n%s", d)
		}
		if err := es.Stage(ctx, []Edit{{File: f.b, Format: true, NewText: &messy}}); err == nil || !strings.Contains(err.Error(), "exactly one of") {
			t.Errorf("format with new_text: %v", err)
		}
	})

	t.Run("quick fixes staged: a missing import, an unused one", func(t *testing.T) {
		es := m.NewEditSet()
		defer es.Discard(ctx)
		// strings is used and not imported; os is imported and not used.
		text := "package calc\n\nimport \"os\"\n\n// Twice doubles.\nfunc Twice(x int) int { return Add(x, x) }\n\n// Up shouts.\nfunc Up(s string) string { return strings.ToUpper(s) }\n"
		if err := es.Stage(ctx, []Edit{{File: f.b, NewText: &text}}); err != nil {
			t.Fatal(err)
		}
		c, err := es.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := errorsIn(fileCheck(c, f.b).Introduced); len(got) != 2 {
			t.Fatalf("introduced %q", got)
		}
		acts, err := m.CodeActions(ctx, f.b, 9)
		if err != nil {
			t.Fatal(err)
		}
		if len(acts.Actions) == 0 || acts.Actions[0].Title != `Add import:  "strings"` || acts.Actions[0].Kind != "quickfix" ||
			len(acts.Actions[0].Fixes) != 1 || acts.Actions[0].Fixes[0] != "undefined: strings" {
			t.Errorf("code actions at line 9: %+v", acts.Actions)
		}
		// The quick fix by a part of its title; the unused import by
		// organizing the imports (a source action).
		if err := es.Stage(ctx, []Edit{{File: f.b, Line: 9, Fix: "Add import"}, {File: f.b, Line: 3, Fix: "Organize Imports"}}); err != nil {
			t.Fatal(err)
		}
		c, err = es.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.Introduced != 0 || !strings.Contains(c.Diff, "+\t\"strings\"\n") || strings.Contains(c.Diff, "\"os\"") {
			t.Errorf("after the fixes:\n%s%s", c.Render(f.dir), c.Diff)
		}
		err = es.Stage(ctx, []Edit{{File: f.b, Line: 9, Fix: "no such fix"}})
		if err == nil || !strings.Contains(err.Error(), `no code action "no such fix" at line 9; there are`) {
			t.Errorf("an unknown fix: %v", err)
		}
	})

	t.Run("after a discard, a drain delivers nothing of the staged text", func(t *testing.T) {
		for _, p := range all {
			if err := m.Open(ctx, p); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Settle(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		m.Drain()
		es := m.NewEditSet()
		if err := es.Stage(ctx, []Edit{{File: f.a, OldString: addSignature, NewString: "func Add(a, b, c int) int {\n\treturn a + b + c\n"}}); err != nil {
			t.Fatal(err)
		}
		if c, err := es.Check(ctx); err != nil || c.Introduced != 3 {
			t.Fatalf("check: %v", err)
		}
		if err := es.Discard(ctx); err != nil {
			t.Fatal(err)
		}
		if att, ok := m.Drain(); ok {
			for _, fd := range att.Files {
				if len(errorsIn(fd.Diagnostics)) > 0 {
					t.Errorf("drained after the discard: %s %+v", fd.URI, fd.Diagnostics)
				}
			}
		}
	})

	t.Run("symbol body replaced", func(t *testing.T) {
		es := m.NewEditSet()
		defer es.Discard(ctx)
		body := "return s.W * s.Missing"
		if err := es.Stage(ctx, []Edit{{File: f.a, Symbol: "Square.Area", Body: &body}}); err != nil {
			t.Fatal(err)
		}
		if d := es.Diff(); !strings.Contains(d, "-\treturn s.W * s.W\n+\treturn s.W * s.Missing\n") {
			t.Errorf("diff:\n%s", d)
		}
		c, err := es.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := errorsIn(fileCheck(c, f.a).Introduced); len(got) != 1 || !strings.Contains(got[0], "Missing") {
			t.Errorf("introduced %q\n%s", got, c.Render(f.dir))
		}
		// A second stage fixes it: judged together, nothing is left.
		fixed := "return s.W * s.W * 1"
		if err := es.Stage(ctx, []Edit{{File: f.a, Symbol: "(*Square).Area", Action: SymbolBody, Body: &fixed}}); err != nil {
			t.Fatal(err)
		}
		c, err = es.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.Introduced != 0 || c.Resolved != 0 {
			t.Errorf("after the fix:\n%s", c.Render(f.dir))
		}
	})

	t.Run("symbol source", func(t *testing.T) {
		src, err := m.SymbolSource(ctx, f.a, "Square.Area")
		if err != nil {
			t.Fatal(err)
		}
		if src.Text != "func (s *Square) Area() int {\n\treturn s.W * s.W\n}" || src.Line != 15 || src.EndLine != 17 || src.Symbol != "Square.Area" {
			t.Errorf("source %+v", src)
		}
		if _, err := m.SymbolSource(ctx, f.a, "Circle"); err == nil || !strings.Contains(err.Error(), `no symbol "Circle"`) {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("delete refused while referenced", func(t *testing.T) {
		es := m.NewEditSet()
		defer es.Discard(ctx)
		err := es.Stage(ctx, []Edit{{File: f.a, Symbol: "Add", Action: SymbolDelete}})
		if err == nil || !strings.Contains(err.Error(), "still has") || !strings.Contains(err.Error(), "calc/b.go:4") || !strings.Contains(err.Error(), "app/c.go:6") {
			t.Fatalf("err = %v", err)
		}
		if len(es.Files()) != 0 {
			t.Errorf("staged after a refused delete: %v", es.Files())
		}
	})

	t.Run("delete without references", func(t *testing.T) {
		es := m.NewEditSet()
		defer es.Discard(ctx)
		if err := es.Stage(ctx, []Edit{{File: f.a, Symbol: "Unused", Action: SymbolDelete}}); err != nil {
			t.Fatal(err)
		}
		d := es.Diff()
		if !strings.Contains(d, "-func Unused() int {") || strings.Contains(d, "+") && strings.Contains(d, "+func") {
			t.Errorf("diff:\n%s", d)
		}
		c, err := es.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.Introduced != 0 {
			t.Errorf("introduced:\n%s", c.Render(f.dir))
		}
	})

	t.Run("bad edits lose nothing", func(t *testing.T) {
		es := m.NewEditSet()
		defer es.Discard(ctx)
		err := es.Stage(ctx, []Edit{{File: f.a, OldString: "return", NewString: "x"}})
		if err == nil || !strings.Contains(err.Error(), "occurs 4 times") || !strings.Contains(err.Error(), "lines 5, 9, 16, 21") {
			t.Errorf("err = %v", err)
		}
		err = es.Stage(ctx, []Edit{{File: f.a, OldString: "nowhere", NewString: "x"}})
		if err == nil || !strings.Contains(err.Error(), "does not occur") {
			t.Errorf("err = %v", err)
		}
		err = es.Stage(ctx, []Edit{{File: f.a, Symbol: "Nope", Action: SymbolReplace, Text: "x"}})
		if err == nil || !strings.Contains(err.Error(), `no symbol "Nope"`) || !strings.Contains(err.Error(), "Square.Area") {
			t.Errorf("err = %v", err)
		}
		// A batch whose last edit fails stages none of its edits, and the
		// servers are left with what they had: the staged text of b.go,
		// the disk's of a.go (which the batch's symbol edit had sent an
		// edited text of).
		if err := es.Stage(ctx, []Edit{{File: f.b, OldString: "doubles", NewString: "twice"}}); err != nil {
			t.Fatal(err)
		}
		stagedB, _ := m.serverText(f.b)
		body := "return 8"
		err = es.Stage(ctx, []Edit{
			{File: f.a, OldString: "adds one", NewString: "increments"},
			{File: f.a, Symbol: "Unused", Body: &body},
			{File: f.b, OldString: "nowhere", NewString: "x"},
		})
		if err == nil || !strings.Contains(err.Error(), "edit 3") {
			t.Fatalf("err = %v", err)
		}
		if got := es.Files(); len(got) != 1 || got[0] != f.b {
			t.Errorf("staged %v", got)
		}
		if txt, open := m.serverText(f.a); open && txt != fixtureA {
			t.Errorf("a.go left in its server as\n%s", txt)
		}
		if txt, _ := m.serverText(f.b); txt != stagedB || !strings.Contains(txt, "twice") {
			t.Errorf("b.go in its server:\n%s", txt)
		}
	})

	t.Run("a rename staged", func(t *testing.T) {
		p, err := m.Rename(ctx, Pos{Path: f.a, Line: 4, Symbol: "Add"}, "Plus")
		if err != nil {
			t.Fatal(err)
		}
		es := m.NewEditSet()
		defer es.Discard(ctx)
		if err := es.Stage(ctx, p.Edits()); err != nil {
			t.Fatal(err)
		}
		if got := es.Files(); len(got) != 3 {
			t.Errorf("staged %v", got)
		}
		c, err := es.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.Introduced != 0 || c.Resolved != 0 || !strings.Contains(c.Diff, "+func Plus(a, b int) int {") || !strings.Contains(c.Diff, "calc.Plus(1, 2)") {
			t.Errorf("the rename staged:\n%s%s", c.Render(f.dir), c.Diff)
		}
	})

	t.Run("a batch that breaks then fixes, applied", func(t *testing.T) {
		es := m.NewEditSet()
		edits := []Edit{
			{File: f.a, OldString: addSignature, NewString: "func Add(a, b, c int) int {\n\treturn a + b + c\n"},
			{File: f.a, OldString: "Add(x, 1)", NewString: "Add(x, 1, 0)"},
			{File: f.b, OldString: "Add(x, x)", NewString: "Add(x, x, 0)"},
			{File: f.c, OldString: "calc.Add(1, 2)", NewString: "calc.Add(1, 2, 0)"},
		}
		if err := es.Stage(ctx, edits[:1]); err != nil {
			t.Fatal(err)
		}
		c, err := es.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.Introduced != 3 {
			t.Errorf("broken:\n%s", c.Render(f.dir))
		}
		if err := es.Stage(ctx, edits[1:]); err != nil {
			t.Fatal(err)
		}
		c, err = es.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.Introduced != 0 || c.Resolved != 0 || c.Status != StatusComplete {
			t.Errorf("fixed:\n%s", c.Render(f.dir))
		}
		applied, err := es.Apply(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(applied.Written) != 3 || applied.Check.Introduced != 0 {
			t.Errorf("applied %+v\n%s", applied.Written, applied.Check.Render(f.dir))
		}
		for p, want := range map[string]string{f.a: "Add(x, 1, 0)", f.b: "Add(x, x, 0)", f.c: "calc.Add(1, 2, 0)"} {
			if b, _ := os.ReadFile(p); !strings.Contains(string(b), want) {
				t.Errorf("%s on disk:\n%s", p, b)
			}
		}
		for p, errs := range diskErrors(t, m, all...) {
			if len(errs) != 0 {
				t.Errorf("after apply, %s has errors %q", p, errs)
			}
		}
	})

	t.Run("apply refused when a file changed on disk", func(t *testing.T) {
		es := m.NewEditSet()
		defer es.Discard(ctx)
		if err := es.Stage(ctx, []Edit{{File: f.b, OldString: "doubles", NewString: "twice"}, {File: f.c, OldString: "sums", NewString: "adds"}}); err != nil {
			t.Fatal(err)
		}
		writeFile(t, f.c, strings.Replace(mustRead(t, f.c), "Sum sums", "Sum sums up", 1))
		sum := treeSum(t, f.dir)
		_, err := es.Apply(ctx, nil)
		if !errors.Is(err, ErrEditConflict) {
			t.Fatalf("err = %v", err)
		}
		if treeSum(t, f.dir) != sum {
			t.Error("a refused apply wrote")
		}
	})
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
