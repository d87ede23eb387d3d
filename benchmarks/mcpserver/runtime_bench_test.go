package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runtimeEnv is the scene's environment with a runtime directory of its
// own (short enough for a socket), its runtime stopped at the end.
func (s *scene) runtimeEnv(tb testing.TB) []string {
	tb.Helper()
	d, err := os.MkdirTemp("", "rtb")
	if err != nil {
		tb.Fatal(err)
	}
	env := append(slices.Clone(s.env), "IDEBRIDGE_RUNTIME_DIR="+filepath.Join(d, "rt"))
	tb.Cleanup(func() {
		stop := exec.Command(idebridgeBin(tb), "runtime", "stop")
		stop.Env = env
		stop.Run()
		os.RemoveAll(d)
	})
	return env
}

// mcpProcess starts `idebridge mcp` with extra arguments through the SDK's
// command transport.
func (s *scene) mcpProcess(tb testing.TB, ctx context.Context, env []string, args ...string) (*mcp.ClientSession, *exec.Cmd) {
	tb.Helper()
	cmd := exec.Command(idebridgeBin(tb), append([]string{"mcp", "--no-ide", "--project", s.dir}, args...)...)
	cmd.Env = env
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-bench", Version: "1.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		tb.Fatalf("idebridge mcp %v: %v\nstderr:\n%s", args, err, stderr)
	}
	tb.Cleanup(func() {
		cs.Close()
		if tb.Failed() {
			tb.Logf("stderr of idebridge mcp %v:\n%s", args, stderr)
		}
	})
	return cs, cmd
}

func callComplete(tb testing.TB, ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) time.Duration {
	tb.Helper()
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	d := time.Since(start)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var st struct{ Status string }
	if json.Unmarshal(raw, &st); res.IsError || st.Status != "complete" {
		out, _ := json.Marshal(res)
		tb.Fatalf("%s answered %s", name, out)
	}
	return d
}

// BenchmarkRuntimeVsInProcess measures one warm tool call on gopls through
// the built `idebridge mcp` in its own process (--no-runtime) and through
// the shared runtime (the default: the command proxies stdio to the
// runtime's socket), the SDK's command transport on both, each its own
// gopls on the same module. Each iteration makes one call on each, in
// alternating order; the metrics are the medians and their ratio (the
// goal: the runtime within 1.15x).
func BenchmarkRuntimeVsInProcess(b *testing.B) {
	s := newScene(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*testTimeout)
	defer cancel()
	inproc, _ := s.mcpProcess(b, ctx, s.env, "--no-runtime")
	viaRT, _ := s.mcpProcess(b, ctx, s.runtimeEnv(b))
	for range 5 {
		for _, c := range transportCalls {
			callComplete(b, ctx, inproc, c.name, c.args)
			callComplete(b, ctx, viaRT, c.name, c.args)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	median := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	for _, c := range transportCalls {
		b.Run(c.name, func(b *testing.B) {
			var id, rd []time.Duration
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					id = append(id, callComplete(b, ctx, inproc, c.name, c.args))
					rd = append(rd, callComplete(b, ctx, viaRT, c.name, c.args))
				} else {
					rd = append(rd, callComplete(b, ctx, viaRT, c.name, c.args))
					id = append(id, callComplete(b, ctx, inproc, c.name, c.args))
				}
			}
			im, rm := median(id), median(rd)
			b.ReportMetric(ms(im), "inprocess-median-ms")
			b.ReportMetric(ms(rm), "runtime-median-ms")
			b.ReportMetric(float64(rm)/float64(im), "runtime/inprocess")
		})
	}
}

// BenchmarkRuntimeMemory measures the total resident memory (VmRSS) of
// four `idebridge mcp` clients, each of which opened a file and asked a
// navigation and diagnostics: four in their own processes (--no-runtime,
// each with its gopls) against four through the runtime (the four
// proxies, the runtime and its one gopls), every process of each tree
// counted. The goal: the runtime at most 0.4x.
func BenchmarkRuntimeMemory(b *testing.B) {
	s := newScene(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*testTimeout)
	defer cancel()
	work := func(cs *mcp.ClientSession) {
		callComplete(b, ctx, cs, "hover", transportCalls[0].args)
		callComplete(b, ctx, cs, "references", transportCalls[2].args)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "diagnostics", Arguments: map[string]any{"files": []string{"broken.go"}}})
		if err != nil || res.IsError {
			b.Fatalf("diagnostics: %v %+v", err, res)
		}
	}
	tree := func(pids []int) int64 {
		var total int64
		for _, p := range withDescendants(pids) {
			total += vmRSS(p)
		}
		return total
	}
	for b.Loop() {
		var inPIDs, rtPIDs []int
		var sessions []*mcp.ClientSession
		for range 4 {
			cs, cmd := s.mcpProcess(b, ctx, s.env, "--no-runtime")
			work(cs)
			inPIDs = append(inPIDs, cmd.Process.Pid)
			sessions = append(sessions, cs)
		}
		env := s.runtimeEnv(b)
		for range 4 {
			cs, cmd := s.mcpProcess(b, ctx, env)
			work(cs)
			rtPIDs = append(rtPIDs, cmd.Process.Pid)
			sessions = append(sessions, cs)
		}
		cmd := exec.Command(idebridgeBin(b), "runtime", "status", "--json")
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("runtime status: %v", err)
		}
		var st struct {
			PID      int
			Projects []struct{ Servers []struct{ PID int } }
		}
		json.Unmarshal(out, &st)
		if len(st.Projects) != 1 || len(st.Projects[0].Servers) != 1 {
			b.Fatalf("runtime status %s: want one project with one server", out)
		}
		in, rt := tree(inPIDs), tree(append(rtPIDs, st.PID))
		b.ReportMetric(float64(in)/(1<<20), "inprocess-total-MiB")
		b.ReportMetric(float64(rt)/(1<<20), "runtime-total-MiB")
		b.ReportMetric(float64(rt)/float64(in), "runtime/inprocess")
		b.ReportMetric(float64(vmRSS(rtPIDs[1]))/(1<<20), "proxy-each-MiB")
		b.ReportMetric(float64(tree([]int{st.PID}))/(1<<20), "runtime-and-gopls-MiB")
		for _, cs := range sessions {
			cs.Close()
		}
		stop := exec.Command(idebridgeBin(b), "runtime", "stop")
		stop.Env = env
		stop.Run()
	}
}

// withDescendants returns pids and every process below them (from
// /proc/*/stat's parent ids), each once.
func withDescendants(pids []int) []int {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	seen := map[int]bool{}
	queue := slices.Clone(pids)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue // the runtime is also a child of the client that started it
		}
		seen[p] = true
		out = append(out, p)
		queue = append(queue, children[p]...)
	}
	return out
}

// vmRSS is a process's resident memory in bytes, 0 when it is gone.
func vmRSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkFirstAnswer measures what a new client waits for: from
// starting `idebridge mcp` (the SDK's command transport) to the answer of
// its first `references` call, on this repository (the module above
// benchmarks/), with gopls's cache warm: in its own process
// (--no-runtime: gopls starts and loads the module) against through a
// runtime that already serves the project (another client keeps it).
// The goal (issue 22, for `lsp refs`): under 300 ms warm.
func BenchmarkFirstAnswer(b *testing.B) {
	s := newScene(b)
	repo, err := filepath.Abs("../..") // this package is benchmarks/mcpserver
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*testTimeout)
	defer cancel()
	refs := map[string]any{"file": "lsp/manager.go", "line": 430, "symbol": "Open"}
	first := func(env []string, args ...string) time.Duration {
		start := time.Now()
		cmd := exec.Command(idebridgeBin(b), append([]string{"mcp", "--no-ide", "--project", repo}, args...)...)
		cmd.Env = env
		client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-bench", Version: "1.0"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		callComplete(b, ctx, cs, "references", refs)
		return time.Since(start)
	}
	rtEnv := s.runtimeEnv(b)
	keeper, _ := s.mcpProcess(b, ctx, rtEnv) // on the scene's module: the runtime stays up
	_ = keeper
	first(s.env, "--no-runtime") // gopls's cache, warm for both
	first(rtEnv)                 // the runtime's project, loaded
	var in, rt []time.Duration
	for b.Loop() {
		in = append(in, first(s.env, "--no-runtime"))
		rt = append(rt, first(rtEnv))
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2]) / float64(time.Millisecond)
	}
	b.ReportMetric(median(in), "inprocess-first-ms")
	b.ReportMetric(median(rt), "runtime-first-ms")
}
