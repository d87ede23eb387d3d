package warm

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/idebridge/idebridge/lsp"
)

// BenchmarkRemoteOverhead measures one warm hover on gopls through a
// Remote against an in-process lsp.Manager on the same module: the
// runtime's per-call overhead (the goal: at most 1.15x). The
// runtime runs in the benchmark's process, on a real socket. The metrics
// are each one's median and their ratio.
func BenchmarkRemoteOverhead(b *testing.B) {
	gopls, err := lsp.FindGopls(os.Getenv)
	if err != nil {
		b.Fatalf("this benchmark needs gopls: %v", err)
	}
	mod := b.TempDir()
	for name, text := range map[string]string{
		"go.mod":   "module example.com/m\n\ngo 1.22\n",
		"greet.go": "package main\n\n// greet says hello.\nfunc greet(name string) string { return \"hi \" + name }\n",
		"main.go":  "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(greet(\"a\"))\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	env := append(os.Environ(), "GOPLSCACHE="+b.TempDir(), "GOPROXY=off")
	base, err := os.MkdirTemp("", "warm")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(base)
	dir := filepath.Join(base, "rt")
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, &ServeOptions{Dir: dir, Build: "b1", Idle: -1, Env: env, Ready: func(string) { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-done:
		b.Fatal(err)
	}
	defer func() { cancel(); <-done }()
	cfg := lsp.GoplsConfig(gopls, mod)
	r, err := Dial(ctx, &Options{Dir: dir, Build: "b1"}, &Project{Dir: mod, Configs: []lsp.ServerConfig{cfg}, NoIDE: true})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	m, err := lsp.NewManager([]lsp.ServerConfig{cfg}, &lsp.ManagerOptions{ProjectDir: mod, Env: env})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	at := lsp.Pos{Path: filepath.Join(mod, "greet.go"), Line: 4, Symbol: "greet"}
	for _, nav := range []Navigator{m, r} {
		for range 5 { // warm: started, loaded, answering
			if _, err := nav.Hover(ctx, at); err != nil {
				b.Fatal(err)
			}
		}
	}
	// Side by side: each iteration hovers once on each, in alternating
	// order, so that the machine's load falls on both alike.
	var onM, onR []time.Duration
	hover := func(nav Navigator, into *[]time.Duration) {
		start := time.Now()
		if _, err := nav.Hover(ctx, at); err != nil {
			b.Fatal(err)
		}
		*into = append(*into, time.Since(start))
	}
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			hover(m, &onM)
			hover(r, &onR)
		} else {
			hover(r, &onR)
			hover(m, &onM)
		}
		i++
	}
	med := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	mm, rm := med(onM), med(onR)
	b.ReportMetric(float64(mm.Microseconds()), "manager-median-us")
	b.ReportMetric(float64(rm.Microseconds()), "remote-median-us")
	b.ReportMetric(float64(rm)/float64(mm), "remote/manager")
}
