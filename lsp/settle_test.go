package lsp

import (
	"context"
	"fmt"
	"testing"
	"time"
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
