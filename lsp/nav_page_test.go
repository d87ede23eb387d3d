//go:build linux

package lsp

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// manyRefsModule writes a Go module whose function N has 112 references,
// its declaration included: 60 in a.go, 51 in b.go.
func manyRefsModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/many\n\ngo 1.22\n")
	writeFile(t, filepath.Join(dir, "n.go"), "package many\n\n// N is used 111 times.\nfunc N() int { return 1 }\n")
	for file, n := range map[string]int{"a.go": 60, "b.go": 51} {
		var b strings.Builder
		b.WriteString("package many\n\n")
		for i := range n {
			fmt.Fprintf(&b, "var %s%d = N()\n", strings.TrimSuffix(file, ".go"), i)
		}
		writeFile(t, filepath.Join(dir, file), b.String())
	}
	return dir
}

// TestReferencesPaged asks gopls for the 112 references of a function and
// pages through them: every page says the exact total, the pages hold
// every reference exactly once, in the order of the whole answer, and the
// rendering of a page says which it shows.
func TestReferencesPaged(t *testing.T) {
	dir := manyRefsModule(t)
	m := navManager(t, GoplsConfig(goplsForTest(t), dir), dir, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	at := Pos{Path: filepath.Join(dir, "n.go"), Line: 4, Symbol: "N"}

	all, err := m.References(ctx, at, true)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := PageOf(all); all.Total != 112 || len(all.Locations) != 112 || all.Offset != 0 || p.Rest() != 0 {
		t.Fatalf("references: total %d, %d locations, offset %d, rest %d; want all 112", all.Total, len(all.Locations), all.Offset, p.Rest())
	}
	render := &NavRenderOptions{ProjectDir: dir}
	if text := all.Render(render); !strings.Contains(text, "from gopls: 112 in 3 files\n") || !strings.Contains(text, "… 12 more in 2 files\n") {
		t.Errorf("the whole answer, capped at 100 in the rendering:\n%s", text)
	}

	seen := map[string]int{}
	var paged []Location
	for offset := 0; offset < 112; offset += 25 {
		res, err := m.Navigate(ctx, NavRequest{Op: OpReferences, At: at, IncludeDeclaration: true, Offset: offset, Limit: 25})
		if err != nil {
			t.Fatal(err)
		}
		page := res.(*Locations)
		want := min(25, 112-offset)
		if p, _ := PageOf(page); page.Total != 112 || page.Offset != offset || len(page.Locations) != want || p.Rest() != 112-offset-want {
			t.Fatalf("page at %d: total %d, offset %d, %d locations, rest %d", offset, page.Total, page.Offset, len(page.Locations), p.Rest())
		}
		for _, l := range page.Locations {
			seen[rel(dir, l)]++
		}
		paged = append(paged, page.Locations...)
		text := page.Render(render)
		head := fmt.Sprintf("References to N (n.go:4:6), from gopls: 112; showing %d-%d of 112 (", offset+1, offset+want)
		if !strings.HasPrefix(text, head) || strings.Contains(text, "more in") {
			t.Errorf("page at %d rendered:\n%s\nwant it to begin %q", offset, text, head)
		}
	}
	if !cmp.Equal(paged, all.Locations) {
		t.Errorf("the pages joined differ from the whole answer")
	}
	for place, n := range seen {
		if n != 1 {
			t.Errorf("%s is in %d pages", place, n)
		}
	}
	if len(seen) != 112 {
		t.Errorf("the pages hold %d distinct references, want 112", len(seen))
	}

	// The last page, as a model asks for it after the first 100; then a
	// page past the end.
	res, err := m.Navigate(ctx, NavRequest{Op: OpReferences, At: at, IncludeDeclaration: true, Offset: 100, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Render(render); !strings.Contains(text, "showing 101-112 of 112 (12 in 2 files)") {
		t.Errorf("the last page rendered:\n%s", text)
	}
	res, err = m.Navigate(ctx, NavRequest{Op: OpReferences, At: at, IncludeDeclaration: true, Offset: 200})
	if err != nil {
		t.Fatal(err)
	}
	if page := res.(*Locations); page.Total != 112 || len(page.Locations) != 0 ||
		!strings.Contains(page.Render(render), "found 112 references for N (n.go:4:6); there are none from offset 200 on (offsets run from 0 to 111)") {
		t.Errorf("a page past the end: total %d, %d locations:\n%s", page.Total, len(page.Locations), page.Render(render))
	}
	if _, err := m.Navigate(ctx, NavRequest{Op: OpReferences, At: at, Offset: -1}); err == nil || !strings.Contains(err.Error(), "must not be negative") {
		t.Errorf("a negative offset: %v", err)
	}
}

// TestLocationsPage checks paging on a result without a server: bounds,
// pages of pages, and the total of a result made without one.
func TestLocationsPage(t *testing.T) {
	locs := make([]Location, 10)
	for i := range locs {
		locs[i] = Location{Path: "/p/f.go", Line: i + 1, Column: 1}
	}
	res := &Locations{Answer: Answer{Op: OpReferences, Server: "s"}, Locations: locs} // no Total
	for _, c := range []struct {
		offset, limit, first, n, rest int
	}{
		{0, 0, 0, 10, 0}, {0, 3, 0, 3, 7}, {8, 3, 8, 2, 0}, {9, 1, 9, 1, 0}, {10, 5, 10, 0, 0}, {50, 0, 50, 0, 0},
	} {
		p := res.Page(c.offset, c.limit)
		if info, _ := PageOf(p); p.Total != 10 || p.Offset != c.first || len(p.Locations) != c.n || info.Rest() != c.rest {
			t.Errorf("Page(%d, %d): total %d, offset %d, %d locations, rest %d; want offset %d, %d, rest %d",
				c.offset, c.limit, p.Total, p.Offset, len(p.Locations), info.Rest(), c.first, c.n, c.rest)
		}
		if c.n > 0 && p.Locations[0].Line != c.offset+1 {
			t.Errorf("Page(%d, %d) starts at line %d", c.offset, c.limit, p.Locations[0].Line)
		}
	}
	if len(res.Locations) != 10 || res.Offset != 0 {
		t.Errorf("Page changed its receiver")
	}
	pp := res.Page(2, 5).Page(4, 10) // entries 4-6 of the whole
	if info, _ := PageOf(pp); pp.Offset != 4 || len(pp.Locations) != 3 || pp.Locations[0].Line != 5 || pp.Total != 10 || info.Rest() != 3 {
		t.Errorf("a page of a page: offset %d, %d locations, total %d, rest %d", pp.Offset, len(pp.Locations), pp.Total, info.Rest())
	}
	if len(append(res.Page(0, 3).Locations, Location{})) != 4 || res.Locations[3].Line != 4 {
		t.Errorf("appending to a page overwrote the result")
	}

	if p, ok := PageOf(res.Page(8, 1)); !ok || p != (PageInfo{Offset: 8, Returned: 1, Total: 10}) || p.Rest() != 1 {
		t.Errorf("PageOf(Page(8, 1)): %+v, %v", p, ok)
	}

	calls := &CallHierarchy{Answer: Answer{Op: OpIncomingCalls, Server: "s"}, Items: []CallItem{{Name: "f"}}, Total: 3,
		Calls: []Call{{Item: CallItem{Name: "a"}}, {Item: CallItem{Name: "b"}}, {Item: CallItem{Name: "c"}}}}
	cp := calls.Page(1, 1)
	if cp.Total != 3 || cp.Offset != 1 || len(cp.Calls) != 1 || cp.Calls[0].Item.Name != "b" || len(cp.Items) != 1 {
		t.Errorf("a page of calls: %+v", cp)
	}
	if p, ok := PageOf(cp); !ok || p.Rest() != 1 {
		t.Errorf("PageOf a page of calls: %+v, %v", p, ok)
	}
	if text := cp.Render(nil); !strings.HasPrefix(text, "Calls to f (), from s: 3 callers; showing 2 of 3\n") {
		t.Errorf("a page of calls rendered:\n%s", text)
	}
	if _, ok := PageOf(&CallHierarchy{Answer: Answer{Op: OpPrepareCallHierarchy}}); ok {
		t.Error("PageOf a prepared call hierarchy says it is a page")
	}
	if _, ok := PageOf(&Hover{}); ok {
		t.Error("PageOf a hover says it is a page")
	}
}
