//go:build linux

package lsp

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestResendAnswered: a document sent again unchanged as a new version
// (what a check does to the files it did not change, so that their
// diagnostics are computed after the staged changes) is answered for that
// version by every server: clangd, gopls, pyright and
// typescript-language-server, three times over.
func TestResendAnswered(t *testing.T) {
	type srv struct {
		name  string
		cfg   func(dir string) ServerConfig
		files map[string]string
		open  string
		env   []string
	}
	clangd, err := exec.LookPath("clangd")
	if err != nil {
		t.Fatalf("clangd not found: run `make lsp-servers` (it installs Debian's clangd): %v", err)
	}
	servers := []srv{
		{name: "clangd", cfg: func(dir string) ServerConfig {
			return NewServerConfig("clangd", clangd, nil, map[string]string{".c": "c", ".h": "c"})
		}, files: map[string]string{"a.h": "int add(int a, int b);\n", "b.c": "#include \"a.h\"\nint twice(int x) { return add(x, x); }\n"}, open: "b.c"},
		{name: "gopls", cfg: func(dir string) ServerConfig { return GoplsConfig(goplsForTest(t), dir) },
			files: map[string]string{"go.mod": "module m\n\ngo 1.22\n", "a.go": "package m\n\nfunc Add(a, b int) int { return a + b }\n", "b.go": "package m\n\nfunc Twice(x int) int { return Add(x, x) }\n"}, open: "b.go", env: goplsEnviron(t)},
		{name: "pyright", cfg: func(dir string) ServerConfig {
			return NewServerConfig("pyright", npmServer(t, "pyright-langserver"), []string{"--stdio"}, map[string]string{".py": "python"})
		}, files: map[string]string{"a.py": "def add(a: int, b: int) -> int:\n    return a + b\n", "b.py": "from a import add\n\nprint(add(1, 2))\n"}, open: "b.py"},
		{name: "typescript", cfg: func(dir string) ServerConfig {
			return NewServerConfig("typescript", npmServer(t, "typescript-language-server"), []string{"--stdio"}, map[string]string{".ts": "typescript"})
		}, files: map[string]string{"tsconfig.json": `{"compilerOptions": {"strict": true}}`, "a.ts": "export function add(a: number, b: number): number { return a + b; }\n", "b.ts": "import { add } from \"./a\";\nconsole.log(add(1, 2));\n"}, open: "b.ts"},
	}
	for _, sv := range servers {
		t.Run(sv.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, txt := range sv.files {
				writeFile(t, filepath.Join(dir, n), txt)
			}
			cfg := sv.cfg(dir)
			cfg.ProjectDir = dir
			m := newManager(t, []ServerConfig{cfg}, &ManagerOptions{ProjectDir: dir, Env: sv.env, SettleTimeout: 10 * time.Second})
			ctx := context.Background()
			p := filepath.Join(dir, sv.open)
			if err := m.Open(ctx, p); err != nil {
				t.Fatal(err)
			}
			if r, err := m.Settle(ctx, p); err != nil {
				t.Fatal(r, err)
			}
			for i := range 3 {
				start := time.Now()
				if err := m.resend(ctx, p); err != nil {
					t.Fatal(err)
				}
				r, err := m.Settle(ctx, p)
				t.Logf("resend %d: %s (%s) after %v", i+1, r.Status, r.Reason, time.Since(start).Round(time.Millisecond))
				if err != nil || r.Status != StatusComplete {
					t.Errorf("resend %d: %s (%s), %v", i+1, r.Status, r.Reason, err)
				}
				if ds, _, _ := m.currentSet(p); len(errorsIn(ds)) != 0 {
					t.Errorf("resend %d: errors %q", i+1, errorsIn(ds))
				}
			}
		})
	}
}
