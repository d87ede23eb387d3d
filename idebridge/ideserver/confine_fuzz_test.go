package ideserver

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/idebridge/idebridge/mcp"
)

// FuzzResolvePath checks the confinement's promise on any argument: either
// a clear -32602 error, or a clean absolute path whose resolved form (by
// the standard library, when the file exists) lies inside the workspace.
func FuzzResolvePath(f *testing.F) {
	root := f.TempDir()
	ws, out := filepath.Join(root, "ws"), filepath.Join(root, "out")
	for _, d := range []string{filepath.Join(ws, "sub"), out} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			f.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(ws, "in.txt"), filepath.Join(out, "secret.txt")} {
		if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
			f.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"link-out": out, "link-in": "in.txt", "loop": "loop", "dangling": filepath.Join(out, "none"),
	} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			f.Fatal(err)
		}
	}
	srv, err := New(&Options{WorkspaceFolders: []string{ws}, NoLockfile: true})
	if err != nil {
		f.Fatal(err)
	}
	realWS, err := filepath.EvalSymlinks(ws)
	if err != nil {
		f.Fatal(err)
	}
	// Seeds that name the temporary workspace; the others are under
	// testdata/fuzz/FuzzResolvePath.
	for _, s := range []string{"in.txt", "sub/../in.txt", "link-in",
		"file://" + ws + "/%2e%2e/out/secret.txt", "file://otherhost" + ws + "/in.txt", "file://localhost" + ws + "/in.txt",
		ws, "/", "", "file:", "file:relative"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		got, err := srv.resolvePath(arg)
		if err != nil {
			var e *mcp.Error
			if !errors.As(err, &e) || e.Code != mcp.CodeInvalidParams {
				t.Fatalf("resolvePath(%q): %v, want a -32602 *mcp.Error", arg, err)
			}
			return
		}
		if !filepath.IsAbs(got) || filepath.Clean(got) != got {
			t.Fatalf("resolvePath(%q) = %q, not clean and absolute", arg, got)
		}
		if real, err := filepath.EvalSymlinks(got); err == nil && !within(realWS, real) {
			t.Fatalf("resolvePath(%q) = %q, which resolves to %q outside %s", arg, got, real, realWS)
		}
		real, err := realPath(got)
		if err != nil || !within(realWS, real) {
			t.Fatalf("resolvePath(%q) = %q, whose real path %q (%v) is outside %s", arg, got, real, err, realWS)
		}
	})
}
