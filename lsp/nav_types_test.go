//go:build linux

package lsp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// typeCase is one server's type hierarchy over its navigation fixture:
// the subtypes of the fixture's Shape and the supertypes of its Square.
// nil wants: the server offers no type hierarchy.
type typeCase struct {
	subAt, superAt string
	sub, super     []string // kind name place
}

var typeCases = map[string]typeCase{
	// gopls calls every named type a class.
	"gopls": {subAt: "shapes.go:4:Shape", sub: []string{"class Square shapes.go:9:6", "class Circle shapes.go:15:6"},
		superAt: "shapes.go:9:Square", super: []string{"interface Shape shapes.go:4:6"}},
	// clangd 14 announces typeHierarchyProvider for the earlier proposal
	// (textDocument/typeHierarchy) and answers LSP 3.17's
	// prepareTypeHierarchy with MethodNotFound: asked the earlier way.
	"clangd": {subAt: "shapes.hpp:4:Shape", sub: []string{"struct Square shapes.hpp:10:8", "struct Circle shapes.hpp:17:8"},
		superAt: "shapes.hpp:10:Square", super: []string{"struct Shape shapes.hpp:4:8"}},
	"pyright":    {subAt: "shapes.py:4:Shape", superAt: "shapes.py:11:Square"},
	"typescript": {subAt: "shapes.ts:2:Shape", superAt: "shapes.ts:7:Square"},
}

func flattenTypes(dir string, items []TypeItem) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, fmt.Sprintf("%s %s %s", it.Kind, it.Name, rel(dir, it.Location)))
	}
	return out
}

// TestTypeHierarchy follows the type hierarchy of each navigation
// fixture on its real server: the subtypes of the interface (or abstract
// class) Shape are the concrete shapes, the supertypes of Square are
// Shape; a server without the type hierarchy (pyright,
// typescript-language-server: no typeHierarchyProvider) fails with
// ErrUnsupported.
func TestTypeHierarchy(t *testing.T) {
	for _, spec := range navSpecs() {
		c, ok := typeCases[spec.name]
		if !ok {
			t.Fatalf("no type hierarchy case for %s", spec.name)
		}
		t.Run(spec.name, func(t *testing.T) {
			t.Parallel()
			dir := navFixture(t, spec.fixture)
			m := navManager(t, spec.config(t, dir), dir, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			render := &NavRenderOptions{ProjectDir: dir}
			if c.sub == nil {
				for _, op := range []NavOp{OpPrepareTypeHierarchy, OpSubtypes, OpSupertypes} {
					res, err := m.Navigate(ctx, NavRequest{Op: op, At: pos(t, dir, c.subAt)})
					if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "does not offer "+string(op)) {
						t.Errorf("%s at %s: %v, %v; want ErrUnsupported", op, c.subAt, res, err)
					}
				}
				return
			}
			prep, err := m.PrepareTypeHierarchy(ctx, pos(t, dir, c.subAt))
			if err != nil {
				t.Fatalf("prepare type hierarchy: %v", err)
			}
			if got := flattenTypes(dir, prep.Items); !cmp.Equal(got, c.super) { // Shape itself
				t.Errorf("prepare type hierarchy at %s: %q", c.subAt, got)
			}
			if prep.Types != nil {
				t.Errorf("prepare type hierarchy has types: %q", flattenTypes(dir, prep.Types))
			}

			sub, err := m.Subtypes(ctx, pos(t, dir, c.subAt))
			if err != nil {
				t.Fatalf("subtypes: %v", err)
			}
			if got := flattenTypes(dir, sub.Types); !cmp.Equal(got, c.sub) {
				t.Errorf("subtypes of %s: got %q, want %q", c.subAt, got, c.sub)
			}
			if sub.Incomplete || sub.Status != StatusComplete || sub.Op != OpSubtypes {
				t.Errorf("subtypes: op %s, status %s (%s)", sub.Op, sub.Status, sub.Reason)
			}
			text := sub.Render(render)
			if !strings.HasPrefix(text, "Subtypes of Shape (") || !strings.Contains(text, fmt.Sprintf("from %s: 2 types", spec.name)) {
				t.Errorf("subtypes rendered:\n%s", text)
			}
			for _, w := range c.sub {
				f := strings.Fields(w)
				found := false
				for _, line := range strings.Split(text, "\n") {
					found = found || strings.HasPrefix(line, f[0]+" "+f[1]+" ") && strings.HasSuffix(line, "  "+f[2])
				}
				if !found {
					t.Errorf("the rendering lacks %q:\n%s", w, text)
				}
			}

			// The second page of one: the exact total, the second type.
			res, err := m.Navigate(ctx, NavRequest{Op: OpSubtypes, At: pos(t, dir, c.subAt), Offset: 1, Limit: 1})
			if err != nil {
				t.Fatalf("subtypes, offset 1: %v", err)
			}
			page := res.(*TypeHierarchy)
			if got := flattenTypes(dir, page.Types); !cmp.Equal(got, c.sub[1:]) || page.Total != 2 || page.Offset != 1 {
				t.Errorf("subtypes, offset 1, limit 1: %q, total %d, offset %d", got, page.Total, page.Offset)
			}
			if p, ok := PageOf(page); !ok || p != (PageInfo{Offset: 1, Returned: 1, Total: 2}) || p.Rest() != 0 {
				t.Errorf("PageOf the second page: %+v, %v", p, ok)
			}
			if text := page.Render(render); !strings.Contains(text, "2 types; showing 2 of 2\n") {
				t.Errorf("the second page rendered:\n%s", text)
			}

			super, err := m.Navigate(ctx, NavRequest{Op: OpSupertypes, At: pos(t, dir, c.superAt)})
			if err != nil {
				t.Fatalf("supertypes: %v", err)
			}
			if got := flattenTypes(dir, super.(*TypeHierarchy).Types); !cmp.Equal(got, c.super) {
				t.Errorf("supertypes of %s: got %q, want %q", c.superAt, got, c.super)
			}
			if text := super.Render(render); !strings.HasPrefix(text, "Supertypes of Square (") {
				t.Errorf("supertypes rendered:\n%s", text)
			}
		})
	}
}
