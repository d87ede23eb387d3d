//go:build linux

package lsp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// renameTree writes a module app whose go.mod replaces example.com/lib
// by ../lib, and returns top (holding app and lib).
//
//	app/main.go     calls lib.Greet and sub.Name
//	app/sub/sub.go  declares Name
//	lib/lib.go      declares Greet
func renameTree(t *testing.T) string {
	t.Helper()
	top := t.TempDir()
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real
	}
	for name, text := range map[string]string{
		"app/go.mod": "module example.com/app\n\ngo 1.22\n\nrequire example.com/lib v0.0.0\n\nreplace example.com/lib => ../lib\n",
		"app/main.go": "package main\n\nimport (\n\t\"example.com/app/sub\"\n\t\"example.com/lib\"\n)\n\n" +
			"func main() {\n\tprintln(lib.Greet(), sub.Name())\n}\n",
		"app/sub/sub.go": "package sub\n\n// Name is a name.\nfunc Name() string { return \"sub\" }\n",
		"lib/go.mod":     "module example.com/lib\n\ngo 1.22\n",
		"lib/lib.go":     "package lib\n\n// Greet greets.\nfunc Greet() string { return \"hello\" }\n",
	} {
		writeFile(t, filepath.Join(top, name), text)
	}
	return top
}

// snapshot reads every file under dir.
func snapshot(t *testing.T, dir string) map[string]string {
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

// sameTree fails unless dir holds exactly what before recorded.
func sameTree(t *testing.T, dir string, before map[string]string) {
	t.Helper()
	after := snapshot(t, dir)
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

// TestApplyRenameOutsideProject (issue 19, row 2): a rename whose edit
// reaches a file outside the project, through a module replaced by
// ../lib or because the project is a directory inside its module, is
// refused whole, naming the files outside; nothing is written anywhere.
func TestApplyRenameOutsideProject(t *testing.T) {
	top := renameTree(t)
	app := filepath.Join(top, "app")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	before := snapshot(t, top)

	t.Run("replace ../lib", func(t *testing.T) {
		m := navManager(t, GoplsConfig(goplsForTest(t), app), app, nil)
		p, err := m.Rename(ctx, pos(t, app, "main.go:9:Greet"), "Hello")
		if err != nil {
			t.Fatal(err)
		}
		lib := filepath.Join(top, "lib", "lib.go")
		if !proposes(p, lib) {
			t.Fatalf("gopls's rename does not reach ../lib (so this test shows nothing): %+v", p.Files)
		}
		res, err := m.ApplyRename(ctx, p, nil)
		if !errors.Is(err, ErrOutsideRoots) || res != nil || !strings.Contains(err.Error(), lib) ||
			strings.Contains(err.Error(), filepath.Join(app, "main.go")) {
			t.Fatalf("rename into ../lib: %+v, %v", res, err)
		}
		t.Log(err)
		sameTree(t, top, before)
		// Nor through a review: nothing is shown.
		_, err = m.ApplyRename(ctx, p, func(_ context.Context, e *FileEdit) (ApplyStatus, error) {
			t.Errorf("%s shown for review", e.Path)
			return ApplyRejected, nil
		})
		if !errors.Is(err, ErrOutsideRoots) {
			t.Errorf("review of a rename into ../lib: %v", err)
		}
		sameTree(t, top, before)
	})

	t.Run("project inside its module", func(t *testing.T) {
		sub := filepath.Join(app, "sub")
		m := navManager(t, GoplsConfig(goplsForTest(t), app), sub, nil)
		p, err := m.Rename(ctx, pos(t, sub, "sub.go:4:Name"), "Title")
		if err != nil {
			t.Fatal(err)
		}
		main := filepath.Join(app, "main.go")
		if !proposes(p, main) {
			t.Fatalf("the rename does not reach main.go: %+v", p.Files)
		}
		res, err := m.ApplyRename(ctx, p, nil)
		if !errors.Is(err, ErrOutsideRoots) || res != nil || !strings.Contains(err.Error(), main) {
			t.Fatalf("rename reaching outside the project: %+v, %v", res, err)
		}
		sameTree(t, top, before)
	})
}

func proposes(p *RenameProposal, path string) bool {
	for _, f := range p.Files {
		if f.Path == path {
			return true
		}
	}
	return false
}

// TestApplyRenameSymlinkSwap (issue 19, row 4): between the proposal and
// its apply, a project file is replaced by a symbolic link to a file
// outside the project with the same text. The outside file is never
// written: refused as outside the project and, with the project
// unconfined (Roots "/"), as another file than the one the rename was
// computed from.
func TestApplyRenameSymlinkSwap(t *testing.T) {
	spec := navSpecs()[0]
	for _, roots := range [][]string{nil, {"/"}} {
		dir := navFixture(t, spec.fixture)
		m := navManager(t, spec.config(t, dir), dir, &ManagerOptions{Roots: roots})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		p, err := m.Rename(ctx, pos(t, dir, "shapes.go:5:Area"), "Size")
		if err != nil {
			t.Fatal(err)
		}
		use := filepath.Join(dir, "use.go")
		outside := filepath.Join(t.TempDir(), "use.go")
		writeFile(t, outside, readFixture(t, dir, "use.go"))
		if err := os.Remove(use); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, use); err != nil {
			t.Fatal(err)
		}
		res, err := m.ApplyRename(ctx, p, nil)
		want := ErrOutsideRoots
		if roots != nil {
			want = ErrEditConflict
		}
		if !errors.Is(err, want) || res != nil || !strings.Contains(err.Error(), use) {
			t.Errorf("roots %v: apply through a swapped link: %+v, %v", roots, res, err)
		}
		t.Logf("roots %v: %v", roots, err)
		if readFixture(t, filepath.Dir(outside), "use.go") != readFixtureFile(t, "go", "use.go") {
			t.Errorf("roots %v: the file outside was written", roots)
		}
		if readFixture(t, dir, "shapes.go") != readFixtureFile(t, "go", "shapes.go") {
			t.Errorf("roots %v: shapes.go was written", roots)
		}
	}
}
