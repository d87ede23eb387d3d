package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/internal/fileuri"
)

// goplsForTest finds gopls or fails the test: these tests are about real
// gopls, and a missing one must not pass as green.
func goplsForTest(t *testing.T) string {
	t.Helper()
	p, err := FindGopls(nil)
	if err != nil {
		t.Fatalf("these tests need gopls %s: %v", GoplsVersion, err)
	}
	return p
}

// recordHandler keeps the log records at Warn and above.
type recordHandler struct {
	mu      sync.Mutex
	records []string
}

func (h *recordHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	h.mu.Lock()
	h.records = append(h.records, b.String())
	h.mu.Unlock()
	return nil
}
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordHandler) WithGroup(string) slog.Handler      { return h }

func (h *recordHandler) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.records
	h.records = nil
	return r
}

// goplsEnviron isolates gopls: its own cache, no network.
func goplsEnviron(t *testing.T) []string {
	return append(os.Environ(), "GOPLSCACHE="+t.TempDir(), "GOPROXY=off", "GOFLAGS=-mod=mod")
}

// TestGopls drives one real gopls through the life of an agent session:
// an error, its fix, a new error, columns, 60 files, a settings push and
// shutdown. One manager (two gopls starts: Reload restarts it) keeps the
// test cheap.
func TestGopls(t *testing.T) {
	gopls := goplsForTest(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	main := filepath.Join(dir, "main.go")
	writeFile(t, main, "package main\n\nfunc main() {\n\tvar x int = \"hello\"\n\t_ = x\n}\n")
	logs := &recordHandler{}
	opts := &ManagerOptions{
		ProjectDir:    dir,
		Env:           goplsEnviron(t),
		SettleTimeout: time.Minute,
		Logger:        slog.New(logs),
	}
	cfg := GoplsConfig(gopls, dir)
	m := newManager(t, []ServerConfig{cfg}, opts)
	ctx := context.Background()

	t.Run("type error on open", func(t *testing.T) {
		if err := m.Open(ctx, main); err != nil {
			t.Fatal(err)
		}
		if res := settle(t, m, main); res.Freshness != FreshPublished || res.Version != 1 {
			t.Errorf("settle: %+v", res)
		}
		att, ok := m.Drain()
		if !ok || len(att.Files) != 1 {
			t.Fatalf("drained %+v", att)
		}
		d := att.Files[0].Diagnostics[0]
		if !strings.Contains(d.Message, `cannot use "hello"`) || d.Severity != diag.SeverityError ||
			d.Range.Start != (diag.Position{Line: 3, Character: 13}) || d.Source != "compiler" {
			t.Errorf("diagnostic %+v", d)
		}
		if got := att.Render(&diag.RenderOptions{ProjectDir: dir}); !strings.Contains(got, "main.go:\n  ✘ [Line 4:14] cannot use") {
			t.Errorf("rendered:\n%s", got)
		}
	})

	t.Run("fix gives a fresh empty result", func(t *testing.T) {
		if err := m.Change(ctx, main, "package main\n\nfunc main() {\n\tvar x int = 1\n\t_ = x\n}\n"); err != nil {
			t.Fatal(err)
		}
		res := settle(t, m, main)
		if res.Freshness != FreshPublished || res.Version != 2 {
			t.Errorf("settle: %+v", res)
		}
		info, ok := m.Registry().LastPublish(cfg.Name, fileuri.FromPath(main))
		if !ok || info.Version != 2 || info.Count != 0 {
			t.Errorf("last publish %+v", info)
		}
		if att, ok := m.Drain(); ok {
			t.Errorf("drained after the fix: %+v", att)
		}
	})

	t.Run("a different error, columns in characters", func(t *testing.T) {
		// The emoji is two UTF-16 units and one character.
		text := "package main\n\nfunc main() {\n\ts := \"😀\"; _ = s + undefinedName\n}\n"
		if err := m.Change(ctx, main, text); err != nil {
			t.Fatal(err)
		}
		if res := settle(t, m, main); res.Freshness != FreshPublished || res.Version != 3 {
			t.Errorf("settle: %+v", res)
		}
		att, ok := m.Drain()
		if !ok {
			t.Fatal("nothing drained")
		}
		d := att.Files[0].Diagnostics[0]
		line := strings.Split(text, "\n")[3]
		want := len([]rune(line[:strings.Index(line, "undefinedName")]))
		if !strings.Contains(d.Message, "undefined: undefinedName") || d.Range.Start.Character != want ||
			d.Range.End.Character != want+len("undefinedName") {
			t.Errorf("diagnostic %+v, want start character %d", d, want)
		}
	})

	t.Run("sixty files, the LRU closes ten", func(t *testing.T) {
		var paths []string
		for i := range 60 {
			p := filepath.Join(dir, fmt.Sprintf("f%02d.go", i))
			writeFile(t, p, fmt.Sprintf("package main\n\nfunc f%02d() int { return %d }\n", i, i))
			paths = append(paths, p)
			if err := m.Open(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		open := m.OpenDocuments()
		if len(open) != DefaultMaxOpenDocuments || open[0] != paths[10] || open[49] != paths[59] {
			t.Errorf("open documents: %d, first %s", len(open), filepath.Base(open[0]))
		}
		if res := settle(t, m, paths[59]); !res.Freshness.Fresh() {
			t.Errorf("settle last: %+v", res)
		}
		// Reopening an evicted file works: it was really closed.
		if err := m.Change(ctx, paths[0], "package main\n\nfunc f00() int { return \"x\" }\n"); err != nil {
			t.Fatal(err)
		}
		if res := settle(t, m, paths[0]); res.Freshness != FreshPublished {
			t.Errorf("settle reopened: %+v", res)
		}
		// main.go, evicted, is now reported as it is on disk (with its
		// first error); f00.go as changed.
		att, ok := m.Drain()
		if !ok {
			t.Fatal("nothing drained")
		}
		found := false
		for _, f := range att.Files {
			if f.Path == paths[0] {
				found = len(f.Diagnostics) == 1 && strings.Contains(f.Diagnostics[0].Message, `cannot use "x"`)
			}
		}
		if !found {
			t.Errorf("drained %+v", att)
		}
		for _, n := range att.Notes {
			if !strings.Contains(n, "files: diagnostics may be incomplete: gopls was still analysing them") {
				t.Errorf("note %q", n)
			}
		}
		for _, r := range logs.take() {
			if strings.Contains(r, "open") {
				t.Errorf("gopls complained: %s", r)
			}
		}
	})

	t.Run("settings push", func(t *testing.T) {
		// A file only built with -tags=special: type-checked once the
		// settings carry the build flag.
		special := filepath.Join(dir, "special.go")
		writeFile(t, special, "//go:build special\n\npackage main\n\nvar special int = \"s\"\n")
		if err := m.Open(ctx, special); err != nil {
			t.Fatal(err)
		}
		settle(t, m, special)
		if att, ok := m.Drain(); ok {
			for _, f := range att.Files {
				for _, d := range f.Diagnostics {
					if strings.Contains(d.Message, `cannot use "s"`) {
						t.Fatalf("type-checked without the build tag: %+v", d)
					}
				}
			}
		}
		pid := m.Servers()[0].PID
		withTags := cfg
		withTags.Settings = []byte(`{"gopls":{"buildFlags":["-tags=special"]}}`)
		if probs := m.Reload(ctx, []ServerConfig{withTags}); len(probs) != 0 {
			t.Fatal(probs)
		}
		if processAlive(pid) {
			t.Error("gopls with the old settings still running")
		}
		if err := m.Open(ctx, special); err != nil {
			t.Fatal(err)
		}
		if res := settle(t, m, special); res.Freshness != FreshPublished {
			t.Errorf("settle: %+v", res)
		}
		att, ok := m.Drain()
		if !ok || !strings.Contains(att.Files[0].Diagnostics[0].Message, `cannot use "s"`) {
			t.Errorf("with -tags=special: %+v", att)
		}
	})

	t.Run("shutdown leaves no process behind", func(t *testing.T) {
		pid := m.Servers()[0].PID
		if pid == 0 || !processAlive(pid) {
			t.Fatalf("gopls not running: %+v", m.Servers())
		}
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := m.Shutdown(sctx); err != nil {
			t.Fatal(err)
		}
		if processAlive(pid) {
			t.Error("gopls alive after Shutdown")
		}
		if left := groupMembers(pid); len(left) != 0 {
			t.Errorf("processes left in gopls's group: %v", left)
		}
		if st := m.Servers()[0]; st.State != StateStopped {
			t.Errorf("state %v", st.State)
		}
	})
}

// TestGoplsSeesAChangedGoMod: go.mod changed on disk by someone else
// reaches gopls through the file watchers it registered
// (workspace/didChangeWatchedFiles), and Settle waits for what follows:
// raising the go version makes a range over an integer legal.
func TestGoplsSeesAChangedGoMod(t *testing.T) {
	gopls := goplsForTest(t)
	dir := t.TempDir()
	gomod := filepath.Join(dir, "go.mod")
	writeFile(t, gomod, "module example.com/m\n\ngo 1.21\n")
	main := filepath.Join(dir, "main.go")
	writeFile(t, main, "package main\n\nfunc main() {\n\tfor range 3 {\n\t}\n}\n")
	m := newManager(t, []ServerConfig{GoplsConfig(gopls, dir)}, &ManagerOptions{
		ProjectDir: dir, Env: goplsEnviron(t), SettleTimeout: time.Minute,
	})
	ctx := context.Background()
	if err := m.Open(ctx, main); err != nil {
		t.Fatal(err)
	}
	if res := settle(t, m, main); res.Freshness != FreshPublished {
		t.Errorf("settle: %+v", res)
	}
	att, ok := m.Drain()
	if !ok || len(att.Files) != 1 || !strings.Contains(att.Files[0].Diagnostics[0].Message, "go1.22") {
		t.Fatalf("with go 1.21: %+v", att)
	}
	writeFile(t, gomod, "module example.com/m\n\ngo 1.22\n")
	res := settle(t, m, main)
	if !res.Freshness.Fresh() {
		t.Errorf("settle after go.mod changed: %+v", res)
	}
	info, ok := m.Registry().LastPublish("gopls", fileuri.FromPath(main))
	if !ok || info.Count != 0 {
		t.Errorf("after go.mod changed, gopls's last publish for main.go: %+v (%+v)", info, res)
	}
}

// TestGoplsPullDiagnostics: gopls with pullDiagnostics serves
// textDocument/diagnostic (its report kind is "", not "full"); Settle asks
// it, and the answer is exact.
func TestGoplsPullDiagnostics(t *testing.T) {
	gopls := goplsForTest(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	main := filepath.Join(dir, "main.go")
	writeFile(t, main, "package main\n\nfunc main() {\n\ts := \"😀\"; _ = s + undefinedName\n}\n")
	cfg := GoplsConfig(gopls, dir)
	cfg.InitializationOptions = json.RawMessage(`{"pullDiagnostics":true}`)
	m := newManager(t, []ServerConfig{cfg}, &ManagerOptions{ProjectDir: dir, Env: goplsEnviron(t), SettleTimeout: time.Minute})
	ctx := context.Background()
	if err := m.Open(ctx, main); err != nil {
		t.Fatal(err)
	}
	if res := settle(t, m, main); res.Freshness != FreshPulled || res.Version != 1 {
		t.Errorf("settle: %+v", res)
	}
	att, ok := m.Drain()
	if !ok || len(att.Files) != 1 {
		t.Fatalf("drained %+v", att)
	}
	d := att.Files[0].Diagnostics[0]
	if !strings.Contains(d.Message, "undefined: undefinedName") || d.Range.Start.Character != 19 { // the emoji is one character (two UTF-16 units)
		t.Errorf("diagnostic %+v", d)
	}
	if err := m.Change(ctx, main, "package main\n\nfunc main() {\n}\n"); err != nil {
		t.Fatal(err)
	}
	if res := settle(t, m, main); res.Freshness != FreshPulled || res.Version != 2 {
		t.Errorf("settle after the fix: %+v", res)
	}
	if att, ok := m.Drain(); ok {
		t.Errorf("drained after the fix: %+v", att)
	}
}

// TestGoplsAnalyzerFindings: gopls publishes an empty set for a package
// without type errors and, about a second later (its diagnosticsDelay),
// the analyzers' findings for the same version. Once Settle has seen that,
// an empty publish from gopls waits for its "diagnosing" progress to end.
func TestGoplsAnalyzerFindings(t *testing.T) {
	gopls := goplsForTest(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	main := filepath.Join(dir, "main.go")
	vet := func(arg string) string {
		return "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Printf(\"😀 %d\\n\", " + arg + ")\n}\n"
	}
	writeFile(t, main, vet(`"x"`))
	m := newManager(t, []ServerConfig{GoplsConfig(gopls, dir)}, &ManagerOptions{ProjectDir: dir, Env: goplsEnviron(t), SettleTimeout: time.Minute})
	ctx := context.Background()
	if err := m.Open(ctx, main); err != nil {
		t.Fatal(err)
	}
	settle(t, m, main)
	waitFor(t, "the printf finding", func() bool {
		info, ok := m.Registry().LastPublish("gopls", fileuri.FromPath(main))
		return ok && info.Count == 1
	})
	m.Drain()
	for i, arg := range []string{`"y"`, `true`} {
		if err := m.Change(ctx, main, vet(arg)); err != nil {
			t.Fatal(err)
		}
		res := settle(t, m, main)
		att, ok := m.Drain()
		if !ok || len(att.Files) != 1 || len(att.Files[0].Diagnostics) != 1 ||
			!strings.Contains(att.Files[0].Diagnostics[0].Message, "fmt.Printf format %d has arg") {
			t.Errorf("change %d: settled without the finding: %+v %+v", i, res, att)
		}
	}
}

// A missing file, or a place that names nothing in a file, is reported
// before the server is started (gopls takes seconds to start), by Open,
// by the navigation operations and by Settle's callers alike; a good
// place then starts it.
func TestBadInputReportedBeforeTheServerStarts(t *testing.T) {
	gopls := goplsForTest(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	main := filepath.Join(dir, "main.go")
	writeFile(t, main, "package main\n\nfunc main() {\n\tprintln(1)\n}\n")
	m := newManager(t, []ServerConfig{GoplsConfig(gopls, dir)}, &ManagerOptions{ProjectDir: dir, Env: goplsEnviron(t)})
	ctx := context.Background()
	notStarted := func(what string) {
		t.Helper()
		for _, st := range m.Servers() {
			if st.PID != 0 || st.State != StateStopped {
				t.Errorf("%s: the server was started: %+v", what, st)
			}
		}
	}
	missing := filepath.Join(dir, "missing.go")
	if err := m.Open(ctx, missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing): %v, want ErrNotExist", err)
	}
	notStarted("Open of a missing file")
	if _, err := m.Definition(ctx, Pos{Path: missing, Line: 1, Column: 1}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Definition in a missing file: %v, want ErrNotExist", err)
	}
	notStarted("Definition in a missing file")
	for _, p := range []Pos{{Path: main, Line: 26, Column: 1}, {Path: main, Line: 4, Symbol: "nothere"}, {Path: main, Line: 4, Column: 80}} {
		_, err := m.References(ctx, p, true)
		if !errors.Is(err, ErrBadPos) || !strings.Contains(err.Error(), "main.go:") {
			t.Errorf("References at %v: %v, want ErrBadPos naming main.go", p, err)
		}
	}
	notStarted("References at places that name nothing")
	if _, err := m.Hover(ctx, Pos{Path: main, Line: 4, Symbol: "println"}); err != nil {
		t.Fatalf("Hover at a good place: %v", err)
	}
	if st := m.Servers(); len(st) != 1 || st[0].PID == 0 {
		t.Errorf("after a good place the server runs: %+v", st)
	}
}

// A server whose command is not installed is not restarted: every use
// says what is missing and how such servers are installed, without
// using a restart; once the command is installed, the next use starts it.
func TestMissingCommandIsNotRestarted(t *testing.T) {
	gopls := goplsForTest(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	t.Setenv("PATH", bin+string(os.PathListSeparator)+filepath.Dir(goBin)) // go, without gopls
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	main := filepath.Join(dir, "main.go")
	writeFile(t, main, "package main\n\nfunc main() {}\n")
	cfg := GoplsConfig("gopls", dir)
	m := newManager(t, []ServerConfig{cfg}, &ManagerOptions{ProjectDir: dir, Env: goplsEnviron(t)})
	ctx := context.Background()
	for i := range 5 {
		err := m.Open(ctx, main)
		var cnf *CommandNotFoundError
		if !errors.As(err, &cnf) || !errors.Is(err, ErrCommandNotFound) || !errors.Is(err, ErrServerFailed) {
			t.Fatalf("use %d: %v, want a CommandNotFoundError", i, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, `command "gopls" is not installed`) || !strings.Contains(msg, "install it: "+GoplsInstallCommand) {
			t.Errorf("use %d: %q does not say what is missing and how to install it", i, msg)
		}
		if strings.Contains(msg, "restart") {
			t.Errorf("use %d: %q speaks of restarts", i, msg)
		}
		if st := m.Servers(); st[0].Restarts != 0 {
			t.Errorf("use %d: %d restarts used for a missing command", i, st[0].Restarts)
		}
	}
	if err := os.Symlink(gopls, filepath.Join(bin, "gopls")); err != nil {
		t.Fatal(err)
	}
	if err := m.Open(ctx, main); err != nil {
		t.Fatalf("once installed: %v", err)
	}
	if st := m.Servers(); st[0].PID == 0 || st[0].Restarts != 0 {
		t.Errorf("once installed: %+v", st[0])
	}
}

// OnEvent tells a progress display what gopls does: its start, and its
// work-done progress (the workspace load) from begin to end.
func TestOnEventReportsStartAndProgress(t *testing.T) {
	gopls := goplsForTest(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	main := filepath.Join(dir, "main.go")
	writeFile(t, main, "package main\n\nfunc main() {}\n")
	var mu sync.Mutex
	var events []Event
	m := newManager(t, []ServerConfig{GoplsConfig(gopls, dir)}, &ManagerOptions{ProjectDir: dir, Env: goplsEnviron(t), WaitForProgress: true,
		OnEvent: func(e Event) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}})
	ctx := context.Background()
	if err := m.Open(ctx, main); err != nil {
		t.Fatal(err)
	}
	settle(t, m, main)
	mu.Lock()
	defer mu.Unlock()
	var kinds []string
	begun, ended := map[string]bool{}, map[string]bool{}
	for _, e := range events {
		if e.Server != "gopls" {
			t.Errorf("event of server %q", e.Server)
		}
		if e.Kind != EventProgress {
			kinds = append(kinds, string(e.Kind))
			continue
		}
		switch e.Progress {
		case "begin":
			if e.Title == "" {
				t.Errorf("a progress began without a title: %+v", e)
			}
			begun[e.Token] = true
		case "end":
			ended[e.Token] = true
		}
	}
	if strings.Join(kinds, " ") != "starting running" {
		t.Errorf("start events %q, want starting running", kinds)
	}
	// Settle waited for the progress active when it ran (WaitForProgress);
	// gopls may begin more work afterwards, so only some must have ended.
	done := 0
	for tok := range begun {
		if ended[tok] {
			done++
		}
	}
	if done == 0 {
		t.Errorf("no work-done progress reported from begin to end: %+v", events)
	}
}
