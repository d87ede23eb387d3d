package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/idebridge/idebridge/cabi/abispec"
)

// TestMain fails the run when any test leaves a handle behind.
func TestMain(m *testing.M) {
	code := m.Run()
	removeBuiltLib()
	if n := handles.len(); n != 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d handles still live after all tests (a leak)\n", n)
		code = 1
	}
	os.Exit(code)
}

// lockThread pins the test's goroutine to its OS thread, as a C caller's
// thread is: the last error is per thread. It is never unlocked, so the
// thread exits with the test and no later test inherits its last error.
func lockThread(*testing.T) {
	runtime.LockOSThread()
}

// lastError reads and frees the calling thread's last error.
func lastError() string {
	p := threadError()
	if p == nil {
		return ""
	}
	defer freeC(unsafe.Pointer(p))
	return cGoString(p)
}

// take reads and frees a returned string.
func take(p *C_char) string {
	if p == nil {
		return ""
	}
	defer freeC(unsafe.Pointer(p))
	return cGoString(p)
}

// cstr returns a C copy of s, freed when the test ends.
func cstr(t testing.TB, s string) *C_char {
	p := cString(s)
	t.Cleanup(func() { freeC(unsafe.Pointer(p)) })
	return p
}

// wantStatus fails unless st is want; on a failure status it checks that
// the last error names the export and contains each of msgs.
func wantStatus(t *testing.T, st C_int, want int, export string, msgs ...string) {
	t.Helper()
	if int(st) != want {
		t.Fatalf("%s: status %d, want %d (last error %q)", export, st, want, lastError())
	}
	if want == 0 {
		return
	}
	msg := lastError()
	if !strings.HasPrefix(msg, export+": ") {
		t.Errorf("last error %q does not start with %q", msg, export+": ")
	}
	for _, m := range msgs {
		if !strings.Contains(msg, m) {
			t.Errorf("last error %q does not contain %q", msg, m)
		}
	}
}

// noLeak fails the test when it leaves handles behind.
func noLeak(t *testing.T) {
	before := handles.len()
	t.Cleanup(func() {
		if n := handles.len(); n != before {
			t.Errorf("%d handles live after the test, %d before: a leak", n, before)
		}
	})
}

func TestVersion(t *testing.T) {
	lockThread(t)
	var out *C_char
	wantStatus(t, idb_version(&out), 0, "idb_version")
	if got := take(out); got != libVersion {
		t.Errorf("version %q, want %q", got, libVersion)
	}
	wantStatus(t, idb_version(nil), abispec.StArgument, "idb_version", "out is NULL")
}

func TestLastErrorIsNilOnAFreshThread(t *testing.T) {
	done := make(chan string)
	go func() {
		runtime.LockOSThread()
		// Never unlocked: the thread exits with the goroutine, so the next
		// goroutine cannot inherit a thread that saw an error.
		p := threadError()
		if p != nil {
			done <- take(p)
			return
		}
		done <- ""
	}()
	if msg := <-done; msg != "" {
		t.Errorf("fresh thread has last error %q", msg)
	}
}

func TestLastErrorSurvivesSuccess(t *testing.T) {
	lockThread(t)
	wantStatus(t, idb_version(nil), abispec.StArgument, "idb_version")
	// wantStatus consumed a copy; the message is still there, and a
	// successful call leaves it alone.
	var out *C_char
	wantStatus(t, idb_version(&out), 0, "idb_version")
	take(out)
	if msg := lastError(); !strings.Contains(msg, "out is NULL") {
		t.Errorf("last error after a success = %q, want the earlier failure", msg)
	}
}

// TestLastErrorPerThread fails calls from 8 threads at once, each with its
// own message, and checks that each thread reads back its own.
func TestLastErrorPerThread(t *testing.T) {
	const n = 8
	var wg sync.WaitGroup
	var failed sync.WaitGroup
	failed.Add(n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // never unlocked: see lockThread
			for round := 0; round < 50; round++ {
				name := cString(fmt.Sprintf("thread-%d-round-%d.lock", i, round))
				data := cString("{}")
				var out *C_char
				st := idb_parse_lockfile(name, data, 2, &out)
				freeC(unsafe.Pointer(name))
				freeC(unsafe.Pointer(data))
				if st != abispec.StError {
					t.Errorf("thread %d: status %d", i, st)
				}
				if round == 0 {
					// Let every thread store its first error before any
					// reads its own back.
					failed.Done()
					failed.Wait()
				}
				want := fmt.Sprintf("thread-%d-round-%d.lock", i, round)
				if msg := lastError(); !strings.Contains(msg, want) {
					t.Errorf("thread %d reads %q, want its own %q", i, msg, want)
				}
			}
		}()
	}
	wg.Wait()
}

func TestParseLockfile(t *testing.T) {
	lockThread(t)
	data := `{"workspaceFolders":["\/home\/me\/p"],"pid":42,"ideName":"VS Code","transport":"ws","authToken":"tok","extra":1}`
	var out *C_char
	wantStatus(t, idb_parse_lockfile(cstr(t, "/tmp/x/12345.lock"), cstr(t, data), C_size(len(data)), &out), 0, "idb_parse_lockfile")
	var got map[string]any
	if err := json.Unmarshal([]byte(take(out)), &got); err != nil {
		t.Fatal(err)
	}
	if got["port"] != 12345.0 || got["pid"] != 42.0 || got["transport"] != "ws" || got["ideName"] != "VS Code" {
		t.Errorf("parsed %v", got)
	}
	if f, _ := got["workspaceFolders"].([]any); len(f) != 1 || f[0] != "/home/me/p" {
		t.Errorf("workspaceFolders %v", got["workspaceFolders"])
	}

	// Legacy format, with a length shorter than the C string: only the
	// first data_len bytes count.
	legacy := "/a\n/b\nIGNORED"
	out = nil
	wantStatus(t, idb_parse_lockfile(cstr(t, "80.lock"), cstr(t, legacy), 6, &out), 0, "idb_parse_lockfile")
	if s := take(out); !strings.Contains(s, `"workspaceFolders":["/a","/b"]`) || !strings.Contains(s, `"legacy":true`) || !strings.Contains(s, `"transport":"sse"`) {
		t.Errorf("legacy parsed as %s", s)
	}

	wantStatus(t, idb_parse_lockfile(cstr(t, "nope.lock"), cstr(t, "{}"), 2, &out), abispec.StError, "idb_parse_lockfile", "nope.lock", "not a lockfile name")
	wantStatus(t, idb_parse_lockfile(nil, cstr(t, "{}"), 2, &out), abispec.StArgument, "idb_parse_lockfile", "name is NULL")
	wantStatus(t, idb_parse_lockfile(cstr(t, "1.lock"), nil, 2, &out), abispec.StArgument, "idb_parse_lockfile", "data is NULL")
	wantStatus(t, idb_parse_lockfile(cstr(t, "1.lock"), cstr(t, "{}"), 2, nil), abispec.StArgument, "idb_parse_lockfile", "out is NULL")
	// NULL with length 0 is an empty file: a parse error, not an argument error.
	wantStatus(t, idb_parse_lockfile(cstr(t, "1.lock"), nil, 0, &out), abispec.StError, "idb_parse_lockfile", "empty")
}

// TestPanicBecomesStatus makes an export panic and checks that the caller
// gets IDB_ERR_PANIC with the panic's message, and that the library still
// works afterwards.
func TestPanicBecomesStatus(t *testing.T) {
	lockThread(t)
	panicHook = func(name string) {
		if name == "idb_version" || name == "idb_parse_lockfile" {
			panic("injected failure in " + name)
		}
	}
	var out *C_char
	st := idb_version(&out)
	st2 := idb_parse_lockfile(cstr(t, "1.lock"), cstr(t, "{}"), 2, &out)
	panicHook = nil
	if st != abispec.StPanic || st2 != abispec.StPanic {
		t.Fatalf("statuses %d, %d; want %d", st, st2, abispec.StPanic)
	}
	msg := lastError()
	if !strings.HasPrefix(msg, "idb_parse_lockfile: internal error (recovered panic: injected failure in idb_parse_lockfile)") {
		t.Errorf("last error %q", msg)
	}
	if out != nil {
		t.Errorf("out was set by a call that panicked")
	}
	wantStatus(t, idb_version(&out), 0, "idb_version")
	take(out)
}

// TestExportsRecover checks that every export returning a status defers
// the panic recovery, by injecting a panic into each one through the hook.
func TestExportsRecover(t *testing.T) {
	lockThread(t)
	noLeak(t)
	seen := map[string]bool{}
	panicHook = func(name string) {
		seen[name] = true
		panic("injected")
	}
	defer func() { panicHook = nil }()
	for name, call := range exportCalls(t) {
		if st := call(); st != abispec.StPanic {
			t.Errorf("%s: status %d with an injected panic, want %d", name, st, abispec.StPanic)
		}
		if msg := lastError(); !strings.HasPrefix(msg, name+": internal error") {
			t.Errorf("%s: last error %q", name, msg)
		}
	}
	for _, f := range abispec.Funcs {
		if f.Return == abispec.ReturnStatus && !seen[f.Name] {
			t.Errorf("%s: not covered by exportCalls, or never calls enter()", f.Name)
		}
	}
}

// removeBuiltLib removes the library lib_test.go built, if any.
var removeBuiltLib = func() {}
