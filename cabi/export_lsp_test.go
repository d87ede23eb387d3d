package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idebridge/idebridge/cabi/abispec"
)

// goplsPath finds gopls: $GOPLS (make sets it), PATH, or GOPATH/bin.
func goplsPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("GOPLS"); p != "" {
		return p
	}
	if p, err := exec.LookPath("gopls"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "gopls")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatal("gopls not found: run `make tools` or set GOPLS")
	return ""
}

// goModule writes a Go module with one file, main.go, holding text.
func goModule(t *testing.T, text string) (dir, mainGo string) {
	t.Helper()
	dir = t.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mainGo = filepath.Join(dir, "main.go")
	if err := os.WriteFile(mainGo, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, mainGo
}

// settleAndDrain settles path and drains until an attachment contains
// want, for at most 30 seconds, and returns everything drained.
func settleAndDrain(t *testing.T, h C_uint64, path, want string) string {
	t.Helper()
	var all strings.Builder
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(all.String(), want) {
		var out *C_char
		wantStatus(t, idb_lsp_settle(h, cstr(t, path), 2000, &out), 0, "idb_lsp_settle")
		take(out)
		wantStatus(t, idb_lsp_drain(h, &out), 0, "idb_lsp_drain")
		all.WriteString(take(out))
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(all.String(), want) {
		t.Fatalf("no drain contained %q: %s", want, all.String())
	}
	return all.String()
}

const brokenMain = "package main\n\nfunc main() {\n\tundefinedThing()\n}\n"
const fixedMain = "package main\n\nfunc main() {\n}\n"

func TestLSPManagerWithGopls(t *testing.T) {
	lockThread(t)
	noLeak(t)
	dir, mainGo := goModule(t, brokenMain)
	config := fmt.Sprintf(`{"gopls":{"command":%q,"extensionToLanguage":{".go":"go"}}}`, goplsPath(t))
	var h C_uint64
	wantStatus(t, idb_lsp_new(cstr(t, config), cstr(t, dir), nil, &h), 0, "idb_lsp_new")
	if uint64(h)>>kindShift != uint64(kindLSP) {
		t.Fatalf("handle %#x", uint64(h))
	}
	shutDown := false
	defer func() {
		if !shutDown {
			idb_lsp_shutdown(h, 10000)
		}
	}()

	wantStatus(t, idb_lsp_open(h, cstr(t, mainGo), 0), 0, "idb_lsp_open")
	var out *C_char
	wantStatus(t, idb_lsp_settle(h, cstr(t, mainGo), 30000, &out), 0, "idb_lsp_settle")
	var res struct {
		Path, Server, Freshness string
		Version                 int
	}
	settled := take(out)
	t.Logf("settle: %s", settled)
	if err := json.Unmarshal([]byte(settled), &res); err != nil {
		t.Fatal(err)
	}
	if res.Server != "gopls" || res.Path != mainGo || res.Version < 1 || res.Freshness == "" || res.Freshness == "timed-out" {
		t.Errorf("settle %+v", res)
	}
	// gopls may publish the type errors of a file's first load after the
	// progress that settle saw ended: settle and drain until they show.
	att := settleAndDrain(t, h, mainGo, "undefined: undefinedThing")
	if !strings.Contains(att, `"servers":["gopls"]`) {
		t.Fatalf("drain %s", att)
	}

	wantStatus(t, idb_lsp_servers(h, &out), 0, "idb_lsp_servers")
	var servers []struct {
		Name, State string
		PID         int
	}
	if err := json.Unmarshal([]byte(take(out)), &servers); err != nil {
		t.Fatal(err)
	}
	if len(servers) != 1 || servers[0].Name != "gopls" || servers[0].PID == 0 || servers[0].State == "" {
		t.Fatalf("servers %+v", servers)
	}
	pid := servers[0].PID

	// The fix reaches gopls; nothing new is left to report about it.
	wantStatus(t, idb_lsp_change(h, cstr(t, mainGo), cstr(t, fixedMain), 0), 0, "idb_lsp_change")
	wantStatus(t, idb_lsp_settle(h, cstr(t, mainGo), 30000, &out), 0, "idb_lsp_settle")
	take(out)
	wantStatus(t, idb_lsp_drain(h, &out), 0, "idb_lsp_drain")
	if s := take(out); strings.Contains(s, "undefinedThing") {
		t.Errorf("fixed file still reported: %s", s)
	}
	wantStatus(t, idb_lsp_save(h, cstr(t, mainGo), 0), 0, "idb_lsp_save")
	wantStatus(t, idb_lsp_close_file(h, cstr(t, mainGo), 0), 0, "idb_lsp_close_file")

	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("x"), 0o644)
	wantStatus(t, idb_lsp_open(h, cstr(t, notes), 0), abispec.StNotFound, "idb_lsp_open", "no language server")
	wantStatus(t, idb_lsp_settle(h, cstr(t, mainGo), 1000, &out), abispec.StNotFound, "idb_lsp_settle", "not open")
	wantStatus(t, idb_lsp_change(h, cstr(t, mainGo), nil, 0), abispec.StArgument, "idb_lsp_change", "text is NULL")
	wantStatus(t, idb_lsp_open(h, nil, 0), abispec.StArgument, "idb_lsp_open", "path is NULL")

	wantStatus(t, idb_lsp_shutdown(h, 10000), 0, "idb_lsp_shutdown")
	shutDown = true
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("gopls (pid %d) still running after shutdown: %v", pid, err)
	}
	wantStatus(t, idb_lsp_shutdown(h, 0), abispec.StHandle, "idb_lsp_shutdown", "already freed")
	wantStatus(t, idb_lsp_drain(h, &out), abispec.StHandle, "idb_lsp_drain")
}

func TestLSPConfigErrors(t *testing.T) {
	lockThread(t)
	noLeak(t)
	dir := t.TempDir()
	var h C_uint64
	for cfg, msg := range map[string]string{
		`{"x":{"extensionToLanguage":{".go":"go"}}}`: "command",
		`{"x":`: "config_json",
		`{"a":{"command":"a","extensionToLanguage":{".go":"go"}},"b":{"command":"b","extensionToLanguage":{".go":"go"}}}`: ".go",
	} {
		wantStatus(t, idb_lsp_new(cstr(t, cfg), cstr(t, dir), nil, &h), abispec.StArgument, "idb_lsp_new", msg)
	}
	wantStatus(t, idb_lsp_new(nil, cstr(t, dir), nil, &h), abispec.StArgument, "idb_lsp_new", "config_json is NULL")
	wantStatus(t, idb_lsp_new(cstr(t, "{}"), nil, nil, &h), abispec.StArgument, "idb_lsp_new", "project_dir is NULL")
	wantStatus(t, idb_lsp_new(cstr(t, "{}"), cstr(t, dir), cstr(t, `{"quiet":1}`), &h), abispec.StArgument, "idb_lsp_new", "unknown field")
	wantStatus(t, idb_lsp_new(cstr(t, "{}"), cstr(t, dir), nil, nil), abispec.StArgument, "idb_lsp_new", "out_handle is NULL")
	// Negative options are refused with the field's name, never a crash
	// at the first open.
	for opts, field := range map[string]string{
		`{"maxOpenDocuments":-1}`:    "MaxOpenDocuments",
		`{"quietPeriodMs":-5}`:       "QuietPeriod",
		`{"settleTimeoutMs":-1}`:     "SettleTimeout",
		`{"startupTimeoutMs":-1}`:    "StartupTimeout",
		`{"shutdownTimeoutMs":-100}`: "ShutdownTimeout",
	} {
		wantStatus(t, idb_lsp_new(cstr(t, "{}"), cstr(t, dir), cstr(t, opts), &h), abispec.StArgument, "idb_lsp_new", field+" is negative")
	}
	// An empty configuration is valid: every file has no server.
	wantStatus(t, idb_lsp_new(cstr(t, "{}"), cstr(t, dir), cstr(t, `{"maxOpenDocuments":3}`), &h), 0, "idb_lsp_new")
	wantStatus(t, idb_lsp_open(h, cstr(t, filepath.Join(dir, "a.go")), 0), abispec.StNotFound, "idb_lsp_open", "no language server")
	wantStatus(t, idb_lsp_shutdown(h, 0), 0, "idb_lsp_shutdown")
}

func TestLSPBadHandles(t *testing.T) {
	lockThread(t)
	noLeak(t)
	var reg C_uint64
	wantStatus(t, idb_registry_new(nil, &reg), 0, "idb_registry_new")
	defer idb_registry_free(reg)
	p := cstr(t, "/x.go")
	for _, h := range []C_uint64{0, 3, C_uint64(kindLSP) << kindShift, reg} {
		var out *C_char
		for name, st := range map[string]C_int{
			"idb_lsp_open":       idb_lsp_open(h, p, 0),
			"idb_lsp_change":     idb_lsp_change(h, p, p, 0),
			"idb_lsp_save":       idb_lsp_save(h, p, 0),
			"idb_lsp_close_file": idb_lsp_close_file(h, p, 0),
			"idb_lsp_settle":     idb_lsp_settle(h, p, 0, &out),
			"idb_lsp_drain":      idb_lsp_drain(h, &out),
			"idb_lsp_diagnose":   idb_lsp_diagnose(h, cstr(t, `["/x.go"]`), 0, &out),
			"idb_lsp_servers":    idb_lsp_servers(h, &out),
			"idb_lsp_shutdown":   idb_lsp_shutdown(h, 0),
		} {
			if st != abispec.StHandle {
				t.Errorf("%s(%#x) = %d, want %d", name, uint64(h), st, abispec.StHandle)
			}
		}
	}
}

// hostPIDScript writes the shell's pid, as this process sees it, to the
// file named by $0: servers run in a PID namespace of their own where
// there is one, where $$ is the namespace's pid, but /proc is the host's.
const hostPIDScript = `if [ -r /proc/self/stat ]; then cut -d' ' -f4 /proc/self/stat; else echo $$; fi > "$0"`

// idb_lsp_shutdown kills a server still starting: with a server that never
// answers initialize (a shell that sleeps), after the open that started it
// timed out, shutdown used to wait for the server's whole startup timeout.
// The bound asserted is a third of that timeout, far above what shutdown
// takes.
func TestLSPShutdownKillsServerStillStarting(t *testing.T) {
	lockThread(t)
	noLeak(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	const startup = 3 * time.Minute
	config, err := json.Marshal(map[string]any{"mute": map[string]any{
		"command": "sh", "args": []string{"-c", hostPIDScript + `; exec sleep 600`, pidFile},
		"extensionToLanguage": map[string]string{".s": "s"},
		"startupTimeout":      startup.Milliseconds(), "shutdownTimeout": 2000,
	}})
	if err != nil {
		t.Fatal(err)
	}
	var h C_uint64
	wantStatus(t, idb_lsp_new(cstr(t, string(config)), cstr(t, dir), nil, &h), 0, "idb_lsp_new")
	a := filepath.Join(dir, "a.s")
	if err := os.WriteFile(a, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, idb_lsp_open(h, cstr(t, a), 300), abispec.StTimeout, "idb_lsp_open", "starting")
	var pid int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		data, _ := os.ReadFile(pidFile)
		if _, err := fmt.Sscan(string(data), &pid); err == nil && pid > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never started")
		}
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("server process %d: %v, want it running", pid, err)
	}
	start := time.Now()
	shut := make(chan C_int, 1)
	go func() { shut <- idb_lsp_shutdown(h, 0) }()
	select {
	case st := <-shut:
		if st != 0 {
			t.Errorf("idb_lsp_shutdown: status %d", st)
		}
	case <-time.After(startup / 3):
		t.Fatalf("idb_lsp_shutdown still waiting after %v: it waits for the server's startup timeout (%v)", time.Since(start), startup)
	}
	t.Logf("idb_lsp_shutdown took %v (startup timeout %v)", time.Since(start), startup)
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server process %d after shutdown: %v, want it gone", pid, err)
	}
}
