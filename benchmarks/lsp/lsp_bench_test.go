package lsp

import (
	"context"
	"encoding/json"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idebridge/idebridge/lsp"
)

// newManager returns an lspdiag manager running gopls on w.
func newManager(tb testing.TB, gopls string, w *workspace) *lsp.Manager {
	tb.Helper()
	m, err := lsp.NewManager([]lsp.ServerConfig{lsp.GoplsConfig(gopls, w.dir)}, &lsp.ManagerOptions{
		ProjectDir:    w.dir,
		Env:           environ(tb),
		SettleTimeout: time.Minute,
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = m.Shutdown(ctx)
	})
	return m
}

// lspdiagRound changes path in m, settles and drains; it fails unless the
// change was published for its version.
func lspdiagRound(tb testing.TB, m *lsp.Manager, path, text string) {
	ctx := context.Background()
	if err := m.Change(ctx, path, text); err != nil {
		tb.Fatal(err)
	}
	res, err := m.Settle(ctx, path)
	if err != nil || res.Freshness != lsp.FreshPublished {
		tb.Fatalf("settle: %+v %v", res, err)
	}
	m.Drain()
}

type samples []time.Duration

func (s samples) quantile(q float64) time.Duration {
	c := append(samples(nil), s...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	return c[int(q*float64(len(c)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkChangeToDiagnostics measures, in one run on the same workspace,
// the latency from a change to its diagnostics: through lspdiag (Change,
// Settle, Drain) and through a raw jsonrpc2 client (didChange to the
// publishDiagnostics of that version). Each iteration does one change with
// each client, in alternating order, against two gopls processes. It reports both
// medians and p90s in milliseconds and the ratio of the medians.
func BenchmarkChangeToDiagnostics(b *testing.B) {
	gp := gopls(b)
	for _, tc := range []struct {
		name  string
		file  func(*workspace) string
		texts [2]string
	}{
		{"small", func(w *workspace) string { return w.small }, smallTexts},
		{"nethttp", func(w *workspace) string { return w.nethttp }, httpTexts},
	} {
		b.Run(tc.name, func(b *testing.B) {
			w := newWorkspace(b, 0)
			path := tc.file(w)
			ctx := context.Background()
			m := newManager(b, gp, w)
			if err := m.Open(ctx, path); err != nil {
				b.Fatal(err)
			}
			if _, err := m.Settle(ctx, path); err != nil {
				b.Fatal(err)
			}
			raw := startRaw(b, gp, w.dir, environ(b))
			ch, err := raw.open(ctx, path, tc.texts[0], 1)
			if err != nil {
				b.Fatal(err)
			}
			wait(b, ch)
			version := 1
			rawRound := func(text string) time.Duration {
				version++
				start := time.Now()
				ch, err := raw.change(ctx, path, text, version)
				if err != nil {
					b.Fatal(err)
				}
				wait(b, ch)
				return time.Since(start)
			}
			// Warm both up.
			for i := range 10 {
				lspdiagRound(b, m, path, tc.texts[(i+1)%2])
				rawRound(tc.texts[(i+1)%2])
			}
			var ours, base samples
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				text := tc.texts[i%2]
				ourRound := func() {
					start := time.Now()
					lspdiagRound(b, m, path, text)
					ours = append(ours, time.Since(start))
				}
				// Alternate which client goes first, so neither always
				// runs right after the other's gopls burst.
				if i%2 == 0 {
					ourRound()
					base = append(base, rawRound(text))
				} else {
					base = append(base, rawRound(text))
					ourRound()
				}
			}
			b.StopTimer()
			b.ReportMetric(ms(ours.quantile(0.5)), "lspdiag-median-ms")
			b.ReportMetric(ms(ours.quantile(0.9)), "lspdiag-p90-ms")
			b.ReportMetric(ms(base.quantile(0.5)), "raw-median-ms")
			b.ReportMetric(ms(base.quantile(0.9)), "raw-p90-ms")
			b.ReportMetric(float64(ours.quantile(0.5))/float64(base.quantile(0.5)), "median-ratio")
		})
	}
}

// BenchmarkOpenToFirstDiagnostics measures, with gopls warm, the time from
// opening a file to its first settled diagnostics (lspdiag: Open, Settle,
// Drain; raw: didOpen to the publish of version 1), closing it again after
// each round.
func BenchmarkOpenToFirstDiagnostics(b *testing.B) {
	gp := gopls(b)
	w := newWorkspace(b, 0)
	ctx := context.Background()
	m := newManager(b, gp, w)
	raw := startRaw(b, gp, w.dir, environ(b))
	// Warm both: load the workspace once.
	if err := m.Open(ctx, w.small); err != nil {
		b.Fatal(err)
	}
	if _, err := m.Settle(ctx, w.small); err != nil {
		b.Fatal(err)
	}
	ch, err := raw.open(ctx, w.small, smallTexts[0], 1)
	if err != nil {
		b.Fatal(err)
	}
	wait(b, ch)
	text := httpTexts[0]
	rawVersion := 0
	var ours, base samples
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := m.Open(ctx, w.nethttp); err != nil {
			b.Fatal(err)
		}
		if res, err := m.Settle(ctx, w.nethttp); err != nil || res.Freshness != lsp.FreshPublished {
			b.Fatalf("settle: %+v %v", res, err)
		}
		m.Drain()
		ours = append(ours, time.Since(start))
		b.StopTimer()
		if err := m.Close(ctx, w.nethttp); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()

		rawVersion++
		start = time.Now()
		ch, err := raw.open(ctx, w.nethttp, text, rawVersion)
		if err != nil {
			b.Fatal(err)
		}
		wait(b, ch)
		base = append(base, time.Since(start))
		b.StopTimer()
		if err := raw.conn.Notify(ctx, "textDocument/didClose", map[string]any{
			"textDocument": map[string]string{"uri": fileURI(w.nethttp)},
		}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(ms(ours.quantile(0.5)), "lspdiag-median-ms")
	b.ReportMetric(ms(ours.quantile(0.9)), "lspdiag-p90-ms")
	b.ReportMetric(ms(base.quantile(0.5)), "raw-median-ms")
	b.ReportMetric(ms(base.quantile(0.9)), "raw-p90-ms")
}

// BenchmarkResidentMemory50Docs opens 50 documents through lspdiag, then
// each iteration changes one of them and settles. It reports the resident
// memory of gopls and of this process (Linux /proc) with the 50 open.
func BenchmarkResidentMemory50Docs(b *testing.B) {
	gp := gopls(b)
	w := newWorkspace(b, 48)
	docs := append([]string{w.small, w.nethttp}, w.extra...)
	ctx := context.Background()
	m := newManager(b, gp, w)
	for _, p := range docs {
		if err := m.Open(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	for _, p := range docs {
		if _, err := m.Settle(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	m.Drain()
	if n := len(m.OpenDocuments()); n != 50 {
		b.Fatalf("%d documents open", n)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lspdiagRound(b, m, w.small, smallTexts[i%2])
	}
	b.StopTimer()
	goplsKB, err := rssKB(m.Servers()[0].PID)
	if err != nil {
		b.Fatal(err)
	}
	selfKB, err := rssKB(os.Getpid())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(goplsKB)/1024, "gopls-rss-MB")
	b.ReportMetric(float64(selfKB)/1024, "self-rss-MB")
	b.ReportMetric(float64(goplsKB+selfKB)/1024, "total-rss-MB")
}

// rssKB reads VmRSS of pid from /proc (Linux).
func rssKB(pid int) (int, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
	return 0, os.ErrNotExist
}

// TestRawClientAgreesWithLspdiag checks the baseline: for the same change
// of the same workspace, the raw client and lspdiag see the same
// diagnostics (so the benchmark compares equal work).
func TestRawClientAgreesWithLspdiag(t *testing.T) {
	gp := gopls(t)
	w := newWorkspace(t, 0)
	ctx := context.Background()
	m := newManager(t, gp, w)
	raw := startRaw(t, gp, w.dir, environ(t))
	if err := m.Open(ctx, w.nethttp); err != nil {
		t.Fatal(err)
	}
	ch, err := raw.open(ctx, w.nethttp, httpTexts[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Settle(ctx, w.nethttp); err != nil {
		t.Fatal(err)
	}
	wait(t, ch)
	m.Drain()

	lspdiagRound(t, m, w.nethttp, httpTexts[1])
	ch, err = raw.change(ctx, w.nethttp, httpTexts[1], 2)
	if err != nil {
		t.Fatal(err)
	}
	var rawDiags []struct{ Message string }
	if err := json.Unmarshal(wait(t, ch), &rawDiags); err != nil {
		t.Fatal(err)
	}
	info, ok := m.Registry().LastPublish("gopls", fileURI(w.nethttp))
	if !ok || info.Version != 2 {
		t.Fatalf("lspdiag last publish %+v", info)
	}
	if len(rawDiags) != 1 || info.Count != 1 || !strings.Contains(rawDiags[0].Message, "cannot use 42") {
		t.Errorf("raw %+v, lspdiag %+v", rawDiags, info)
	}
}
