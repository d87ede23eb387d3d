//go:build unix

package ideserver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/mcp"
)

// heapInUse is the live heap after collecting garbage twice (pooled
// objects survive one collection).
func heapInUse() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// newFloodDiagnostics returns diagnostics answered by scriptls publishing
// perFile diagnostics for every file it opens, keeping maxFiles files (0:
// the default).
func newFloodDiagnostics(t *testing.T, ws string, perFile, maxFiles int) (*ideserver.Server, *ideserver.Diagnostics) {
	t.Helper()
	bin := buildScriptls(t)
	srv := startServer(t, &ideserver.Options{WorkspaceFolders: []string{ws}, NoLockfile: true})
	d, err := ideserver.NewDiagnostics(srv, &ideserver.DiagnosticsOptions{
		Configs: []lsp.ServerConfig{{
			Name: "flood", Command: bin, Args: []string{"-flood", fmt.Sprint(perFile)},
			ExtensionToLanguage: map[string]string{".s": "s"},
		}},
		// Decoding a flood is slow under the race detector: this test is
		// about memory, not time.
		SettleTimeout: 5 * time.Minute,
		AnswerTimeout: -1,
		MaxFiles:      maxFiles,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.RegisterTool(d.Tool()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		d.Close(ctx)
	})
	return srv, d
}

// A language server that publishes a flood of diagnostics for every file:
// what the headless IDE keeps of a file is bounded, so its memory stays
// flat past MaxFiles, and the true count is reported. It used to keep
// every file's whole set: 17 MB a file of 100,000 diagnostics, 855 MB
// with the default MaxFiles (50). Decoding floods is slow under the race
// detector, so by default 12 files of 50,000 past a MaxFiles of 8 (before:
// +68 MB); the README's figure is the case, 80 files of 100,000
// with the default MaxFiles: IDEBRIDGE_FLOOD_FILES=80
// IDEBRIDGE_FLOOD_MAXFILES=0 IDEBRIDGE_FLOOD_DIAGNOSTICS=100000.
func TestDiagnosticsFloodKeepsMemoryFlat(t *testing.T) {
	const bound = 30 << 20
	files, maxFiles := envInt(t, "IDEBRIDGE_FLOOD_FILES", 12), envInt(t, "IDEBRIDGE_FLOOD_MAXFILES", 8)
	perFile := envInt(t, "IDEBRIDGE_FLOOD_DIAGNOSTICS", 50_000)
	ws := t.TempDir()
	_, d := newFloodDiagnostics(t, ws, perFile, maxFiles)
	ctx := context.Background()
	before := heapInUse()
	for i := range files {
		p := filepath.Join(ws, fmt.Sprintf("f%02d.s", i))
		writeText(t, p, "x\n")
		reps, err := d.Check(ctx, []string{p})
		if err != nil {
			t.Fatal(err)
		}
		r := reps[0]
		if r.Err != nil || !r.Settle.Freshness.Fresh() {
			t.Fatalf("%s: %v, %+v", p, r.Err, r.Settle)
		}
		if len(r.Diagnostics) != ideserver.DefaultMaxDiagnosticsPerFile || r.Total != perFile {
			t.Fatalf("%s: %d diagnostics kept of %d, want %d of %d", p, len(r.Diagnostics), r.Total, ideserver.DefaultMaxDiagnosticsPerFile, perFile)
		}
		if r.Diagnostics[0].Severity != 1 || r.Diagnostics[0].Range.Start.Line != 0 {
			t.Fatalf("%s: the first diagnostic kept is %+v, want the first error", p, r.Diagnostics[0])
		}
		if (i+1)%10 == 0 {
			t.Logf("after %d files: heap %+.1f MB", i+1, float64(heapInUse()-before)/(1<<20))
		}
	}
	grown := heapInUse() - before
	t.Logf("heap grew %.1f MB over %d files of %d diagnostics each; peak RSS %s", float64(grown)/(1<<20), files, perFile, peakRSS())
	if grown > bound {
		t.Errorf("heap grew %d MB over %d files, want under %d MB: what is kept per file is not bounded", grown>>20, files, bound>>20)
	}
}

// peakRSS is the process's peak resident set (Linux), for the log.
func peakRSS() string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// envInt reads a number from the environment, def when unset.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return n
}

// getDiagnostics says when it leaves diagnostics out: a file over
// MaxDiagnosticsPerFile has the most severe and a note with the true
// count.
func TestGetDiagnosticsNotesTrueCount(t *testing.T) {
	ws := t.TempDir()
	srv, _ := newFloodDiagnostics(t, ws, 2500, 0)
	p := filepath.Join(ws, "a.s")
	writeText(t, p, "x\n")
	c := dial(t, srv)
	c.handshake(1)
	got := getDiagnostics(t, c, map[string]any{"uri": fileURL(p)})
	if len(got) != 1 {
		t.Fatalf("answer: %d files, want 1", len(got))
	}
	if n := len(got[0].Diagnostics); n != ideserver.DefaultMaxDiagnosticsPerFile {
		t.Fatalf("answer: %d diagnostics of 2500, want the %d most severe", n, ideserver.DefaultMaxDiagnosticsPerFile)
	}
	if want := "2500 diagnostics, the 1000 most severe shown"; got[0].Note != want {
		t.Errorf("note %q, want %q", got[0].Note, want)
	}
	for _, dg := range got[0].Diagnostics {
		if dg.Severity != "Error" && dg.Severity != "Warning" {
			t.Fatalf("a %s kept while errors and warnings were left out", dg.Severity)
		}
	}
}

// getDiagnostics answers within its own bound (AnswerTimeout) with what it
// knows and a note. A FIFO named like a Go file makes gopls's go list
// block, so gopls never publishes for the package; the next getDiagnostics
// on a real file of it used to wait for the whole SettleTimeout, past the
// client's deadline (here the test client's, 20 s).
func TestGetDiagnosticsAnswersWithinItsBound(t *testing.T) {
	dir := diagModule(t, map[string]string{
		"main.go": "package main\n\nfunc main() {\n\tprintln(x)\n}\n",
	})
	fifo := filepath.Join(dir, "pipe.go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, &ideserver.Options{WorkspaceFolders: []string{dir}, NoLockfile: true})
	d, err := ideserver.NewDiagnostics(srv, &ideserver.DiagnosticsOptions{Env: goplsEnviron(t), SettleTimeout: 10 * time.Minute})
	if err != nil {
		t.Fatalf("NewDiagnostics (this test needs gopls %s): %v", lsp.GoplsVersion, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		d.Close(ctx)
	})
	t.Cleanup(func() { releaseFIFO(fifo) }) // first: let go list go
	if err := srv.RegisterTool(d.Tool()); err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv)
	c.handshake(1)

	m := c.call("tools/call", map[string]any{"name": mcp.ToolGetDiagnostics, "arguments": map[string]any{"uri": fileURL(fifo)}})
	if got := errorText(m); !strings.Contains(got, "not a regular file (a FIFO)") {
		t.Fatalf("getDiagnostics on the FIFO: %s", mustMarshal(m))
	}
	main := filepath.Join(dir, "main.go")
	for _, args := range []map[string]any{{"uri": fileURL(main)}, {}} {
		start := time.Now()
		got := getDiagnostics(t, c, args)
		t.Logf("getDiagnostics %v answered in %v: %+v", args, time.Since(start).Round(time.Millisecond), got)
		if len(got) != 1 || got[0].URI != fileURL(main) {
			t.Fatalf("getDiagnostics %v: %+v", args, got)
		}
		// gopls never publishes for the package: nothing is known of it.
		if want := "diagnostics unknown: gopls had not reported any for it after "; !strings.HasPrefix(got[0].Note, want) {
			t.Errorf("getDiagnostics %v: note %q, want one saying %q", args, got[0].Note, want)
		}
	}
}
