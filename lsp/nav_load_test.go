package lsp

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These tests use scriptls for what no real server can be made to do on
// demand: a workspace load that never ends, or ends at a chosen moment.
// The real servers' loading is tested in nav_servers_test.go.

func newScriptedNav(t *testing.T, loadWait time.Duration, args ...string) (*Manager, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.script")
	writeFile(t, path, "one two\nthree 😀 four\n")
	opts := testOptions(dir)
	opts.LoadWait = loadWait
	m, err := NewManager([]ServerConfig{scriptConfig("scripted", ".script", args...)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	return m, path
}

// openLoading opens path and waits until the scripted load has begun.
func openLoading(t *testing.T, m *Manager, path string) {
	t.Helper()
	if err := m.Open(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		inst := m.servers[0].current()
		inst.fmu.Lock()
		n := inst.nav.begun
		inst.fmu.Unlock()
		if n > 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the scripted load did not begin")
}

func TestNavWaitsForLoadingThenSaysIncomplete(t *testing.T) {
	m, path := newScriptedNav(t, 300*time.Millisecond, "-loading=-1s")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	openLoading(t, m, path)
	start := time.Now()
	res, err := m.Definition(ctx, Pos{Path: path, Line: 2, Symbol: "four"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Incomplete || !strings.Contains(res.Reason, "Loading workspace") {
		t.Errorf("answer during a load that never ends: incomplete %v, reason %q", res.Incomplete, res.Reason)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("answered after %v, without waiting LoadWait for the load", d)
	}
	text := res.Render(nil)
	if !strings.Contains(text, "the answer may be incomplete: scripted was still loading the workspace (Loading workspace)") {
		t.Errorf("the rendering does not say the answer may be incomplete:\n%s", text)
	}
	// The scripted server answers with the place asked about: the column
	// after the emoji, converted to UTF-16 and back.
	if len(res.Locations) != 1 || res.Locations[0].Line != 2 || res.Locations[0].Column != 9 {
		t.Errorf("locations %+v, want line 2 column 9", res.Locations)
	}
}

func TestNavWaitsForTheLoadToEnd(t *testing.T) {
	m, path := newScriptedNav(t, 0, "-loading=1s")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	openLoading(t, m, path)
	start := time.Now()
	res, err := m.Definition(ctx, Pos{Path: path, Line: 1, Column: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Incomplete {
		t.Errorf("answer after the load ended is incomplete: %s", res.Reason)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("answered after %v, before the load ended", d)
	}
	// The request's own progress (on navigation's work-done token) is
	// neither loading nor work that Settle would wait for.
	srv := m.servers[0]
	inst := srv.current()
	inst.fmu.Lock()
	active, titles := len(inst.active), len(inst.nav.titles)
	inst.fmu.Unlock()
	if active != 0 || titles != 0 {
		t.Errorf("after the answer: %d active progresses, %d loading titles; want none", active, titles)
	}
	// A second request does not wait.
	res, err = m.Definition(ctx, Pos{Path: path, Line: 1, Column: 1})
	if err != nil || res.Incomplete {
		t.Errorf("second definition: %+v, %v", res, err)
	}
}

func TestNavNoLoadWait(t *testing.T) {
	m, path := newScriptedNav(t, -1, "-loading=-1s")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	openLoading(t, m, path)
	start := time.Now()
	res, err := m.Definition(ctx, Pos{Path: path, Line: 1, Symbol: "two"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Incomplete {
		t.Error("LoadWait < 0: the answer during the load is not incomplete")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("LoadWait < 0 waited %v", d)
	}
}

func TestNavLoadWaitEndsWithContext(t *testing.T) {
	m, path := newScriptedNav(t, time.Hour, "-loading=-1s")
	openLoading(t, m, path)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := m.Definition(ctx, Pos{Path: path, Line: 1, Column: 1})
	if err == nil || !strings.Contains(err.Error(), "waiting for scripted to load the workspace") {
		t.Errorf("Definition with ctx ending during the load: %v", err)
	}
}

// TestNavOwnProgressIsNotLoading: a server that reports a progress of its
// own (under a token it created, not the request's) around each request
// and ends it after the answer, as pylsp does: that is the request's work,
// not loading, and the answer is complete.
func TestNavOwnProgressIsNotLoading(t *testing.T) {
	m, path := newScriptedNav(t, 5*time.Second, "-own-progress")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		res, err := m.Definition(ctx, Pos{Path: path, Line: 2, Symbol: "four"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Incomplete || res.Status != StatusComplete || len(res.Locations) != 1 {
			t.Errorf("request %d: incomplete %v %s (%s), %d locations", i, res.Incomplete, res.Status, res.Reason, len(res.Locations))
		}
	}
}

// TestNavEmptyUntilAnalysed: a server that reports no progress at all and
// answers navigation about a just-opened file with nothing until it has
// analysed it. The first request's empty answer is asked again, and the
// definition comes.
func TestNavEmptyUntilAnalysed(t *testing.T) {
	m, path := newScriptedNav(t, 0, "-nav-empty-for", "700ms", "-never-publish")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := m.Definition(ctx, Pos{Path: path, Line: 2, Symbol: "four"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Incomplete || len(res.Locations) != 1 {
		t.Errorf("first definition: incomplete %v (%s), %d locations:\n%s", res.Incomplete, res.Reason, len(res.Locations), res.Render(nil))
	}
}

// TestNavEmptyUntilAnalysedSlowStart: the same server, slow to start (it
// answers initialize 2.5 s after it is asked, as a Node server does on a
// busy machine). The time it takes to analyse a document counts from the
// document's open, not from the server's start: the first request's empty
// answer is still asked again, and the definition comes.
func TestNavEmptyUntilAnalysedSlowStart(t *testing.T) {
	m, path := newScriptedNav(t, 0, "-init-delay", "2500ms", "-nav-empty-for", "700ms", "-never-publish")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := m.Definition(ctx, Pos{Path: path, Line: 2, Symbol: "four"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Incomplete || len(res.Locations) != 1 {
		t.Errorf("first definition: incomplete %v (%s), %d locations:\n%s", res.Incomplete, res.Reason, len(res.Locations), res.Render(nil))
	}
}

// TestNavEmptyUntilAnalysedAfterPublish: the same server, publishing the
// document's diagnostics at once (a linter run apart from the analysis
// navigation needs, as bash-language-server runs shellcheck beside its
// background analysis). A publish says the document was linted, not that
// navigation about it is ready: the first empty answer is still asked
// again within the grace, and the definition comes.
func TestNavEmptyUntilAnalysedAfterPublish(t *testing.T) {
	m, path := newScriptedNav(t, 0, "-nav-empty-for", "700ms")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Settle(ctx, path); err != nil {
		t.Fatal(err)
	}
	res, err := m.Definition(ctx, Pos{Path: path, Line: 2, Symbol: "four"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Incomplete || len(res.Locations) != 1 {
		t.Errorf("first definition: incomplete %v (%s), %d locations:\n%s", res.Incomplete, res.Reason, len(res.Locations), res.Render(nil))
	}
}

// TestNavStalledLoad: a load whose progress stops reporting and never
// ends is not waited for the whole load wait; the answer says it may be
// incomplete, and why.
func TestNavStalledLoad(t *testing.T) {
	m, path := newScriptedNav(t, 40*time.Second, "-stall-progress")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	openLoading(t, m, path)
	res, err := m.Definition(ctx, Pos{Path: path, Line: 2, Symbol: "four"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Incomplete || res.Status != StatusPartial || !strings.Contains(res.Reason, "stopped reporting") || len(res.Locations) != 1 {
		t.Errorf("incomplete %v, reason %q, %d locations", res.Incomplete, res.Reason, len(res.Locations))
	}
}

// TestNavServerStatusLongLoad: a server that says it is loading only with
// experimental/serverStatus, for longer than a progress may go without a
// report (stallAfter). A readiness signal is a state the server says
// again when it changes, not a progress that reports: it never stalls,
// so the request waits for the server to say it is ready and the answer
// is complete.
func TestNavServerStatusLongLoad(t *testing.T) {
	m, path := newScriptedNav(t, 0, "-status-loading", "11s")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	openLoading(t, m, path)
	res, err := m.Definition(ctx, Pos{Path: path, Line: 2, Symbol: "four"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Incomplete || res.Status != StatusComplete || len(res.Locations) != 1 {
		t.Errorf("incomplete %v %s (%s), %d locations", res.Incomplete, res.Status, res.Reason, len(res.Locations))
	}
}
