//go:build unix

package warm

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestProxyReconnects drives Proxy in this process (under the race
// detector) against runtimes it starts as processes: the session's
// initialize is replayed on a new runtime after the first is killed, the
// client's next call is answered there, and the end of the client's
// input ends the session.
func TestProxyReconnects(t *testing.T) {
	dir := runtimeDir(t)
	var mu sync.Mutex
	var runtimes []*Runtime
	lost := make(chan error, 4)
	o := &ProxyOptions{
		Options:   Options{Dir: dir, Start: []string{os.Args[0]}, Env: append(os.Environ(), "WARM_TEST_SERVE=1", EnvIdle+"=1m")},
		OnConnect: func(rt *Runtime) { mu.Lock(); runtimes = append(runtimes, rt); mu.Unlock() },
		OnLost:    func(err error) { lost <- err },
	}
	t.Cleanup(func() { Stop(context.Background(), &o.Options) })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Proxy(context.Background(), o, noServers(t), inR, outW); outW.Close() }()
	lines := bufio.NewReader(outR)
	call := func(id int, method string, params any) map[string]any {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := inW.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		var m map[string]any
		json.Unmarshal([]byte(line), &m)
		if fmt.Sprint(m["id"]) != fmt.Sprint(id) {
			t.Fatalf("%s: answer %s, want id %d", method, line, id)
		}
		return m
	}
	init := call(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "t", "version": "1"}})
	if init["result"] == nil {
		t.Fatalf("initialize: %v", init)
	}
	inW.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	if m := call(2, "tools/list", map[string]any{}); m["result"] == nil {
		t.Fatalf("tools/list: %v", m)
	}
	mu.Lock()
	first := runtimes[0]
	mu.Unlock()
	if !first.Started {
		t.Errorf("the first runtime %+v: want started by this proxy", first)
	}
	syscall.Kill(first.PID, syscall.SIGKILL)
	select {
	case <-lost:
	case <-time.After(testTimeout):
		t.Fatal("the proxy did not notice the runtime's death")
	}
	// Answered by a new runtime, in a session the replayed initialize
	// initialized.
	m := call(3, "tools/list", map[string]any{})
	if m["result"] == nil || !strings.Contains(fmt.Sprint(m["result"]), "diagnostics") {
		t.Fatalf("tools/list after the runtime was killed: %v", m)
	}
	mu.Lock()
	if len(runtimes) != 2 || runtimes[1].PID == first.PID {
		t.Errorf("runtimes reached: %+v, want a second one", runtimes)
	}
	mu.Unlock()
	// The new runtime's session was initialized by the replay.
	st, err := GetStatus(context.Background(), &o.Options)
	if err != nil || len(st.Projects) != 1 || len(st.Projects[0].Clients) != 1 || st.Projects[0].Clients[0] != "t 1" {
		t.Errorf("status of the new runtime: %+v, %v; want the session initialized by client t 1", st, err)
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Proxy at the end of its input: %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Proxy did not return at the end of its input")
	}
	if rest, _ := io.ReadAll(lines); len(rest) != 0 {
		t.Errorf("output after the last answer: %q (the replayed initialize's answer must stay hidden)", rest)
	}
}
