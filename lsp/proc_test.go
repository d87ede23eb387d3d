package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestTailKeepsTheEnd(t *testing.T) {
	tl := newTail(16)
	tl.Write([]byte("first line\n"))
	if got := tl.String(); got != "first line" {
		t.Errorf("short tail %q", got)
	}
	tl.Write([]byte("second\nthird line\n"))
	if got := tl.String(); got != "...third line" {
		t.Errorf("cut tail %q, want it to start at a line", got)
	}
	tl.Write([]byte(strings.Repeat("x", 40)))
	if got := tl.String(); got != "..."+strings.Repeat("x", 16) {
		t.Errorf("oversized write %q", got)
	}
}

// The orderly end of a server: the shutdown request, the exit
// notification, a wait for the process to exit by itself, and only then
// the kill of its tree. The scripted server takes 300 ms to exit after
// exit: a kill before the wait would end it with a signal.
func TestShutdownOrder(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "server.log")
	cfg := scriptConfig("orderly", ".s", "-log", log, "-exit-delay", "300ms")
	m, err := NewManager([]ServerConfig{cfg}, testOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	a := writeSource(t, dir, "a.s", "")
	if err := m.Open(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	inst := m.servers[0].current()
	if err := m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, l := range serverLog(t, log) {
		var method, event string
		json.Unmarshal(l["method"], &method)
		json.Unmarshal(l["event"], &event)
		switch {
		case method == "shutdown" || method == "exit":
			seen = append(seen, method)
		case event == "exiting":
			seen = append(seen, "exited by itself")
		}
	}
	seen = append(seen, inst.proc.history()...)
	want := []string{"shutdown", "exit", "exited by itself", "exited", "killed"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("shutdown sequence %q, want %q", seen, want)
	}
	if st := inst.proc.exitStatus(); st != "exit status 0" {
		t.Errorf("the server ended with %s, want exit status 0 (it was killed before it could exit)", st)
	}
}

// A bare command is looked up in the PATH of the server's environment
// (ManagerOptions.Env, then the configuration's env), not the agent's.
func TestCommandFromServerPath(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(scriptlsBin, filepath.Join(bin, "only-on-server-path")); err != nil {
		t.Fatal(err)
	}
	cfg := scriptConfig("s", ".s")
	cfg.Command = "only-on-server-path"
	opts := testOptions(dir)
	opts.Env = []string{"PATH=" + bin}
	m := newManager(t, []ServerConfig{cfg}, opts)
	a := writeSource(t, dir, "a.s", "")
	if err := m.Open(context.Background(), a); err != nil {
		t.Fatalf("Open: %v", err)
	}

	cfg.Env = map[string]string{"PATH": filepath.Join(dir, "empty")}
	m2 := newManager(t, []ServerConfig{cfg}, opts)
	if err := m2.Open(context.Background(), a); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("with the configuration's PATH lacking it: %v, want exec.ErrNotFound", err)
	}
}
