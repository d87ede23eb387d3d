package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idebridge/idebridge/cabi/abispec"
	"github.com/idebridge/idebridge/warm"
)

// serveRuntime runs a runtime in the test, in a fresh runtime directory,
// as the runtime of an idebridge command at the returned path (a file of
// its own, whose build the runtime takes): a manager opened with
// "runtime" and that runtimeCommand reaches it and no other.
func serveRuntime(t *testing.T) (command, dir string) {
	t.Helper()
	base, err := os.MkdirTemp("", "cabirt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	dir = filepath.Join(base, "rt")
	command = filepath.Join(base, "idebridge")
	// Never run: the runtime is up before the manager asks for it.
	if err := os.WriteFile(command, []byte("#!/bin/sh\necho not to be started >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	build, err := warm.BuildOf(command)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- warm.Serve(ctx, &warm.ServeOptions{Dir: dir, Build: build, Idle: -1,
			Env: append(os.Environ(), "GOPLSCACHE="+t.TempDir(), "GOPROXY=off"), Ready: func(string) { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Error("the runtime did not stop")
		}
	})
	return command, dir
}

// TestLSPThroughRuntime: a manager opened with "runtime": true answers a
// definition as an in-process manager does, through a session in the
// runtime, whose gopls is the one that answered; the exports that need
// servers of the caller's own are refused with IDB_ERR_ARGUMENT saying
// why; idb_lsp_shutdown ends the session and leaves the runtime's
// servers running.
func TestLSPThroughRuntime(t *testing.T) {
	lockThread(t)
	noLeak(t)
	command, rtDir := serveRuntime(t)
	dir := navModule(t)
	use := filepath.Join(dir, "use.go")
	config := fmt.Sprintf(`{"gopls":{"command":%q,"extensionToLanguage":{".go":"go"}}}`, goplsPath(t))
	opts := fmt.Sprintf(`{"runtime":true,"runtimeCommand":%q,"runtimeDir":%q}`, command, rtDir)
	var h, local C_uint64
	wantStatus(t, idb_lsp_new(cstr(t, config), cstr(t, dir), cstr(t, opts), &h), 0, "idb_lsp_new")
	shut := false
	defer func() {
		if !shut {
			idb_lsp_shutdown(h, 10000)
		}
	}()
	wantStatus(t, idb_lsp_new(cstr(t, config), cstr(t, dir), nil, &local), 0, "idb_lsp_new")
	defer idb_lsp_shutdown(local, 10000)

	at := map[string]any{"path": use, "line": 15, "column": 22}
	got := navCall(t, "idb_lsp_definition", idb_lsp_definition, h, at, nil)
	want := navCall(t, "idb_lsp_definition", idb_lsp_definition, local, at, nil)
	if got != want {
		t.Errorf("definition through the runtime:\n%s\nin the process:\n%s", got, want)
	}

	wo := &warm.Options{Dir: rtDir}
	wo.Build, _ = warm.BuildOf(command)
	st, err := warm.GetStatus(context.Background(), wo)
	if err != nil {
		t.Fatal(err)
	}
	if st.Sessions != 1 || len(st.Projects) != 1 || st.Projects[0].Dir != dir || len(st.Projects[0].Sessions) != 1 ||
		st.Projects[0].Sessions[0].PID != os.Getpid() || len(st.Projects[0].Servers) != 1 || st.Projects[0].Servers[0].PID == 0 {
		t.Fatalf("runtime status %+v: want this process's one session on the project, and its running gopls", st)
	}
	var out *C_char
	wantStatus(t, idb_lsp_servers(h, &out), 0, "idb_lsp_servers")
	if s := take(out); !strings.Contains(s, fmt.Sprintf(`"pid":%d`, st.Projects[0].Servers[0].PID)) {
		t.Errorf("idb_lsp_servers through the runtime: %s, want the runtime's gopls (pid %d)", s, st.Projects[0].Servers[0].PID)
	}

	wantStatus(t, idb_lsp_open(h, cstr(t, use), 10000), abispec.StArgument, "idb_lsp_open", "runtime")
	wantStatus(t, idb_lsp_drain(h, &out), abispec.StArgument, "idb_lsp_drain", "runtime")
	wantStatus(t, idb_lsp_rename(h, cstr(t, fmt.Sprintf(`{"path":%q,"line":4,"symbol":"Total","newName":"Sum"}`, use)), 10000, &out),
		abispec.StArgument, "idb_lsp_rename", "runtime")
	wantStatus(t, idb_lsp_reload(h, cstr(t, config), 10000, &out), abispec.StArgument, "idb_lsp_reload", "runtime")

	wantStatus(t, idb_lsp_shutdown(h, 10000), 0, "idb_lsp_shutdown")
	shut = true
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := warm.GetStatus(context.Background(), wo)
		if err != nil {
			t.Fatal(err)
		}
		if st.Sessions == 0 {
			if len(st.Projects) != 1 || len(st.Projects[0].Servers) != 1 || st.Projects[0].Servers[0].State != "running" {
				t.Errorf("the runtime after shutdown: %+v, want its gopls still running for other clients", st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session outlived idb_lsp_shutdown: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLSPRuntimeOptions: options that cannot go with "runtime" are
// refused, naming the option; a runtime that cannot be reached fails
// idb_lsp_new with the reason.
func TestLSPRuntimeOptions(t *testing.T) {
	lockThread(t)
	noLeak(t)
	dir := t.TempDir()
	var h C_uint64
	for opts, msg := range map[string]string{
		`{"runtime":true,"maxOpenDocuments":3}`:   "maxOpenDocuments does not go with",
		`{"runtime":true,"safeMode":true}`:        "safeMode does not go with",
		`{"runtimeDir":"/tmp"}`:                   `go with "runtime": true`,
		`{"runtime":true,"runtimeCommand":"/no"}`: "runtimeCommand",
	} {
		wantStatus(t, idb_lsp_new(cstr(t, "{}"), cstr(t, dir), cstr(t, opts), &h), abispec.StArgument, "idb_lsp_new", msg)
	}
	// A command that exits at once: the runtime cannot start.
	base, err := os.MkdirTemp("", "cabirt")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	command := filepath.Join(base, "idebridge")
	os.WriteFile(command, []byte("#!/bin/sh\nexit 1\n"), 0o755)
	opts := fmt.Sprintf(`{"runtime":true,"runtimeCommand":%q,"runtimeDir":%q}`, command, filepath.Join(base, "rt"))
	wantStatus(t, idb_lsp_new(cstr(t, "{}"), cstr(t, dir), cstr(t, opts), &h), abispec.StError, "idb_lsp_new", "reaching the runtime")
}
