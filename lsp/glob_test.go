package lsp

import (
	"strings"
	"testing"
	"time"
)

func TestGlob(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		yes, no []string
	}{
		{"**/*.go", []string{"main.go", "a/b/c.go", ".go"}, []string{"main.gox", "a/main.go/x", "main.mod"}},
		{"**/*.{go,mod,sum,work}", []string{"go.mod", "x/go.sum", "go.work", "a.go"}, []string{"go.modx", "a.txt"}},
		{"**/*.{mod,work}", []string{"go.mod", "sub/go.work"}, []string{"go.sum"}},
		{"**", []string{"a", "a/b/c"}, nil},
		{"**/pyrightconfig.json", []string{"pyrightconfig.json", "a/b/pyrightconfig.json"}, []string{"a/pyrightconfig.jsonx"}},
		{"src/**/test/*.ts", []string{"src/test/a.ts", "src/x/y/test/b.ts"}, []string{"src/test/x/a.ts", "lib/test/a.ts"}},
		{"a/**", []string{"a", "a/b", "a/b/c"}, []string{"b/a"}},
		{"*.[ch]", []string{"x.c", "x.h"}, []string{"x.cc", "x.o", "d/x.c"}},
		{"file.[!0-9]", []string{"file.a"}, []string{"file.1"}},
		{"?.txt", []string{"a.txt", "é.txt"}, []string{"ab.txt", ".txt"}},
		{"{src,test}/**/*.{c,h}", []string{"src/a.c", "test/x/y.h"}, []string{"lib/a.c"}},
		{"{a,{b,c}}.x", []string{"a.x", "b.x", "c.x"}, []string{"d.x"}},
		{"{a,b", []string{"{a,b"}, []string{"a"}},
		{"x[", []string{"x["}, []string{"x"}},
		{"/abs/**/*.go", []string{"/abs/a.go", "/abs/b/c.go"}, []string{"/other/a.go"}},
	} {
		g, err := compileGlob(tt.pattern)
		if err != nil {
			t.Errorf("compile %q: %v", tt.pattern, err)
			continue
		}
		for _, p := range tt.yes {
			if !g.match(p) {
				t.Errorf("%q does not match %q", tt.pattern, p)
			}
		}
		for _, p := range tt.no {
			if g.match(p) {
				t.Errorf("%q matches %q", tt.pattern, p)
			}
		}
	}
	if _, err := compileGlob(strings.Repeat("{a,b}", 10)); err == nil {
		t.Error("1024 alternatives compiled")
	}
}

// hasMeta reports whether s holds glob syntax.
func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[]{},") }

// FuzzGlob checks properties of the matcher: a pattern without glob syntax
// matches exactly itself; {p,q} matches what p or q matches; **/p matches
// what p matches under any directories; * never crosses a slash; and
// matching ends quickly whatever the input.
func FuzzGlob(f *testing.F) {
	f.Add("**/*.{go,mod}", "a/b.go", "x.mod")
	f.Add("a*b*c*d", "aXbXcXd", "abcd")
	f.Add("**/**/**/x", "a/b/c/x", "x")
	f.Add("[!a-c]?{1,2}", "d11", "a22")
	f.Fuzz(func(t *testing.T, pattern, p1, p2 string) {
		if len(pattern) > 200 || len(p1) > 200 || len(p2) > 200 {
			return
		}
		start := time.Now()
		g, err := compileGlob(pattern)
		if err != nil {
			return
		}
		for _, p := range []string{p1, p2} {
			g.match(p)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Fatalf("matching took %v", el)
		}
		// A literal pattern matches exactly itself.
		if !hasMeta(p1) {
			lit, err := compileGlob(p1)
			if err != nil {
				t.Fatal(err)
			}
			if !lit.match(p1) {
				t.Errorf("literal %q does not match itself", p1)
			}
			if p2 != p1 && lit.match(p2) {
				t.Errorf("literal %q matches %q", p1, p2)
			}
		}
		// Alternation is union, for alternatives without braces, commas or
		// brackets (a class may hold the comma: {[a,]} is one class).
		if !strings.ContainsAny(pattern, "{},[]") && !strings.ContainsAny(p1, "{},[]") {
			if alt, err := compileGlob("{" + pattern + "," + p1 + "}"); err == nil {
				a, _ := compileGlob(pattern)
				b, _ := compileGlob(p1)
				if got, want := alt.match(p2), a.match(p2) || b.match(p2); got != want {
					t.Errorf("{%q,%q} on %q: %v, want %v", pattern, p1, p2, got, want)
				}
			}
		}
		// **/ in front adds any directories.
		if deep, err := compileGlob("**/" + pattern); err == nil && g.match(p1) {
			if !deep.match(p1) || !deep.match("x/y/"+p1) {
				t.Errorf("**/%q does not match %q under directories", pattern, p1)
			}
		}
		// * matches one segment.
		star, _ := compileGlob("*")
		if star.match(p1) == strings.Contains(p1, "/") {
			t.Errorf("* on %q", p1)
		}
	})
}
