package lsp

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSettleAfterAnotherDocumentsChange: a server that computes each
// message's sets when it arrives and publishes them a moment later (so a
// set computed before it took in the next change arrives after that
// change was sent), and that publishes only the sets that changed (the
// changed document's too). a.s is changed to use a name, then b.s to
// define it: the first publish for a.s's current version says the name
// is undefined, and Settle of a.s must wait for the server's answer to
// b.s's change. The server never gives one (b.s's set did not change), so
// Settle waits for the server's quiet instead and does not time out; the
// set is then the right one, but without the server's word on it:
// partial, and the reason says why.
func TestSettleAfterAnotherDocumentsChange(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(dir)
	opts.QuietPeriod = 0
	m := newManager(t, []ServerConfig{scriptConfig("defs", ".s", "-defs", "-only-changed", "-publish-delay", "100ms")}, opts)
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "USE f0\n")
	b := writeSource(t, dir, "b.s", "DEF f0\n")
	for _, p := range []string{a, b} {
		if err := m.Open(ctx, p); err != nil {
			t.Fatal(err)
		}
		if res := settle(t, m, p); !res.Fresh {
			t.Fatalf("settle %s: %+v", p, res)
		}
	}
	// a.s was settled before b.s defined f0: its set changes with b.s's
	// open, and only a Settle of it says when that is known (a drain
	// right after b.s's Settle may come before a.s's new set arrives).
	if res := settle(t, m, a); !res.Fresh {
		t.Fatalf("settle a.s after b.s's open: %+v", res)
	}
	if got, notes := drainMessages(t, m); len(got) != 0 || len(notes) != 0 {
		t.Fatalf("after open: %v %q", got, notes)
	}
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("f%d", i)
		if err := m.Change(ctx, a, "USE "+name+"\n"); err != nil {
			t.Fatal(err)
		}
		// The server's set for a.s, computed now, arrives 100 ms later:
		// after this change.
		time.Sleep(50 * time.Millisecond)
		if err := m.Change(ctx, b, "DEF "+name+"\n"); err != nil {
			t.Fatal(err)
		}
		res := settle(t, m, a)
		set, _, _ := m.currentSet(a)
		if !res.Fresh || res.Status != StatusPartial || len(set) != 0 {
			t.Errorf("change %d: settle of a.s: %s %s (%s), set %+v", i, res.Freshness, res.Status, res.Reason, set)
		}
		if !strings.Contains(res.Reason, "did not answer the change of b.s") {
			t.Errorf("change %d: reason %q", i, res.Reason)
		}
		if got, _ := drainMessages(t, m); len(got["a.s"]) != 0 {
			t.Errorf("change %d: drained %v", i, got)
		}
	}
}

// TestSettleChangeNeverAnswered: a server that publishes only sets that
// changed (typescript-language-server publishes nothing when a document's
// set stays empty) and has answered a change before. Silence after a
// change is still no answer: Settle says partial, that the server may not
// republish an unchanged set, and Drain notes the file, long before the
// timeout.
func TestSettleChangeNeverAnswered(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(dir)
	opts.QuietPeriod = 0
	opts.SettleTimeout = 30 * time.Second
	m := newManager(t, []ServerConfig{scriptConfig("defs", ".s", "-defs", "-only-changed")}, opts)
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "x\n")
	if err := m.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	if res := settle(t, m, a); !res.Fresh {
		t.Fatalf("settle after open: %+v", res)
	}
	if err := m.Change(ctx, a, "USE g\n"); err != nil {
		t.Fatal(err)
	}
	if res := settle(t, m, a); !res.Fresh || res.Status != StatusComplete {
		t.Fatalf("settle after a change it answers: %+v", res)
	}
	drainMessages(t, m)
	// The same set: the server publishes nothing.
	if err := m.Change(ctx, a, "USE g\nmore\n"); err != nil {
		t.Fatal(err)
	}
	res := settle(t, m, a)
	if res.Fresh || res.Freshness != FreshTimedOut || res.Status != StatusPartial ||
		!strings.Contains(res.Reason, "may not republish a set that did not change") {
		t.Errorf("settle after a change it does not answer: %+v", res)
	}
	if _, notes := drainMessages(t, m); len(notes) != 1 ||
		!strings.HasPrefix(notes[0], "a.s: diagnostics may be stale or incomplete: defs published nothing for its last change within") {
		t.Errorf("notes %q", notes)
	}
}

// TestSettleAfterAnotherDocumentReopenedUnchanged: a document reopened
// with the text it had (Manager.resend, as an EditSet makes its checked
// files current) gives the server nothing new, so it is not a change that
// another document must wait for the server to answer. The server here
// answers no message whose set did not change, as
// typescript-language-server does; counting the reopen as a change made
// the other document's Settle wait for an answer that never comes, then
// say partial.
func TestSettleAfterAnotherDocumentReopenedUnchanged(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(dir)
	opts.QuietPeriod = 0
	m := newManager(t, []ServerConfig{scriptConfig("defs", ".s", "-defs", "-only-changed")}, opts)
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "USE f0\n")
	b := writeSource(t, dir, "b.s", "DEF f0\n")
	for _, p := range []string{a, b} {
		if err := m.Open(ctx, p); err != nil {
			t.Fatal(err)
		}
		if res := settle(t, m, p); !res.Fresh {
			t.Fatalf("settle %s: %+v", p, res)
		}
	}
	for i := 1; i <= 3; i++ {
		// A set that changes, so the server answers it.
		if err := m.Change(ctx, a, fmt.Sprintf("USE f0\nUSE g%d\n", i)); err != nil {
			t.Fatal(err)
		}
		if err := m.resend(ctx, b); err != nil {
			t.Fatal(err)
		}
		res := settle(t, m, a)
		set, _, _ := m.currentSet(a)
		if !res.Fresh || res.Status != StatusComplete || len(set) != 1 || set[0].Message != fmt.Sprintf("undefined: g%d", i) {
			t.Errorf("round %d: settle of a.s: %s %s (%s), set %+v", i, res.Freshness, res.Status, res.Reason, set)
		}
	}
}
