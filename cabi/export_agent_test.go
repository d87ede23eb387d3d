package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idebridge/idebridge/cabi/abispec"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

func init() { moreExportCalls = append(moreExportCalls, agentExportCalls) }

// agentExportCalls covers the agent API in TestExportsRecover.
func agentExportCalls(t *testing.T) map[string]func() C_int {
	var out *C_char
	return map[string]func() C_int{
		"idb_ide_propose_edit":         func() C_int { return idb_ide_propose_edit(1, cstr(t, "x"), cstr(t, "y"), 1, nil, 0, &out) },
		"idb_ide_cancel_all_edits":     func() C_int { return idb_ide_cancel_all_edits(1, 0, &out) },
		"idb_apply_edit":               func() C_int { return idb_apply_edit(cstr(t, "x"), cstr(t, "y"), 1, nil, &out) },
		"idb_file_state":               func() C_int { return idb_file_state(cstr(t, "x"), &out) },
		"idb_ide_snapshot_diagnostics": func() C_int { return idb_ide_snapshot_diagnostics(1, cstr(t, "x"), 0, &out) },
		"idb_ide_new_diagnostics":      func() C_int { return idb_ide_new_diagnostics(1, cstr(t, "{}"), nil, 0, &out) },
		"idb_ide_get_diagnostics":      func() C_int { return idb_ide_get_diagnostics(1, nil, 0, &out) },
		"idb_should_auto_connect":      func() C_int { return idb_should_auto_connect(nil, &out) },
		"idb_wait_for_ide":             func() C_int { return idb_wait_for_ide(cstr(t, `{"lockfileDirs":[]}`), 1, &out) },
		"idb_remove_stale":             func() C_int { return idb_remove_stale(cstr(t, `{"lockfileDirs":[]}`), 1, &out) },
		"idb_lsp_reload":               func() C_int { return idb_lsp_reload(1, cstr(t, "{}"), 0, &out) },
	}
}

// editJSON is the outcome of an edit as the tests read it.
type editJSON struct {
	Path         string `json:"path"`
	Status       string `json:"status"`
	Written      bool   `json:"written"`
	Text         string `json:"text"`
	Bytes        int    `json:"bytes"`
	UserModified bool   `json:"userModified"`
	Created      bool   `json:"created"`
	Cancelled    bool   `json:"cancelled"`
	ViaIDE       bool   `json:"viaIDE"`
	TabName      string `json:"tabName"`
	Conflict     *struct {
		Message  string          `json:"message"`
		Expected json.RawMessage `json:"expected"`
		Actual   json.RawMessage `json:"actual"`
	} `json:"conflict"`
}

func decodeEdit(t *testing.T, s string) editJSON {
	t.Helper()
	var e editJSON
	if err := json.Unmarshal([]byte(s), &e); err != nil {
		t.Fatalf("edit result %q: %v", s, err)
	}
	return e
}

// propose runs idb_ide_propose_edit and decodes its outcome.
func propose(t *testing.T, h C_uint64, path, text, opts string) editJSON {
	t.Helper()
	var o *C_char
	if opts != "" {
		o = cstr(t, opts)
	}
	var out *C_char
	wantStatus(t, idb_ide_propose_edit(h, cstr(t, path), cstr(t, text), C_size(len(text)), o, 10000, &out), 0, "idb_ide_propose_edit")
	return decodeEdit(t, take(out))
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestProposeEditOutcomes drives every outcome of the review: accepted,
// accepted with the user's own text, tab closed, rejected, another answer,
// and a conflict (the file changed on disk while the user looked).
func TestProposeEditOutcomes(t *testing.T) {
	lockThread(t)
	noLeak(t)
	d := newDiffLog()
	ide := startReviewIDE(t, d)
	h := connectIDE(t, ide.options(""))
	path := filepath.Join(ide.workspace, "main.go")
	if err := os.WriteFile(path, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	answer := func(req *ideserver.DiffRequest) (ideserver.DiffDecision, bool) {
		return ideserver.SaveDiff(req.NewContents), true
	}
	d.decide = func(req *ideserver.DiffRequest) (ideserver.DiffDecision, bool) {
		mu.Lock()
		defer mu.Unlock()
		return answer(req)
	}
	setAnswer := func(f func(req *ideserver.DiffRequest) (ideserver.DiffDecision, bool)) {
		mu.Lock()
		answer = f
		mu.Unlock()
	}

	e := propose(t, h, path, "new\n", `{"tabName":"review-1"}`)
	if e.Status != "accepted" || !e.Written || e.Text != "new\n" || e.Bytes != 4 || e.UserModified || e.Created || !e.ViaIDE || e.TabName != "review-1" || e.Path != path {
		t.Errorf("accepted: %+v", e)
	}
	if got := readFile(t, path); got != "new\n" {
		t.Errorf("file %q after accept", got)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v after accept, want 0640", st.Mode().Perm())
	}

	setAnswer(func(*ideserver.DiffRequest) (ideserver.DiffDecision, bool) { return ideserver.SaveDiff("mine\n"), true })
	if e := propose(t, h, path, "theirs\n", ""); e.Status != "accepted" || !e.UserModified || e.Text != "mine\n" || readFile(t, path) != "mine\n" {
		t.Errorf("user-modified: %+v, file %q", e, readFile(t, path))
	}

	setAnswer(func(*ideserver.DiffRequest) (ideserver.DiffDecision, bool) {
		return ideserver.DiffDecision{Action: ideserver.DiffCloseTab}, true
	})
	if e := propose(t, h, path, "closed\n", ""); e.Status != "tab_closed" || !e.Written || readFile(t, path) != "closed\n" {
		t.Errorf("tab closed: %+v", e)
	}

	setAnswer(func(*ideserver.DiffRequest) (ideserver.DiffDecision, bool) {
		return ideserver.DiffDecision{Action: ideserver.DiffReject}, true
	})
	if e := propose(t, h, path, "rejected\n", ""); e.Status != "rejected" || e.Written || e.Cancelled || readFile(t, path) != "closed\n" {
		t.Errorf("rejected: %+v", e)
	}

	// A new file: created when accepted.
	setAnswer(func(req *ideserver.DiffRequest) (ideserver.DiffDecision, bool) {
		return ideserver.SaveDiff(req.NewContents), true
	})
	fresh := filepath.Join(ide.workspace, "new.go")
	if e := propose(t, h, fresh, "package x\n", ""); e.Status != "accepted" || !e.Created || readFile(t, fresh) != "package x\n" {
		t.Errorf("created: %+v", e)
	}

	// The file changes on disk while the user looks: accepted, but not
	// written, and the result says why.
	setAnswer(func(req *ideserver.DiffRequest) (ideserver.DiffDecision, bool) {
		if err := os.WriteFile(path, []byte("changed underneath\n"), 0o640); err != nil {
			t.Error(err)
		}
		return ideserver.SaveDiff(req.NewContents), true
	})
	e = propose(t, h, path, "conflicting\n", "")
	if e.Status != "accepted" || e.Written || e.Conflict == nil || !strings.Contains(e.Conflict.Message, "changed on disk") || e.Text != "conflicting\n" {
		t.Errorf("conflict: %+v", e)
	}
	if got := readFile(t, path); got != "changed underneath\n" {
		t.Errorf("the conflict overwrote the file: %q", got)
	}
	// Every review closed its tab.
	if n := len(d.closedTabs()); n != 6 {
		t.Errorf("%d tabs closed, want 6: %v", n, d.closedTabs())
	}

	var out *C_char
	wantStatus(t, idb_ide_propose_edit(h, nil, nil, 0, nil, 0, &out), abispec.StArgument, "idb_ide_propose_edit", "path is NULL")
	wantStatus(t, idb_ide_propose_edit(h, cstr(t, path), cstr(t, "x"), 1, cstr(t, `{"nope":1}`), 0, &out), abispec.StArgument, "idb_ide_propose_edit", "unknown field")
	wantStatus(t, idb_ide_propose_edit(h, cstr(t, path), cstr(t, "x"), 1, nil, 0, nil), abispec.StArgument, "idb_ide_propose_edit", "out is NULL")
}

// TestProposeEditBaseAndApply checks an edit against the state the agent
// read (idb_file_state), with and without an IDE.
func TestProposeEditBaseAndApply(t *testing.T) {
	lockThread(t)
	noLeak(t)
	// The file is in the IDE's workspace: a headless IDE serves no other.
	ide := startIDE(t, "")
	dir := ide.workspace
	path := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(path, []byte("v1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out *C_char
	wantStatus(t, idb_file_state(cstr(t, path), &out), 0, "idb_file_state")
	base := take(out)
	for _, key := range []string{`"exists":true`, `"size":3`, `"sha256":"`, `"modTime":"`, `"mode":384`} {
		if !strings.Contains(base, key) {
			t.Errorf("file state lacks %s: %s", key, base)
		}
	}
	wantStatus(t, idb_apply_edit(cstr(t, path), cstr(t, "v2\n"), 3, cstr(t, `{"base":`+base+`}`), &out), 0, "idb_apply_edit")
	if e := decodeEdit(t, take(out)); e.Status != "applied" || !e.Written || e.ViaIDE || readFile(t, path) != "v2\n" {
		t.Errorf("applied: %+v", e)
	}
	// The same base is stale now: a conflict, nothing written.
	wantStatus(t, idb_apply_edit(cstr(t, path), cstr(t, "v3\n"), 3, cstr(t, `{"base":`+base+`}`), &out), 0, "idb_apply_edit")
	if e := decodeEdit(t, take(out)); e.Written || e.Conflict == nil || readFile(t, path) != "v2\n" {
		t.Errorf("stale base: %+v", e)
	}
	// Through the IDE, a stale base is a conflict too.
	h := connectIDE(t, ide.options(""))
	if e := propose(t, h, path, "v4\n", `{"base":`+base+`}`); e.Status != "accepted" || e.Written || e.Conflict == nil || readFile(t, path) != "v2\n" {
		t.Errorf("stale base through the IDE: %+v", e)
	}
	missing := filepath.Join(dir, "none")
	wantStatus(t, idb_file_state(cstr(t, missing), &out), 0, "idb_file_state")
	if s := take(out); !strings.Contains(s, `"exists":false`) {
		t.Errorf("missing file state %s", s)
	}
	wantStatus(t, idb_file_state(cstr(t, dir), &out), abispec.StError, "idb_file_state", "not a regular file")
	wantStatus(t, idb_apply_edit(cstr(t, path), nil, 5, nil, &out), abispec.StArgument, "idb_apply_edit", "new_text is NULL")
}

// TestCancelAllEditsAndAsyncCancel cancels pending reviews both ways: the
// user's ESC for every edit of the client, and one asynchronous call.
func TestCancelAllEditsAndAsyncCancel(t *testing.T) {
	lockThread(t)
	noLeak(t)
	d := newDiffLog()
	ide := startReviewIDE(t, d)
	h := connectIDE(t, ide.options(""))
	path := filepath.Join(ide.workspace, "c.txt")
	if err := os.WriteFile(path, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var calls [2]C_uint64
	for i := range calls {
		wantStatus(t, idb_ide_propose_edit_start(h, cstr(t, path), cstr(t, "lose\n"), 5, cstr(t, fmt.Sprintf(`{"tabName":"esc-%d"}`, i)), 0, &calls[i]), 0, "idb_ide_propose_edit_start")
		<-d.waiting
	}
	var out *C_char
	wantStatus(t, idb_ide_cancel_all_edits(h, 0, &out), 0, "idb_ide_cancel_all_edits")
	if s := take(out); s != `{"cancelled":2}` {
		t.Errorf("cancel all: %s", s)
	}
	for _, c := range calls {
		st, res := waitCall(t, c)
		if e := decodeEdit(t, res); st != 0 || e.Status != "rejected" || !e.Cancelled || e.Written {
			t.Errorf("cancelled edit: status %d %+v", st, e)
		}
	}
	// Nothing pending: still asks the IDE to close its tabs.
	wantStatus(t, idb_ide_cancel_all_edits(h, 0, &out), 0, "idb_ide_cancel_all_edits")
	if s := take(out); s != `{"cancelled":0}` {
		t.Errorf("cancel none: %s", s)
	}

	// Cancelling the asynchronous call of one review closes its tab.
	var call C_uint64
	wantStatus(t, idb_ide_propose_edit_start(h, cstr(t, path), cstr(t, "lose\n"), 5, cstr(t, `{"tabName":"async-1"}`), 0, &call), 0, "idb_ide_propose_edit_start")
	<-d.waiting
	wantStatus(t, idb_call_cancel(call), 0, "idb_call_cancel")
	st, res := waitCall(t, call)
	if st != abispec.StCancelled {
		t.Errorf("cancelled review: status %d, %s", st, res)
	}
	if got := d.closedTabs(); len(got) == 0 || got[len(got)-1] != "async-1" {
		t.Errorf("tabs closed %v: the cancelled review's tab is not the last", got)
	}
	if got := readFile(t, path); got != "keep\n" {
		t.Errorf("cancelled reviews changed the file: %q", got)
	}
	// The client works, and a new review is decided normally.
	d.decide = func(req *ideserver.DiffRequest) (ideserver.DiffDecision, bool) {
		return ideserver.SaveDiff(req.NewContents), true
	}
	if e := propose(t, h, path, "after\n", ""); e.Status != "accepted" || readFile(t, path) != "after\n" {
		t.Errorf("after the cancel: %+v", e)
	}
}

// diagIDE is an ideserver whose getDiagnostics answers from files, as
// deployed IDEs write them.
type diagIDE struct {
	*testIDE
	mu    sync.Mutex
	files map[string][]map[string]any // path -> diagnostics
}

func startDiagIDE(t *testing.T) *diagIDE {
	t.Helper()
	di := &diagIDE{testIDE: startIDE(t, ""), files: map[string][]map[string]any{}}
	tool := ideserver.Tool{Tool: mcp.Tool{Name: "getDiagnostics"}, Handler: func(_ context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
		var a struct {
			URI string `json:"uri"`
		}
		if err := call.Bind(&a); err != nil {
			return nil, err
		}
		di.mu.Lock()
		defer di.mu.Unlock()
		out := []map[string]any{}
		for p, ds := range di.files {
			u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
			if a.URI == "" || a.URI == u {
				out = append(out, map[string]any{"uri": u, "diagnostics": ds})
			}
		}
		return ideserver.JSONResult(out)
	}}
	if err := di.srv.RegisterTool(tool); err != nil {
		t.Fatal(err)
	}
	return di
}

func (di *diagIDE) set(path string, ds ...map[string]any) {
	di.mu.Lock()
	di.files[path] = ds
	di.mu.Unlock()
}

func diagAt(line int, msg, severity string) map[string]any {
	return map[string]any{"message": msg, "severity": severity, "source": "compiler",
		"range": map[string]any{"start": map[string]int{"line": line, "character": 1}, "end": map[string]int{"line": line, "character": 4}}}
}

// TestEditDiagnostics snapshots a file's IDE diagnostics, edits it (a line
// inserted above an existing error, and a new error), and checks that only
// the new error is reported, rendered as the model's block.
func TestEditDiagnostics(t *testing.T) {
	lockThread(t)
	noLeak(t)
	di := startDiagIDE(t)
	h := connectIDE(t, di.options(""))
	path := filepath.Join(di.workspace, "main.go")
	if err := os.WriteFile(path, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	di.set(path, diagAt(1, "old problem", "Error"))
	var out *C_char
	wantStatus(t, idb_ide_snapshot_diagnostics(h, cstr(t, path), 0, &out), 0, "idb_ide_snapshot_diagnostics")
	snap := take(out)
	if !strings.Contains(snap, `"text":"a\nb\nc\n"`) || !strings.Contains(snap, "old problem") || !strings.Contains(snap, `"severity":1`) {
		t.Fatalf("snapshot %s", snap)
	}
	// The edit inserts a line at the top: the old problem moves to line 2,
	// and a new one appears on line 0.
	if err := os.WriteFile(path, []byte("new\na\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	di.set(path, diagAt(2, "old problem", "Error"), diagAt(0, "fresh problem", "Warning"))
	wantStatus(t, idb_ide_new_diagnostics(h, cstr(t, snap), cstr(t, fmt.Sprintf(`{"projectDir":%q}`, di.workspace)), 0, &out), 0, "idb_ide_new_diagnostics")
	var news struct {
		Path        string `json:"path"`
		Diagnostics []struct {
			Message  string `json:"message"`
			Severity int    `json:"severity"`
		} `json:"diagnostics"`
		Moved    int    `json:"moved"`
		Rendered string `json:"rendered"`
	}
	raw := take(out)
	if err := json.Unmarshal([]byte(raw), &news); err != nil {
		t.Fatal(err)
	}
	if news.Path != path || len(news.Diagnostics) != 1 || news.Diagnostics[0].Message != "fresh problem" || news.Diagnostics[0].Severity != 2 || news.Moved != 1 {
		t.Errorf("new diagnostics %s", raw)
	}
	if !strings.HasPrefix(news.Rendered, "<new-diagnostics>") || !strings.Contains(news.Rendered, "main.go:") || !strings.Contains(news.Rendered, "[Line 1:2] fresh problem") || strings.Contains(news.Rendered, "old problem") {
		t.Errorf("rendered %q", news.Rendered)
	}

	// getDiagnostics decoded: severities as numbers, paths local.
	wantStatus(t, idb_ide_get_diagnostics(h, cstr(t, path), 0, &out), 0, "idb_ide_get_diagnostics")
	if s := take(out); !strings.Contains(s, fmt.Sprintf(`"path":%q`, path)) || !strings.Contains(s, `"severity":2`) || !strings.Contains(s, "fresh problem") {
		t.Errorf("get diagnostics %s", s)
	}
	wantStatus(t, idb_ide_get_diagnostics(h, nil, 0, &out), 0, "idb_ide_get_diagnostics")
	if s := take(out); !strings.HasPrefix(s, "[{") {
		t.Errorf("get all diagnostics %s", s)
	}
	wantStatus(t, idb_ide_new_diagnostics(h, cstr(t, `{"path":1}`), nil, 0, &out), abispec.StArgument, "idb_ide_new_diagnostics", "snapshot_json")
	wantStatus(t, idb_ide_new_diagnostics(h, cstr(t, `{}`), nil, 0, &out), abispec.StArgument, "idb_ide_new_diagnostics", "no path")
	wantStatus(t, idb_ide_new_diagnostics(h, nil, nil, 0, &out), abispec.StArgument, "idb_ide_new_diagnostics", "snapshot_json is NULL")
}

func TestShouldAutoConnect(t *testing.T) {
	lockThread(t)
	for _, tc := range []struct {
		opts, want string
	}{
		{`{"env":{}}`, `"autoConnect":false`},
		{`{"env":{"CLAUDE_CODE_SSE_PORT":"1234"}}`, `"autoConnect":true`},
		{`{"requested":true,"env":{}}`, `"autoConnect":true`},
		{`{"requested":true,"env":{"CLAUDE_CODE_AUTO_CONNECT_IDE":"0"}}`, `"autoConnect":false`},
		{`{"env":{"CLAUDE_CODE_AUTO_CONNECT_IDE":"true"}}`, `"autoConnect":true`},
	} {
		var out *C_char
		wantStatus(t, idb_should_auto_connect(cstr(t, tc.opts), &out), 0, "idb_should_auto_connect")
		if s := take(out); !strings.Contains(s, tc.want) || !strings.Contains(s, `"why":"`) {
			t.Errorf("%s: %s, want %s", tc.opts, s, tc.want)
		}
	}
	var out *C_char
	wantStatus(t, idb_should_auto_connect(cstr(t, `{"env":1}`), &out), abispec.StArgument, "idb_should_auto_connect", "options_json")
}

// TestWaitForIDEAndRemoveStale waits for the only usable IDE, fails naming
// the directories searched when there is none, and removes a lockfile that
// does not parse while keeping the live one.
func TestWaitForIDEAndRemoveStale(t *testing.T) {
	lockThread(t)
	noLeak(t)
	ide := startIDE(t, "")
	var out *C_char
	wantStatus(t, idb_wait_for_ide(cstr(t, ide.options(`"pollIntervalMs":50`)), 5000, &out), 0, "idb_wait_for_ide")
	if s := take(out); !strings.Contains(s, fmt.Sprintf(`"candidate":{"port":%d`, ide.srv.Port())) || !strings.Contains(s, `"candidates":[{`) {
		t.Errorf("wait: %s", s)
	}
	empty := t.TempDir()
	start := time.Now()
	wantStatus(t, idb_wait_for_ide(cstr(t, fmt.Sprintf(`{"cwd":%q,"lockfileDirs":[%q],"pollIntervalMs":50}`, empty, empty)), 300, &out), abispec.StNotFound, "idb_wait_for_ide", "no usable IDE", empty)
	if d := time.Since(start); d < 250*time.Millisecond || d > 5*time.Second {
		t.Errorf("waited %v for a 300 ms timeout", d)
	}
	wantStatus(t, idb_wait_for_ide(cstr(t, `{"pollIntervalMs":-1}`), 1, &out), abispec.StArgument, "idb_wait_for_ide", "negative")

	// The no-IDE message of connect names where it looked, too.
	var h C_uint64
	wantStatus(t, idb_ide_connect(cstr(t, fmt.Sprintf(`{"cwd":%q,"lockfileDirs":[%q]}`, empty, empty)), 0, &h), abispec.StNotFound, "idb_ide_connect", "no IDE lockfile found in "+empty)

	dir := filepath.Join(ide.configDir, "ide")
	junk := filepath.Join(dir, "1.lock")
	if err := os.WriteFile(junk, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, idb_remove_stale(cstr(t, ide.options("")), 0, &out), 0, "idb_remove_stale")
	if s := take(out); s != fmt.Sprintf(`{"removed":[%q]}`, junk) {
		t.Errorf("remove stale: %s", s)
	}
	if _, err := os.Stat(ide.srv.LockfilePath()); err != nil {
		t.Errorf("the live IDE's lockfile was removed: %v", err)
	}
	wantStatus(t, idb_remove_stale(cstr(t, ide.options("")), 0, &out), 0, "idb_remove_stale")
	if s := take(out); s != `{"removed":[]}` {
		t.Errorf("remove stale again: %s", s)
	}
}

// TestLSPReloadAndSafeMode reloads a manager's configuration (no server
// starts: they start on first use) and checks safe mode.
func TestLSPReloadAndSafeMode(t *testing.T) {
	lockThread(t)
	noLeak(t)
	dir := t.TempDir()
	one := `{"a":{"command":"true","extensionToLanguage":{".a":"a"}}}`
	var m C_uint64
	wantStatus(t, idb_lsp_new(cstr(t, one), cstr(t, dir), nil, &m), 0, "idb_lsp_new")
	defer idb_lsp_shutdown(m, 0)
	var out *C_char
	two := `{"a":{"command":"true","extensionToLanguage":{".a":"a"}},"b":{"command":"${CLAUDE_PROJECT_DIR}/b","extensionToLanguage":{".b":"b",".a":"a"}}}`
	wantStatus(t, idb_lsp_reload(m, cstr(t, two), 0, &out), 0, "idb_lsp_reload")
	if s := take(out); !strings.Contains(s, `"problems":["`) || !strings.Contains(s, ".a") {
		t.Errorf("reload with a conflict: %s", s)
	}
	wantStatus(t, idb_lsp_servers(m, &out), 0, "idb_lsp_servers")
	if s := take(out); !strings.Contains(s, `"name":"a"`) || !strings.Contains(s, `"name":"b"`) {
		t.Errorf("servers after reload: %s", s)
	}
	wantStatus(t, idb_lsp_reload(m, cstr(t, one), 0, &out), 0, "idb_lsp_reload")
	if s := take(out); s != `{"problems":[]}` {
		t.Errorf("reload: %s", s)
	}
	wantStatus(t, idb_lsp_reload(m, cstr(t, `{"x":{}}`), 0, &out), abispec.StArgument, "idb_lsp_reload", "config_json")
	wantStatus(t, idb_lsp_reload(m, nil, 0, &out), abispec.StArgument, "idb_lsp_reload", "config_json is NULL")

	var safe C_uint64
	wantStatus(t, idb_lsp_new(cstr(t, one), cstr(t, dir), cstr(t, `{"safeMode":true}`), &safe), 0, "idb_lsp_new")
	defer idb_lsp_shutdown(safe, 0)
	f := filepath.Join(dir, "x.a")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, idb_lsp_open(safe, cstr(t, f), 0), abispec.StNotFound, "idb_lsp_open", "safe mode")
}
