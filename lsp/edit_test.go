package lsp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// One edit set at a time is staged on a manager: a second waits until the
// first is discarded or applied, or its context ends (ErrEditSetBusy).
// Files no server serves are staged and written like the others, with no
// diagnostics. A failed Stage that staged nothing holds nothing.
func TestEditSetOneAtATime(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	writeFile(t, notes, "one\ntwo\n")
	m := newManager(t, nil, &ManagerOptions{ProjectDir: dir})
	ctx := context.Background()

	first := m.NewEditSet()
	if err := first.Stage(ctx, []Edit{{File: notes, OldString: "one", NewString: "uno"}}); err != nil {
		t.Fatal(err)
	}
	second := m.NewEditSet()
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	err := second.Stage(short, []Edit{{File: notes, OldString: "two", NewString: "dos"}})
	cancel()
	if !errors.Is(err, ErrEditSetBusy) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second stage while the first is staged: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- second.Stage(ctx, []Edit{{File: notes, OldString: "two", NewString: "dos"}}) }()
	select {
	case err := <-done:
		t.Fatalf("the second stage did not wait: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	c, err := first.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != 1 || c.Files[0].Server != "" || c.Status != StatusComplete || !strings.Contains(c.Diff, "+uno") {
		t.Errorf("check of a file no server serves: %+v", c)
	}
	if err := first.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	applied, err := second.Apply(ctx, nil)
	if err != nil || len(applied.Written) != 1 {
		t.Fatalf("apply: %+v %v", applied, err)
	}
	if b, _ := os.ReadFile(notes); string(b) != "one\ndos\n" {
		t.Errorf("written: %q", b)
	}

	// A failed stage leaves the manager free.
	third := m.NewEditSet()
	if err := third.Stage(ctx, []Edit{{File: notes, OldString: "nowhere", NewString: "x"}}); err == nil {
		t.Fatal("a stage of a missing old_string succeeded")
	}
	fourth := m.NewEditSet()
	short, cancel = context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := fourth.Stage(short, []Edit{{File: notes, NewText: new(string)}}); err != nil {
		t.Fatalf("stage after a failed one: %v", err)
	}
	if err := fourth.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, maxTrackedFileBytes+1); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Edit{{File: notes}, {File: notes, OldString: "one", Symbol: "x"}, {File: filepath.Join(dir, "none.txt"), NewText: new(string)},
		{File: big, NewText: new(string)}} {
		err := m.NewEditSet().Stage(ctx, []Edit{bad})
		if err == nil || !strings.Contains(err.Error(), "edit 1") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// Apply with a review refuses a write that would fail (a file changed on
// disk since it was staged) before anyone is asked; nothing is written
// and the edits stay staged.
func TestEditSetReviewAfterTheChecks(t *testing.T) {
	dir := t.TempDir()
	notes, other := filepath.Join(dir, "notes.txt"), filepath.Join(dir, "other.txt")
	writeFile(t, notes, "one\n")
	writeFile(t, other, "two\n")
	m := newManager(t, nil, &ManagerOptions{ProjectDir: dir})
	ctx := context.Background()
	es := m.NewEditSet()
	defer es.Discard(ctx)
	if err := es.Stage(ctx, []Edit{{File: notes, OldString: "one", NewString: "uno"}, {File: other, OldString: "two", NewString: "dos"}}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, other, "two, said the user\n")
	asked := 0
	review := func(_ context.Context, _, proposed string) (string, bool, error) { asked++; return proposed, true, nil }
	_, err := es.Apply(ctx, &ApplyOptions{Review: review})
	if !errors.Is(err, ErrEditConflict) || asked != 0 {
		t.Fatalf("apply over a changed file: %v (asked %d times)", err, asked)
	}
	if b, _ := os.ReadFile(notes); string(b) != "one\n" {
		t.Errorf("notes.txt written: %q", b)
	}
	if got := es.Files(); len(got) != 2 {
		t.Errorf("staged %v", got)
	}
}
