//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A signal ends `ide serve` within its shutdown grace, whatever its tool
// calls are doing: here one openFile on a FIFO (which used to block in
// open(2) forever, holding shutdown and the process with it) and one
// getDiagnostics waiting for a language server that never answers
// initialize. The lockfile is gone and the port closed afterwards.
func TestServeBinarySIGTERMDuringStuckCalls(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "idebridge")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building idebridge: %v\n%s", err, out)
	}
	scriptls := buildScriptls(t)
	ws := t.TempDir()
	fifo := filepath.Join(ws, "pipe.txt")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "a.s"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lspConfig := writeConfig(t, t.TempDir(), map[string]any{
		"silent": map[string]any{"command": scriptls, "args": []string{"-no-init"}, "extensionToLanguage": map[string]string{".s": "s"}},
	})

	cmd := exec.Command(bin, "ide", "serve", "--workspace", ws, "--diff", "reject", "--lsp-config", lspConfig, "-v")
	cmd.Env = append(os.Environ(), "CLAUDE_CONFIG_DIR="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr serveBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	go func() {
		cmd.Wait()
		close(exited)
	}()
	if err != nil {
		t.Fatalf("first line: %v\nstderr:\n%s", err, stderr.String())
	}
	var info serveInfo
	if err := json.Unmarshal([]byte(line), &info); err != nil {
		t.Fatalf("first line %q: %v", line, err)
	}

	c := dialServe(t, info)
	c.send(map[string]any{"jsonrpc": "2.0", "id": 101, "method": "tools/call", "params": map[string]any{"name": "openFile", "arguments": map[string]any{"filePath": fifo}}})
	c.send(map[string]any{"jsonrpc": "2.0", "id": 102, "method": "tools/call", "params": map[string]any{"name": "getDiagnostics", "arguments": map[string]any{"uri": "file://" + filepath.Join(ws, "a.s")}}})
	stderr.waitFor(t, `"id":102`)
	time.Sleep(200 * time.Millisecond) // let both calls get going

	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	bound := shutdownGrace + 5*time.Second
	select {
	case <-exited:
		t.Logf("exited %v after SIGTERM", time.Since(start).Round(time.Millisecond))
	case <-time.After(bound):
		// Release the FIFO so that a process stuck in open(2) can go.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatalf("ide serve still running %v after SIGTERM\nstderr:\n%s", bound, stderr.String())
	}
	if _, err := os.Stat(info.Lockfile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lockfile left after SIGTERM: %v", err)
	}
	if conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(info.Port)), time.Second); err == nil {
		conn.Close()
		t.Errorf("port %d still open after exit", info.Port)
	}
	// The language server did not outlive it either.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		pids := processesOf(t, scriptls)
		if len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("language server processes %v outlived ide serve", pids)
		}
	}
}

// processesOf returns the pids of running processes whose executable is
// bin, from /proc (Linux); elsewhere it fails the test.
func processesOf(t *testing.T, bin string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("listing processes: %v", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // gone meanwhile
		}
		if argv0, _, _ := strings.Cut(string(cmdline), "\x00"); argv0 == bin {
			if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(stat), ") Z ") {
				continue // a zombie has exited
			}
			pids = append(pids, pid)
		}
	}
	return pids
}
