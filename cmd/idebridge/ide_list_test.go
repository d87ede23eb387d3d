package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/idebridge/idebridge/lockfile"
)

// listScene is the scenario of the issue: CLAUDE_CONFIG_DIR holding a valid
// lockfile for a live loopback listener, one for another workspace, one
// with a dead pid, one with a closed port, a legacy one and a malformed
// one.
type listScene struct {
	config, proj string
	env          map[string]string
	// ports by role
	valid, otherWorkspace, deadPID, closedPort, legacy, malformed int
}

func newListScene(t *testing.T) *listScene {
	t.Helper()
	root := t.TempDir()
	s := &listScene{config: filepath.Join(root, "config"), proj: filepath.Join(root, "proj")}
	ide := filepath.Join(s.config, "ide")
	if err := os.MkdirAll(filepath.Join(s.proj, "pkg"), 0o700); err != nil {
		t.Fatal(err)
	}
	s.env = map[string]string{"CLAUDE_CONFIG_DIR": s.config, "HOME": filepath.Join(root, "home")}

	listeners := make([]int, 4)
	for i := range listeners {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		t.Cleanup(func() { ln.Close(); <-done })
		go func() {
			defer close(done)
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		listeners[i] = ln.Addr().(*net.TCPAddr).Port
	}
	// Two ports that nothing listens on, distinct from each other.
	held := make([]net.Listener, 2)
	closed := make([]int, 2)
	for i := range held {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		held[i], closed[i] = ln, ln.Addr().(*net.TCPAddr).Port
	}
	for _, ln := range held {
		ln.Close()
	}
	s.valid, s.otherWorkspace, s.deadPID, s.legacy = listeners[0], listeners[1], listeners[2], listeners[3]
	s.closedPort, s.malformed = closed[0], closed[1]

	dead := exec.Command(os.Args[0], "-test.run=^$")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Second)
	write := func(lf *lockfile.Lockfile, age time.Duration) {
		path, err := lockfile.Write(ide, lf)
		if err != nil {
			t.Fatal(err)
		}
		os.Chtimes(path, now.Add(-age), now.Add(-age))
	}
	writeRaw := func(port int, content string, age time.Duration) {
		path := filepath.Join(ide, lockfile.PortName(port))
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(path, now.Add(-age), now.Add(-age))
	}
	write(&lockfile.Lockfile{Port: s.valid, PID: os.Getpid(), IDEName: "Visual Studio Code", Transport: "ws", AuthToken: "secret-token", WorkspaceFolders: []string{s.proj}}, 0)
	write(&lockfile.Lockfile{Port: s.otherWorkspace, PID: os.Getpid(), IDEName: "Cursor", Transport: "ws", WorkspaceFolders: []string{filepath.Join(root, "elsewhere")}}, time.Second)
	write(&lockfile.Lockfile{Port: s.deadPID, PID: dead.Process.Pid, IDEName: "Windsurf", Transport: "ws", WorkspaceFolders: []string{s.proj}}, 2*time.Second)
	write(&lockfile.Lockfile{Port: s.closedPort, PID: os.Getpid(), IDEName: "PyCharm", Transport: "sse", WorkspaceFolders: []string{s.proj}}, 3*time.Second)
	writeRaw(s.legacy, s.proj+"\n", 4*time.Second)
	writeRaw(s.malformed, `{"pid": 1, "workspaceFolders": [`, 5*time.Second)
	return s
}

// listEntry is one object of `ide list --json`.
type listEntry struct {
	Port             int      `json:"port"`
	IDEName          string   `json:"ideName"`
	Transport        string   `json:"transport"`
	WorkspaceFolders []string `json:"workspaceFolders"`
	PID              int      `json:"pid"`
	URL              string   `json:"url"`
	Valid            bool     `json:"valid"`
	Reasons          []string `json:"reasons"`
	Message          string   `json:"message"`
	Path             string   `json:"path"`
}

func TestIDEListJSON(t *testing.T) {
	s := newListScene(t)
	code, out, errOut := runCapture(t, s.env, "ide", "list", "--json", "--cwd", filepath.Join(s.proj, "pkg"))
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	if strings.Contains(out, "secret-token") {
		t.Error("the auth token was printed")
	}
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("output is not a JSON array: %v\n%s", err, out)
	}
	wantKeys := []string{"ideName", "message", "path", "pid", "port", "reasons", "transport", "url", "valid", "workspaceFolders"}
	for _, o := range raw {
		var keys []string
		for k := range o {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if diff := cmp.Diff(wantKeys, keys); diff != "" {
			t.Errorf("keys (-want +got):\n%s", diff)
		}
	}
	var entries []listEntry
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatal(err)
	}

	type verdict struct {
		Valid   bool
		Reasons []string
	}
	want := map[int]verdict{
		s.valid:          {true, []string{}},
		s.otherWorkspace: {false, []string{"workspace_mismatch"}},
		s.deadPID:        {false, []string{"pid_dead"}},
		s.closedPort:     {false, []string{"port_closed"}},
		s.legacy:         {true, []string{}},
		s.malformed:      {false, []string{"parse_error"}},
	}
	if len(entries) != len(want) {
		t.Fatalf("%d entries, want %d:\n%s", len(entries), len(want), out)
	}
	var order []int
	for _, e := range entries {
		order = append(order, e.Port)
		if diff := cmp.Diff(want[e.Port], verdict{e.Valid, e.Reasons}); diff != "" {
			t.Errorf("port %d: (-want +got):\n%s\nmessage: %s", e.Port, diff, e.Message)
		}
		if e.Message == "" || e.Path != filepath.Join(s.config, "ide", strconv.Itoa(e.Port)+".lock") {
			t.Errorf("port %d: message %q path %q", e.Port, e.Message, e.Path)
		}
	}
	if diff := cmp.Diff([]int{s.valid, s.otherWorkspace, s.deadPID, s.closedPort, s.legacy, s.malformed}, order); diff != "" {
		t.Errorf("not newest first (-want +got):\n%s", diff)
	}
	v := entries[0]
	if v.IDEName != "Visual Studio Code" || v.Transport != "ws" || v.PID != os.Getpid() ||
		v.URL != "ws://127.0.0.1:"+strconv.Itoa(s.valid)+"/" || !slices.Equal(v.WorkspaceFolders, []string{s.proj}) {
		t.Errorf("valid entry: %+v", v)
	}
	if e := entries[3]; e.URL != "http://127.0.0.1:"+strconv.Itoa(s.closedPort)+"/sse" {
		t.Errorf("sse entry URL %q", e.URL)
	}
	if e := entries[4]; e.Transport != "sse" || e.PID != 0 || !slices.Equal(e.WorkspaceFolders, []string{s.proj}) {
		t.Errorf("legacy entry: %+v", e)
	}
}

func TestIDEListHuman(t *testing.T) {
	s := newListScene(t)
	inv := &invocation{Env: s.env, Getwd: func() (string, error) { return s.proj, nil }}
	var out, errOut bytes.Buffer
	inv.Stdout, inv.Stderr = &out, &errOut
	if code := run(context.Background(), []string{"ide", "list"}, inv); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	text := out.String()
	for _, want := range []string{
		"Working directory: " + s.proj,
		"Lockfile directories: " + filepath.Join(s.config, "ide"),
		"PORT", "VALID",
		"Visual Studio Code",
		"ws://127.0.0.1:" + strconv.Itoa(s.valid) + "/",
		"[workspace_mismatch]", "[pid_dead]", "[port_closed]", "[parse_error]",
		"2 usable IDEs",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "secret-token") {
		t.Error("the auth token was printed")
	}
}

func TestIDEListNothingFound(t *testing.T) {
	config := filepath.Join(t.TempDir(), "config")
	env := map[string]string{"CLAUDE_CONFIG_DIR": config}
	code, out, errOut := runCapture(t, env, "ide", "list", "--cwd", t.TempDir())
	if code != exitOK || !strings.Contains(out, "No IDE lockfiles found in "+filepath.Join(config, "ide")+" (does not exist)") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runCapture(t, env, "ide", "list", "--json", "--cwd", t.TempDir())
	if code != exitOK || strings.TrimSpace(out) != "[]" || !strings.Contains(errOut, "No IDE lockfiles found in") {
		t.Errorf("--json: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = runCapture(t, map[string]string{}, "ide", "list", "--cwd", t.TempDir())
	if code != exitOK || !strings.Contains(out, "no lockfile directory is known") {
		t.Errorf("no directories: exit %d, stdout %q", code, out)
	}
}

func TestIDEListUsage(t *testing.T) {
	env := map[string]string{"CLAUDE_CONFIG_DIR": t.TempDir()}
	if code, _, errOut := runCapture(t, env, "ide", "list", "extra"); code != exitUsage || !strings.Contains(errOut, `unexpected argument "extra"`) {
		t.Errorf("extra argument: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCapture(t, env, "ide", "list", "--cwd", filepath.Join(t.TempDir(), "nope")); code != exitUsage || !strings.Contains(errOut, "is not a directory") {
		t.Errorf("missing --cwd: exit %d, %q", code, errOut)
	}
	if code, out, _ := runCapture(t, env, "ide", "list", "-h"); code != exitOK || !strings.Contains(out, "usage: idebridge ide list [--json] [--cwd DIR]") {
		t.Errorf("-h: exit %d, %q", code, out)
	}
}

// TestIDEListRelativeCwd resolves --cwd against the invocation's working
// directory, not the test process's.
func TestIDEListRelativeCwd(t *testing.T) {
	s := newListScene(t)
	inv := &invocation{Env: s.env, Getwd: func() (string, error) { return filepath.Dir(s.proj), nil }}
	var out, errOut bytes.Buffer
	inv.Stdout, inv.Stderr = &out, &errOut
	if code := run(context.Background(), []string{"ide", "list", "--json", "--cwd", "proj/pkg"}, inv); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var entries []listEntry
	if err := json.Unmarshal(out.Bytes(), &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 || !entries[0].Valid {
		t.Errorf("relative --cwd: %s", out.String())
	}
}

// TestIDEListProcess runs the real main in a child process with a clean
// environment holding only CLAUDE_CONFIG_DIR.
func TestIDEListProcess(t *testing.T) {
	s := newListScene(t)
	code, out, errOut := runMain(t, []string{"CLAUDE_CONFIG_DIR=" + s.config}, "ide", "list", "--json", "--cwd", s.proj)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var entries []listEntry
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	valid := 0
	for _, e := range entries {
		if e.Valid {
			valid++
		}
	}
	// The child is another process: the lockfiles' pid (this test) is alive
	// for it too, so the same two are valid.
	if len(entries) != 6 || valid != 2 {
		t.Errorf("%d entries, %d valid:\n%s", len(entries), valid, out)
	}
}
