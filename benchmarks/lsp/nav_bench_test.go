package lsp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/idebridge/idebridge/lsp"
)

// Navigation on warm gopls: each operation through the library (Manager:
// the file brought up to date with the disk, the place resolved, the
// answer's columns converted and its source lines read) and through the
// raw jsonrpc2 client (the request with a precomputed position, its result
// decoded into json.RawMessage), side by side on the same workspace, two
// gopls processes, alternating order.

// navWorkspace copies the library's navigation fixture
// (lsp/testdata/nav/go).
func navWorkspace(tb testing.TB) string {
	tb.Helper()
	return copyTestdata(tb, "nav", "go")
}

// navOp is one operation: how the library asks, and the raw request.
type navOp struct {
	name string
	lib  func(ctx context.Context, m *lsp.Manager, dir string) (lsp.NavResult, error)
	// method and params of the raw request; file is the document.
	method string
	file   string
	params func(uri string) map[string]any
	// count returns how many results a raw answer holds, to check that
	// both clients do the same work.
	count func(raw json.RawMessage) int
}

// at0 is at for a line and column that are the same in characters and
// UTF-16 (no character outside the BMP before them).
func at0(uri string, line, char int) map[string]any { return at(uri, line, char) }

func at(uri string, line, char int) map[string]any {
	return map[string]any{"textDocument": map[string]string{"uri": uri}, "position": map[string]int{"line": line, "character": char}}
}

func with(m map[string]any, k string, v any) map[string]any {
	m[k] = v
	return m
}

func countArray(raw json.RawMessage) int {
	var a []json.RawMessage
	if json.Unmarshal(raw, &a) != nil {
		return -1
	}
	return len(a)
}

func navOps() []navOp {
	pos := func(dir, file string, line int, sym string) lsp.Pos {
		return lsp.Pos{Path: filepath.Join(dir, file), Line: line, Symbol: sym}
	}
	return []navOp{
		{name: "definition", file: "use.go", method: "textDocument/definition",
			lib: func(ctx context.Context, m *lsp.Manager, dir string) (lsp.NavResult, error) {
				return m.Definition(ctx, pos(dir, "use.go", 7, "Area"))
			},
			params: func(u string) map[string]any { return at(u, 6, 20) }, count: countArray},
		{name: "references", file: "use.go", method: "textDocument/references",
			lib: func(ctx context.Context, m *lsp.Manager, dir string) (lsp.NavResult, error) {
				return m.References(ctx, lsp.Pos{Path: filepath.Join(dir, "use.go"), Line: 7, Symbol: "total", Occurrence: 2}, true)
			},
			params: func(u string) map[string]any {
				return with(at(u, 6, 10), "context", map[string]bool{"includeDeclaration": true})
			}, count: countArray},
		{name: "hover", file: "use.go", method: "textDocument/hover",
			lib: func(ctx context.Context, m *lsp.Manager, dir string) (lsp.NavResult, error) {
				return m.Hover(ctx, lsp.Pos{Path: filepath.Join(dir, "use.go"), Line: 15, Column: 22})
			},
			// Column 22 in characters is UTF-16 unit 23 (0-based): two
			// emoji before it.
			params: func(u string) map[string]any { return at(u, 14, 23) },
			count: func(raw json.RawMessage) int {
				if strings.Contains(string(raw), "func Total") {
					return 1
				}
				return 0
			}},
		{name: "implementation", file: "shapes.go", method: "textDocument/implementation",
			lib: func(ctx context.Context, m *lsp.Manager, dir string) (lsp.NavResult, error) {
				return m.Implementation(ctx, pos(dir, "shapes.go", 5, "Area"))
			},
			params: func(u string) map[string]any { return at(u, 4, 1) }, count: countArray},
		{name: "documentSymbols", file: "shapes.go", method: "textDocument/documentSymbol",
			lib: func(ctx context.Context, m *lsp.Manager, dir string) (lsp.NavResult, error) {
				return m.DocumentSymbols(ctx, filepath.Join(dir, "shapes.go"))
			},
			params: func(u string) map[string]any { return map[string]any{"textDocument": map[string]string{"uri": u}} },
			count:  countArray},
		{name: "workspaceSymbols", file: "shapes.go", method: "workspace/symbol",
			lib: func(ctx context.Context, m *lsp.Manager, dir string) (lsp.NavResult, error) {
				return m.WorkspaceSymbols(ctx, "Area", filepath.Join(dir, "shapes.go"))
			},
			params: func(string) map[string]any { return map[string]any{"query": "Area"} }, count: countArray},
		{name: "prepareCallHierarchy", file: "use.go", method: "textDocument/prepareCallHierarchy",
			lib: func(ctx context.Context, m *lsp.Manager, dir string) (lsp.NavResult, error) {
				return m.PrepareCallHierarchy(ctx, pos(dir, "use.go", 4, "Total"))
			},
			params: func(u string) map[string]any { return at(u, 3, 5) }, count: countArray},
		{name: "rename", file: "use.go", method: "textDocument/rename",
			lib: func(ctx context.Context, m *lsp.Manager, dir string) (lsp.NavResult, error) {
				return m.Rename(ctx, pos(dir, "use.go", 18, "label"), "tag")
			},
			params: func(u string) map[string]any { return with(at(u, 17, 5), "newName", "tag") },
			count: func(raw json.RawMessage) int {
				var we struct {
					Changes         map[string]json.RawMessage
					DocumentChanges []json.RawMessage
				}
				if json.Unmarshal(raw, &we) != nil {
					return -1
				}
				return len(we.Changes) + len(we.DocumentChanges)
			}},
	}
}

// libCount is how many results a library answer holds, as countArray
// counts the raw answer.
func libCount(r lsp.NavResult) int {
	switch r := r.(type) {
	case *lsp.Locations:
		return len(r.Locations)
	case *lsp.Hover:
		if strings.Contains(r.Markdown, "func Total") {
			return 1
		}
		return 0
	case *lsp.Symbols:
		return len(r.Symbols)
	case *lsp.CallHierarchy:
		return len(r.Items)
	case *lsp.RenameProposal:
		return len(r.Files)
	}
	return -1
}

// navPair is a library manager and a raw client on one workspace, warm.
type navPair struct {
	dir string
	m   *lsp.Manager
	raw *rawClient
}

func newNavPair(tb testing.TB) *navPair {
	tb.Helper()
	gp := gopls(tb)
	dir := navWorkspace(tb)
	p := &navPair{dir: dir, m: newManager(tb, gp, &workspace{dir: dir}), raw: startRaw(tb, gp, dir, environ(tb))}
	ctx := context.Background()
	for _, f := range []string{"use.go", "shapes.go"} {
		path := filepath.Join(dir, f)
		if err := p.m.Open(ctx, path); err != nil {
			tb.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		ch, err := p.raw.open(ctx, path, string(data), 1)
		if err != nil {
			tb.Fatal(err)
		}
		wait(tb, ch)
		if _, err := p.m.Settle(ctx, path); err != nil {
			tb.Fatal(err)
		}
	}
	return p
}

func (p *navPair) rawCall(tb testing.TB, op navOp) json.RawMessage {
	var res json.RawMessage
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.raw.conn.Call(ctx, op.method, op.params(fileURI(filepath.Join(p.dir, op.file))), &res); err != nil {
		tb.Fatalf("raw %s: %v", op.method, err)
	}
	return res
}

func (p *navPair) libCall(tb testing.TB, op navOp) lsp.NavResult {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := op.lib(ctx, p.m, p.dir)
	if err != nil {
		tb.Fatalf("%s: %v", op.name, err)
	}
	return r
}

// BenchmarkNavigation measures each operation on warm gopls through the
// library and through the raw client, one of each per iteration in
// alternating order. It reports both medians in milliseconds and their
// ratio.
func BenchmarkNavigation(b *testing.B) {
	p := newNavPair(b)
	for _, op := range navOps() {
		b.Run(op.name, func(b *testing.B) {
			for range 10 { // warm both
				p.libCall(b, op)
				p.rawCall(b, op)
			}
			var ours, base samples
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				lib := func() {
					start := time.Now()
					p.libCall(b, op)
					ours = append(ours, time.Since(start))
				}
				raw := func() {
					start := time.Now()
					p.rawCall(b, op)
					base = append(base, time.Since(start))
				}
				if i%2 == 0 {
					lib()
					raw()
				} else {
					raw()
					lib()
				}
			}
			b.StopTimer()
			b.ReportMetric(ms(ours.quantile(0.5)), "lib-median-ms")
			b.ReportMetric(ms(base.quantile(0.5)), "raw-median-ms")
			b.ReportMetric(float64(ours.quantile(0.5))/float64(base.quantile(0.5)), "median-ratio")
		})
	}
}

// TestNavigationRawAgrees checks the baseline: for every operation the raw
// client and the library get answers of the same size, so the benchmark
// compares equal work.
func TestNavigationRawAgrees(t *testing.T) {
	p := newNavPair(t)
	for _, op := range navOps() {
		r := p.libCall(t, op)
		raw := p.rawCall(t, op)
		if got, want := libCount(r), op.count(raw); got != want || got <= 0 {
			t.Errorf("%s: the library has %d results, the raw client %d:\n%s", op.name, got, want, raw)
		}
		if r.Info().Incomplete {
			t.Errorf("%s: incomplete on warm gopls: %s", op.name, r.Info().Reason)
		}
	}
}

// BenchmarkReferencesWidelyUsed measures references to identifiers used
// all over a module of realistic size, through the library: the latency
// (with the raw client's for the same request, side by side), the number
// of locations, and the size of what a model reads (the rendering, capped
// at 100 locations) in characters.
//
//   - nethttp: http.Request and http.ResponseWriter, asked from a small
//     module's handler; gopls finds them across net/http itself.
//   - repo: diag.Diagnostic, asked in this repository (its module is the
//     workspace), where the diagnostic type is used by every package.
func BenchmarkReferencesWidelyUsed(b *testing.B) {
	gp := gopls(b)
	small := b.TempDir()
	for name, text := range map[string]string{
		"go.mod":  "module example.com/handler\n\ngo 1.22\n",
		"main.go": "package main\n\nimport \"net/http\"\n\nfunc handle(w http.ResponseWriter, r *http.Request) {\n\tw.WriteHeader(200)\n}\n\nfunc main() { http.HandleFunc(\"/\", handle) }\n",
	} {
		if err := os.WriteFile(filepath.Join(small, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir string
		at        lsp.Pos
	}{
		{"nethttp/Request", small, lsp.Pos{Path: filepath.Join(small, "main.go"), Line: 5, Symbol: "Request"}},
		{"nethttp/ResponseWriter", small, lsp.Pos{Path: filepath.Join(small, "main.go"), Line: 5, Symbol: "ResponseWriter"}},
		{"repo/diag.Diagnostic", repo, lsp.Pos{Path: filepath.Join(repo, "diag", "diagnostic.go"), Line: diagLine(b, repo), Symbol: "Diagnostic"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			m := newManager(b, gp, &workspace{dir: tc.dir})
			ctx := context.Background()
			first := time.Now()
			res, err := m.References(ctx, tc.at, true)
			if err != nil {
				b.Fatal(err)
			}
			cold := time.Since(first)
			raw := startRaw(b, gp, tc.dir, environ(b))
			data, err := os.ReadFile(tc.at.Path)
			if err != nil {
				b.Fatal(err)
			}
			ch, err := raw.open(ctx, tc.at.Path, string(data), 1)
			if err != nil {
				b.Fatal(err)
			}
			wait(b, ch)
			at := res.At
			params := with(at0(fileURI(tc.at.Path), at.Line-1, at.Column-1), "context", map[string]bool{"includeDeclaration": true})
			rawRefs := func() int {
				var out json.RawMessage
				if err := raw.conn.Call(ctx, "textDocument/references", params, &out); err != nil {
					b.Fatal(err)
				}
				return countArray(out)
			}
			if n := rawRefs(); n != len(res.Locations) {
				b.Fatalf("the raw client finds %d references, the library %d", n, len(res.Locations))
			}
			for range 3 { // warm both
				rawRefs()
				if _, err := m.References(ctx, tc.at, true); err != nil {
					b.Fatal(err)
				}
			}
			var lat, base samples
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				lib := func() {
					start := time.Now()
					if res, err = m.References(ctx, tc.at, true); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
				}
				if i%2 == 1 {
					lib()
				}
				start := time.Now()
				rawRefs()
				base = append(base, time.Since(start))
				if i%2 == 0 {
					lib()
				}
			}
			b.StopTimer()
			opts := &lsp.NavRenderOptions{ProjectDir: tc.dir}
			text := res.Render(opts)
			all := res.Render(&lsp.NavRenderOptions{ProjectDir: tc.dir, MaxLocations: -1})
			files := map[string]bool{}
			for _, l := range res.Locations {
				files[l.Path] = true
			}
			b.ReportMetric(ms(lat.quantile(0.5)), "median-ms")
			b.ReportMetric(ms(base.quantile(0.5)), "raw-median-ms")
			b.ReportMetric(ms(cold), "first-ms")
			b.ReportMetric(float64(len(res.Locations)), "locations")
			b.ReportMetric(float64(len(files)), "files")
			b.ReportMetric(float64(utf8.RuneCountInString(text)), "rendered-chars")
			b.ReportMetric(float64(utf8.RuneCountInString(all)), "uncapped-chars")
		})
	}
}

// diagLine finds the line declaring the Diagnostic type in diag/diagnostic.go.
func diagLine(tb testing.TB, repo string) int {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(repo, "diag", "diagnostic.go"))
	if err != nil {
		tb.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "type Diagnostic struct") {
			return i + 1
		}
	}
	tb.Fatal("no type Diagnostic in diag/diagnostic.go")
	return 0
}
