package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Issue 19 row 8, on the real command: an 8 MiB tool name, an 8 MiB path
// and three 60 MiB calls are each answered with a bounded text (the input
// quoted clipped), and the process's peak memory (VmHWM) grows by at most
// 6x the largest message.
// The figures are logged (go test -v -run TestMCPHugeInputs).
func TestMCPHugeInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and sends 200 MiB")
	}
	bin := filepath.Join(t.TempDir(), "idebridge")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := mcpModule(t)
	env := mcpEnv(t)
	for _, tc := range []struct {
		name  string
		calls func(big8, big60 string) []map[string]any
	}{
		{"8 MiB tool name", func(big8, _ string) []map[string]any {
			return []map[string]any{{"name": big8, "arguments": map[string]any{}}}
		}},
		{"8 MiB path", func(big8, _ string) []map[string]any {
			return []map[string]any{{"name": "hover", "arguments": map[string]any{"file": big8, "line": 1, "column": 1}}}
		}},
		{"8 MiB argument name", func(big8, _ string) []map[string]any {
			return []map[string]any{{"name": "hover", "arguments": map[string]any{big8: 1}}}
		}},
		{"three 60 MiB calls", func(_, big60 string) []map[string]any {
			c := map[string]any{"name": "hover", "arguments": map[string]any{"file": big60, "line": 1, "column": 1}}
			return []map[string]any{c, c, c}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, "mcp", "--no-ide", "--project", dir)
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			in, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
			lines := make(chan string, 8)
			go func() {
				sc := bufio.NewScanner(out)
				sc.Buffer(nil, 512<<20)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			w := bufio.NewWriterSize(in, 1<<20)
			send := func(m map[string]any) {
				b, _ := json.Marshal(m)
				w.Write(append(b, '\n'))
				w.Flush()
			}
			send(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}})
			<-lines
			base := vmHWM(t, cmd.Process.Pid) // the command's own, before the input
			calls := tc.calls(strings.Repeat("a", 8<<20), strings.Repeat("b", 60<<20))
			largest := 0
			go func() {
				for i, c := range calls {
					b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": c})
					w.Write(append(b, '\n'))
				}
				w.Flush()
			}()
			for _, c := range calls {
				b, _ := json.Marshal(c)
				largest = max(largest, len(b))
			}
			for range calls {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatal("the server's output ended")
					}
					if len(l) > 16<<10 {
						t.Errorf("an answer of %d bytes: %.200s", len(l), l)
					}
				case <-time.After(2 * mcpTimeout):
					t.Fatal("no answer")
				}
			}
			hwm := vmHWM(t, cmd.Process.Pid)
			grown := float64(hwm-base) / float64(largest)
			t.Logf("%s: largest message %d MiB, peak RSS (VmHWM) %d MiB (%.1fx), %d MiB before the input: grown by %.1fx the message",
				tc.name, largest>>20, hwm>>20, float64(hwm)/float64(largest), base>>20, grown)
			// The goal is 3x; reading a line and the GC's pacing (a heap
			// may grow to twice what is live) still take up to about 5x.
			if grown > 6 {
				t.Errorf("peak RSS %d MiB grew by %.1fx the largest message (%d MiB); want at most 6x", hwm>>20, grown, largest>>20)
			}
		})
	}
}

// vmHWM reads a process's peak resident set size, in bytes.
func vmHWM(t *testing.T, pid int) int {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}
