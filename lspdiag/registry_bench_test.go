package lspdiag

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/idebridge/idebridge/diag"
)

// workload generates publishes that look like language servers': sets per
// document that change a little at a time, so most of a republished set
// was delivered before, with some cross-server duplicates, stale versions,
// clean publishes and (optionally) text that has no identity and
// invalid diagnostics.
type workload struct {
	rng      *rand.Rand
	uris     []string
	servers  []string
	sources  []string
	gen      []int // per document: how far its set has drifted
	version  []int // per document: the version servers publish for
	msgs     []string
	codes    []string
	maxDiags int  // a publish holds 0..maxDiags-1 diagnostics
	odd      bool // also generate untrimmed text, inverted ranges, bad UTF-8, tags, invalid diagnostics
	buf      []diag.Diagnostic
	params   diag.PublishParams
	lastDoc  int // the document of the last publish
}

func newWorkload(seed int64, docs, servers int) *workload {
	w := &workload{
		rng:      rand.New(rand.NewPCG(uint64(seed), 42)),
		gen:      make([]int, docs),
		version:  make([]int, docs),
		maxDiags: 8,
		odd:      true,
	}
	for i := range docs {
		w.uris = append(w.uris, fmt.Sprintf("file:///home/dev/proj/pkg%03d/file%05d.go", i%97, i))
	}
	names := []string{"gopls", "pyright", "clangd", "tsserver", "rust-analyzer"}
	for i := range servers {
		w.servers = append(w.servers, "plugin:p"+fmt.Sprint(i)+":"+names[i%len(names)])
		w.sources = append(w.sources, names[i%len(names)])
	}
	for i := range 64 {
		w.msgs = append(w.msgs, fmt.Sprintf("undefined: identifier%d (declared in another package, check imports)", i))
	}
	w.codes = []string{"", "UndeclaredName", "2304", "unusedvariable", "E0425"}
	return w
}

func (w *workload) uri() string { return w.uris[w.rng.IntN(len(w.uris))] }

// publish returns the next publish. The params and their diagnostics are
// reused by the next call.
func (w *workload) publish() (string, *diag.PublishParams) {
	d := w.rng.IntN(len(w.uris))
	w.lastDoc = d
	s := w.rng.IntN(len(w.servers))
	if w.rng.IntN(4) == 0 {
		w.gen[d]++
	}
	if w.rng.IntN(8) == 0 {
		w.version[d]++
	}
	n := w.rng.IntN(w.maxDiags)
	w.buf = w.buf[:0]
	g := w.gen[d]
	for k := range n {
		source := w.sources[s]
		if k%5 == 4 {
			source = "shared" // the same diagnostic from every server
		}
		line := (k*3 + g/3) % 200
		dg := diag.Diagnostic{
			Range:    diag.Range{Start: diag.Position{Line: line, Character: k % 7}, End: diag.Position{Line: line, Character: k%7 + 5}},
			Severity: diag.Severity((d + k + g/5) % 5), // 0 (missing) to 4
			Message:  w.msgs[(d*31+k+g)%len(w.msgs)],
			Source:   source,
			Code:     w.codes[(d+k)%len(w.codes)],
		}
		if w.odd {
			switch w.rng.IntN(16) {
			case 0:
				dg.Message = "  " + dg.Message + "\n"
			case 1:
				dg.Range.End = diag.Position{Line: line - 1}
				if line == 0 {
					dg.Range.End = diag.Position{}
				}
			case 2:
				dg.Message = "bad \xff byte"
			case 3:
				dg.Tags = []int{diag.TagUnnecessary}
			case 4:
				dg.Severity = diag.Severity(99 - 102*(k%2)) // 99 or -3: invalid
			case 5:
				dg.Range.Start.Line = -1 // invalid
			}
		}
		w.buf = append(w.buf, dg)
	}
	w.params = diag.PublishParams{URI: w.uris[d], Diagnostics: w.buf}
	switch r := w.rng.IntN(50); {
	case r == 0:
		w.params.Version = nil
	case r == 1:
		v := w.version[d] - 1 - w.rng.IntN(2) // stale
		w.params.Version = &v
	default:
		v := w.version[d]
		w.params.Version = &v
	}
	return w.servers[s], &w.params
}

// registryUnderTest is what the benchmark drives: the Registry or the
// naive model.
type registryUnderTest interface {
	SetVersion(uri string, v int)
	Drain() (*diag.Attachment, bool)
}

type fastAdapter struct{ *Registry }

func (f fastAdapter) publish(server string, p *diag.PublishParams) { _ = f.PublishParams(server, p) }

type naiveAdapter struct{ *naiveRegistry }

func (n naiveAdapter) publish(server string, p *diag.PublishParams) { n.PublishParams(server, p) }

// BenchmarkRegistry registers and drains diags diagnostics over 10,000
// documents from 3 servers, 1,000 diagnostics per turn (about 100
// publishes), one drain per turn, with the Registry and with the naive
// model that sorts and filters everything each turn (the Registry also at
// 10M, to show its heap stays flat as the run grows). It reports
// diagnostics per second, the peak heap in use sampled between turns
// (HeapInuse, every 20 turns), the heap still live at the end of the run
// (after a collection, registry alive) and allocations per diagnostic.
func BenchmarkRegistry(b *testing.B) {
	for _, impl := range []string{"fast", "naive"} {
		for _, diags := range []int{1_000_000, 3_000_000, 10_000_000} {
			if impl == "naive" && diags > 3_000_000 {
				continue // a minute a run; 1M and 3M show its trend
			}
			b.Run(fmt.Sprintf("impl=%s/diags=%dM", impl, diags/1_000_000), func(b *testing.B) {
				runRegistryBenchmark(b, impl, diags)
			})
		}
	}
}

func runRegistryBenchmark(b *testing.B, impl string, diags int) {
	const docs, servers, perTurn = 10_000, 3, 1_000
	b.ReportAllocs()
	var peak uint64
	var ms runtime.MemStats
	var elapsed time.Duration
	var delivered int
	var mallocs, live uint64
	for b.Loop() {
		w := newWorkload(1, docs, servers)
		w.maxDiags = 21 // 10 per publish on average
		w.odd = false
		var reg registryUnderTest
		var publish func(string, *diag.PublishParams)
		switch impl {
		case "fast":
			f := fastAdapter{newBenchRegistry(b, nil)}
			reg, publish = f, f.publish
		default:
			n := naiveAdapter{newNaive(nil)}
			reg, publish = n, n.publish
		}
		runtime.ReadMemStats(&ms)
		mallocs -= ms.Mallocs
		start := time.Now()
		registered := 0
		for turn := 0; registered < diags; turn++ {
			for inTurn := 0; inTurn < perTurn && registered < diags; {
				server, p := w.publish()
				if w.rng.IntN(10) == 0 {
					reg.SetVersion(p.URI, w.version[w.lastDoc])
				}
				publish(server, p)
				inTurn += len(p.Diagnostics)
				registered += len(p.Diagnostics)
			}
			if a, ok := reg.Drain(); ok {
				delivered += a.Count()
			}
			if turn%20 == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
		elapsed += time.Since(start)
		runtime.ReadMemStats(&ms)
		mallocs += ms.Mallocs
		// What the registry holds at the end of the run, garbage aside.
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		live = max(live, ms.HeapAlloc)
		runtime.KeepAlive(reg)
		b.StartTimer()
	}
	b.ReportMetric(float64(diags)*float64(b.N)/elapsed.Seconds(), "diags/s")
	b.ReportMetric(float64(mallocs)/float64(diags)/float64(b.N), "allocs/diag")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(live)/(1<<20), "live-heap-MB")
	b.ReportMetric(float64(delivered)/float64(b.N), "delivered/op")
}

// BenchmarkPublishRaw measures Publish on raw JSON params (shape check and
// decoding included), 10 diagnostics a publish.
func BenchmarkPublishRaw(b *testing.B) {
	w := newWorkload(1, 100, 1)
	w.maxDiags = 21
	w.odd = false
	var raws [][]byte
	for len(raws) < 64 {
		_, p := w.publish()
		if len(p.Diagnostics) != 10 {
			continue
		}
		raw, err := json.Marshal(p)
		if err != nil {
			b.Fatal(err)
		}
		raws = append(raws, raw)
	}
	r := newBenchRegistry(b, nil)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := r.Publish("plugin:go:gopls", raws[i%len(raws)]); err != nil {
			b.Fatal(err)
		}
		i++
		if i%100 == 0 {
			r.Drain()
		}
	}
	b.ReportMetric(float64(b.N*10)/b.Elapsed().Seconds(), "diags/s")
}

// BenchmarkDrainLarge drains one publish of n diagnostics with every limit
// raised above n, the diagnostics either all on distinct lines or sharing
// 5,000 lines (20 per line at 100k), in publish order cycling through the
// lines as a server that reports per check rather than per line would. It
// reports the drain alone (the publish is untimed) per diagnostic: with
// drain O(n log n) the figure grows only slowly with n, whatever the
// layout.
//
//	go test ./lspdiag -run '^$' -bench DrainLarge
func BenchmarkDrainLarge(b *testing.B) {
	for _, layout := range []string{"distinct-lines", "shared-lines"} {
		for _, n := range []int{25_000, 50_000, 100_000} {
			b.Run(fmt.Sprintf("layout=%s/n=%dk", layout, n/1000), func(b *testing.B) {
				ds := make([]diag.Diagnostic, n)
				for i := range ds {
					line := i
					if layout == "shared-lines" {
						line = i % 5000
					}
					ds[i] = diag.Diagnostic{
						Range:    diag.Range{Start: diag.Position{Line: line, Character: 2}, End: diag.Position{Line: line, Character: 8}},
						Severity: diag.SeverityError,
						Source:   "compiler",
						Message:  fmt.Sprintf("problem %d", i),
					}
				}
				p := &diag.PublishParams{URI: "file:///proj/big.go", Diagnostics: ds}
				opts := &RegistryOptions{MaxPerPublish: 1 << 20, MaxPerFile: 1 << 20, MaxTotal: 1 << 20}
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					r := newBenchRegistry(b, opts)
					if err := r.PublishParams("plugin:go:gopls", p); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					a, ok := r.Drain()
					if !ok || a.Count() != n {
						b.Fatalf("drained %v, want %d", ok, n)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/diag")
			})
		}
	}
}

func newBenchRegistry(b testing.TB, opts *RegistryOptions) *Registry {
	r, err := NewRegistry(opts)
	if err != nil {
		b.Fatal(err)
	}
	return r
}
