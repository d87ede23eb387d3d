package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idebridge/idebridge/cabi/abispec"
	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// testIDE is a real ideserver on loopback whose lockfile is in a
// temporary CLAUDE_CONFIG_DIR.
type testIDE struct {
	srv       *ideserver.Server
	workspace string
	configDir string
}

func startIDE(t *testing.T, configDir string) *testIDE {
	t.Helper()
	ws := t.TempDir()
	if configDir == "" {
		configDir = t.TempDir()
	}
	srv, err := ideserver.New(&ideserver.Options{
		WorkspaceFolders: []string{ws},
		LockfileDir:      filepath.Join(configDir, "ide"),
		DiffPolicy:       ideserver.AcceptDiffs,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	// The workspace path as discovery resolves it (symlinks in TMPDIR).
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	return &testIDE{srv: srv, workspace: ws, configDir: configDir}
}

// options returns the JSON options that find this IDE from its workspace.
func (ide *testIDE) options(extra string) string {
	o := fmt.Sprintf(`{"cwd":%q,"env":{"CLAUDE_CONFIG_DIR":%q}`, ide.workspace, ide.configDir)
	if extra != "" {
		o += "," + extra
	}
	return o + "}"
}

func connectIDE(t *testing.T, opts string) C_uint64 {
	t.Helper()
	var h C_uint64
	wantStatus(t, idb_ide_connect(cstr(t, opts), 10000, &h), 0, "idb_ide_connect")
	t.Cleanup(func() { idb_ide_close(h) })
	return h
}

func TestDiscoverFindsTheIDE(t *testing.T) {
	lockThread(t)
	ide := startIDE(t, "")
	var out *C_char
	wantStatus(t, idb_discover(cstr(t, ide.options("")), 0, &out), 0, "idb_discover")
	var cands []idebridge.Candidate
	raw := take(out)
	if err := json.Unmarshal([]byte(raw), &cands); err != nil {
		t.Fatal(err)
	}
	if len(cands) != 1 || !cands[0].Valid || cands[0].Port != ide.srv.Port() || cands[0].Transport != "ws" {
		t.Fatalf("candidates %s", raw)
	}
	for _, key := range []string{`"port":`, `"ideName":`, `"workspaceFolders":`, `"valid":true`, `"reasons":`, `"message":`, `"url":"ws://127.0.0.1:`} {
		if !strings.Contains(raw, key) {
			t.Errorf("candidate JSON lacks %s: %s", key, raw)
		}
	}
	if strings.Contains(raw, ide.srv.AuthToken()) {
		t.Error("the auth token crossed the ABI")
	}

	// From another directory the lockfile is found but not usable.
	other := t.TempDir()
	wantStatus(t, idb_discover(cstr(t, fmt.Sprintf(`{"cwd":%q,"env":{"CLAUDE_CONFIG_DIR":%q}}`, other, ide.configDir)), 0, &out), 0, "idb_discover")
	if raw := take(out); !strings.Contains(raw, `"valid":false`) || !strings.Contains(raw, "workspace_mismatch") {
		t.Errorf("from elsewhere: %s", raw)
	}
	// An empty directory gives [], not null.
	wantStatus(t, idb_discover(cstr(t, fmt.Sprintf(`{"cwd":%q,"lockfileDirs":[%q]}`, other, other)), 0, &out), 0, "idb_discover")
	if raw := take(out); raw != "[]" {
		t.Errorf("no lockfiles: %s", raw)
	}
	wantStatus(t, idb_discover(cstr(t, `{"cwd":1}`), 0, &out), abispec.StArgument, "idb_discover", "options_json")
	wantStatus(t, idb_discover(nil, 0, nil), abispec.StArgument, "idb_discover", "out is NULL")
}

func TestIDERoundTrip(t *testing.T) {
	lockThread(t)
	noLeak(t)
	ide := startIDE(t, "")
	if err := os.WriteFile(filepath.Join(ide.workspace, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := connectIDE(t, ide.options(""))
	if uint64(h)>>kindShift != uint64(kindIDE) {
		t.Fatalf("handle %#x", uint64(h))
	}

	var out *C_char
	wantStatus(t, idb_ide_info(h, &out), 0, "idb_ide_info")
	if info := take(out); !strings.Contains(info, `"protocolVersion":"2024-11-05"`) || !strings.Contains(info, `"serverInfo":{"name":`) {
		t.Errorf("info %s", info)
	}

	wantStatus(t, idb_ide_tools(h, 0, &out), 0, "idb_ide_tools")
	var tools []mcp.Tool
	if err := json.Unmarshal([]byte(take(out)), &tools); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"openFile", "openDiff", "getWorkspaceFolders", "closeAllDiffTabs"} {
		if !names[want] {
			t.Errorf("tools lack %s: %v", want, names)
		}
	}

	wantStatus(t, idb_ide_call(h, cstr(t, "getWorkspaceFolders"), nil, 0, &out), 0, "idb_ide_call")
	var res mcp.ToolResult
	if err := json.Unmarshal([]byte(take(out)), &res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.ReplaceAll(res.Text(), `\/`, "/"), ide.workspace) {
		t.Errorf("getWorkspaceFolders: %s", res.Text())
	}

	// openDiff with the accepting policy: the IDE answers FILE_SAVED and
	// the proposed text; it never writes the file itself.
	path := filepath.Join(ide.workspace, "main.go")
	args, _ := json.Marshal(map[string]any{"old_file_path": path, "new_file_path": path, "new_file_contents": "package main // new\n", "tab_name": "t1"})
	wantStatus(t, idb_ide_call(h, cstr(t, "openDiff"), cstr(t, string(args)), 5000, &out), 0, "idb_ide_call")
	if got := take(out); !strings.Contains(got, "FILE_SAVED") || !strings.Contains(got, "package main // new") {
		t.Errorf("openDiff: %s", got)
	}

	wantStatus(t, idb_ide_call(h, cstr(t, "noSuchTool"), cstr(t, "{}"), 0, &out), abispec.StTool, "idb_ide_call", "noSuchTool")
	wantStatus(t, idb_ide_call(h, cstr(t, "openFile"), cstr(t, "[1]"), 0, &out), abispec.StArgument, "idb_ide_call", "not a JSON object")
	wantStatus(t, idb_ide_call(h, nil, nil, 0, &out), abispec.StArgument, "idb_ide_call", "name is NULL")

	// Notifications: none queued, then one sent by the IDE.
	out = cstr(t, "sentinel")
	wantStatus(t, idb_ide_next_notification(h, 0, &out), 0, "idb_ide_next_notification")
	if out != nil {
		t.Fatalf("notification out of nowhere: %s", take(out))
	}
	wantStatus(t, idb_ide_next_notification(h, 20, &out), 0, "idb_ide_next_notification")
	if out != nil {
		t.Fatalf("notification out of nowhere: %s", take(out))
	}
	sel := map[string]any{"text": "x", "filePath": path, "selection": map[string]any{
		"start": map[string]int{"line": 1, "character": 0}, "end": map[string]int{"line": 1, "character": 4}, "isEmpty": false}}
	if err := ide.srv.Notify("selection_changed", sel); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, idb_ide_next_notification(h, 5000, &out), 0, "idb_ide_next_notification")
	note := take(out)
	if !strings.HasPrefix(note, `{"method":"selection_changed","params":{`) || !strings.Contains(note, `"isEmpty":false`) {
		t.Errorf("notification %s", note)
	}

	// The IDE goes away: pending and later calls fail with IDB_ERR_CLOSED.
	ide.srv.Close()
	wantStatus(t, idb_ide_next_notification(h, 5000, &out), abispec.StClosed, "idb_ide_next_notification", "connection to the IDE lost")
	wantStatus(t, idb_ide_call(h, cstr(t, "getWorkspaceFolders"), nil, 5000, &out), abispec.StClosed, "idb_ide_call", "connection to the IDE lost")
	wantStatus(t, idb_ide_close(h), 0, "idb_ide_close")
	wantStatus(t, idb_ide_close(h), abispec.StHandle, "idb_ide_close", "already freed")
	wantStatus(t, idb_ide_tools(h, 0, &out), abispec.StHandle, "idb_ide_tools")
}

func TestIDEConnectChoosing(t *testing.T) {
	lockThread(t)
	noLeak(t)
	cfg := t.TempDir()
	a := startIDE(t, cfg)
	b := startIDE(t, cfg)
	var h C_uint64
	// Each workspace has exactly one usable IDE.
	wantStatus(t, idb_ide_connect(cstr(t, a.options("")), 10000, &h), 0, "idb_ide_connect")
	wantStatus(t, idb_ide_close(h), 0, "idb_ide_close")
	// A port names the IDE; one not found or not usable from here is
	// IDB_ERR_NOT_FOUND with the reason.
	wantStatus(t, idb_ide_connect(cstr(t, a.options(fmt.Sprintf(`"port":%d`, a.srv.Port()))), 0, &h), 0, "idb_ide_connect")
	wantStatus(t, idb_ide_close(h), 0, "idb_ide_close")
	wantStatus(t, idb_ide_connect(cstr(t, a.options(fmt.Sprintf(`"port":%d`, b.srv.Port()))), 0, &h), abispec.StNotFound, "idb_ide_connect", "not usable")
	wantStatus(t, idb_ide_connect(cstr(t, a.options(`"port":1`)), 0, &h), abispec.StNotFound, "idb_ide_connect", "no IDE lockfile for port 1")
	// Both usable (the folder check skipped): the caller must choose.
	skip := fmt.Sprintf(`{"cwd":%q,"env":{"CLAUDE_CONFIG_DIR":%q,"CLAUDE_CODE_IDE_SKIP_VALID_CHECK":"1"}}`, t.TempDir(), cfg)
	wantStatus(t, idb_ide_connect(cstr(t, skip), 0, &h), abispec.StNotFound, "idb_ide_connect", "2 usable IDEs")
	// None at all; and waiting for one ends with the timeout.
	empty := fmt.Sprintf(`{"cwd":%q,"lockfileDirs":[%q]`, t.TempDir(), t.TempDir())
	wantStatus(t, idb_ide_connect(cstr(t, empty+"}"), 0, &h), abispec.StNotFound, "idb_ide_connect", "no IDE lockfile found")
	wantStatus(t, idb_ide_connect(cstr(t, empty+`,"wait":true}`), 300, &h), abispec.StTimeout, "idb_ide_connect", "within the timeout")
	// A URL and token connect directly; a wrong token is refused.
	wantStatus(t, idb_ide_connect(cstr(t, fmt.Sprintf(`{"url":%q,"authToken":%q}`, a.srv.URL(), a.srv.AuthToken())), 0, &h), 0, "idb_ide_connect")
	wantStatus(t, idb_ide_close(h), 0, "idb_ide_close")
	wantStatus(t, idb_ide_connect(cstr(t, fmt.Sprintf(`{"url":%q,"authToken":"wrong"}`, a.srv.URL())), 0, &h), abispec.StError, "idb_ide_connect", "authentication failed")
	wantStatus(t, idb_ide_connect(cstr(t, `{"port":70000}`), 0, &h), abispec.StArgument, "idb_ide_connect", "out of range")
	wantStatus(t, idb_ide_connect(nil, 0, nil), abispec.StArgument, "idb_ide_connect", "out_handle is NULL")
}

// TestIDEConcurrent calls one shared client and eight private ones from
// eight threads at once, and closes a client while a thread waits on it.
func TestIDEConcurrent(t *testing.T) {
	noLeak(t)
	ide := startIDE(t, "")
	lockThread(t)
	shared := connectIDE(t, ide.options(""))
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lockThread(t)
			var own C_uint64
			opts := cString(ide.options(""))
			st := idb_ide_connect(opts, 10000, &own)
			freeC(unsafePointer(opts))
			if st != 0 {
				t.Errorf("connect: %d %s", st, lastError())
				return
			}
			defer idb_ide_close(own)
			tool := cString("getWorkspaceFolders")
			defer freeC(unsafePointer(tool))
			for i := 0; i < 20; i++ {
				for _, h := range []C_uint64{shared, own} {
					var out *C_char
					if st := idb_ide_call(h, tool, nil, 5000, &out); st != 0 {
						t.Errorf("call: %d %s", st, lastError())
						return
					}
					if s := take(out); !strings.Contains(s, `"content"`) {
						t.Errorf("result %s", s)
					}
				}
			}
		}()
	}
	wg.Wait()

	// A thread waiting without limit is released by a close on another.
	waiter := connectIDE(t, ide.options(""))
	done := make(chan C_int)
	go func() {
		lockThread(t)
		var out *C_char
		done <- idb_ide_next_notification(waiter, -1, &out)
	}()
	time.Sleep(50 * time.Millisecond) // let it block; the result holds either way
	wantStatus(t, idb_ide_close(waiter), 0, "idb_ide_close")
	select {
	case st := <-done:
		if st != abispec.StClosed && st != abispec.StHandle {
			t.Errorf("waiter status %d, want %d", st, abispec.StClosed)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("closing the client did not release the waiting thread")
	}
}

// TestMillisecondsSaturate: a duration in milliseconds too large for a Go
// duration means "practically forever", never a wrapped-around negative
// (which would turn a keep-alive off) or tiny one (an instant timeout).
func TestMillisecondsSaturate(t *testing.T) {
	for _, ms := range []int64{9_223_372_036_855, 9_223_372_036_854_775, 1 << 62, 1<<63 - 1} {
		if d := millis(ms); d < 50*365*24*time.Hour || d > longest {
			t.Errorf("millis(%d) = %v", ms, d)
		}
		ctx, cancel := timeoutContext(C_int64(ms), time.Second)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < 50*365*24*time.Hour {
			t.Errorf("timeoutContext(%d) ends in %v", ms, time.Until(dl))
		}
		cancel()
	}
	if d := millis(-5); d != -1 {
		t.Errorf("millis(-5) = %v, want -1 (none)", d)
	}
	if d := millis(1500); d != 1500*time.Millisecond {
		t.Errorf("millis(1500) = %v", d)
	}
}

// TestIDEConnectOptionsChecked: options out of range are an argument error
// before any connection is attempted.
func TestIDEConnectOptionsChecked(t *testing.T) {
	lockThread(t)
	noLeak(t)
	var h C_uint64
	for opts, msg := range map[string]string{
		`{"url":"ws://127.0.0.1:1/","notificationBuffer":9223372036854775807}`: "notificationBuffer 9223372036854775807 is more than 65536",
		`{"url":"ws://127.0.0.1:1/","notificationBuffer":65537}`:               "notificationBuffer 65537",
		`{"url":"ws://127.0.0.1:1/","notificationBuffer":1.5}`:                 "notificationBuffer",
		`{"url":"ws://127.0.0.1:1/","port":-1}`:                                "port -1",
		`{"url":"ws://127.0.0.1:1/","callTimeoutMs":0.5}`:                      "callTimeoutMs",
	} {
		wantStatus(t, idb_ide_connect(cstr(t, opts), 1000, &h), abispec.StArgument, "idb_ide_connect", msg)
	}
}
