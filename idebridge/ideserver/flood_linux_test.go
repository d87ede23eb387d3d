//go:build linux

package ideserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// floodServerEnv makes the test binary a server process for the flood
// test (see TestMain).
const floodServerEnv = "IDESERVER_FLOOD_SERVER"

// floodFDLimit is the descriptor limit of that process: a small one, as a
// user's IDE may have, so that a flood reaches it within a test's time.
const floodFDLimit = 256

func TestMain(m *testing.M) {
	if os.Getenv(floodServerEnv) == "1" {
		os.Exit(floodServer())
	}
	os.Exit(m.Run())
}

// floodServer runs a default server with a small descriptor limit, prints
// its URL and token, and serves until standard input ends.
func floodServer() int {
	lim := syscall.Rlimit{Cur: floodFDLimit, Max: floodFDLimit}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		return 1
	}
	srv, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{os.TempDir()}, NoLockfile: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := srv.Start(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	json.NewEncoder(os.Stdout).Encode(map[string]string{"url": srv.URL(), "token": srv.AuthToken()})
	io.Copy(io.Discard, os.Stdin)
	srv.Close()
	return 0
}

// A local user without the token floods the server with connections:
// refused requests, and connections that never send a byte, several times
// the server's descriptor limit. The agent still connects and calls a
// tool. (Refused connections used to stay open until the server ran out
// of descriptors, and the agent's connection then timed out.)
func TestConnectionFloodLeavesRoomForTheAgent(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), floodServerEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(testTimeout):
			cmd.Process.Kill()
			<-done
		}
	}()
	var info struct{ URL, Token string }
	if err := json.NewDecoder(bufio.NewReader(stdout)).Decode(&info); err != nil {
		t.Fatalf("server process: %v", err)
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(info.URL, "ws://"), "/")

	// The flood: bounded in count and in time.
	const refused, silent = 3 * floodFDLimit, floodFDLimit
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	deadline := time.Now().Add(15 * time.Second)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < refused+silent && time.Now().Before(deadline); i += 8 {
				conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
				if err != nil {
					continue // the server is struggling: that is the point
				}
				if i < refused {
					// No token: answered 400. The answer is never read.
					io.WriteString(conn, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
				}
				mu.Lock()
				conns = append(conns, conn)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("flood: %d connections held open by the attacker", len(conns))

	// The agent connects and calls a tool while the flood is held open.
	c, resp, err := dialRaw(info.URL, authHeader(info.Token), &websocket.Dialer{HandshakeTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("the agent could not connect during the flood: %v (%v)", err, resp)
	}
	cl := newClient(t, c)
	cl.handshake(1)
	if got := cl.callTool(mcp.ToolGetWorkspaceFolders, nil).texts(); len(got) != 1 || !strings.Contains(got[0], `"success":true`) {
		t.Errorf("getWorkspaceFolders during the flood: %q", got)
	}
}
