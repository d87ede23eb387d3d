//go:build linux

package lsp

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// reviewer is an ApplyOptions.Review that answers from a table and
// records what it was asked.
type reviewer struct {
	asked  []string
	answer func(path, proposed string) (string, bool, error)
}

func (r *reviewer) review(_ context.Context, path, proposed string) (string, bool, error) {
	r.asked = append(r.asked, path)
	return r.answer(path, proposed)
}

// Apply with a review writes nothing unless every file is accepted; a
// refusal leaves the set staged as it was, naming the file; a text the
// review changed is what is written, and the check is of it.
func TestEditSetApplyReview(t *testing.T) {
	f := newEditFixture(t)
	m := newEditManager(t, f)
	ctx := context.Background()
	breaking := []Edit{
		{File: f.a, OldString: addSignature, NewString: "func Add(a, b, c int) int {\n\treturn a + b + c\n"},
		{File: f.b, OldString: "Add(x, x)", NewString: "Add(x, x, 0)"},
	}

	t.Run("one of two rejected: nothing written, set intact", func(t *testing.T) {
		sum := treeSum(t, f.dir)
		es := m.NewEditSet()
		defer es.Discard(ctx)
		if err := es.Stage(ctx, breaking); err != nil {
			t.Fatal(err)
		}
		diff := es.Diff()
		r := &reviewer{answer: func(path, proposed string) (string, bool, error) { return proposed, path != f.b, nil }}
		applied, err := es.Apply(ctx, &ApplyOptions{Review: r.review})
		var re *ReviewRefusedError
		if applied != nil || !errors.As(err, &re) || re.Path != f.b || re.Reviewed != 1 || re.Err != nil || !strings.Contains(err.Error(), "b.go was rejected in review; nothing was written") {
			t.Fatalf("apply with b.go rejected: %+v %v", applied, err)
		}
		if !slices.Equal(r.asked, []string{f.a, f.b}) {
			t.Errorf("asked about %v", r.asked)
		}
		if got := treeSum(t, f.dir); got != sum {
			t.Fatal("a rejected review wrote to the tree")
		}
		if got := es.Diff(); got != diff || !slices.Equal(es.Files(), []string{f.a, f.b}) {
			t.Errorf("the staged set changed: %v\n%s", es.Files(), got)
		}
		// Still staged and checkable: c.go is broken by the staged text.
		c, err := es.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := errorsIn(fileCheck(c, f.c).Introduced); len(got) != 1 {
			t.Errorf("c.go after the refused apply: %q", got)
		}

		// A review that fails (a lost connection) refuses the same way.
		lost := errors.New("connection lost")
		r = &reviewer{answer: func(string, string) (string, bool, error) { return "", false, lost }}
		_, err = es.Apply(ctx, &ApplyOptions{Review: r.review})
		if !errors.As(err, &re) || re.Path != f.a || !errors.Is(err, lost) || len(r.asked) != 1 {
			t.Fatalf("apply with a failed review: %v (asked %v)", err, r.asked)
		}
		// An ended context: no file is asked about.
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		r = &reviewer{answer: func(_, p string) (string, bool, error) { return p, true, nil }}
		if _, err = es.Apply(cctx, &ApplyOptions{Review: r.review}); err == nil || len(r.asked) != 0 {
			t.Fatalf("apply with an ended context: %v (asked %v)", err, r.asked)
		}
		if got := treeSum(t, f.dir); got != sum {
			t.Fatal("a refused apply wrote to the tree")
		}
	})

	t.Run("user-modified text is written and checked", func(t *testing.T) {
		es := m.NewEditSet()
		defer es.Discard(ctx)
		if err := es.Stage(ctx, breaking); err != nil {
			t.Fatal(err)
		}
		// The user accepts a.go as proposed, and edits b.go in the diff:
		// a call that is wrong again.
		const userB = "package calc\n\n// Twice doubles.\nfunc Twice(x int) int { return Add(x, x, \"zero\") }\n"
		r := &reviewer{answer: func(path, proposed string) (string, bool, error) {
			if path == f.b {
				return userB, true, nil
			}
			return proposed, true, nil
		}}
		applied, err := es.Apply(ctx, &ApplyOptions{Review: r.review})
		if err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, f.b); got != userB {
			t.Errorf("b.go on disk:\n%s", got)
		}
		if !strings.Contains(mustRead(t, f.a), "func Add(a, b, c int) int {") {
			t.Errorf("a.go on disk:\n%s", mustRead(t, f.a))
		}
		if !slices.Equal(applied.Modified, []string{f.b}) {
			t.Errorf("modified: %v", applied.Modified)
		}
		t.Logf("check:\n%s", applied.Check.Render(f.dir))
		fb := fileCheck(applied.Check, f.b)
		if fb == nil || fb.Status != StatusComplete {
			t.Fatalf("b.go's check: %+v", fb)
		}
		if got := errorsIn(fb.Introduced); len(got) != 1 || !strings.Contains(got[0], `"zero"`) {
			t.Errorf("b.go introduced %q, want the user's error", got)
		}
		if !strings.Contains(applied.Check.Diff, `Add(x, x, "zero")`) {
			t.Errorf("diff:\n%s", applied.Check.Diff)
		}
		// c.go still calls Add with two arguments: broken, and said so.
		if got := errorsIn(fileCheck(applied.Check, f.c).Introduced); len(got) != 1 {
			t.Errorf("c.go introduced %q", got)
		}
	})
}

// A rename's edits stage only on the text the rename was computed from:
// a file changed on disk since refuses the whole stage, and nothing of
// the rename is staged.
func TestEditSetRenameChangedSince(t *testing.T) {
	f := newEditFixture(t)
	m := newEditManager(t, f)
	ctx := context.Background()
	p, err := m.Rename(ctx, Pos{Path: f.a, Line: 4, Symbol: "Add"}, "Plus")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, f.b, strings.Replace(fixtureB, "// Twice doubles.", "// Twice doubles, says the user.", 1))
	es := m.NewEditSet()
	defer es.Discard(ctx)
	err = es.Stage(ctx, p.Edits())
	if err == nil || !strings.Contains(err.Error(), "b.go): the file is no longer the text the proposal was computed from") {
		t.Fatalf("stage of a rename over a changed file: %v", err)
	}
	if got := es.Files(); len(got) != 0 {
		t.Errorf("staged %v", got)
	}
}
