package lsp

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idebridge/idebridge/internal/fileuri"
)

// TestSettleWaitForProgress: a server that publishes errors first and
// warnings later in the same version, inside one work-done progress (as
// gopls does with analysis results).
func TestSettleWaitForProgress(t *testing.T) {
	for _, wait := range []bool{false, true} {
		t.Run(fmt.Sprint("wait=", wait), func(t *testing.T) {
			dir := t.TempDir()
			opts := testOptions(dir)
			opts.WaitForProgress = wait
			m := newManager(t, []ServerConfig{scriptConfig("two", ".s", "-progress", "-two-phase", "300ms")}, opts)
			a := writeSource(t, dir, "a.s", "ERROR WARN")
			if err := m.Open(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			res := settle(t, m, a)
			got, _ := drainMessages(t, m)
			if !wait {
				if res.Freshness != FreshPublished || fmt.Sprint(got["a.s"]) != "[0:0-5 found ERROR]" {
					t.Errorf("fast settle: %v %v", res.Freshness, got)
				}
				// The rest comes with a later drain.
				waitFor(t, "the second publish", func() bool {
					got, _ := drainMessages(t, m)
					return fmt.Sprint(got["a.s"]) == "[0:6-10 found WARN]"
				})
				return
			}
			if res.Freshness != FreshProgressEnded || res.Elapsed < 300*time.Millisecond ||
				fmt.Sprint(got["a.s"]) != "[0:0-5 found ERROR 0:6-10 found WARN]" {
				t.Errorf("settle waiting for progress: %+v %v", res, got)
			}
		})
	}
}

func TestFreshnessString(t *testing.T) {
	for f, want := range map[Freshness]string{
		FreshUnknown: "unknown", FreshPublished: "published", FreshProgressEnded: "progress-ended",
		FreshQuiet: "quiet", FreshTimedOut: "timed-out", Freshness(9): "Freshness(9)",
	} {
		if got := f.String(); got != want {
			t.Errorf("%d: %q, want %q", int(f), got, want)
		}
		if b, _ := f.MarshalText(); string(b) != want {
			t.Errorf("MarshalText %d: %q", int(f), b)
		}
	}
	if !FreshQuiet.Fresh() || FreshTimedOut.Fresh() || FreshUnknown.Fresh() {
		t.Error("Fresh")
	}
}

// TestSettleWaitsForALatePublish: a server that takes 2 s to publish,
// after opening and after a change. Settle waits for it and is right; it
// never reads the silence before as "no errors".
func TestSettleWaitsForALatePublish(t *testing.T) {
	for _, args := range [][]string{{"-publish-delay", "2s"}, {"-publish-delay", "2s", "-unversioned"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			dir := t.TempDir()
			opts := testOptions(dir)
			opts.QuietPeriod = 0 // the default: the server's pace, not a long guess, must make it right
			m := newManager(t, []ServerConfig{scriptConfig("slow", ".s", args...)}, opts)
			ctx := context.Background()
			a := writeSource(t, dir, "a.s", "x ERROR\n")
			if err := m.Open(ctx, a); err != nil {
				t.Fatal(err)
			}
			res := settle(t, m, a)
			if !res.Fresh || res.Elapsed < 2*time.Second || res.Version != 1 {
				t.Errorf("after open: %+v", res)
			}
			if got, notes := drainMessages(t, m); fmt.Sprint(got["a.s"]) != "[0:2-7 found ERROR]" || len(notes) != 0 {
				t.Errorf("after open: %v %q", got, notes)
			}
			if err := m.Change(ctx, a, "WARN\n"); err != nil {
				t.Fatal(err)
			}
			res = settle(t, m, a)
			if !res.Freshness.Fresh() || res.Elapsed < 2*time.Second || res.Version != 2 {
				t.Errorf("after change: %+v", res)
			}
			if got, notes := drainMessages(t, m); fmt.Sprint(got["a.s"]) != "[0:0-4 found WARN]" || len(notes) != 0 {
				t.Errorf("after change: %v %q", got, notes)
			}
			want := FreshPublished
			if len(args) > 2 {
				want = FreshQuiet
			}
			if res.Freshness != want || res.Reason == "" {
				t.Errorf("freshness %v (%s), want %v", res.Freshness, res.Reason, want)
			}
		})
	}
}

// TestSettleServerNeverPublishes: Settle times out, Drain notes the file
// and the server, and the outcome is not fresh.
func TestSettleServerNeverPublishes(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(dir)
	opts.SettleTimeout = 700 * time.Millisecond
	m := newManager(t, []ServerConfig{scriptConfig("mute", ".s", "-never-publish")}, opts)
	a := writeSource(t, dir, "a.s", "ERROR\n")
	if err := m.Open(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	res := settle(t, m, a)
	if res.Freshness != FreshTimedOut || res.Fresh || !strings.Contains(res.Reason, "no publish for it from mute") {
		t.Errorf("settle: %+v", res)
	}
	got, notes := drainMessages(t, m)
	if len(got) != 0 || len(notes) != 1 || !strings.HasPrefix(notes[0], "a.s: diagnostics unknown: mute has not reported any for it") {
		t.Errorf("drained %v %q", got, notes)
	}
	// An unsettled open is noted too: Drain never reads silence as clean.
	b := writeSource(t, dir, "b.s", "ERROR\n")
	if err := m.Open(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if _, notes := drainMessages(t, m); len(notes) != 1 || notes[0] != "b.s: diagnostics unknown: mute has not reported any for it yet" {
		t.Errorf("notes %q", notes)
	}
}

// TestSettlePullDiagnostics: servers that offer textDocument/diagnostic,
// in their initialize answer or by registering it, are asked, and the
// answer is exact for the version asked.
func TestSettlePullDiagnostics(t *testing.T) {
	for _, args := range [][]string{
		{"-pull"},
		{"-pull", "-pull-delay", "700ms"},
		{"-pull-dynamic", "-refresh"},
		{"-pull", "-pull-cancel", "2"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			dir := t.TempDir()
			log := filepath.Join(dir, "server.log")
			m := newManager(t, []ServerConfig{scriptConfig("pull", ".s", append(args, "-log", log)...)}, testOptions(dir))
			ctx := context.Background()
			a := writeSource(t, dir, "a.s", "😀 ERROR\n")
			if err := m.Open(ctx, a); err != nil {
				t.Fatal(err)
			}
			res := settle(t, m, a)
			if res.Freshness != FreshPulled || res.Reason != "pulled for version 1" {
				t.Errorf("after open: %+v", res)
			}
			if got, _ := drainMessages(t, m); fmt.Sprint(got["a.s"]) != "[0:2-7 found ERROR]" {
				t.Errorf("after open: %v", got)
			}
			if err := m.Change(ctx, a, "WARN\n"); err != nil {
				t.Fatal(err)
			}
			if res := settle(t, m, a); res.Freshness != FreshPulled || res.Version != 2 {
				t.Errorf("after change: %+v", res)
			}
			if got, _ := drainMessages(t, m); fmt.Sprint(got["a.s"]) != "[0:0-4 found WARN]" {
				t.Errorf("after change: %v", got)
			}
			// Settled, and nothing sent since: known without asking.
			if res := settle(t, m, a); res.Freshness != FreshPulled || res.Version != 2 {
				t.Errorf("again: %+v", res)
			}
			// Another document opened since: a.s is asked again, answered
			// "unchanged", and its set stands.
			b := writeSource(t, dir, "b.s", "fine\n")
			if err := m.Open(ctx, b); err != nil {
				t.Fatal(err)
			}
			if res := settle(t, m, a); res.Freshness != FreshPulled || res.Version != 2 {
				t.Errorf("after another open: %+v", res)
			}
			if got, _ := drainMessages(t, m); len(got["a.s"]) != 0 {
				t.Errorf("after another open: drained %v", got)
			}
			var unchanged bool
			for _, p := range logged(t, log, "textDocument/diagnostic") {
				unchanged = unchanged || strings.Contains(string(p), `"previousResultId":"2"`)
			}
			if !unchanged {
				t.Error("no pull sent the previous result id")
			}
			if n := len(logged(t, log, "textDocument/publishDiagnostics")); n != 0 {
				t.Errorf("%d publishes", n)
			}
		})
	}
}

// TestSettlePullAfterPartialPublish: a server that answers pulls and also
// publishes, and publishes a partial (empty) set for the document just
// before it answers a pull with the whole set (pyright, between the slices
// of its analysis, on a busy machine). The answer came last; it stands,
// however slowly the publishes before it are applied (here, slowly: a
// large publish for another file comes first).
func TestSettlePullAfterPartialPublish(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, []ServerConfig{scriptConfig("pull", ".s", "-pull", "-pull-interim", "3000")}, testOptions(dir))
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "ERROR\n")
	if err := m.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{"ERROR\n", "WARN ERROR\n"} {
		if i > 0 {
			if err := m.Change(ctx, a, text); err != nil {
				t.Fatal(err)
			}
		}
		if res := settle(t, m, a); res.Freshness != FreshPulled {
			t.Fatalf("step %d: %+v", i, res)
		}
		// Everything the server sent has been applied.
		waitFor(t, "the connection to be idle", func() bool { return m.servers[0].current().conn.idle() })
		got, _ := drainMessages(t, m)
		want := map[int]string{0: "[0:0-5 found ERROR]", 1: "[0:5-10 found ERROR 0:0-4 found WARN]"}[i]
		if fmt.Sprint(got["a.s"]) != want {
			t.Errorf("step %d: drained %v, want %s", i, got["a.s"], want)
		}
	}
}

// TestSettlePullRefresh: workspace/diagnostic/refresh makes the open
// documents be asked again, and a Settle after it does not take the old
// answer as current.
func TestSettlePullRefresh(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "server.log")
	m := newManager(t, []ServerConfig{scriptConfig("pull", ".s", "-pull", "-refresh", "-log", log)}, testOptions(dir))
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "ERROR\n")
	b := writeSource(t, dir, "b.s", "WARN\n")
	for _, p := range []string{a, b} {
		if err := m.Open(ctx, p); err != nil {
			t.Fatal(err)
		}
		settle(t, m, p)
	}
	drainMessages(t, m)
	before := len(logged(t, log, "textDocument/diagnostic"))
	if err := m.Change(ctx, a, "fine\n"); err != nil { // answered by a refresh
		t.Fatal(err)
	}
	settle(t, m, a)
	// Both documents are asked again after the refresh, in the background.
	waitFor(t, "pulls after the refresh", func() bool {
		var uris []string
		for _, p := range logged(t, log, "textDocument/diagnostic")[before:] {
			uris = append(uris, string(p))
		}
		return strings.Contains(fmt.Sprint(uris), "b.s")
	})
	if res := settle(t, m, b); res.Freshness != FreshPulled {
		t.Errorf("b: %+v", res)
	}
}

// TestSettleLearnsAServersPace: a server without versions that publishes
// in two steps, 400 ms apart (errors, then everything). Settle cannot know
// the first time that a second step follows; once it has seen one after a
// change, it waits for it after every change.
func TestSettleLearnsAServersPace(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(dir)
	opts.QuietPeriod = 0
	m := newManager(t, []ServerConfig{scriptConfig("steps", ".s", "-unversioned", "-two-phase", "400ms")}, opts)
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "ERROR\n")
	if err := m.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	settle(t, m, a)
	published := func(n uint64) func() bool {
		return func() bool { return m.reg.Stats().Published >= n }
	}
	waitFor(t, "the open's second step", published(2))
	// The first change: its second step is learned.
	if err := m.Change(ctx, a, "WARN ERROR\n"); err != nil {
		t.Fatal(err)
	}
	settle(t, m, a)
	waitFor(t, "the change's second step", published(4))
	drainMessages(t, m)
	for i, text := range []string{"ERROR WARN\n", "xx WARN\n", "x WARN ERROR\n"} { // each WARN is new: at a new place
		if err := m.Change(ctx, a, text); err != nil {
			t.Fatal(err)
		}
		res := settle(t, m, a)
		got, _ := drainMessages(t, m)
		// The WARN comes with the second step only.
		if res.Freshness != FreshQuiet || !strings.Contains(fmt.Sprint(got["a.s"]), "found WARN") {
			t.Errorf("change %d: settled before the second step: %+v %v", i, res, got)
		}
	}
}

// TestSettleReopenIgnoresTheCloseClear: servers answer didClose with an
// empty publish without a version, which can arrive after the document
// was opened again; it must not pass for the new session's answer.
func TestSettleReopenIgnoresTheCloseClear(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(dir)
	opts.QuietPeriod = 0
	m := newManager(t, []ServerConfig{scriptConfig("clear", ".s", "-unversioned", "-clear-on-close", "-publish-delay", "300ms")}, opts)
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "ERROR\n")
	for i := range 5 {
		if err := m.Open(ctx, a); err != nil {
			t.Fatal(err)
		}
		text := strings.Repeat("x", i) + " WARN\n" // new text each time: something to deliver
		if err := m.Change(ctx, a, text); err != nil {
			t.Fatal(err)
		}
		settle(t, m, a)
		drainMessages(t, m)
		if err := m.Close(ctx, a); err != nil {
			t.Fatal(err)
		}
		writeFile(t, a, strings.Repeat("y", i)+" ERROR\n")
		if err := m.Open(ctx, a); err != nil {
			t.Fatal(err)
		}
		res := settle(t, m, a)
		got, _ := drainMessages(t, m)
		if res.Freshness != FreshQuiet || len(got["a.s"]) != 1 || !strings.Contains(got["a.s"][0], "found ERROR") {
			t.Fatalf("round %d: %+v %v", i, res, got)
		}
		if err := m.Close(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSettleLearnsFindingsAfterAnEmptySet: a versioned server that
// publishes an empty set and, a moment later and within its work-done
// progress, findings for the same version (gopls's analyzers run only on
// packages without type errors). Once seen, an empty publish from it
// waits for the progress to end; a publish with findings still settles
// at once.
func TestSettleLearnsFindingsAfterAnEmptySet(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, []ServerConfig{scriptConfig("vet", ".s", "-progress", "-two-phase", "300ms")}, testOptions(dir))
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "WARN\n")
	if err := m.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	settle(t, m, a) // the first time it cannot know
	waitFor(t, "the findings", func() bool { return m.reg.Stats().Published >= 2 })
	drainMessages(t, m)
	if err := m.Change(ctx, a, "x WARN\n"); err != nil {
		t.Fatal(err)
	}
	res := settle(t, m, a)
	// It waits for the findings (published then), or the progress's end.
	if got, _ := drainMessages(t, m); !res.Fresh || res.Elapsed < 300*time.Millisecond || fmt.Sprint(got["a.s"]) != "[0:2-6 found WARN]" {
		t.Errorf("an empty publish, learned: %+v %v", res, got)
	}
	if err := m.Change(ctx, a, "ERROR\n"); err != nil {
		t.Fatal(err)
	}
	res = settle(t, m, a)
	if got, _ := drainMessages(t, m); res.Freshness != FreshPublished || res.Elapsed >= 300*time.Millisecond || fmt.Sprint(got["a.s"]) != "[0:0-5 found ERROR]" {
		t.Errorf("a publish with findings: %+v %v", res, got)
	}
}

// TestSettleEmptyThenLateLoad: a server without versions that publishes
// an empty set at once for a just-opened file, and only about 120 ms later
// creates and begins a progress for its indexing, after which it publishes
// the real set. The empty set is a server's first answer within its first
// load: Settle does not take it as final.
func TestSettleEmptyThenLateLoad(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(dir)
	opts.QuietPeriod = 0 // the learned pace alone
	m := newManager(t, []ServerConfig{scriptConfig("late", ".s", "-unversioned", "-empty-then-load", "120ms")}, opts)
	a := writeSource(t, dir, "a.s", "ERROR\n")
	if err := m.Open(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	res := settle(t, m, a)
	got, _ := drainMessages(t, m)
	if !res.Fresh || fmt.Sprint(got["a.s"]) != "[0:0-5 found ERROR]" {
		t.Errorf("settled %v (%s); drained %v", res.Freshness, res.Reason, got["a.s"])
	}
}

// TestSettlePullDuringFirstLoad: a server that answers pulls with an
// empty set while its first load runs (rust-analyzer, before cargo
// metadata and its first analysis are done). The answer is provisional:
// the document is asked again when the load's progress ends.
func TestSettlePullDuringFirstLoad(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, []ServerConfig{scriptConfig("loading", ".s", "-pull", "-loading", "1s", "-pull-empty-while-loading")}, testOptions(dir))
	a := writeSource(t, dir, "a.s", "ERROR\n")
	if err := m.Open(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	res := settle(t, m, a)
	got, _ := drainMessages(t, m)
	if !res.Fresh || fmt.Sprint(got["a.s"]) != "[0:0-5 found ERROR]" {
		t.Errorf("settled %v (%s); drained %v", res.Freshness, res.Reason, got["a.s"])
	}
}

// TestSettleStalledProgress: a server whose indexing progress begins,
// reports twice and never ends. Waiting for its work to end (as the
// command line does), Settle takes the publish for the version once the
// progress has stopped reporting, and says so, rather than waiting for
// the timeout.
func TestSettleStalledProgress(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(dir)
	opts.WaitForProgress = true
	opts.SettleTimeout = 40 * time.Second
	m := newManager(t, []ServerConfig{scriptConfig("stall", ".s", "-stall-progress")}, opts)
	a := writeSource(t, dir, "a.s", "ERROR\n")
	if err := m.Open(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	res := settle(t, m, a)
	got, _ := drainMessages(t, m)
	if !res.Fresh || res.Status != StatusPartial || !strings.Contains(res.Reason, "(indexing) stopped reporting") || fmt.Sprint(got["a.s"]) != "[0:0-5 found ERROR]" {
		t.Errorf("settled %v (%s); drained %v", res.Freshness, res.Reason, got["a.s"])
	}
}

// TestSettleServerStatus: a server that says it is loading only with
// rust-analyzer's experimental/serverStatus (quiescent false, then true
// three seconds later, beyond the first-load grace), and answers pulls
// with an empty set until then. The client advertises the capability,
// and the status is waited for like a work-done progress.
func TestSettleServerStatus(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, []ServerConfig{scriptConfig("status", ".s", "-pull", "-status-loading", "3s", "-pull-empty-while-loading")}, testOptions(dir))
	a := writeSource(t, dir, "a.s", "ERROR\n")
	if err := m.Open(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	res := settle(t, m, a)
	got, _ := drainMessages(t, m)
	if !res.Fresh || fmt.Sprint(got["a.s"]) != "[0:0-5 found ERROR]" {
		t.Errorf("settled %v (%s); drained %v", res.Freshness, res.Reason, got["a.s"])
	}
}

// TestSettleStatus: the one word on each result. A server that never
// publishes: unknown. One that published for the document and then
// nothing for its change: partial. One that answers: complete.
func TestSettleStatus(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(dir)
	opts.SettleTimeout = 500 * time.Millisecond
	m := newManager(t, []ServerConfig{
		scriptConfig("never", ".n", "-never-publish"),
		scriptConfig("quiet", ".q", "-quiet-changes"),
		scriptConfig("fine", ".s"),
	}, opts)
	ctx := context.Background()
	n, q, s := writeSource(t, dir, "a.n", "ERROR\n"), writeSource(t, dir, "a.q", "ERROR\n"), writeSource(t, dir, "a.s", "fine\n")
	for _, p := range []string{n, q, s} {
		if err := m.Open(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if res := settle(t, m, s); res.Status != StatusComplete {
		t.Errorf("answered: %+v", res)
	}
	if res := settle(t, m, n); res.Status != StatusUnknown || !strings.Contains(res.Reason, "never") {
		t.Errorf("never published: %+v", res)
	}
	settle(t, m, q)
	if err := m.Change(ctx, q, "WARN\n"); err != nil {
		t.Fatal(err)
	}
	if res := settle(t, m, q); res.Status != StatusPartial || !strings.Contains(res.Reason, "quiet") {
		t.Errorf("published, then nothing for a change: %+v", res)
	}
}

// A progress that ended after a change, followed by a publish for another
// file, was that file's work: it does not say that the changed document's
// set is unchanged (pylsp lints each document under a progress of its own,
// ending it just before the publish, and lints a change only after a
// debounce).
func TestScriptedProgressOfAnotherDocument(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(dir)
	opts.QuietPeriod = 100 * time.Millisecond
	m := newManager(t, []ServerConfig{scriptConfig("lint", ".s", "-unversioned", "-other-first", "800ms")}, opts)
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "ERROR")
	if err := m.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	settle(t, m, a)
	if got, _ := drainMessages(t, m); len(got["a.s"]) != 1 {
		t.Fatalf("after open: %q", got)
	}
	if err := m.Change(ctx, a, "fine"); err != nil {
		t.Fatal(err)
	}
	res := settle(t, m, a)
	if !res.Freshness.Fresh() || strings.Contains(res.Reason, "unchanged") {
		t.Errorf("settle after the change: %v (%s)", res.Freshness, res.Reason)
	}
	if got, _ := drainMessages(t, m); len(got["a.s"]) != 0 {
		t.Errorf("after the change: %q, want the new, empty set", got)
	}
}

// A progress a server reports around a request (pylsp: under a token of
// its own, for each request) is the request's work: ended, it does not
// say that a changed document's set is unchanged.
func TestScriptedRequestProgressIsNotUnchanged(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(dir)
	opts.QuietPeriod = 100 * time.Millisecond
	opts.SettleTimeout = time.Second
	m := newManager(t, []ServerConfig{scriptConfig("own", ".s", "-quiet-changes", "-own-progress")}, opts)
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "one two\nthree four\n")
	if err := m.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	settle(t, m, a)
	if err := m.Change(ctx, a, "one two\nthree four ERROR\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Definition(ctx, Pos{Path: a, Line: 2, Symbol: "four"}); err != nil {
		t.Fatal(err)
	}
	if res := settle(t, m, a); res.Freshness != FreshTimedOut {
		t.Errorf("settle after the change: %v (%s), want timed-out: the server published nothing for it", res.Freshness, res.Reason)
	}
}

// TestSettleServerStatusBusyAfterChange: a server that, after its first
// load, says it is busy again (rust-analyzer reloads the workspace when a
// file it watches changes) and answers pulls with an empty set until it is
// ready. A pull answered while the server says it is busy is provisional,
// not only during the first load.
func TestSettleServerStatusBusyAfterChange(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, []ServerConfig{scriptConfig("status", ".s", "-pull", "-status-loading", "200ms", "-pull-empty-while-loading",
		"-busy-on-change", "1500ms")}, testOptions(dir))
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "ERROR\n")
	if err := m.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	if res := settle(t, m, a); !res.Fresh {
		t.Fatalf("settle after open: %v (%s)", res.Freshness, res.Reason)
	}
	drainMessages(t, m)
	if err := m.Change(ctx, a, "ERROR WARN\n"); err != nil {
		t.Fatal(err)
	}
	res := settle(t, m, a)
	got, _ := drainMessages(t, m)
	if !res.Fresh || fmt.Sprint(got["a.s"]) != "[0:6-10 found WARN]" {
		t.Errorf("settled %v (%s); drained %v", res.Freshness, res.Reason, got["a.s"])
	}
}

// TestSettlePullAndPublish: a server that answers pulls with its own
// analysis and publishes a checker's findings besides (rust-analyzer and
// cargo check). The document's set is the union of both; after a save,
// the checker's work (a progress it begins 100 ms after the save) is
// waited for.
func TestSettlePullAndPublish(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, []ServerConfig{scriptConfig("both", ".s", "-pull", "-push-check", "300ms", "-check-start", "100ms")}, testOptions(dir))
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "ERROR CHECK\n")
	if err := m.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	res := settle(t, m, a)
	got, _ := drainMessages(t, m)
	if !res.Fresh || fmt.Sprint(got["a.s"]) != "[0:0-5 found ERROR 0:6-11 check found CHECK]" {
		t.Errorf("after open: settled %v (%s); drained %v", res.Freshness, res.Reason, got["a.s"])
	}
	// A change alone: the checker's findings stay as they were found.
	if err := m.Change(ctx, a, "CHECK\n"); err != nil {
		t.Fatal(err)
	}
	res = settle(t, m, a)
	got, _ = drainMessages(t, m)
	if !res.Fresh || fmt.Sprint(got["a.s"]) != "[0:5-5 check found CHECK]" {
		t.Errorf("after a change: settled %v (%s); drained %v", res.Freshness, res.Reason, got["a.s"])
	}
	// A save runs the checker again.
	writeFile(t, a, "CHECK ERROR CHECK\n")
	if err := m.Change(ctx, a, "CHECK ERROR CHECK\n"); err != nil {
		t.Fatal(err)
	}
	if err := m.Save(ctx, a); err != nil {
		t.Fatal(err)
	}
	res = settle(t, m, a)
	got, _ = drainMessages(t, m)
	if !res.Fresh || fmt.Sprint(got["a.s"]) != "[0:0-5 check found CHECK 0:6-11 found ERROR 0:12-17 check found CHECK]" {
		t.Errorf("after a save: settled %v (%s); drained %v", res.Freshness, res.Reason, got["a.s"])
	}
}

// TestPulledSetGoesWithItsDocument: what a pull answered stands for the
// document only while it is open. Servers clear by publishing only what
// they published (pyright, asked by pulls, never publishes for a document
// it answered pulls for), so a pulled set registered after the close
// would stand for the closed file for good: every later reader would take
// it for the file's. Pulls answered while the document closes (a
// refresh's, a Settle's) must not register after the close.
func TestPulledSetGoesWithItsDocument(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, []ServerConfig{scriptConfig("pull", ".s", "-pull")}, testOptions(dir))
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "ERROR\n")
	uri := fileuri.FromPath(a)
	for i := range 150 {
		if err := m.Open(ctx, a); err != nil {
			t.Fatal(err)
		}
		settle(t, m, a)
		inst := m.servers[0].current()
		var wg sync.WaitGroup
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = inst.pull(ctx, uri) // the close may come first: ErrNotOpen
			}()
		}
		runtime.Gosched()
		if err := m.Close(ctx, a); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if p, ok := m.reg.LastPublish("pull", uri); ok {
			t.Fatalf("round %d: after the close, the registry still holds %+v for it", i, p)
		}
	}
}

// TestPublishedSetGoesWithItsDocument: a versioned publish is about the
// open document; one handled while the document closes must not reach
// the registry after the close cleared it, or, from a server that does
// not clear closed files, it would stand for the closed file for good.
// The server publishes a large set on each open (its conversion widens
// the window), and the document is closed at once.
func TestPublishedSetGoesWithItsDocument(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, []ServerConfig{scriptConfig("flood", ".s", "-flood", "2000")}, testOptions(dir))
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "ERROR\n")
	uri := fileuri.FromPath(a)
	for i := range 100 {
		if err := m.Open(ctx, a); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			settle(t, m, a)
		}
		inst := m.servers[0].current()
		before := inst.conn.received()
		waitFor(t, "the publish to begin arriving", func() bool { return inst.conn.received() > before || i%2 == 1 })
		if err := m.Close(ctx, a); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the connection to be idle", func() bool { return inst.conn.idle() })
		if p, ok := m.reg.LastPublish("flood", uri); ok {
			t.Fatalf("round %d: after the close, the registry still holds %+v for it", i, p)
		}
	}
}
