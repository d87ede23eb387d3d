package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/lockfile"
)

// deadlineMargin is how far past its deadline a command may end: a bound on
// a hang, not a speed goal.
const deadlineMargin = 5 * time.Second

// `diag --timeout D` with a server that never answers initialize ends
// within D: the servers' shutdown is inside the one deadline, not 10 s
// after it.
func TestDiagDeadlineCoversShutdown(t *testing.T) {
	bin := buildScriptls(t)
	dir := t.TempDir()
	writeConfig(t, dir, map[string]any{
		"silent": map[string]any{"command": bin, "args": []string{"-no-init"}, "extensionToLanguage": map[string]string{".s": "s"}},
	})
	if err := os.WriteFile(filepath.Join(dir, "a.s"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const timeout = 3 * time.Second
	start := time.Now()
	code, _, errOut := runIn(t, dir, diagEnv(t), "diag", "--config", "lsp.json", "--timeout", timeout.String(), "a.s")
	took := time.Since(start)
	if took > timeout+deadlineMargin {
		t.Errorf("diag --timeout %v took %v", timeout, took.Round(time.Millisecond))
	}
	if code != exitFailure || !strings.Contains(errOut, "starting silent") {
		t.Errorf("exit %d, stderr %q; want 1 and the server named", code, errOut)
	}
}

// silentIDE is a WebSocket MCP server on loopback that answers initialize
// and then nothing at all, with its lockfile in the scene.
func silentIDE(t *testing.T, s *toolsScene) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up := websocket.Upgrader{Subprotocols: []string{"mcp"}}
	var conns sync.WaitGroup
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		conns.Add(1)
		defer conns.Done()
		defer c.Close()
		for {
			_, data, err := c.ReadMessage()
			if err != nil {
				return
			}
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(data, &msg) == nil && msg.Method == "initialize" {
				c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":`+string(msg.ID)+
					`,"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"silent","version":"0"}}}`))
			}
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close(); conns.Wait() })
	port := ln.Addr().(*net.TCPAddr).Port
	if _, err := lockfile.Write(filepath.Join(s.cfg, "ide"), &lockfile.Lockfile{
		Port: port, PID: os.Getpid(), IDEName: "Silent", Transport: lockfile.TransportWS, WorkspaceFolders: []string{s.ws},
	}); err != nil {
		t.Fatal(err)
	}
	return port
}

// `ide call` without --timeout ends after 30 s as its help says, even when
// the IDE answers neither the handshake's tools/list nor the call (each
// used to wait 30 s on its own, one after the other).
func TestIDECallDeadlineCoversHandshake(t *testing.T) {
	t.Parallel() // it waits out the real 30 s default
	s := newToolsScene(t)
	port := silentIDE(t, s)
	for _, c := range []struct {
		args    []string
		timeout time.Duration
	}{
		{[]string{"ide", "call", "getWorkspaceFolders", "--port", strconv.Itoa(port), "--timeout", "2s"}, 2 * time.Second},
		{[]string{"ide", "call", "getWorkspaceFolders", "--port", strconv.Itoa(port)}, idebridge.DefaultCallTimeout},
	} {
		start := time.Now()
		code, _, errOut := s.run(t, context.Background(), "", c.args...)
		took := time.Since(start)
		if took > c.timeout+deadlineMargin {
			t.Errorf("%q took %v, want at most %v", c.args, took.Round(time.Millisecond), c.timeout)
		}
		if code != exitFailure || !strings.Contains(errOut, "deadline exceeded") {
			t.Errorf("%q: exit %d, stderr %q; want 1 and a deadline", c.args, code, errOut)
		}
	}
}
