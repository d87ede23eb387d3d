package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// hugeCases are the inputs of issue 19 row 8: an 8 MiB tool name, an 8
// MiB path, an 8 MiB argument name and three 60 MiB calls (a 60 MiB path).
var hugeCases = []struct {
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
}

// buildIdebridge builds the command, for tests that measure its process.
func buildIdebridge(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the command and sends 200 MiB")
	}
	bin := filepath.Join(t.TempDir(), "idebridge")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// checkPeak fails when the process's peak memory (VmHWM, all of it, not
// only its growth) is over 3x the largest message, and logs the figures
// (go test -v -run TestMCPHugeInputs).
func checkPeak(t *testing.T, pid, base, largest int, what string) {
	t.Helper()
	hwm := vmHWM(t, pid)
	t.Logf("%s: largest message %d MiB, peak RSS (VmHWM) %d MiB (%.1fx the message), %d MiB before the input",
		what, largest>>20, hwm>>20, float64(hwm)/float64(largest), base>>20)
	if hwm > 3*largest {
		t.Errorf("peak RSS %d MiB is %.1fx the largest message (%d MiB); want at most 3x", hwm>>20, float64(hwm)/float64(largest), largest>>20)
	}
}

// largestMessage is the size of the largest tools/call message of calls.
func largestMessage(calls []map[string]any) int {
	largest := 0
	for i, c := range calls {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": c})
		largest = max(largest, len(b))
	}
	return largest
}

// Issue 19 row 8, on the real command over stdio: each input is answered
// with a bounded text (the input quoted clipped), and the process's peak
// memory (VmHWM) is at most 3x the largest message.
func TestMCPHugeInputs(t *testing.T) {
	bin := buildIdebridge(t)
	dir := mcpModule(t)
	env := mcpEnv(t)
	for _, tc := range hugeCases {
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
			largest := largestMessage(calls)
			go func() {
				for i, c := range calls {
					b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": c})
					w.Write(append(b, '\n'))
				}
				w.Flush()
			}()
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
			checkPeak(t, cmd.Process.Pid, base, largest, tc.name)
		})
	}
}

// Issue 19 row 8 over Streamable HTTP: the same inputs as POST bodies of a
// legacy session, the three 60 MiB calls at once; each is answered with a
// bounded text, and the process's peak memory is at most 3x the largest
// message.
func TestMCPHugeInputsHTTP(t *testing.T) {
	bin := buildIdebridge(t)
	dir := mcpModule(t)
	env := mcpEnv(t)
	for _, tc := range hugeCases {
		t.Run(tc.name, func(t *testing.T) {
			tokFile := filepath.Join(t.TempDir(), "mcp.json")
			cmd := exec.Command(bin, "mcp", "--no-ide", "--project", dir, "--http", "127.0.0.1:0", "--token-file", tokFile)
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			var ep struct{ URL, AuthToken string }
			for end := time.Now().Add(mcpTimeout); ep.AuthToken == ""; time.Sleep(20 * time.Millisecond) {
				if b, err := os.ReadFile(tokFile); err == nil {
					json.Unmarshal(b, &ep)
				}
				if time.Now().After(end) {
					t.Fatal("no token file")
				}
			}
			client := &http.Client{Timeout: 2 * mcpTimeout}
			post := func(sid string, body []byte) (*http.Response, []byte, error) {
				req, _ := http.NewRequest(http.MethodPost, ep.URL, bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+ep.AuthToken)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if sid != "" {
					req.Header.Set("Mcp-Session-Id", sid)
					req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				}
				resp, err := client.Do(req)
				if err != nil {
					return nil, nil, err
				}
				defer resp.Body.Close()
				rb, err := io.ReadAll(resp.Body)
				return resp, rb, err
			}
			resp, body, err := post("", []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
			if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
				t.Fatalf("initialize: %v %v %s", err, resp, body)
			}
			sid := resp.Header.Get("Mcp-Session-Id")
			base := vmHWM(t, cmd.Process.Pid) // the command's own, before the input
			calls := tc.calls(strings.Repeat("a", 8<<20), strings.Repeat("b", 60<<20))
			largest := largestMessage(calls)
			var wg sync.WaitGroup
			for i, c := range calls {
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": c})
				wg.Add(1)
				go func() {
					defer wg.Done()
					resp, body, err := post(sid, b)
					switch {
					case err != nil:
						t.Errorf("POST: %v", err)
					case resp.StatusCode != http.StatusOK || len(body) > 16<<10:
						t.Errorf("an answer of %d bytes, status %d: %.300s", len(body), resp.StatusCode, body)
					}
				}()
			}
			wg.Wait()
			checkPeak(t, cmd.Process.Pid, base, largest, tc.name+" (HTTP)")
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
