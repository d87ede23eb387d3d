//go:build linux

package lsp

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGoplsSettleAfterAnotherDocumentsChange changes two documents of one
// gopls in a row, as a caller renaming a function does: the user first
// (it calls the new name), then the file that defines it. gopls can
// publish for the user's current version a set it computed before it took
// in the second change ("undefined: calc.Plus"), after that change was
// sent; Settle of the user must not take that set as current.
func TestGoplsSettleAfterAnotherDocumentsChange(t *testing.T) {
	gopls := goplsForTest(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	calcText := func(name string) string {
		return "package calc\n\n// " + name + " adds.\nfunc " + name + "(a, b int) int { return a + b }\n"
	}
	mainText := func(name string) string {
		return "package main\n\nimport \"example.com/m/calc\"\n\nfunc main() { println(calc." + name + "(1, 2)) }\n"
	}
	calc := filepath.Join(dir, "calc", "calc.go")
	if err := os.MkdirAll(filepath.Dir(calc), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, calc, calcText("F0"))
	main := filepath.Join(dir, "main.go")
	writeFile(t, main, mainText("F0"))
	cfg := GoplsConfig(gopls, dir)
	m := newManager(t, []ServerConfig{cfg}, &ManagerOptions{
		ProjectDir: dir, Env: goplsEnviron(t), SettleTimeout: time.Minute,
	})
	ctx := context.Background()
	for _, p := range []string{main, calc} {
		if err := m.Open(ctx, p); err != nil {
			t.Fatal(err)
		}
		if res := settle(t, m, p); !res.Fresh {
			t.Fatalf("settle %s: %+v", p, res)
		}
	}
	runs := 12
	if s := os.Getenv("IDEBRIDGE_CROSS_RUNS"); s != "" {
		runs, _ = strconv.Atoi(s)
	}
	stale := 0
	for i := 1; i <= runs; i++ {
		name := "F" + strconv.Itoa(i)
		if err := m.Change(ctx, main, mainText(name)); err != nil {
			t.Fatal(err)
		}
		if err := m.Change(ctx, calc, calcText(name)); err != nil {
			t.Fatal(err)
		}
		res := settle(t, m, main)
		set, _, _ := m.currentSet(main)
		var msgs []string
		for _, d := range set {
			msgs = append(msgs, d.Message)
		}
		if !res.Fresh || len(set) != 0 {
			stale++
			t.Errorf("run %d: settle of main.go after calc.go's change: %s (%s), set %q", i, res.Freshness, res.Reason, msgs)
		}
		if res := settle(t, m, calc); !res.Fresh {
			t.Fatalf("settle %s: %+v", calc, res)
		}
	}
	if stale > 0 {
		t.Logf("%d of %d runs stale", stale, runs)
	}
}

// TestTypeScriptChangeLeavingAnEmptySet: typescript-language-server
// republishes a non-empty set after every change, even one that leaves
// it the same, but publishes nothing when a document's set stays empty
// (docs/LSP-SERVERS.md). Settle says so, partial, once the server has been
// silent for well past the time it took to answer its changes, not at the
// timeout.
func TestTypeScriptChangeLeavingAnEmptySet(t *testing.T) {
	dir := t.TempDir()
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	a := filepath.Join(dir, "a.ts")
	writeFile(t, a, "export const y = 1;\n")
	cfg := NewServerConfig("typescript", npmServer(t, "typescript-language-server"), []string{"--stdio"}, map[string]string{".ts": "typescript"})
	m := newManager(t, []ServerConfig{cfg}, &ManagerOptions{ProjectDir: dir, SettleTimeout: time.Minute})
	ctx := context.Background()
	if err := m.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	if res := settle(t, m, a); !res.Fresh {
		t.Fatalf("settle after open: %+v", res)
	}
	for _, text := range []string{"export const y: string = 1;\n", "export const y = 2;\n"} {
		if err := m.Change(ctx, a, text); err != nil {
			t.Fatal(err)
		}
		if res := settle(t, m, a); !res.Fresh {
			t.Fatalf("settle after %q: %+v", text, res)
		}
	}
	if err := m.Change(ctx, a, "export const y = 3;\n"); err != nil {
		t.Fatal(err)
	}
	res := settle(t, m, a)
	t.Logf("after %v: %s", res.Elapsed, res.Reason)
	if res.Fresh || res.Status != StatusPartial || !strings.Contains(res.Reason, "may not republish a set that did not change") {
		t.Errorf("settle after a change that leaves the set empty: %+v", res)
	}
	if set, _, _ := m.currentSet(a); len(set) != 0 {
		t.Errorf("set %+v", set)
	}
}
