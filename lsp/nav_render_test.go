package lsp

import (
	"fmt"
	"strings"
	"testing"
)

func TestRenderLocationsCapped(t *testing.T) {
	res := &Locations{Answer: Answer{Op: OpReferences, Server: "gopls",
		At: &Location{Path: "/p/a.go", Line: 3, Column: 6, EndLine: 3, EndColumn: 10, Text: "func Name() {}"}}}
	for i := 1; i <= 4; i++ {
		res.Locations = append(res.Locations, Location{Path: "/p/a.go", Line: i, Column: 2, Text: fmt.Sprintf("\tline %d  ", i)})
	}
	for _, f := range []string{"/p/b.go", "/p/c.go", "/elsewhere/d.go"} {
		for i := 1; i <= 2; i++ {
			res.Locations = append(res.Locations, Location{Path: f, Line: i, Column: 1, Text: "x"})
		}
	}
	res.Locations = sortLocations(res.Locations)
	got := res.Render(&NavRenderOptions{ProjectDir: "/p", MaxLocations: 5})
	want := "References to Name (a.go:3:6), from gopls: 10 in 4 files\n\n" +
		"/elsewhere/d.go:1:1: x\n/elsewhere/d.go:2:1: x\n\n" +
		"a.go:1:2: line 1\na.go:2:2: line 2\na.go:3:2: line 3\n" +
		"… 5 more in 3 files\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if n := strings.Count(res.Render(&NavRenderOptions{MaxLocations: -1}), "\n"); n != 10+2+3 {
		t.Errorf("uncapped rendering has %d lines", n)
	}
	if n := strings.Count(res.Render(nil), ": x\n"); n != 6 {
		t.Errorf("default rendering shows %d of the 6 other locations", n)
	}
}

func TestRenderEmptyAnswers(t *testing.T) {
	at := &Location{Path: "/p/a.go", Line: 1, Column: 1, EndLine: 1, EndColumn: 2, Text: "x"}
	done := &Locations{Answer: Answer{Op: OpReferences, Server: "gopls", At: at}}
	if got := done.Render(nil); got != "gopls found no references for x (/p/a.go:1:1).\n" {
		t.Errorf("empty answer: %q", got)
	}
	loading := &Locations{Answer: Answer{Op: OpReferences, Server: "ts", At: at, Incomplete: true, Reason: "ts was still loading the workspace (Initializing)"}}
	got := loading.Render(nil)
	if strings.Contains(got, "found no") || !strings.Contains(got, "ts was still loading the workspace (Initializing): that does not mean there are none") {
		t.Errorf("empty answer while loading: %q", got)
	}
	for _, r := range []NavResult{
		&Hover{Answer: loading.Answer},
		&Symbols{Answer: Answer{Op: OpWorkspaceSymbols, Server: "ts", Incomplete: true, Reason: "loading"}, Query: "q"},
		&CallHierarchy{Answer: loading.Answer},
	} {
		if got := r.Render(nil); !strings.Contains(got, "that does not mean there are none") {
			t.Errorf("%T while loading: %q", r, got)
		}
	}
}

func TestRenderSymbolsAndCalls(t *testing.T) {
	syms := &Symbols{Answer: Answer{Op: OpDocumentSymbols, Server: "gopls"}, Path: "/p/s.go", Symbols: []Symbol{
		{Name: "Shape", Kind: 11, Location: Location{Path: "/p/s.go", Line: 4, Column: 6}, Children: []Symbol{
			{Name: "Area", Kind: 6, Detail: "func() float64", Location: Location{Path: "/p/s.go", Line: 5, Column: 2}},
		}},
	}}
	want := "Symbols in s.go, from gopls: 2\n\ninterface Shape  s.go:4:6\n  method Area func() float64  s.go:5:2\n"
	if got := syms.Render(&NavRenderOptions{ProjectDir: "/p"}); got != want {
		t.Errorf("symbols:\n%s\nwant:\n%s", got, want)
	}
	calls := &CallHierarchy{Answer: Answer{Op: OpIncomingCalls, Server: "gopls"},
		Items: []CallItem{{Name: "Total", Kind: 12, Location: Location{Path: "/p/u.go", Line: 4, Column: 6}}},
		Calls: []Call{{Item: CallItem{Name: "Report", Kind: 12, Location: Location{Path: "/p/u.go", Line: 13, Column: 6}},
			Sites: []Location{{Path: "/p/u.go", Line: 15, Column: 22, Text: "\treturn Total(x)"}}}}}
	want = "Calls to Total (u.go:4:6), from gopls: 1 caller\n\nfunction Report  u.go:13:6\n  u.go:15:22: return Total(x)\n"
	if got := calls.Render(&NavRenderOptions{ProjectDir: "/p"}); got != want {
		t.Errorf("calls:\n%s\nwant:\n%s", got, want)
	}
}

func TestSymbolKindString(t *testing.T) {
	for k, want := range map[SymbolKind]string{1: "file", 6: "method", 22: "enum member", 26: "type parameter", 0: "kind 0", 27: "kind 27"} {
		if got := k.String(); got != want {
			t.Errorf("SymbolKind(%d) = %q, want %q", int(k), got, want)
		}
	}
}
