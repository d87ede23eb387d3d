package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idebridge/idebridge/lspdiag"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/internal/fileuri"
)

// scriptlsBin is the scripted language server, built once by TestMain.
var scriptlsBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lsp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	scriptlsBin = filepath.Join(dir, "scriptls")
	if out, err := exec.Command("go", "build", "-o", scriptlsBin, "./testdata/scriptls").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building scriptls: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// scriptConfig is a server configuration running scriptls with args for
// files ending in ext.
func scriptConfig(name, ext string, args ...string) ServerConfig {
	c := NewServerConfig(name, scriptlsBin, args, map[string]string{ext: "script"})
	c.StartupTimeout = 10 * time.Second
	c.ShutdownTimeout = 2 * time.Second
	return c
}

// testOptions are fast manager options for scripted tests.
func testOptions(dir string) *ManagerOptions {
	return &ManagerOptions{
		ProjectDir:     dir,
		QuietPeriod:    time.Second, // long enough that a loaded CI machine never mistakes a slow publish for quiet
		SettleTimeout:  10 * time.Second,
		RestartBackoff: 5 * time.Millisecond,
		RetryBackoff:   time.Millisecond,
	}
}

// newManager returns a manager that is shut down, and checked to leave no
// process behind, when the test ends.
func newManager(t *testing.T, configs []ServerConfig, opts *ManagerOptions) *Manager {
	t.Helper()
	m, err := NewManager(configs, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pids := m.pids()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := m.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		for _, pid := range pids {
			if processAlive(pid) {
				t.Errorf("server process %d still alive after Shutdown", pid)
			}
		}
	})
	return m
}

// pids returns the process ids of the running servers.
func (m *Manager) pids() []int {
	var pids []int
	for _, st := range m.Servers() {
		if st.PID != 0 {
			pids = append(pids, st.PID)
		}
	}
	return pids
}

// serverLog reads the messages scriptls logged, one JSON object a line.
func serverLog(t *testing.T, path string) []map[string]json.RawMessage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]json.RawMessage
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("bad log line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// logged returns the params of the messages of method in a scriptls log.
func logged(t *testing.T, path, method string) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for _, m := range serverLog(t, path) {
		var meth string
		_ = json.Unmarshal(m["method"], &meth)
		if meth == method {
			out = append(out, m["params"])
		}
	}
	return out
}

// waitFor polls cond until it holds or the time is up.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func writeSource(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	writeFile(t, p, text)
	return p
}

func settle(t *testing.T, m *Manager, path string) SettleResult {
	t.Helper()
	res, err := m.Settle(context.Background(), path)
	if err != nil {
		t.Fatalf("Settle(%s): %v", path, err)
	}
	return res
}

// drainMessages drains and returns "line:col message" of each diagnostic
// per file base name, and the notes.
func drainMessages(t *testing.T, m *Manager) (map[string][]string, []string) {
	t.Helper()
	att, ok := m.Drain()
	if !ok {
		return nil, nil
	}
	out := map[string][]string{}
	for _, f := range att.Files {
		for _, d := range f.Diagnostics {
			out[filepath.Base(f.Path)] = append(out[filepath.Base(f.Path)],
				fmt.Sprintf("%d:%d-%d %s", d.Range.Start.Line, d.Range.Start.Character, d.Range.End.Character, d.Message))
		}
	}
	return out, att.Notes
}

func TestScriptedOpenChangeSettleDrain(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "server.log")
	m := newManager(t, []ServerConfig{scriptConfig("script", ".s", "-log", log, "-progress")}, testOptions(dir))
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "ok\nx ERROR y\n")

	if err := m.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	if res := settle(t, m, a); res.Freshness != FreshPublished || res.Version != 1 || res.Server != "script" {
		t.Errorf("after open: %+v", res)
	}
	got, notes := drainMessages(t, m)
	if want := []string{"1:2-7 found ERROR"}; fmt.Sprint(got["a.s"]) != fmt.Sprint(want) || len(notes) != 0 {
		t.Errorf("after open: %v %v, want %v", got, notes, want)
	}

	// Fixed: the server publishes an empty set; nothing new to drain.
	if err := m.Change(ctx, a, "ok\nfine\n"); err != nil {
		t.Fatal(err)
	}
	if res := settle(t, m, a); res.Freshness != FreshPublished || res.Version != 2 {
		t.Errorf("after fix: %+v", res)
	}
	if att, ok := m.Drain(); ok {
		t.Errorf("after fix: drained %+v", att)
	}

	// A different problem.
	if err := m.Change(ctx, a, "WARN\n"); err != nil {
		t.Fatal(err)
	}
	if res := settle(t, m, a); res.Freshness != FreshPublished || res.Version != 3 {
		t.Errorf("after new problem: %+v", res)
	}
	got, _ = drainMessages(t, m)
	if want := []string{"0:0-4 found WARN"}; fmt.Sprint(got["a.s"]) != fmt.Sprint(want) {
		t.Errorf("after new problem: %v, want %v", got, want)
	}

	// The same text again sends nothing; Save sends didSave.
	if err := m.Change(ctx, a, "WARN\n"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, a, "WARN\n")
	if err := m.Save(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Settle(ctx, a); !errors.Is(err, ErrNotOpen) {
		t.Errorf("Settle after Close: %v, want ErrNotOpen", err)
	}
	waitFor(t, "didClose", func() bool { return len(logged(t, log, "textDocument/didClose")) == 1 })
	var versions []int
	for _, p := range logged(t, log, "textDocument/didChange") {
		var c struct {
			TextDocument struct{ Version int } `json:"textDocument"`
		}
		_ = json.Unmarshal(p, &c)
		versions = append(versions, c.TextDocument.Version)
	}
	if fmt.Sprint(versions) != "[2 3]" {
		t.Errorf("didChange versions %v, want [2 3]", versions)
	}
	if n := len(logged(t, log, "textDocument/didSave")); n != 1 {
		t.Errorf("%d didSave, want 1", n)
	}
}

func TestScriptedInitializeAndSettings(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "server.log")
	cfg := scriptConfig("plugin:p:script", ".s", "-log", log, "-ask-config", "-,python.analysis,flat.key,missing")
	cfg.Root, cfg.DataDir, cfg.ProjectDir = "/plugin/root", "/plugin/data", dir
	cfg.Env = map[string]string{"SCRIPTLS_EXTRA": "extra"}
	cfg.Settings = json.RawMessage(`{"python":{"analysis":{"mode":"strict"}},"flat.key":7}`)
	cfg.InitializationOptions = json.RawMessage(`{"verbose":true}`)
	folder := filepath.Join(dir, "ws")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg.WorkspaceFolder = folder
	opts := testOptions(dir)
	opts.ClientVersion = "1.2.3"
	m := newManager(t, []ServerConfig{cfg}, opts)
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "x")

	var env map[string]string
	if err := m.Call(ctx, a, "test/env", nil, &env); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"CLAUDE_PLUGIN_ROOT": "/plugin/root", "CLAUDE_PLUGIN_DATA": "/plugin/data",
		"CLAUDE_PROJECT_DIR": dir, "SCRIPTLS_EXTRA": "extra", "cwd": folder}
	if fmt.Sprint(env) != fmt.Sprint(want) {
		t.Errorf("server environment %v, want %v", env, want)
	}

	init := logged(t, log, "initialize")
	if len(init) != 1 {
		t.Fatalf("%d initialize requests", len(init))
	}
	var ip struct {
		ClientInfo            struct{ Name, Version string } `json:"clientInfo"`
		RootURI               string                         `json:"rootUri"`
		WorkspaceFolders      []struct{ URI, Name string }   `json:"workspaceFolders"`
		InitializationOptions json.RawMessage                `json:"initializationOptions"`
		Capabilities          struct {
			General struct {
				PositionEncodings []string `json:"positionEncodings"`
			} `json:"general"`
			TextDocument struct {
				Synchronization struct {
					DidSave bool `json:"didSave"`
				} `json:"synchronization"`
				PublishDiagnostics struct {
					VersionSupport         bool `json:"versionSupport"`
					RelatedInformation     bool `json:"relatedInformation"`
					CodeDescriptionSupport bool `json:"codeDescriptionSupport"`
					TagSupport             struct {
						ValueSet []int `json:"valueSet"`
					} `json:"tagSupport"`
				} `json:"publishDiagnostics"`
				Hover, Definition, References, DocumentSymbol, CallHierarchy *json.RawMessage
			} `json:"textDocument"`
			Workspace struct {
				Configuration bool `json:"configuration"`
			} `json:"workspace"`
			Window struct {
				WorkDoneProgress bool `json:"workDoneProgress"`
			} `json:"window"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(init[0], &ip); err != nil {
		t.Fatal(err)
	}
	c := ip.Capabilities
	pd := c.TextDocument.PublishDiagnostics
	switch {
	case ip.ClientInfo.Name != "idebridge" || ip.ClientInfo.Version != "1.2.3":
		t.Errorf("clientInfo %+v", ip.ClientInfo)
	case ip.RootURI != fileuri.FromPath(folder) || len(ip.WorkspaceFolders) != 1 || ip.WorkspaceFolders[0].URI != fileuri.FromPath(folder):
		t.Errorf("workspace %s %+v", ip.RootURI, ip.WorkspaceFolders)
	case string(ip.InitializationOptions) != `{"verbose":true}`:
		t.Errorf("initializationOptions %s", ip.InitializationOptions)
	case fmt.Sprint(c.General.PositionEncodings) != "[utf-16 utf-8]":
		t.Errorf("positionEncodings %v", c.General.PositionEncodings)
	case !c.TextDocument.Synchronization.DidSave || !pd.VersionSupport || !pd.RelatedInformation ||
		!pd.CodeDescriptionSupport || len(pd.TagSupport.ValueSet) != 2:
		t.Errorf("textDocument capabilities %+v", c.TextDocument)
	case c.TextDocument.Hover == nil || c.TextDocument.Definition == nil || c.TextDocument.References == nil ||
		c.TextDocument.DocumentSymbol == nil || c.TextDocument.CallHierarchy == nil:
		t.Errorf("missing feature capabilities %+v", c.TextDocument)
	case !c.Workspace.Configuration || !c.Window.WorkDoneProgress:
		t.Errorf("workspace/window capabilities %+v %+v", c.Workspace, c.Window)
	}

	pushes := logged(t, log, "workspace/didChangeConfiguration")
	if len(pushes) != 1 || string(pushes[0]) != `{"settings":{"python":{"analysis":{"mode":"strict"}},"flat.key":7}}` {
		t.Errorf("settings pushes %s", pushes)
	}
	// The answer to workspace/configuration, by dotted section.
	waitFor(t, "configuration answer", func() bool {
		for _, l := range serverLog(t, log) {
			if _, ok := l["result"]; ok {
				return true
			}
		}
		return false
	})
	for _, l := range serverLog(t, log) {
		if r, ok := l["result"]; ok {
			want := `[{"python":{"analysis":{"mode":"strict"}},"flat.key":7},{"mode":"strict"},7,null]`
			if string(r) != want {
				t.Errorf("configuration answer %s, want %s", r, want)
			}
		}
	}
	if st := m.Servers(); len(st) != 1 || st[0].State != StateRunning || st[0].PositionEncoding != EncodingUTF16 ||
		fmt.Sprint(st[0].Extensions) != "[.s]" {
		t.Errorf("status %+v", st)
	}
}

func TestScriptedColumnsConverted(t *testing.T) {
	for _, enc := range []string{EncodingUTF8, EncodingUTF16, EncodingUTF32} {
		t.Run(enc, func(t *testing.T) {
			dir := t.TempDir()
			m := newManager(t, []ServerConfig{scriptConfig("script", ".s", "-encoding", enc)}, testOptions(dir))
			ctx := context.Background()
			a := writeSource(t, dir, "a.s", "é😀 ERROR\r\n日本 WARN")
			if err := m.Open(ctx, a); err != nil {
				t.Fatal(err)
			}
			settle(t, m, a)
			got, _ := drainMessages(t, m)
			want := []string{"0:3-8 found ERROR", "1:3-7 found WARN"}
			if fmt.Sprint(got["a.s"]) != fmt.Sprint(want) {
				t.Errorf("%s: %v, want %v", enc, got["a.s"], want)
			}
			if st := m.Servers()[0]; st.PositionEncoding != enc {
				t.Errorf("encoding %q, want %q", st.PositionEncoding, enc)
			}
		})
	}
}

func TestScriptedCrashRestartThenError(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "server.log")
	cfg := scriptConfig("crashy", ".s", "-log", log, "-crash-on", "1", "-stderr", "scriptls: booting")
	cfg.MaxRestarts = 2
	m := newManager(t, []ServerConfig{cfg}, testOptions(dir))
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "ERROR")
	b := writeSource(t, dir, "b.s", "fine")
	for _, p := range []string{a, b} {
		if err := m.Open(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	pid := m.Servers()[0].PID

	for i := 0; i <= cfg.MaxRestarts; i++ {
		err := m.Call(ctx, a, "test/echo", nil, nil)
		var se *ServerError
		if !errors.As(err, &se) || !errors.Is(err, ErrServerFailed) || !errors.Is(err, ErrServerExited) {
			t.Fatalf("call %d: %v, want a *ServerError for an exit", i, err)
		}
		if se.ExitStatus != "exit status 3" || !strings.Contains(se.Stderr, "crashing on request 1") ||
			!strings.Contains(se.Stderr, "scriptls: booting") || se.Restarts != i {
			t.Errorf("call %d: error %+v", i, se)
		}
		if processAlive(pid) {
			t.Errorf("crashed server %d still alive", pid)
		}
		if i < cfg.MaxRestarts {
			// The next use restarts it and reopens both documents.
			if err := m.Open(ctx, b); err != nil {
				t.Fatalf("reopen after crash %d: %v", i, err)
			}
			st := m.Servers()[0]
			if st.State != StateRunning || st.Restarts != i+1 || st.PID == pid {
				t.Fatalf("after restart %d: %+v", i+1, st)
			}
			pid = st.PID
			if res := settle(t, m, a); res.Freshness != FreshPublished {
				t.Errorf("settle after restart: %+v", res)
			}
		}
	}
	opens := logged(t, log, "textDocument/didOpen")
	if len(opens) != 2*(cfg.MaxRestarts+1) {
		t.Errorf("%d didOpen over %d instances, want 2 each", len(opens), cfg.MaxRestarts+1)
	}
	// Out of restarts: every use fails at once with the last error.
	for _, use := range []func() error{
		func() error { return m.Open(ctx, a) },
		func() error { return m.Change(ctx, b, "x") },
		func() error { return m.Call(ctx, a, "test/echo", nil, nil) },
		func() error { _, err := m.Settle(ctx, a); return err },
	} {
		err := use()
		var se *ServerError
		if !errors.As(err, &se) || !se.Final || se.Restarts != 2 || !strings.Contains(se.Stderr, "crashing") {
			t.Errorf("use after restarts ran out: %v", err)
		}
	}
	if st := m.Servers()[0]; st.State != StateError || st.Err == nil {
		t.Errorf("status %+v", st)
	}
	_, notes := drainMessages(t, m)
	if len(notes) != 2 || !strings.Contains(notes[0], "a.s: no diagnostics: language server crashy failed") {
		t.Errorf("notes %q", notes)
	}
}

func TestScriptedNoRestartOnCrash(t *testing.T) {
	dir := t.TempDir()
	cfg := scriptConfig("crashy", ".s", "-crash-on", "1")
	cfg.NoRestartOnCrash = true
	m := newManager(t, []ServerConfig{cfg}, testOptions(dir))
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "")
	if err := m.Call(ctx, a, "test/echo", nil, nil); !errors.Is(err, ErrServerExited) {
		t.Fatalf("first call: %v", err)
	}
	err := m.Open(ctx, a)
	var se *ServerError
	if !errors.As(err, &se) || !se.Final || se.Restarts != 0 {
		t.Errorf("after crash: %v", err)
	}
}

func TestScriptedContentModifiedRetry(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, []ServerConfig{
		scriptConfig("twice", ".a", "-content-modified", "2"),
		scriptConfig("always", ".b", "-content-modified", "100"),
	}, testOptions(dir))
	ctx := context.Background()
	a := writeSource(t, dir, "f.a", "")
	var res struct{ Attempt int }
	if err := m.Call(ctx, a, "test/echo", map[string]int{"n": 1}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Attempt != 3 {
		t.Errorf("succeeded on attempt %d, want 3", res.Attempt)
	}
	b := writeSource(t, dir, "f.b", "")
	err := m.Call(ctx, b, "test/echo", nil, &res)
	var re *RPCError
	if !errors.Is(err, ErrContentModified) || !errors.As(err, &re) || re.Code != CodeContentModified {
		t.Fatalf("always modified: %v", err)
	}
	// 1 try and 3 retries.
	if err := m.Call(ctx, b, "test/echo", nil, &res); !errors.Is(err, ErrContentModified) {
		t.Fatal(err)
	}
	var unknown *RPCError
	if err := m.Call(ctx, a, "test/unknown", nil, nil); !errors.As(err, &unknown) || unknown.Code != -32601 {
		t.Errorf("unknown method: %v", err)
	}
}

func TestScriptedContentModifiedBackoffCancelled(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(dir)
	opts.RetryBackoff = time.Hour // a cancelled wait returns at once
	m := newManager(t, []ServerConfig{scriptConfig("always", ".b", "-content-modified", "100")}, opts)
	b := writeSource(t, dir, "f.b", "")
	if err := m.Open(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := m.Call(ctx, b, "test/echo", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled during backoff: %v", err)
	}
}

func TestScriptedContentModifiedCount(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "server.log")
	m := newManager(t, []ServerConfig{scriptConfig("always", ".b", "-content-modified", "100", "-log", log)}, testOptions(dir))
	b := writeSource(t, dir, "f.b", "")
	if err := m.Call(context.Background(), b, "test/echo", nil, nil); !errors.Is(err, ErrContentModified) {
		t.Fatal(err)
	}
	if n := len(logged(t, log, "test/echo")); n != 1+maxContentModifiedRetries {
		t.Errorf("%d attempts, want %d", n, 1+maxContentModifiedRetries)
	}
}

func TestScriptedCancelSendsCancelRequest(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "server.log")
	m := newManager(t, []ServerConfig{scriptConfig("slow", ".s", "-log", log)}, testOptions(dir))
	a := writeSource(t, dir, "a.s", "")
	if err := m.Open(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- m.Call(ctx, a, "test/slow", nil, nil) }()
	waitFor(t, "test/slow to arrive", func() bool { return len(logged(t, log, "test/slow")) == 1 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	waitFor(t, "$/cancelRequest", func() bool { return len(logged(t, log, "$/cancelRequest")) == 1 })
	var slowID, cancelID struct {
		ID json.RawMessage `json:"id"`
	}
	for _, l := range serverLog(t, log) {
		if string(l["method"]) == `"test/slow"` {
			slowID.ID = l["id"]
		}
	}
	_ = json.Unmarshal(logged(t, log, "$/cancelRequest")[0], &cancelID)
	if string(slowID.ID) != string(cancelID.ID) {
		t.Errorf("cancelled id %s, request id %s", cancelID.ID, slowID.ID)
	}
	// The connection still works.
	if err := m.Call(context.Background(), a, "test/echo", nil, nil); err != nil {
		t.Errorf("after cancel: %v", err)
	}
}

func TestScriptedStaleAndOutOfOrderPublishes(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, []ServerConfig{scriptConfig("stale", ".s", "-stale")}, testOptions(dir))
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "ERROR")
	if err := m.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	settle(t, m, a)
	drainMessages(t, m)
	for i, text := range []string{"WARN", "x ERROR", "fine"} {
		if err := m.Change(ctx, a, text); err != nil {
			t.Fatal(err)
		}
		// Each change gets its publish, then one for the previous version.
		if res := settle(t, m, a); res.Freshness != FreshPublished || res.Version != i+2 {
			t.Errorf("change %d: %+v", i, res)
		}
	}
	waitFor(t, "all publishes", func() bool { return m.reg.Stats().Stale >= 3 })
	got, _ := drainMessages(t, m)
	for _, msgs := range got {
		for _, msg := range msgs {
			if strings.Contains(msg, "STALE") {
				t.Errorf("stale diagnostic delivered: %s", msg)
			}
		}
	}
	if len(got["a.s"]) != 0 {
		t.Errorf("the file is clean now; drained %v", got)
	}
}

func TestScriptedFlood(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(dir)
	opts.SettleTimeout = 2 * time.Minute // decoding 20 MB is slow under the race detector
	m := newManager(t, []ServerConfig{scriptConfig("flood", ".s", "-flood", "100000", "-progress")}, opts)
	ctx := context.Background()
	a := writeSource(t, dir, "a.s", "x")
	if err := m.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	if res := settle(t, m, a); res.Freshness != FreshPublished {
		t.Errorf("settle: %+v", res)
	}
	att, ok := m.Drain()
	if !ok {
		t.Fatal("nothing drained")
	}
	if att.Count() != lspdiag.DefaultMaxPerFile || att.Cut == 0 {
		t.Fatalf("drained %d diagnostics, cut %d", att.Count(), att.Cut)
	}
	if st := m.reg.Stats(); st.Truncated != 100000-lspdiag.DefaultMaxPerPublish {
		t.Errorf("truncated %d", st.Truncated)
	}
	if out := att.Render(nil); len([]rune(out)) > diag.DefaultMaxChars {
		t.Errorf("rendered %d characters", len([]rune(out)))
	}
	// The server is still usable.
	if err := m.Call(ctx, a, "test/echo", nil, nil); err != nil {
		t.Error(err)
	}
}

func TestScriptedStartupTimeout(t *testing.T) {
	dir := t.TempDir()
	cfg := scriptConfig("mute", ".s", "-no-init")
	cfg.StartupTimeout = 200 * time.Millisecond
	cfg.MaxRestarts = -1 // none
	m := newManager(t, []ServerConfig{cfg}, testOptions(dir))
	a := writeSource(t, dir, "a.s", "")
	err := m.Open(context.Background(), a)
	var se *ServerError
	if !errors.Is(err, ErrStartupTimeout) || !errors.As(err, &se) || se.ExitStatus != "signal: killed" {
		t.Fatalf("Open: %v", err)
	}
	if err := m.Open(context.Background(), a); !errors.Is(err, ErrStartupTimeout) {
		t.Errorf("second Open: %v", err)
	}
}

// Shutdown kills a server still starting: with a server that never
// answers initialize, after the Open that started it was cancelled,
// Shutdown used to wait for the whole startup timeout (59 s of a 60 s
// setting). The bound asserted is a third of that timeout, far above
// what Shutdown takes; the figure is logged.
func TestScriptedShutdownKillsServerStillStarting(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	cfg := scriptConfig("mute", ".s", "-no-init", "-pidfile", pidFile)
	cfg.StartupTimeout = 3 * time.Minute
	m := newManager(t, []ServerConfig{cfg}, testOptions(dir))
	a := writeSource(t, dir, "a.s", "")
	ctx, cancel := context.WithCancel(context.Background())
	opened := make(chan error, 1)
	go func() { opened <- m.Open(ctx, a) }()
	var pid int
	waitFor(t, "the server to start", func() bool {
		data, _ := os.ReadFile(pidFile)
		_, err := fmt.Sscan(string(data), &pid)
		return err == nil && pid > 0
	})
	cancel()
	if err := <-opened; !errors.Is(err, context.Canceled) {
		t.Fatalf("Open: %v, want it cancelled", err)
	}
	if st := m.Servers()[0].State; st != StateStarting {
		t.Fatalf("server %v, want still starting", st)
	}
	start := time.Now()
	shut := make(chan error, 1)
	go func() { shut <- m.Shutdown(context.Background()) }()
	select {
	case err := <-shut:
		if err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	case <-time.After(cfg.StartupTimeout / 3):
		t.Fatalf("Shutdown still waiting after %v: it waits for the server's startup timeout (%v)", time.Since(start), cfg.StartupTimeout)
	}
	t.Logf("Shutdown took %v (startup timeout %v, shutdown timeout %v)", time.Since(start), cfg.StartupTimeout, cfg.ShutdownTimeout)
	if processAlive(pid) {
		t.Errorf("server process %d alive after Shutdown", pid)
	}
	if st := m.Servers()[0].State; st != StateStopped {
		t.Errorf("server %v after Shutdown, want stopped", st)
	}
}

func TestScriptedShutdownKillsStubbornServerAndGrandchild(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	cfg := scriptConfig("stubborn", ".s", "-ignore-exit", "-pidfile", pidFile)
	cfg.ShutdownTimeout = 300 * time.Millisecond
	m, err := NewManager([]ServerConfig{cfg}, testOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	a := writeSource(t, dir, "a.s", "")
	if err := m.Open(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	var server, grandchild int
	waitFor(t, "pid file", func() bool {
		data, _ := os.ReadFile(pidFile)
		n, _ := fmt.Sscan(string(data), &server, &grandchild)
		return n == 2
	})
	if !processAlive(server) || !processAlive(grandchild) {
		t.Fatal("server or grandchild not running")
	}
	start := time.Now()
	if err := m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the grandchild to die", func() bool { return !processAlive(grandchild) })
	if processAlive(server) {
		t.Error("server alive after Shutdown")
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Shutdown took %v", el)
	}
	if err := m.Shutdown(context.Background()); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
	if err := m.Open(context.Background(), a); !errors.Is(err, ErrManagerClosed) {
		t.Errorf("Open after Shutdown: %v", err)
	}
}

func TestScriptedMalformedFrame(t *testing.T) {
	dir := t.TempDir()
	cfg := scriptConfig("garbled", ".s", "-malformed-on-open")
	cfg.NoRestartOnCrash = true
	m := newManager(t, []ServerConfig{cfg}, testOptions(dir))
	a := writeSource(t, dir, "a.s", "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	_, err := m.Settle(ctx, a)
	var fe *FrameError
	if !errors.Is(err, ErrServerFailed) || !errors.As(err, &fe) || !strings.Contains(err.Error(), "bad Content-Length") {
		t.Fatalf("Settle: %v, want a server failure caused by the malformed frame", err)
	}
	if ctx.Err() != nil {
		t.Error("hung until the deadline")
	}
}

func TestScriptedServerStopsReading(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(dir)
	opts.WriteTimeout = 200 * time.Millisecond
	cfg := scriptConfig("deaf", ".s", "-stop-reading")
	cfg.NoRestartOnCrash = true
	m := newManager(t, []ServerConfig{cfg}, opts)
	a := writeSource(t, dir, "a.s", "")
	if err := m.Open(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	// More than a pipe holds: the write blocks until its deadline.
	err := m.Change(context.Background(), a, strings.Repeat("x", 4<<20))
	var se *ServerError
	if !errors.As(err, &se) || !errors.Is(err, os.ErrDeadlineExceeded) || !strings.Contains(err.Error(), "writing to it failed") {
		t.Fatalf("Change: %v, want a server failure from the write timeout", err)
	}
	if st := m.Servers()[0]; st.State != StateError {
		t.Errorf("state %v", st.State)
	}
}

func TestScriptedSettleReasons(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(dir)
	opts.SettleTimeout = 3 * opts.QuietPeriod
	m := newManager(t, []ServerConfig{
		scriptConfig("published", ".pub"),
		scriptConfig("progress", ".prog", "-quiet-changes", "-progress"),
		scriptConfig("quiet", ".quiet", "-quiet-changes"),
		scriptConfig("hung", ".hung", "-hang-progress"),
	}, opts)
	ctx := context.Background()
	for _, tt := range []struct {
		ext  string
		want Freshness
	}{{".pub", FreshPublished}, {".prog", FreshProgressEnded}, {".quiet", FreshTimedOut}, {".hung", FreshTimedOut}} {
		p := writeSource(t, dir, "f"+tt.ext, "ERROR")
		if err := m.Open(ctx, p); err != nil {
			t.Fatal(err)
		}
		settle(t, m, p)
		if err := m.Change(ctx, p, "changed"); err != nil {
			t.Fatal(err)
		}
		if res := settle(t, m, p); res.Freshness != tt.want {
			t.Errorf("%s: %v, want %v", tt.ext, res.Freshness, tt.want)
		}
	}
	// Silence after a change is not an answer: a server that publishes
	// nothing for a change (and reports no progress that ended) leaves the
	// diagnostics unknown, and Drain says so for each.
	_, notes := drainMessages(t, m)
	if len(notes) != 2 || !strings.HasPrefix(notes[0], "f.hung: diagnostics may be stale or incomplete: hung published nothing for its last change within") ||
		!strings.HasPrefix(notes[1], "f.quiet: diagnostics may be stale or incomplete: quiet published nothing for its last change within") {
		t.Errorf("notes %q", notes)
	}
	// A cancelled Settle reports ctx's error.
	p := filepath.Join(dir, "f.hung")
	if err := m.Change(ctx, p, "again"); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if res, err := m.Settle(cctx, p); !errors.Is(err, context.Canceled) || res.Freshness != FreshTimedOut {
		t.Errorf("cancelled Settle: %+v %v", res, err)
	}
	// A change not settled is noted by Drain.
	_, notes = drainMessages(t, m)
	if len(notes) != 1 || !strings.Contains(notes[0], "f.hung: diagnostics may be") {
		t.Errorf("notes %q", notes)
	}
}

func TestScriptedDiagnosticsFalse(t *testing.T) {
	dir := t.TempDir()
	cfg := scriptConfig("silent", ".s")
	cfg.NoDiagnostics = true
	m := newManager(t, []ServerConfig{cfg}, testOptions(dir))
	a := writeSource(t, dir, "a.s", "ERROR")
	if err := m.Open(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if res := settle(t, m, a); res.Freshness != FreshPublished {
		t.Errorf("settle %+v", res)
	}
	if att, ok := m.Drain(); ok {
		t.Errorf("drained %+v from a server with diagnostics false", att)
	}
}

func TestScriptedConcurrentUse(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, []ServerConfig{scriptConfig("a", ".a"), scriptConfig("b", ".b")}, testOptions(dir))
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := writeSource(t, dir, fmt.Sprintf("f%d.%c", i, 'a'+i%2), "x")
			for j := range 5 {
				if err := m.Change(ctx, p, strings.Repeat("ERROR ", j)); err != nil {
					t.Error(err)
					return
				}
				if _, err := m.Settle(ctx, p); err != nil {
					t.Error(err)
				}
				m.Drain()
			}
		}()
	}
	wg.Wait()
	if st := m.Servers(); st[0].State != StateRunning || st[1].State != StateRunning {
		t.Errorf("servers %+v", st)
	}
}
