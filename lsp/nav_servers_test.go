//go:build linux

package lsp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The navigation suite runs every operation on real gopls, pyright,
// typescript-language-server and clangd (`make lsp-servers` installs the
// pinned ones), over the small projects in testdata/nav/<lang>: the same
// shapes and the same use of them in each language, so that the expected
// locations read alike. Each server runs once (one Manager) for all its
// operations, and the four run in parallel. A server that is missing fails
// the suite; it never skips.
//
// Every fixture has a line where a name occurs twice (result = result +
// ...) and a line with characters outside the BMP ("😀 🎉") before the
// symbol asked about, so that columns are converted both ways: gopls,
// pyright and typescript-language-server count UTF-16 units, clangd bytes.

// navSpec is one server's suite. Places are FILE:LINE:COL|SYMBOL[#N]
// relative to the fixture; expected locations are rel:line:col.
type navSpec struct {
	name, fixture string
	config        func(t *testing.T, dir string) ServerConfig
	locs          []locCase
	hoverAt       string
	hoverWant     []string // substrings of the Markdown
	symbolsFile   string
	symbols       []string // indent, kind, name, place
	query         string
	workspace     []string // sorted places with kind and name
	incomingAt    string
	incoming      []string // name place <- sites
	outgoingAt    string
	outgoing      []string // nil: the server does not offer it
	ambiguousAt   string   // a symbol that occurs twice on its line
	renameAt      string
	renameTo      string
	renamed       map[string][2]string // file -> a replacement that turns its text into the renamed one
}

type locCase struct {
	op   NavOp
	at   string
	decl bool
	want []string // nil: the server does not offer the operation
}

func navSpecs() []navSpec {
	return []navSpec{{
		name: "gopls", fixture: "go",
		config: func(t *testing.T, dir string) ServerConfig { return GoplsConfig(goplsForTest(t), dir) },
		locs: []locCase{
			{op: OpDefinition, at: "use.go:7:Area", want: []string{"shapes.go:5:2"}},
			{op: OpDeclaration, at: "use.go:7:Area"},
			{op: OpTypeDefinition, at: "use.go:14:sq", want: []string{"shapes.go:9:6"}},
			{op: OpImplementation, at: "shapes.go:5:Area", want: []string{"shapes.go:12:17", "shapes.go:18:17"}},
			{op: OpReferences, at: "use.go:7:total#2", decl: true, want: []string{"use.go:5:2", "use.go:7:3", "use.go:7:11", "use.go:9:9"}},
			{op: OpReferences, at: "use.go:7:total#1", want: []string{"use.go:7:3", "use.go:7:11", "use.go:9:9"}},
			// Column 22 in characters is column 24 in UTF-16.
			{op: OpReferences, at: "use.go:15:22", decl: true, want: []string{"use.go:4:6", "use.go:15:22"}},
		},
		hoverAt: "use.go:15:Total", hoverWant: []string{"```go\nfunc Total(shapes []Shape) float64\n```", "Total sums the areas of shapes."},
		symbolsFile: "shapes.go",
		symbols: []string{
			"interface Shape shapes.go:4:6", "  method Area shapes.go:5:2",
			"struct Square shapes.go:9:6", "  field Side shapes.go:9:21",
			"method (Square).Area shapes.go:12:17",
			"struct Circle shapes.go:15:6", "  field R shapes.go:15:21",
			"method (Circle).Area shapes.go:18:17",
		},
		query: "Area", workspace: []string{"method Circle.Area shapes.go:18:17", "method Shape.Area shapes.go:5:2", "method Square.Area shapes.go:12:17"},
		incomingAt: "use.go:4:Total", incoming: []string{"Report use.go:13:6 <- use.go:15:22"},
		outgoingAt: "use.go:13:Report", outgoing: []string{"Total use.go:4:6 <- use.go:15:22", "label use.go:18:6 <- use.go:15:9"},
		ambiguousAt: "use.go:7:total",
		renameAt:    "use.go:18:label", renameTo: "tag",
		renamed: map[string][2]string{"use.go": {"label(", "tag("}},
	}, {
		name: "pyright", fixture: "python",
		config: func(t *testing.T, dir string) ServerConfig {
			return NewServerConfig("pyright", npmServer(t, "pyright-langserver"), []string{"--stdio"}, map[string]string{".py": "python"})
		},
		locs: []locCase{
			{op: OpDefinition, at: "use.py:8:area", want: []string{"shapes.py:7:9"}},
			{op: OpDeclaration, at: "use.py:13:Square", want: []string{"shapes.py:11:7"}},
			{op: OpTypeDefinition, at: "use.py:13:sq", want: []string{"shapes.py:11:7"}},
			{op: OpImplementation, at: "use.py:8:area"},
			{op: OpReferences, at: "use.py:8:result#2", decl: true, want: []string{"use.py:6:5", "use.py:8:9", "use.py:8:18", "use.py:9:12"}},
			// Column 25 in characters is column 27 in UTF-16.
			{op: OpReferences, at: "use.py:14:25", decl: true, want: []string{"use.py:4:5", "use.py:14:25"}},
		},
		hoverAt: "use.py:14:total", hoverWant: []string{"def total(shapes: list[Shape]) -> float", "Sum the areas of shapes."},
		symbolsFile: "use.py",
		symbols: []string{
			"function total use.py:4:5", "  variable shapes use.py:4:11", "  variable result use.py:6:5", "  variable s use.py:7:9",
			"function report use.py:12:5", "  variable sq use.py:13:5",
			"function label use.py:17:5", "  variable prefix use.py:17:11", "  variable v use.py:17:24",
		},
		query: "area", workspace: []string{"method area shapes.py:17:9", "method area shapes.py:27:9", "method area shapes.py:7:9"},
		incomingAt: "use.py:4:total", incoming: []string{"report use.py:12:5 <- use.py:14:25"},
		outgoingAt: "use.py:12:report", outgoing: []string{"Circle shapes.py:21:7 <- use.py:14:36", "Square shapes.py:11:7 <- use.py:13:10", "label use.py:17:5 <- use.py:14:12", "total use.py:4:5 <- use.py:14:25"},
		ambiguousAt: "use.py:8:result",
		renameAt:    "use.py:17:label", renameTo: "tag",
		renamed: map[string][2]string{"use.py": {"label(", "tag("}},
	}, {
		name: "typescript", fixture: "typescript",
		config: func(t *testing.T, dir string) ServerConfig {
			return NewServerConfig("typescript", npmServer(t, "typescript-language-server"), []string{"--stdio"}, map[string]string{".ts": "typescript"})
		},
		locs: []locCase{
			{op: OpDefinition, at: "use.ts:7:area", want: []string{"shapes.ts:3:3"}},
			{op: OpDeclaration, at: "use.ts:7:area"},
			{op: OpTypeDefinition, at: "use.ts:13:sq", want: []string{"shapes.ts:7:14"}},
			{op: OpImplementation, at: "shapes.ts:3:area", want: []string{"shapes.ts:9:3", "shapes.ts:17:3"}},
			{op: OpReferences, at: "use.ts:7:result#2", decl: true, want: []string{"use.ts:5:7", "use.ts:7:5", "use.ts:7:14", "use.ts:9:10"}},
			// Column 23 in characters is column 25 in UTF-16.
			{op: OpReferences, at: "use.ts:14:23", decl: true, want: []string{"use.ts:4:17", "use.ts:14:23"}},
		},
		hoverAt: "use.ts:14:total", hoverWant: []string{"function total(shapes: Shape[]): number", "Sums the areas of shapes."},
		symbolsFile: "use.ts",
		symbols: []string{
			"function total use.ts:4:17", "  variable result use.ts:5:7", "  constant s use.ts:6:14",
			"function report use.ts:12:17", "  constant sq use.ts:13:9",
			"function label use.ts:17:10",
		},
		query: "area", workspace: []string{"method area shapes.ts:17:3", "method area shapes.ts:3:3", "method area shapes.ts:9:3"},
		incomingAt: "use.ts:4:total", incoming: []string{"report use.ts:12:17 <- use.ts:14:23"},
		outgoingAt: "use.ts:12:report", outgoing: []string{"Circle shapes.ts:15:14 <- use.ts:14:38", "Square shapes.ts:7:14 <- use.ts:13:18", "label use.ts:17:10 <- use.ts:14:10", "total use.ts:4:17 <- use.ts:14:23"},
		ambiguousAt: "use.ts:7:result",
		renameAt:    "use.ts:17:label", renameTo: "tag",
		renamed: map[string][2]string{"use.ts": {"label(", "tag("}},
	}, {
		name: "clangd", fixture: "cpp",
		config: func(t *testing.T, dir string) ServerConfig {
			p, err := exec.LookPath("clangd")
			if err != nil {
				t.Fatalf("clangd not found: run `make lsp-servers` (it installs Debian's clangd): %v", err)
			}
			writeCompileCommands(t, dir, "shapes.cpp", "use.cpp")
			return NewServerConfig("clangd", p, nil, map[string]string{".cpp": "cpp", ".hpp": "cpp"})
		},
		locs: []locCase{
			{op: OpDefinition, at: "use.cpp:20:total", want: []string{"use.cpp:4:8"}},
			{op: OpDeclaration, at: "use.cpp:20:total", want: []string{"shapes.hpp:23:8"}},
			{op: OpTypeDefinition, at: "use.cpp:19:sq", want: []string{"shapes.hpp:10:8"}},
			{op: OpImplementation, at: "use.cpp:7:area", want: []string{"shapes.hpp:12:10", "shapes.hpp:19:10"}},
			{op: OpReferences, at: "use.cpp:7:result#2", decl: true, want: []string{"use.cpp:5:10", "use.cpp:7:5", "use.cpp:7:14", "use.cpp:9:10"}},
			// Column 23 in characters is byte 28 in UTF-8.
			{op: OpReferences, at: "use.cpp:20:23", decl: true, want: []string{"shapes.hpp:23:8", "use.cpp:4:8", "use.cpp:20:23"}},
		},
		hoverAt: "use.cpp:20:total", hoverWant: []string{"function `total`", "double total(const Shape *const *shapes, int n)"},
		symbolsFile: "use.cpp",
		symbols:     []string{"function total use.cpp:4:8", "function label use.cpp:12:20", "function report use.cpp:16:13"},
		query:       "area", workspace: []string{"method area shapes.cpp:3:16", "method area shapes.cpp:5:16", "method area shapes.hpp:6:18"},
		incomingAt: "use.cpp:4:total", incoming: []string{"report use.cpp:16:13 <- use.cpp:20:23"},
		outgoingAt: "use.cpp:16:report", outgoing: nil, // clangd 14 has no outgoing calls
		ambiguousAt: "use.cpp:7:result",
		renameAt:    "use.cpp:12:label", renameTo: "tag",
		renamed: map[string][2]string{"use.cpp": {"label(", "tag("}},
	}}
}

// writeCompileCommands gives clangd a compilation database, so that it
// indexes the project in the background.
func writeCompileCommands(t *testing.T, dir string, files ...string) {
	t.Helper()
	var entries []string
	for _, f := range files {
		entries = append(entries, fmt.Sprintf(`{"directory": %q, "file": %q, "arguments": ["clang++", "-std=c++17", "-c", %q]}`,
			dir, filepath.Join(dir, f), f))
	}
	writeFile(t, filepath.Join(dir, "compile_commands.json"), "[\n"+strings.Join(entries, ",\n")+"\n]\n")
}

// navFixture copies testdata/nav/<name> into a new directory.
func navFixture(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("testdata", "nav", name)
	dst := t.TempDir()
	if real, err := filepath.EvalSymlinks(dst); err == nil {
		dst = real
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatalf("navigation fixtures: %v", err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dst, e.Name()), string(data))
	}
	return dst
}

// navManager starts a manager for one server over dir.
func navManager(t *testing.T, cfg ServerConfig, dir string, opts *ManagerOptions) *Manager {
	t.Helper()
	var o ManagerOptions
	if opts != nil {
		o = *opts
	}
	o.ProjectDir = dir
	if o.Env == nil {
		o.Env = append(os.Environ(), "GOPLSCACHE="+t.TempDir(), "GOPROXY=off", "GOFLAGS=-mod=mod")
	}
	m, err := NewManager([]ServerConfig{cfg}, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		m.Shutdown(ctx)
	})
	return m
}

// pos parses a fixture place.
func pos(t *testing.T, dir, at string) Pos {
	t.Helper()
	p, err := ParsePos(filepath.Join(dir, at))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func rel(dir string, l Location) string {
	return fmt.Sprintf("%s:%d:%d", displayPath(dir, l.Path), l.Line, l.Column)
}

func places(dir string, locs []Location) []string {
	out := []string{}
	for _, l := range locs {
		out = append(out, rel(dir, l))
	}
	return out
}

func flattenSymbols(dir string, s []Symbol, depth int) []string {
	var out []string
	for _, sym := range s {
		out = append(out, fmt.Sprintf("%s%s %s %s", strings.Repeat("  ", depth), sym.Kind, sym.Name, rel(dir, sym.Location)))
		out = append(out, flattenSymbols(dir, sym.Children, depth+1)...)
	}
	return out
}

func flattenCalls(dir string, calls []Call) []string {
	out := []string{}
	for _, c := range calls {
		out = append(out, fmt.Sprintf("%s %s <- %s", c.Item.Name, rel(dir, c.Item.Location), strings.Join(places(dir, c.Sites), ", ")))
	}
	sort.Strings(out)
	return out
}

func TestNavigation(t *testing.T) {
	for _, spec := range navSpecs() {
		t.Run(spec.name, func(t *testing.T) {
			t.Parallel()
			dir := navFixture(t, spec.fixture)
			m := navManager(t, spec.config(t, dir), dir, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			render := &NavRenderOptions{ProjectDir: dir}
			for _, c := range spec.locs {
				p := pos(t, dir, c.at)
				res, err := m.Navigate(ctx, NavRequest{Op: c.op, At: p, IncludeDeclaration: c.decl})
				name := fmt.Sprintf("%s %s", c.op, c.at)
				if c.want == nil {
					if !errors.Is(err, ErrUnsupported) {
						t.Errorf("%s: %v, %v; want ErrUnsupported", name, res, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				locs := res.(*Locations)
				if got := places(dir, locs.Locations); !cmp.Equal(got, c.want) {
					t.Errorf("%s: got %q, want %q", name, got, c.want)
				}
				if locs.Incomplete {
					t.Errorf("%s: incomplete after the load: %s", name, locs.Reason)
				}
				text := res.Render(render)
				for _, w := range c.want {
					if !strings.Contains(text, w+": ") {
						t.Errorf("%s: the rendering lacks %q:\n%s", name, w+": ", text)
					}
				}
				for _, l := range locs.Locations {
					if l.Text == "" {
						t.Errorf("%s: %s has no source line", name, rel(dir, l))
					}
				}
			}

			h, err := m.Hover(ctx, pos(t, dir, spec.hoverAt))
			if err != nil {
				t.Errorf("hover: %v", err)
			} else {
				for _, w := range spec.hoverWant {
					if !strings.Contains(h.Markdown, w) {
						t.Errorf("hover at %s lacks %q:\n%s", spec.hoverAt, w, h.Markdown)
					}
				}
			}

			syms, err := m.DocumentSymbols(ctx, filepath.Join(dir, spec.symbolsFile))
			if err != nil {
				t.Errorf("document symbols: %v", err)
			} else if got := flattenSymbols(dir, syms.Symbols, 0); !cmp.Equal(got, spec.symbols) {
				t.Errorf("document symbols of %s:\n%s\nwant:\n%s", spec.symbolsFile, strings.Join(got, "\n"), strings.Join(spec.symbols, "\n"))
			}

			ws, err := m.WorkspaceSymbols(ctx, spec.query, "")
			if err != nil {
				t.Errorf("workspace symbols: %v", err)
			} else {
				var got []string
				for _, s := range ws.Symbols {
					got = append(got, fmt.Sprintf("%s %s %s", s.Kind, s.Name, rel(dir, s.Location)))
				}
				sort.Strings(got)
				if !cmp.Equal(got, spec.workspace) {
					t.Errorf("workspace symbols %q: got %q, want %q", spec.query, got, spec.workspace)
				}
			}

			prep, err := m.PrepareCallHierarchy(ctx, pos(t, dir, spec.incomingAt))
			if err != nil {
				t.Errorf("prepare call hierarchy: %v", err)
			} else if len(prep.Items) != 1 || displayPath(dir, prep.Items[0].Location.Path)+":"+fmt.Sprint(prep.Items[0].Location.Line) != strings.Join(strings.Split(spec.incomingAt, ":")[:2], ":") {
				t.Errorf("prepare call hierarchy at %s: %+v", spec.incomingAt, prep.Items)
			}
			in, err := m.IncomingCalls(ctx, pos(t, dir, spec.incomingAt))
			if err != nil {
				t.Errorf("incoming calls: %v", err)
			} else if got := flattenCalls(dir, in.Calls); !cmp.Equal(got, spec.incoming) {
				t.Errorf("incoming calls at %s: got %q, want %q", spec.incomingAt, got, spec.incoming)
			}
			out, err := m.OutgoingCalls(ctx, pos(t, dir, spec.outgoingAt))
			switch {
			case spec.outgoing == nil:
				if !errors.Is(err, ErrUnsupported) {
					t.Errorf("outgoing calls: %v, %v; want ErrUnsupported", out, err)
				}
			case err != nil:
				t.Errorf("outgoing calls: %v", err)
			default:
				if got := flattenCalls(dir, out.Calls); !cmp.Equal(got, spec.outgoing) {
					t.Errorf("outgoing calls at %s: got %q, want %q", spec.outgoingAt, got, spec.outgoing)
				}
			}

			_, err = m.References(ctx, pos(t, dir, spec.ambiguousAt), true)
			if !errors.Is(err, ErrBadPos) || !strings.Contains(err.Error(), "occurs 2 times") || !strings.Contains(err.Error(), "#1 … #2") {
				t.Errorf("references at the ambiguous %s: %v, want an error listing two occurrences", spec.ambiguousAt, err)
			}

			rp, err := m.Rename(ctx, pos(t, dir, spec.renameAt), spec.renameTo)
			if err != nil {
				t.Fatalf("rename: %v", err)
			}
			if len(rp.Files) != len(spec.renamed) {
				t.Errorf("rename changes %d files, want %d:\n%s", len(rp.Files), len(spec.renamed), rp.Diff)
			}
			for _, f := range rp.Files {
				name := displayPath(dir, f.Path)
				r, ok := spec.renamed[name]
				old := readFixture(t, dir, name)
				if !ok || f.OldText != old || f.NewText != strings.ReplaceAll(old, r[0], r[1]) {
					t.Errorf("rename of %s:\n%s", name, f.Diff)
				}
				if !strings.HasPrefix(f.Diff, "--- a/"+name+"\n+++ b/"+name+"\n") {
					t.Errorf("rename diff of %s has the header:\n%s", name, f.Diff)
				}
				if f.Base == nil || !f.Base.Exists {
					t.Errorf("rename of %s has no base state", name)
				}
				if got := readFixture(t, dir, name); got != old {
					t.Errorf("Rename wrote %s", name)
				}
			}
		})
	}
}

// TestNavigationWhileLoading asks typescript-language-server for
// references the moment its file is open, without waiting for its load:
// it answers before "Initializing JS/TS language features" has even begun,
// and the answer must say that it may be incomplete, never that there are
// no references.
func TestNavigationWhileLoading(t *testing.T) {
	spec := navSpecs()[2]
	if spec.name != "typescript" {
		t.Fatalf("spec 2 is %s", spec.name)
	}
	dir := navFixture(t, spec.fixture)
	m := navManager(t, spec.config(t, dir), dir, &ManagerOptions{LoadWait: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := m.References(ctx, pos(t, dir, "use.ts:7:area"), true)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Incomplete || !strings.Contains(res.Reason, "typescript had not finished loading the workspace") {
		t.Fatalf("references before the load: incomplete %v, reason %q, %d locations", res.Incomplete, res.Reason, len(res.Locations))
	}
	text := res.Render(&NavRenderOptions{ProjectDir: dir})
	if strings.Contains(text, "found no") {
		t.Errorf("an answer from a loading server reads as none:\n%s", text)
	}
	if len(res.Locations) == 0 && !strings.Contains(text, "that does not mean there are none") {
		t.Errorf("an empty answer from a loading server:\n%s", text)
	}
	if len(res.Locations) > 0 && !strings.Contains(text, "Note: the answer may be incomplete") {
		t.Errorf("a partial answer from a loading server:\n%s", text)
	}
	t.Logf("before the load: %d locations:\n%s", len(res.Locations), text)
}

// TestApplyRename writes a rename on gopls: directly, refusing a file
// changed since the proposal, and through a propose callback that rejects
// one file and cancels the review at the next.
func TestApplyRename(t *testing.T) {
	spec := navSpecs()[0]
	dir := navFixture(t, spec.fixture)
	m := navManager(t, spec.config(t, dir), dir, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	shapes, use := filepath.Join(dir, "shapes.go"), filepath.Join(dir, "use.go")
	propose := func() *RenameProposal {
		t.Helper()
		p, err := m.Rename(ctx, pos(t, dir, "shapes.go:5:Area"), "Size")
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Files) != 2 || p.Files[0].Path != shapes || p.Files[1].Path != use {
			t.Fatalf("rename files: %+v", p.Files)
		}
		return p
	}
	statuses := func(res *RenameApplied) []ApplyStatus {
		var out []ApplyStatus
		for _, f := range res.Files {
			out = append(out, f.Status)
		}
		return out
	}

	// A file changed on disk after the proposal: all or nothing, so
	// neither file is written, and the error names the changed one.
	p := propose()
	changed := strings.Replace(readFixture(t, dir, "shapes.go"), "roughly", "more or less", 1)
	writeFile(t, shapes, changed)
	res, err := m.ApplyRename(ctx, p, nil)
	if !errors.Is(err, ErrEditConflict) || res != nil || !strings.Contains(err.Error(), shapes+" not written") ||
		!strings.Contains(err.Error(), "none of the 2 files was written") {
		t.Fatalf("apply after a change: %+v, %v", res, err)
	}
	if readFixture(t, dir, "shapes.go") != changed || readFixture(t, dir, "use.go") != readFixtureFile(t, "go", "use.go") {
		t.Errorf("a file was written although the rename could not be:\n%s", readFixture(t, dir, "use.go"))
	}
	// A review is refused whole too, before any file is shown.
	res, err = m.ApplyRename(ctx, p, func(ctx context.Context, e *FileEdit) (ApplyStatus, error) {
		t.Errorf("%s proposed although the rename is stale", e.Path)
		return ApplyRejected, nil
	})
	if !errors.Is(err, ErrEditConflict) || res != nil {
		t.Fatalf("review after a change: %+v, %v", res, err)
	}

	writeFile(t, shapes, readFixtureFile(t, "go", "shapes.go"))

	// A callback that rejects the first file and cancels the second; the
	// files stay as they are.
	p = propose()
	var seen []string
	res, err = m.ApplyRename(ctx, p, func(ctx context.Context, e *FileEdit) (ApplyStatus, error) {
		seen = append(seen, filepath.Base(e.Path))
		if e.Base == nil || !strings.HasPrefix(e.Diff, "--- a/"+filepath.Base(e.Path)) {
			t.Errorf("proposed edit without its base or diff: %+v", e)
		}
		if len(seen) == 1 {
			return ApplyRejected, nil
		}
		return ApplyCancelled, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(res); !cmp.Equal(got, []ApplyStatus{ApplyRejected, ApplyCancelled}) || res.Written != 0 {
		t.Errorf("callback outcomes: %v", got)
	}
	// Cancelling the first skips the second.
	seen = nil
	res, err = m.ApplyRename(ctx, p, func(ctx context.Context, e *FileEdit) (ApplyStatus, error) {
		seen = append(seen, filepath.Base(e.Path))
		return ApplyCancelled, nil
	})
	if err != nil || !cmp.Equal(statuses(res), []ApplyStatus{ApplyCancelled, ApplySkipped}) || len(seen) != 1 {
		t.Errorf("cancel at the first file: %v, proposed %v, %v", statuses(res), seen, err)
	}
	for _, f := range []string{"shapes.go", "use.go"} {
		if readFixture(t, dir, f) != readFixtureFile(t, "go", f) {
			t.Errorf("%s changed without being accepted", f)
		}
	}

	// Written directly, both files.
	res, err = m.ApplyRename(ctx, propose(), nil)
	if err != nil || res.Written != 2 {
		t.Fatalf("apply: %+v, %v", res, err)
	}
	def, err := m.Definition(ctx, pos(t, dir, "use.go:7:Size"))
	if err != nil || !cmp.Equal(places(dir, def.Locations), []string{"shapes.go:5:2"}) {
		t.Errorf("definition after the rename: %+v, %v", def, err)
	}
}

// readFixtureFile reads a file of testdata/nav/<fixture>.
func readFixtureFile(t *testing.T, fixture, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "nav", fixture, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestNavigationClangdWithoutIndex asks clangd without a compilation
// database (compile_flags.txt only): it never indexes the project in the
// background, so it knows only the open file and its includes, and its
// answers say so.
func TestNavigationClangdWithoutIndex(t *testing.T) {
	spec := navSpecs()[3]
	if spec.name != "clangd" {
		t.Fatalf("spec 3 is %s", spec.name)
	}
	dir := navFixture(t, spec.fixture)
	cfg := spec.config(t, dir)
	if err := os.Remove(filepath.Join(dir, "compile_commands.json")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "compile_flags.txt"), "-std=c++17\n")
	m := navManager(t, cfg, dir, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := m.References(ctx, pos(t, dir, "use.cpp:7:area"), true)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Incomplete || !strings.Contains(res.Reason, "clangd has not indexed the workspace") {
		t.Fatalf("references without an index: incomplete %v, reason %q, %q", res.Incomplete, res.Reason, places(dir, res.Locations))
	}
	// What it knows (the open file and the header it includes) is there.
	got := places(dir, res.Locations)
	for _, want := range []string{"use.cpp:7:34", "shapes.hpp:12:10", "shapes.hpp:19:10"} {
		if !strings.Contains(strings.Join(got, " "), want) {
			t.Errorf("references without an index lack %s: %q", want, got)
		}
	}
	if text := res.Render(&NavRenderOptions{ProjectDir: dir}); !strings.Contains(text, "Note: the answer may be incomplete: clangd has not indexed") {
		t.Errorf("rendering:\n%s", text)
	}
}
