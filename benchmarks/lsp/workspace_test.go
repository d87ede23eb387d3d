package lsp

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/idebridge/idebridge/lsp"
)

// gopls returns the gopls to benchmark, or fails: a missing gopls must not
// look like a result.
func gopls(tb testing.TB) string {
	tb.Helper()
	p, err := lsp.FindGopls(nil)
	if err != nil {
		tb.Fatalf("gopls %s is needed: %v", lsp.GoplsVersion, err)
	}
	return p
}

// workspace is the benchmarks' Go module: a small package, plus a file
// that imports net/http so that type checking has real work to do.
type workspace struct {
	dir     string
	small   string // main.go of the small package
	nethttp string // server.go, importing net/http
	extra   []string
}

// The texts the benchmarks alternate between: each change flips a file
// between one type error and none.
var (
	smallTexts = [2]string{
		"package main\n\nfunc main() {\n\tvar n int = add(1, 2)\n\t_ = n\n}\n",
		"package main\n\nfunc main() {\n\tvar n int = \"three\"\n\t_ = n\n}\n",
	}
	httpTexts = [2]string{
		"package main\n\nimport \"net/http\"\n\nfunc serve() error {\n\treturn http.ListenAndServe(\"127.0.0.1:0\", nil)\n}\n",
		"package main\n\nimport \"net/http\"\n\nfunc serve() error {\n\treturn http.ListenAndServe(\"127.0.0.1:0\", 42)\n}\n",
	}
)

// newWorkspace writes the module, with n extra small files, into a
// temporary directory.
func newWorkspace(tb testing.TB, n int) *workspace {
	tb.Helper()
	dir := tb.TempDir()
	w := &workspace{dir: dir, small: filepath.Join(dir, "main.go"), nethttp: filepath.Join(dir, "server.go")}
	write := func(p, text string) {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	write(filepath.Join(dir, "go.mod"), "module example.com/bench\n\ngo 1.22\n")
	write(filepath.Join(dir, "add.go"), "package main\n\nfunc add(a, b int) int { return a + b }\n")
	write(w.small, smallTexts[0])
	write(w.nethttp, httpTexts[0])
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("extra%02d.go", i))
		write(p, fmt.Sprintf("package main\n\nfunc extra%02d(x int) int { return add(x, %d) }\n", i, i))
		w.extra = append(w.extra, p)
	}
	return w
}

// environ isolates gopls: its own cache, no network.
func environ(tb testing.TB) []string {
	return append(os.Environ(), "GOPLSCACHE="+tb.TempDir(), "GOPROXY=off", "GOFLAGS=-mod=mod")
}
