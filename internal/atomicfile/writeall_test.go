package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// files writes name → text under dir and returns each path's base state.
func files(t *testing.T, dir string, texts map[string]string) map[string]*State {
	t.Helper()
	out := map[string]*State{}
	for name, text := range texts {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o640); err != nil {
			t.Fatal(err)
		}
		_, st, err := Read(p)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = st
	}
	return out
}

// wantText fails unless the file at p holds text.
func wantText(t *testing.T, p, text string) {
	t.Helper()
	got, err := os.ReadFile(p)
	if err != nil || string(got) != text {
		t.Errorf("%s holds %q (%v), want %q", p, got, err, text)
	}
}

// noStaged fails if a staged file is left under dir.
func noStaged(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), tempPrefix) {
			t.Errorf("staged file left: %s", p)
		}
		return nil
	})
}

func TestWriteAll(t *testing.T) {
	dir := t.TempDir()
	base := files(t, dir, map[string]string{"a.go": "a\n", "sub/b.go": "b\n"})
	changes := []Change{
		{Path: filepath.Join(dir, "a.go"), Data: []byte("A\n"), Base: base["a.go"]},
		{Path: filepath.Join(dir, "sub/b.go"), Data: []byte("B\n"), Base: base["sub/b.go"]},
		{Path: filepath.Join(dir, "sub/new.go"), Data: []byte("N\n"), Base: &State{Path: filepath.Join(dir, "sub/new.go")}},
	}
	if err := WriteAll(changes, &Options{Roots: []string{dir}}); err != nil {
		t.Fatal(err)
	}
	wantText(t, filepath.Join(dir, "a.go"), "A\n")
	wantText(t, filepath.Join(dir, "sub/b.go"), "B\n")
	wantText(t, filepath.Join(dir, "sub/new.go"), "N\n")
	if info, err := os.Stat(filepath.Join(dir, "a.go")); err != nil || info.Mode().Perm() != 0o640 {
		t.Errorf("mode not kept: %v %v", info.Mode(), err)
	}
	noStaged(t, dir)
	// The same changes again: every base is stale now, the created file
	// exists.
	err := WriteAll(changes, nil)
	var we *WriteError
	if !errors.As(err, &we) || !errors.Is(err, ErrConflict) || we.Path != changes[0].Path {
		t.Fatalf("rewrite against stale bases: %v", err)
	}
}

// TestWriteAllBaseChanged: one file of three changed after the edit was
// computed; none is written, and the error names that file.
func TestWriteAllBaseChanged(t *testing.T) {
	dir := t.TempDir()
	base := files(t, dir, map[string]string{"a": "a\n", "b": "b\n", "c": "c\n"})
	if err := os.WriteFile(filepath.Join(dir, "b"), []byte("b changed\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	var changes []Change
	for _, n := range []string{"a", "b", "c"} {
		changes = append(changes, Change{Path: filepath.Join(dir, n), Data: []byte(strings.ToUpper(n)), Base: base[n]})
	}
	err := WriteAll(changes, nil)
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Path != filepath.Join(dir, "b") || !strings.Contains(err.Error(), "none of the 3 files was written") {
		t.Fatalf("WriteAll with a stale base: %v", err)
	}
	wantText(t, filepath.Join(dir, "a"), "a\n")
	wantText(t, filepath.Join(dir, "b"), "b changed\n")
	wantText(t, filepath.Join(dir, "c"), "c\n")
	noStaged(t, dir)
}

// TestWriteAllOutsideRoots: a file outside the roots, named directly or
// through a symbolic link, refuses the whole write.
func TestWriteAllOutsideRoots(t *testing.T) {
	top := t.TempDir()
	proj, out := filepath.Join(top, "proj"), filepath.Join(top, "lib")
	base := files(t, proj, map[string]string{"a.go": "a\n"})
	outBase := files(t, out, map[string]string{"lib.go": "lib\n"})
	if err := os.Symlink(out, filepath.Join(proj, "vendored")); err != nil {
		t.Fatal(err)
	}
	changes := []Change{
		{Path: filepath.Join(proj, "a.go"), Data: []byte("A\n"), Base: base["a.go"]},
		{Path: filepath.Join(proj, "vendored", "lib.go"), Data: []byte("LIB\n"), Base: outBase["lib.go"]},
		{Path: filepath.Join(proj, "..", "lib", "other.go"), Data: []byte("new\n")},
	}
	err := WriteAll(changes, &Options{Roots: []string{proj}})
	var oe *OutsideError
	if !errors.As(err, &oe) || !errors.Is(err, ErrOutside) || len(oe.Paths) != 2 ||
		!strings.Contains(oe.Paths[0], filepath.Join(proj, "vendored", "lib.go")) || !strings.Contains(oe.Paths[1], filepath.Join(out, "other.go")) {
		t.Fatalf("outside files: %v", err)
	}
	wantText(t, filepath.Join(proj, "a.go"), "a\n")
	wantText(t, filepath.Join(out, "lib.go"), "lib\n")
	if _, err := os.Lstat(filepath.Join(out, "other.go")); err == nil {
		t.Error("a file was created outside the roots")
	}
	// Without the outside files it is written.
	if err := WriteAll(changes[:1], &Options{Roots: []string{proj}}); err != nil {
		t.Fatal(err)
	}
	wantText(t, filepath.Join(proj, "a.go"), "A\n")
}

// TestWriteAllSymlinkSwap: between the edit's proposal and its write, the
// file is replaced by a symbolic link to a file elsewhere with the same
// text. The file written must be the file checked: the write is refused,
// and the file elsewhere is untouched.
func TestWriteAllSymlinkSwap(t *testing.T) {
	top := t.TempDir()
	proj, out := filepath.Join(top, "proj"), filepath.Join(top, "elsewhere")
	base := files(t, proj, map[string]string{"a.go": "same\n", "b.go": "b\n"})
	files(t, out, map[string]string{"secret.go": "same\n"})
	a := filepath.Join(proj, "a.go")
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, "secret.go"), a); err != nil {
		t.Fatal(err)
	}
	changes := []Change{
		{Path: filepath.Join(proj, "b.go"), Data: []byte("B\n"), Base: base["b.go"]},
		{Path: a, Data: []byte("written\n"), Base: base["a.go"]},
	}
	for _, opts := range []*Options{nil, {Roots: []string{proj}}} {
		err := WriteAll(changes, opts)
		if err == nil {
			t.Fatal("a swapped file was written")
		}
		if opts == nil && !errors.Is(err, ErrConflict) || opts != nil && !errors.Is(err, ErrOutside) {
			t.Errorf("swapped file (roots %v): %v", opts, err)
		}
		t.Logf("roots %v: %v", opts, err)
		wantText(t, filepath.Join(out, "secret.go"), "same\n")
		wantText(t, filepath.Join(proj, "b.go"), "b\n")
		// Write, the one-file case, refuses it too.
		if err := Write(a, []byte("written\n"), base["a.go"]); !errors.Is(err, ErrConflict) {
			t.Errorf("Write through the swapped link: %v", err)
		}
		wantText(t, filepath.Join(out, "secret.go"), "same\n")
	}
	noStaged(t, top)
}
