//go:build linux

package lsp

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEditSetPyright: the pipeline on pyright, a server of another
// language that publishes without versions: a function's signature
// changed in one module breaks its caller in another directory, which the check
// finds; a body replaced by name path in Python's indented form; the
// discard leaves the disk's diagnostics.
func TestEditSetPyright(t *testing.T) {
	dir := t.TempDir()
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	// use.py lies in another directory: only the server's references
	// make it a dependent.
	a, b := filepath.Join(dir, "shapes.py"), filepath.Join(dir, "app", "use.py")
	writeFile(t, a, "class Square:\n    def __init__(self, w: int) -> None:\n        self.w = w\n\n    def area(self) -> int:\n        return self.w * self.w\n\n\ndef add(a: int, b: int) -> int:\n    return a + b\n")
	writeFile(t, b, "from shapes import Square, add\n\nprint(add(1, 2), Square(3).area())\n")
	cfg := NewServerConfig("pyright", npmServer(t, "pyright-langserver"), []string{"--stdio"}, map[string]string{".py": "python"})
	cfg.ProjectDir = dir
	m := newManager(t, []ServerConfig{cfg}, &ManagerOptions{ProjectDir: dir, SettleTimeout: time.Minute})
	ctx := context.Background()
	sum := treeSum(t, dir)

	es := m.NewEditSet()
	if err := es.Stage(ctx, []Edit{{File: a, OldString: "def add(a: int, b: int) -> int:\n    return a + b", NewString: "def add(a: int, b: int, c: int) -> int:\n    return a + b + c"}}); err != nil {
		t.Fatal(err)
	}
	c, err := es.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("check:\n%s", c.Render(dir))
	fc := fileCheck(c, b)
	if fc == nil || fc.Edited {
		t.Fatalf("app/use.py not checked as a dependent: %+v", c.Files)
	}
	if got := errorsIn(fc.Introduced); len(got) != 1 || !strings.Contains(got[0], `"c"`) {
		t.Errorf("use.py: introduced %q", got)
	}
	if fc.Status == StatusUnknown || fc.Status == StatusServerDown {
		t.Errorf("use.py: status %s (%s)", fc.Status, fc.Reason)
	}
	body := "return self.w * self.w * 2"
	if err := es.Stage(ctx, []Edit{{File: a, Symbol: "Square.area", Body: &body}}); err != nil {
		t.Fatal(err)
	}
	if d := es.Diff(); !strings.Contains(d, "-        return self.w * self.w\n+        return self.w * self.w * 2\n") {
		t.Errorf("diff:\n%s", d)
	}
	if err := es.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	if treeSum(t, dir) != sum {
		t.Fatal("the tree was written")
	}
	for p, errs := range diskErrors(t, m, a, b) {
		if len(errs) != 0 {
			t.Errorf("after discard, %s has errors %q", p, errs)
		}
	}
}

// TestEditSetTypeScript: the pipeline on typescript-language-server
// (tsserver behind it; publishes without versions): a function's
// signature changed in one module breaks its caller in a module of
// another directory, which the server's references find; a method's body
// replaced by name path; the discard leaves the disk's diagnostics. The
// edit also brings an error into its own file: this server publishes
// nothing for a file whose set stays empty, and without a publish Settle
// cannot know the set is current (partial: once the server has been
// silent for well past the time it takes to answer a change).
func TestEditSetTypeScript(t *testing.T) {
	dir := t.TempDir()
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	a, b := filepath.Join(dir, "src", "shapes.ts"), filepath.Join(dir, "app", "use.ts")
	writeFile(t, filepath.Join(dir, "tsconfig.json"), `{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"}, "include": ["src", "app"]}`+"\n")
	writeFile(t, a, "export class Square {\n  constructor(public w: number) {}\n  area(): number {\n    return this.w * this.w;\n  }\n}\n\nexport function add(a: number, b: number): number {\n  return a + b;\n}\n")
	writeFile(t, b, "import { Square, add } from \"../src/shapes\";\n\nconsole.log(add(1, 2), new Square(3).area());\n")
	cfg := NewServerConfig("typescript", npmServer(t, "typescript-language-server"), []string{"--stdio"}, map[string]string{".ts": "typescript"})
	cfg.ProjectDir = dir
	m := newManager(t, []ServerConfig{cfg}, &ManagerOptions{ProjectDir: dir, SettleTimeout: 30 * time.Second})
	ctx := context.Background()
	// The server loads the project on the first open: the caller's file is
	// open, as an agent's editor session would have it.
	for p, errs := range diskErrors(t, m, a, b) {
		if len(errs) != 0 {
			t.Fatalf("%s has errors on disk: %q", p, errs)
		}
	}
	sum := treeSum(t, dir)

	es := m.NewEditSet()
	if err := es.Stage(ctx, []Edit{{File: a, OldString: "export function add(a: number, b: number): number {\n  return a + b;", NewString: "export function add(a: number, b: number, c: number): number {\n  return a + b + c + scale;"}}); err != nil {
		t.Fatal(err)
	}
	c, err := es.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("check:\n%s", c.Render(dir))
	if got := errorsIn(fileCheck(c, a).Introduced); len(got) != 1 || !strings.Contains(got[0], "Cannot find name 'scale'") {
		t.Errorf("shapes.ts: introduced %q", got)
	}
	fc := fileCheck(c, b)
	if fc == nil || fc.Edited {
		t.Fatalf("app/use.ts not checked as a dependent: %+v", c.Files)
	}
	if got := errorsIn(fc.Introduced); len(got) != 1 || !strings.Contains(got[0], "Expected 3 arguments, but got 2") {
		t.Errorf("use.ts: introduced %q", got)
	}
	if fc.Status == StatusUnknown || fc.Status == StatusServerDown {
		t.Errorf("use.ts: status %s (%s)", fc.Status, fc.Reason)
	}
	body := "return this.w * this.w * 2;"
	if err := es.Stage(ctx, []Edit{{File: a, Symbol: "Square.area", Body: &body}}); err != nil {
		t.Fatal(err)
	}
	if d := es.Diff(); !strings.Contains(d, "-    return this.w * this.w;\n+    return this.w * this.w * 2;\n") {
		t.Errorf("diff:\n%s", d)
	}
	if err := es.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	if treeSum(t, dir) != sum {
		t.Fatal("the tree was written")
	}
	for p, errs := range diskErrors(t, m, a, b) {
		if len(errs) != 0 {
			t.Errorf("after discard, %s has errors %q", p, errs)
		}
	}
}

// TestEditSetClangd: the pipeline on clangd, where a header is what
// other files depend on: a function declared in a.h gains a parameter,
// and b.c, which includes a.h and calls the function, is broken; the
// error is found, with status complete. c.c, in the same directory, does
// not include a.h: clangd does not rebuild it, and does not publish again
// for a document re-sent with the text it has, so the check must make it
// current another way (it reopens it), or it stays partial. The discard
// leaves the disk's diagnostics.
func TestEditSetClangd(t *testing.T) {
	clangd, err := exec.LookPath("clangd")
	if err != nil {
		t.Fatalf("clangd not found: run `make lsp-servers` (it installs Debian's clangd): %v", err)
	}
	dir := t.TempDir()
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	h, a, b := filepath.Join(dir, "a.h"), filepath.Join(dir, "a.c"), filepath.Join(dir, "b.c")
	writeFile(t, h, "#ifndef A_H\n#define A_H\n\nint add(int a, int b);\n\n#endif\n")
	writeFile(t, a, "#include \"a.h\"\n\nint add(int a, int b) { return a + b; }\n")
	writeFile(t, b, "#include \"a.h\"\n\nint twice(int x) { return add(x, x); }\n")
	other := filepath.Join(dir, "c.c")
	writeFile(t, other, "int one(void) { return 1; }\n")
	var entries []string
	for _, f := range []string{"a.c", "b.c", "c.c"} {
		entries = append(entries, fmt.Sprintf(`{"directory": %q, "file": %q, "arguments": ["clang", "-std=c11", "-c", %q]}`, dir, filepath.Join(dir, f), f))
	}
	writeFile(t, filepath.Join(dir, "compile_commands.json"), "[\n"+strings.Join(entries, ",\n")+"\n]\n")
	// clangd reads the headers a file includes from disk unless told to
	// use the open (unsaved) ones: a staged header reaches b.c only so.
	cfg := NewServerConfig("clangd", clangd, []string{"--use-dirty-headers"}, map[string]string{".c": "c", ".h": "c"})
	cfg.ProjectDir = dir
	m := newManager(t, []ServerConfig{cfg}, &ManagerOptions{ProjectDir: dir, SettleTimeout: 30 * time.Second})
	ctx := context.Background()
	// The caller is open, as an agent's editor session would have it.
	for p, errs := range diskErrors(t, m, b) {
		if len(errs) != 0 {
			t.Fatalf("%s has errors on disk: %q", p, errs)
		}
	}
	// clangd's index writes under .cache: the sources are what a check
	// must leave alone.
	sources := func() string { return mustRead(t, h) + mustRead(t, a) + mustRead(t, b) }
	sum := sources()

	es := m.NewEditSet()
	if err := es.Stage(ctx, []Edit{{File: h, OldString: "int add(int a, int b);", NewString: "int add(int a, int b, int c);"}}); err != nil {
		t.Fatal(err)
	}
	c, err := es.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("check:\n%s", c.Render(dir))
	fc := fileCheck(c, b)
	if fc == nil || fc.Edited {
		t.Fatalf("b.c not checked as a dependent: %+v", c.Files)
	}
	if got := errorsIn(fc.Introduced); len(got) != 1 || !strings.Contains(got[0], "Too few arguments") {
		t.Errorf("b.c: introduced %q", got)
	}
	for _, f := range c.Files {
		if f.Status != StatusComplete {
			t.Errorf("%s: status %s (%s)", f.Path, f.Status, f.Reason)
		}
	}
	if fileCheck(c, other) == nil || c.Status != StatusComplete {
		t.Errorf("c.c not checked, or the check is %s", c.Status)
	}
	if err := es.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	if sources() != sum {
		t.Fatal("a source was written")
	}
	for p, errs := range diskErrors(t, m, h, b) {
		if len(errs) != 0 {
			t.Errorf("after discard, %s has errors %q", p, errs)
		}
	}
}
