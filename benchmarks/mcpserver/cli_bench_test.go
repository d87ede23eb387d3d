package mcpserver

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkCLIRefs measures the command line's `idebridge lsp refs` (the
// built binary, a new process each time) on this repository (the module
// above benchmarks/), gopls's cache warm: through a warm runtime (the
// default; the runtime already serves the project) against in its own
// process (--no-runtime: gopls starts and loads the module, as every
// command did before the runtime). Each iteration runs one of each, in
// alternating order; the metrics are the medians (p50). The goal (issue
// 22): under 300 ms through the runtime.
func BenchmarkCLIRefs(b *testing.B) {
	s := newScene(b)
	repo, err := filepath.Abs("../..") // this package is benchmarks/mcpserver
	if err != nil {
		b.Fatal(err)
	}
	rtEnv := s.runtimeEnv(b)
	refs := func(env []string, args ...string) time.Duration {
		start := time.Now()
		cmd := exec.Command(idebridgeBin(b), append([]string{"lsp", "refs", "lsp/manager.go:430:Open", "--no-plugins", "-q"}, args...)...)
		cmd.Dir, cmd.Env = repo, env
		out, err := cmd.Output()
		d := time.Since(start)
		if err != nil || !strings.HasPrefix(string(out), "References to Open") {
			b.Fatalf("lsp refs %v: %v\n%s", args, err, out)
		}
		return d
	}
	refs(s.env, "--no-runtime") // gopls's cache, warm for both
	refs(rtEnv)                 // the runtime's project, loaded
	var in, rt []time.Duration
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			in = append(in, refs(s.env, "--no-runtime"))
			rt = append(rt, refs(rtEnv))
		} else {
			rt = append(rt, refs(rtEnv))
			in = append(in, refs(s.env, "--no-runtime"))
		}
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2]) / float64(time.Millisecond)
	}
	b.ReportMetric(median(in), "inprocess-p50-ms")
	b.ReportMetric(median(rt), "runtime-p50-ms")
}
