package mcpserver

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReferencesPages asks for the 112 references of a function through
// the references tool: the first answer lists 100 and says, in its text
// and its structured content, that there are 112 and where the next page
// starts; following that, every reference comes exactly once, and the
// total is 112 on every page.
func TestReferencesPages(t *testing.T) {
	dir := t.TempDir()
	writeText(t, filepath.Join(dir, "go.mod"), "module example.com/many\n\ngo 1.22\n")
	writeText(t, filepath.Join(dir, "n.go"), "package many\n\n// N is used 111 times.\nfunc N() int { return 1 }\n")
	var b strings.Builder
	b.WriteString("package many\n\n")
	for i := range 111 {
		fmt.Fprintf(&b, "var v%d = N()\n", i)
	}
	writeText(t, filepath.Join(dir, "uses.go"), b.String())
	s := newTestServer(t, dir, nil)
	tool := s.tools["references"]

	type page struct {
		Locations []struct {
			Path string `json:"path"`
			Line int    `json:"line"`
		} `json:"locations"`
		Total, Offset, Returned int
	}
	args := map[string]any{"file": "n.go", "line": 4, "symbol": "N"}
	listed := regexp.MustCompile(`(?m)^(n|uses)\.go:\d+:\d+: `)
	seen := map[string]int{}
	offset, calls := 0, 0
	for {
		calls++
		if calls > 5 {
			t.Fatal("the pages do not end")
		}
		res := s.ok("references", args)
		v := checkStructured(t, tool, res)
		var p page
		if err := json.Unmarshal(res.StructuredContent, &p); err != nil {
			t.Fatal(err)
		}
		text := res.Text()
		if p.Total != 112 || p.Offset != offset || p.Returned != len(p.Locations) || v["status"] != statusComplete {
			t.Fatalf("page at %d: total %d, offset %d, returned %d, %d locations, status %v", offset, p.Total, p.Offset, p.Returned, len(p.Locations), v["status"])
		}
		if n := len(listed.FindAllString(text, -1)); n != p.Returned {
			t.Errorf("page at %d: the text lists %d locations, the structured content %d:\n%s", offset, n, p.Returned, text)
		}
		for _, l := range p.Locations {
			seen[fmt.Sprintf("%s:%d", filepath.Base(l.Path), l.Line)]++
		}
		head := fmt.Sprintf("from gopls: 112; showing %d-%d of 112 (", offset+1, offset+p.Returned)
		if !strings.Contains(text, head) {
			t.Errorf("page at %d lacks %q:\n%s", offset, head, text)
		}
		next := offset + p.Returned
		more := fmt.Sprintf("(%d more: call references again with offset %d for the next ones.)", 112-next, next)
		if next < 112 {
			if p.Returned != 100 || !strings.Contains(text, more) {
				t.Errorf("page at %d: %d returned; the text lacks %q:\n%s", offset, p.Returned, more, text)
			}
		} else if strings.Contains(text, "more") {
			t.Errorf("the last page says there is more:\n%s", text)
		}
		if next >= 112 {
			break
		}
		offset = next
		args["offset"] = offset
	}
	if calls != 2 || len(seen) != 112 {
		t.Errorf("%d calls, %d distinct references; want 2 and 112", calls, len(seen))
	}
	for place, n := range seen {
		if n != 1 {
			t.Errorf("%s listed %d times", place, n)
		}
	}

	// A limit past the bound is refused with the bound named.
	if res := s.call("references", map[string]any{"file": "n.go", "line": 4, "symbol": "N", "limit": 5000}); !res.IsError || !strings.Contains(res.Text(), "limit is 1 to 1000") {
		t.Errorf("limit 5000: %s", res.Text())
	}
}
