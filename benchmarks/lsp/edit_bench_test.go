package lsp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/lsp"
)

// The fixture of issue 21: calc/a.go declares Add, which a.go itself,
// calc/b.go (its package) and app/c.go (another package) call.
const (
	editA      = "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\n// Inc adds one.\nfunc Inc(x int) int { return Add(x, 1) }\n"
	editB      = "package calc\n\n// Twice doubles.\nfunc Twice(x int) int { return Add(x, x) }\n"
	editC      = "package app\n\nimport \"example.com/m/calc\"\n\n// Sum sums.\nfunc Sum() int { return calc.Add(1, 2) }\n"
	editOld    = "func Add(a, b int) int {\n\treturn a + b\n"
	editNew    = "func Add(a, b, c int) int {\n\treturn a + b + c\n"
	editBroken = "not enough arguments"
)

// BenchmarkEditCheckVsWrite compares, with one warm gopls, the two ways
// to learn what an edit of Add's signature breaks in A, B and C:
//
//   - check: EditSet.Stage and Check (nothing written; the dependents
//     found by the pipeline), then Discard (timed separately);
//   - write: writing a.go, syncing it (Open) and settling A, B and C side
//     by side, as the diagnostics tool does after an agent's write.
//
// Both on the MCP server's gopls settings (diagnosticsDelay 0,
// WaitForProgress), alternating in each iteration, with the tree put back
// and settled between them (untimed). It reports the medians and p90s in
// milliseconds, how many rounds the check caught the error in both B
// and C, and the bytes a check wrote (tree compared before and after).
func BenchmarkEditCheckVsWrite(b *testing.B) {
	dir := b.TempDir()
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	pa, pb, pc := filepath.Join(dir, "calc", "a.go"), filepath.Join(dir, "calc", "b.go"), filepath.Join(dir, "app", "c.go")
	write := func(p, text string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write(filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	write(pa, editA)
	write(pb, editB)
	write(pc, editC)
	cfg := lsp.GoplsConfig(gopls(b), dir)
	cfg.InitializationOptions = json.RawMessage(`{"verboseWorkDoneProgress":true,"diagnosticsDelay":"0s"}`)
	m, err := lsp.NewManager([]lsp.ServerConfig{cfg}, &lsp.ManagerOptions{ProjectDir: dir, Env: environ(b),
		SettleTimeout: time.Minute, WaitForProgress: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = m.Shutdown(ctx)
	})
	ctx := context.Background()
	all := []string{pa, pb, pc}
	settleAll := func() {
		var wg sync.WaitGroup
		for _, p := range all {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if res, err := m.Settle(ctx, p); err != nil || !res.Fresh {
					b.Errorf("settle %s: %+v %v", p, res, err)
				}
			}()
		}
		wg.Wait()
	}
	openAll := func() {
		for _, p := range all {
			if err := m.Open(ctx, p); err != nil {
				b.Fatal(err)
			}
		}
		settleAll()
	}
	openAll() // warm: the workspace loaded, the three files open
	tree := func() string {
		var s strings.Builder
		for _, p := range all {
			data, _ := os.ReadFile(p)
			s.Write(data)
		}
		return s.String()
	}
	breaks := func(ds []diag.Diagnostic) bool {
		for _, d := range ds {
			if d.Severity == diag.SeverityError && strings.Contains(d.Message, editBroken) {
				return true
			}
		}
		return false
	}
	var check, discard, wrote samples
	caught, written := 0, 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		before := tree()
		start := time.Now()
		es := m.NewEditSet()
		if err := es.Stage(ctx, []lsp.Edit{{File: pa, OldString: editOld, NewString: editNew}}); err != nil {
			b.Fatal(err)
		}
		c, err := es.Check(ctx)
		if err != nil {
			b.Fatal(err)
		}
		check = append(check, time.Since(start))
		start = time.Now()
		if err := es.Discard(ctx); err != nil {
			b.Fatal(err)
		}
		discard = append(discard, time.Since(start))
		got := 0
		for _, f := range c.Files {
			if (f.Path == pb || f.Path == pc) && breaks(f.Introduced) {
				got++
			}
		}
		if got == 2 {
			caught++
		}
		if after := tree(); after != before {
			written += len(after)
		}
		b.StopTimer()
		openAll() // the discard closed what the check opened
		b.StartTimer()

		start = time.Now()
		write(pa, strings.Replace(editA, editOld, editNew, 1))
		if err := m.Open(ctx, pa); err != nil {
			b.Fatal(err)
		}
		settleAll()
		wrote = append(wrote, time.Since(start))
		b.StopTimer()
		write(pa, editA)
		openAll()
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(ms(check.quantile(0.5)), "check-median-ms")
	b.ReportMetric(ms(check.quantile(0.9)), "check-p90-ms")
	b.ReportMetric(ms(discard.quantile(0.5)), "discard-median-ms")
	b.ReportMetric(ms(wrote.quantile(0.5)), "write-settle-median-ms")
	b.ReportMetric(ms(wrote.quantile(0.9)), "write-settle-p90-ms")
	b.ReportMetric(float64(caught), "rounds-B-and-C-caught")
	b.ReportMetric(float64(written), "bytes-written-by-check")
}

// BenchmarkEditCheckRepo is the same change on this repository's own code:
// a parameter added to internal/fileuri's FromPath, which files of lsp,
// idebridge and idebridge/ideserver call. Each round stages it on the
// checkout itself, checks it and discards it (one warm gopls on the
// whole module). It reports the median and p90 of the check in
// milliseconds, the files that reference FromPath (the server's
// references, asked once), how many of them the check found broken in the
// last round, and the bytes the rounds wrote to those files (their
// contents compared before and after).
func BenchmarkEditCheckRepo(b *testing.B) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		b.Fatal(err)
	}
	target := filepath.Join(root, "internal", "fileuri", "fileuri.go")
	src, err := os.ReadFile(target)
	if err != nil {
		b.Fatal(err)
	}
	const old = "func FromPath(p string) string {"
	if !strings.Contains(string(src), old) {
		b.Fatalf("%s no longer declares %q", target, old)
	}
	cfg := lsp.GoplsConfig(gopls(b), root)
	cfg.InitializationOptions = json.RawMessage(`{"verboseWorkDoneProgress":true,"diagnosticsDelay":"0s"}`)
	m, err := lsp.NewManager([]lsp.ServerConfig{cfg}, &lsp.ManagerOptions{ProjectDir: root, Env: environ(b),
		SettleTimeout: 2 * time.Minute, WaitForProgress: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = m.Shutdown(ctx)
	})
	ctx := context.Background()
	line := strings.Count(string(src[:strings.Index(string(src), old)]), "\n") + 1
	refs, err := m.References(ctx, lsp.Pos{Path: target, Line: line, Symbol: "FromPath"}, false)
	if err != nil {
		b.Fatal(err)
	}
	users := map[string]bool{}
	for _, l := range refs.Locations {
		if l.Path != target {
			users[l.Path] = true
		}
	}
	contents := func() string {
		var s strings.Builder
		for _, p := range append([]string{target}, keys(users)...) {
			data, _ := os.ReadFile(p)
			s.Write(data)
		}
		return s.String()
	}
	var check samples
	caught, written := 0, 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		before := contents()
		es := m.NewEditSet()
		start := time.Now()
		if err := es.Stage(ctx, []lsp.Edit{{File: target, OldString: old, NewString: "func FromPath(p string, strict bool) string {"}}); err != nil {
			b.Fatal(err)
		}
		c, err := es.Check(ctx)
		if err != nil {
			b.Fatal(err)
		}
		check = append(check, time.Since(start))
		caught = 0
		for _, f := range c.Files {
			if users[f.Path] && len(f.Introduced) > 0 {
				caught++
			}
		}
		b.StopTimer()
		if err := es.Discard(ctx); err != nil {
			b.Fatal(err)
		}
		if after := contents(); after != before {
			written += len(after)
		}
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(ms(check.quantile(0.5)), "check-median-ms")
	b.ReportMetric(ms(check.quantile(0.9)), "check-p90-ms")
	b.ReportMetric(float64(len(users)), "files-referencing")
	b.ReportMetric(float64(caught), "files-caught")
	b.ReportMetric(float64(written), "bytes-written-by-check")
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
