package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idebridge/idebridge/cabi/abispec"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

func init() { moreExportCalls = append(moreExportCalls, callExportCalls) }

// callExportCalls covers the call functions in TestExportsRecover.
func callExportCalls(t *testing.T) map[string]func() C_int {
	var out *C_char
	var n C_uint64
	return map[string]func() C_int{
		"idb_call_wait":   func() C_int { return idb_call_wait(1, 0) },
		"idb_call_result": func() C_int { return idb_call_result(1, &out) },
		"idb_call_cancel": func() C_int { return idb_call_cancel(1) },
		"idb_call_fd":     func() C_int { return idb_call_fd(1, &n) },
		"idb_call_free":   func() C_int { return idb_call_free(1) },
	}
}

// diffLog is a DiffPolicy that holds every diff until its context ends
// (unless decide answers first), and a close_tab that records the tabs
// closed: what a user who has not decided yet looks like.
type diffLog struct {
	mu      sync.Mutex
	opened  []string
	causes  map[string]error
	closed  []string
	waiting chan string
	decide  func(req *ideserver.DiffRequest) (ideserver.DiffDecision, bool)
}

func newDiffLog() *diffLog {
	return &diffLog{causes: map[string]error{}, waiting: make(chan string, 16)}
}

func (d *diffLog) Decide(ctx context.Context, req *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
	d.mu.Lock()
	d.opened = append(d.opened, req.TabName)
	decide := d.decide
	d.mu.Unlock()
	if decide != nil {
		if dec, ok := decide(req); ok {
			return dec, nil
		}
	}
	d.waiting <- req.TabName
	<-ctx.Done()
	d.mu.Lock()
	d.causes[req.TabName] = context.Cause(ctx)
	d.mu.Unlock()
	return ideserver.DiffDecision{Action: ideserver.DiffReject}, nil
}

func (d *diffLog) closedTabs() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.closed...)
}

// startReviewIDE starts an ideserver whose diffs d decides and whose
// close_tab d records.
func startReviewIDE(t *testing.T, d *diffLog) *testIDE {
	t.Helper()
	ws := t.TempDir()
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	cfg := t.TempDir()
	srv, err := ideserver.New(&ideserver.Options{
		WorkspaceFolders: []string{ws},
		LockfileDir:      filepath.Join(cfg, "ide"),
		DiffPolicy:       d,
	})
	if err != nil {
		t.Fatal(err)
	}
	closeTab := ideserver.Tool{Tool: mcp.Tool{Name: "close_tab"}, Hidden: true, Handler: func(_ context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
		var a struct {
			TabName string `json:"tab_name"`
		}
		if err := call.Bind(&a); err != nil {
			return nil, err
		}
		d.mu.Lock()
		d.closed = append(d.closed, a.TabName)
		d.mu.Unlock()
		return mcp.TextResult("TAB_CLOSED"), nil
	}}
	if err := srv.RegisterTool(closeTab); err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &testIDE{srv: srv, workspace: ws, configDir: cfg}
}

// waitCall waits for call to complete (10 s at most) and returns its
// status and result text, freeing the call.
func waitCall(t *testing.T, call C_uint64) (C_int, string) {
	t.Helper()
	if st := idb_call_wait(call, 10000); st != 0 {
		t.Fatalf("idb_call_wait: status %d (%s)", st, lastError())
	}
	var out *C_char
	st := idb_call_result(call, &out)
	if s := idb_call_free(call); s != 0 {
		t.Errorf("idb_call_free: %d", s)
	}
	return st, take(out)
}

func TestCallCompletesWithTheResult(t *testing.T) {
	lockThread(t)
	noLeak(t)
	var call C_uint64
	opts := fmt.Sprintf(`{"cwd":%q,"lockfileDirs":[%q]}`, t.TempDir(), t.TempDir())
	wantStatus(t, idb_discover_start(cstr(t, opts), 0, &call), 0, "idb_discover_start")
	if uint64(call)>>kindShift != uint64(kindCall) {
		t.Fatalf("call handle %#x", uint64(call))
	}
	st, res := waitCall(t, call)
	if st != 0 || res != "[]" {
		t.Fatalf("discover: status %d, result %q", st, res)
	}
	// The call is gone; every call function says so.
	var out *C_char
	var n C_uint64
	wantStatus(t, idb_call_wait(call, 0), abispec.StHandle, "idb_call_wait", "already freed")
	wantStatus(t, idb_call_result(call, &out), abispec.StHandle, "idb_call_result")
	wantStatus(t, idb_call_cancel(call), abispec.StHandle, "idb_call_cancel")
	wantStatus(t, idb_call_fd(call, &n), abispec.StHandle, "idb_call_fd")
	wantStatus(t, idb_call_free(call), abispec.StHandle, "idb_call_free")
	wantStatus(t, idb_call_wait(0, 0), abispec.StHandle, "idb_call_wait", "never valid")
	// A start function checks its handle at once, and its out pointer.
	wantStatus(t, idb_ide_tools_start(12345, 0, &call), abispec.StHandle, "idb_ide_tools_start")
	var reg C_uint64
	wantStatus(t, idb_registry_new(nil, &reg), 0, "idb_registry_new")
	defer idb_registry_free(reg)
	wantStatus(t, idb_ide_tools_start(reg, 0, &call), abispec.StHandle, "idb_ide_tools_start", "registry handle, not a IDE client handle")
	wantStatus(t, idb_discover_start(nil, 0, nil), abispec.StArgument, "idb_discover_start", "out_call is NULL")
	wantStatus(t, idb_call_result(1, nil), abispec.StArgument, "idb_call_result", "out is NULL")
}

// TestCallCarriesItsError checks that a failed call's error is read from
// any thread, as JSON with the status, message and the tool error's code,
// and that an argument error of the blocking function is the call's.
func TestCallCarriesItsError(t *testing.T) {
	lockThread(t)
	noLeak(t)
	ide := startIDE(t, "")
	h := connectIDE(t, ide.options(""))
	var call C_uint64
	wantStatus(t, idb_ide_call_start(h, cstr(t, "noSuchTool"), cstr(t, "{}"), 0, &call), 0, "idb_ide_call_start")
	wantStatus(t, idb_call_wait(call, 10000), 0, "idb_call_wait")
	// Read the outcome on another thread: it is the call's, not a thread's.
	type outcome struct {
		st  C_int
		res string
	}
	got := make(chan outcome)
	go func() {
		lockThread(t)
		var out *C_char
		st := idb_call_result(call, &out)
		got <- outcome{st, take(out)}
	}()
	o := <-got
	wantStatus(t, idb_call_free(call), 0, "idb_call_free")
	if o.st != abispec.StTool {
		t.Fatalf("status %d, want %d: %s", o.st, abispec.StTool, o.res)
	}
	var ce struct {
		Status   int    `json:"status"`
		Function string `json:"function"`
		Message  string `json:"message"`
		Code     *int64 `json:"code"`
	}
	if err := json.Unmarshal([]byte(o.res), &ce); err != nil {
		t.Fatalf("error %q: %v", o.res, err)
	}
	if ce.Status != abispec.StTool || ce.Function != "idb_ide_call" || !strings.HasPrefix(ce.Message, "idb_ide_call: ") ||
		!strings.Contains(ce.Message, "noSuchTool") || ce.Code == nil || *ce.Code != -32601 {
		t.Errorf("error %s", o.res)
	}

	// An argument error found by the blocking function is the call's too.
	wantStatus(t, idb_ide_call_start(h, cstr(t, "openFile"), cstr(t, "[1]"), 0, &call), 0, "idb_ide_call_start")
	st, res := waitCall(t, call)
	if st != abispec.StArgument || !strings.Contains(res, "not a JSON object") || strings.Contains(res, `"code"`) {
		t.Errorf("argument error: status %d, %s", st, res)
	}
}

// TestCallCancelClosesTheDiffTab cancels an asynchronous openDiff the user
// has not decided yet: the call ends cancelled, its tab is closed in the
// IDE, and the same client keeps working.
func TestCallCancelClosesTheDiffTab(t *testing.T) {
	lockThread(t)
	noLeak(t)
	d := newDiffLog()
	ide := startReviewIDE(t, d)
	h := connectIDE(t, ide.options(""))
	path := filepath.Join(ide.workspace, "a.txt")
	args, _ := json.Marshal(map[string]any{"old_file_path": path, "new_file_path": path, "new_file_contents": "new\n", "tab_name": "tab-1"})
	var call C_uint64
	wantStatus(t, idb_ide_call_start(h, cstr(t, "openDiff"), cstr(t, string(args)), 0, &call), 0, "idb_ide_call_start")
	select {
	case <-d.waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("the IDE never saw the openDiff")
	}
	wantStatus(t, idb_call_wait(call, 0), abispec.StTimeout, "idb_call_wait", "still running")
	wantStatus(t, idb_call_wait(call, 30), abispec.StTimeout, "idb_call_wait", "still running after 30 ms")
	wantStatus(t, idb_call_cancel(call), 0, "idb_call_cancel")
	wantStatus(t, idb_call_cancel(call), 0, "idb_call_cancel") // twice is fine
	st, res := waitCall(t, call)
	if st != abispec.StCancelled || !strings.Contains(res, `"message":"idb_ide_call: cancelled"`) {
		t.Fatalf("cancelled openDiff: status %d, %s", st, res)
	}
	// The call completed only after its tab was closed.
	if got := d.closedTabs(); len(got) != 1 || got[0] != "tab-1" {
		t.Errorf("tabs closed: %v, want [tab-1]", got)
	}
	// The connection is usable: the next call works.
	var out *C_char
	wantStatus(t, idb_ide_call(h, cstr(t, "getWorkspaceFolders"), nil, 5000, &out), 0, "idb_ide_call")
	take(out)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the cancelled diff created %s", path)
	}

	// A call that completed keeps its outcome when cancelled afterwards.
	wantStatus(t, idb_ide_call_start(h, cstr(t, "getWorkspaceFolders"), nil, 5000, &call), 0, "idb_ide_call_start")
	wantStatus(t, idb_call_wait(call, 10000), 0, "idb_call_wait")
	wantStatus(t, idb_call_cancel(call), 0, "idb_call_cancel")
	if st, res := waitCall(t, call); st != 0 || !strings.Contains(res, `"content"`) {
		t.Errorf("completed then cancelled: status %d, %s", st, res)
	}
}

// TestCallFDBecomesReadable reads the completion descriptor of a call
// that is still running when it is asked for, and of one already done.
func TestCallFDBecomesReadable(t *testing.T) {
	lockThread(t)
	noLeak(t)
	d := newDiffLog()
	ide := startReviewIDE(t, d)
	h := connectIDE(t, ide.options(""))
	path := filepath.Join(ide.workspace, "b.txt")
	var call C_uint64
	wantStatus(t, idb_ide_propose_edit_start(h, cstr(t, path), cstr(t, "x\n"), 2, nil, 0, &call), 0, "idb_ide_propose_edit_start")
	<-d.waiting
	var fd C_uint64
	wantStatus(t, idb_call_fd(call, &fd), 0, "idb_call_fd")
	var again C_uint64
	wantStatus(t, idb_call_fd(call, &again), 0, "idb_call_fd")
	if again != fd {
		t.Errorf("a second idb_call_fd gave %d, the first %d", again, fd)
	}
	if readable(t, int(fd), 50*time.Millisecond) {
		t.Fatal("the descriptor is readable while the call runs")
	}
	wantStatus(t, idb_call_cancel(call), 0, "idb_call_cancel")
	if !readable(t, int(fd), 10*time.Second) {
		t.Fatal("the descriptor did not become readable when the call completed")
	}
	st, res := waitCall(t, call)
	if st != abispec.StCancelled {
		t.Errorf("status %d: %s", st, res)
	}
	// Freed: the descriptor is closed.
	var stat syscall.Stat_t
	if err := syscall.Fstat(int(fd), &stat); !errors.Is(err, syscall.EBADF) {
		t.Errorf("descriptor %d still open after idb_call_free (%v)", fd, err)
	}

	// Asked for after completion, it is readable at once.
	opts := fmt.Sprintf(`{"cwd":%q,"lockfileDirs":[]}`, t.TempDir())
	wantStatus(t, idb_discover_start(cstr(t, opts), 0, &call), 0, "idb_discover_start")
	wantStatus(t, idb_call_wait(call, 10000), 0, "idb_call_wait")
	wantStatus(t, idb_call_fd(call, &fd), 0, "idb_call_fd")
	if !readable(t, int(fd), time.Second) {
		t.Error("the descriptor of a completed call is not readable")
	}
	if st, _ := waitCall(t, call); st != 0 {
		t.Errorf("status %d", st)
	}
}

// readable reports whether fd becomes readable within d.
func readable(t *testing.T, fd int, d time.Duration) bool {
	t.Helper()
	var set syscall.FdSet
	set.Bits[fd/64] |= 1 << (uint(fd) % 64)
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	n, err := syscall.Select(fd+1, &set, nil, nil, &tv)
	if err != nil {
		t.Fatalf("select: %v", err)
	}
	return n == 1
}

// TestCallFreeReleasesWhatNobodyTook frees a connect call without reading
// its result, while it runs and after it completed: the client it made is
// closed, so no handle leaks.
func TestCallFreeReleasesWhatNobodyTook(t *testing.T) {
	lockThread(t)
	noLeak(t)
	ide := startIDE(t, "")
	before := handles.len()
	var call C_uint64
	wantStatus(t, idb_ide_connect_start(cstr(t, ide.options("")), 10000, &call), 0, "idb_ide_connect_start")
	wantStatus(t, idb_call_free(call), 0, "idb_call_free")
	wantStatus(t, idb_ide_connect_start(cstr(t, ide.options("")), 10000, &call), 0, "idb_ide_connect_start")
	wantStatus(t, idb_call_wait(call, 10000), 0, "idb_call_wait")
	wantStatus(t, idb_call_free(call), 0, "idb_call_free")
	deadline := time.Now().Add(10 * time.Second)
	for handles.len() != before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := handles.len(); n != before {
		t.Fatalf("%d handles live, %d before: a created client leaked", n, before)
	}
	// Taken, the handle is the caller's: a real client.
	wantStatus(t, idb_ide_connect_start(cstr(t, ide.options("")), 10000, &call), 0, "idb_ide_connect_start")
	st, res := waitCall(t, call)
	if st != 0 {
		t.Fatalf("connect: %d %s", st, res)
	}
	var hc uint64
	if _, err := fmt.Sscan(res, &hc); err != nil || hc>>kindShift != uint64(kindIDE) {
		t.Fatalf("connect result %q", res)
	}
	var out *C_char
	wantStatus(t, idb_ide_info(C_uint64(hc), &out), 0, "idb_ide_info")
	take(out)
	wantStatus(t, idb_ide_close(C_uint64(hc)), 0, "idb_ide_close")
}

// TestCallsFromManyThreads runs 8 threads starting, waiting for and
// reading calls on one client at once.
func TestCallsFromManyThreads(t *testing.T) {
	noLeak(t)
	ide := startIDE(t, "")
	lockThread(t)
	h := connectIDE(t, ide.options(""))
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lockThread(t)
			tool := cString("getWorkspaceFolders")
			defer freeC(unsafePointer(tool))
			for i := 0; i < 25; i++ {
				var call C_uint64
				if st := idb_ide_call_start(h, tool, nil, 5000, &call); st != 0 {
					t.Errorf("start: %d %s", st, lastError())
					return
				}
				var out *C_char
				st := idb_call_result(call, &out) // waits
				res := take(out)
				idb_call_free(call)
				if st != 0 || !strings.Contains(res, `"content"`) {
					t.Errorf("call: %d %s", st, res)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestCallGoroutinesLingerThenExit runs calls back to back (each after the
// previous completed, as a blocking form does), checks that they complete,
// and that no goroutine still lingers once the calls stop.
func TestCallGoroutinesLingerThenExit(t *testing.T) {
	lockThread(t)
	noLeak(t)
	opts := cstr(t, fmt.Sprintf(`{"cwd":%q,"lockfileDirs":[]}`, t.TempDir()))
	for i := 0; i < 200; i++ {
		var call C_uint64
		wantStatus(t, idb_discover_start(opts, 0, &call), 0, "idb_discover_start")
		if st, res := waitCall(t, call); st != 0 || res != "[]" {
			t.Fatalf("call %d: status %d, %s", i, st, res)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		lingering.Lock()
		n := len(lingering.idle)
		lingering.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines still linger 5 s after the last call", n)
		}
		time.Sleep(time.Millisecond)
	}
}
