//go:build unix

package ideserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/lockfile"
	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/mcp"
)

// releaseFIFO opens fifo for writing and closes it, which lets a reader
// blocked in open(2) go on (it reads end of file); without a reader it
// does nothing.
func releaseFIFO(fifo string) {
	if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

// errorText is a JSON-RPC error's message and data, for matching.
func errorText(m *jsonrpc.Message) string {
	if m.Error == nil {
		return ""
	}
	return m.Error.Message + " " + string(m.Error.Data)
}

// buildScriptls builds package lsp's scripted language server.
func buildScriptls(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "scriptls")
	if out, err := exec.Command("go", "build", "-o", bin, "../../lsp/testdata/scriptls").CombinedOutput(); err != nil {
		t.Fatalf("building scriptls: %v\n%s", err, out)
	}
	return bin
}

// registerDiagnostics registers getDiagnostics from configs on srv and
// stops its servers at cleanup.
func registerDiagnostics(t *testing.T, srv *ideserver.Server, configs []lsp.ServerConfig) *ideserver.Diagnostics {
	t.Helper()
	d, err := ideserver.NewDiagnostics(srv, &ideserver.DiagnosticsOptions{Configs: configs, SettleTimeout: testTimeout, AnswerTimeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.RegisterTool(d.Tool()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		d.Close(ctx)
	})
	return d
}

// The default tools read regular files only: a FIFO (which used to block
// open(2) forever), a device (/dev/zero used to be read without end,
// burning a core) and a file over the size bound are refused at once, and
// the calls after them are answered as usual.
func TestToolsReadOnlyRegularFiles(t *testing.T) {
	ws := t.TempDir()
	fifo := filepath.Join(ws, "pipe.go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(ws, "zero.txt")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(ws, "big.txt")
	writeText(t, big, strings.Repeat("x\n", 1000))
	ok := filepath.Join(ws, "ok.txt")
	writeText(t, ok, "a\nb\n")

	// Unconfined, so that the link to /dev/zero gets past the workspace
	// check and reaches the file check.
	srv := startServer(t, &ideserver.Options{WorkspaceFolders: []string{ws}, Unconfined: true, MaxMessageSize: 1024, NoLockfile: true})
	registerDiagnostics(t, srv, []lsp.ServerConfig{})
	t.Cleanup(func() { releaseFIFO(fifo) }) // before Close, for a stuck call
	c := dial(t, srv)
	c.handshake(1)

	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{mcp.ToolOpenFile, map[string]any{"filePath": fifo}, "not a regular file (a FIFO)"},
		{mcp.ToolOpenFile, map[string]any{"filePath": zero}, "not a regular file (a character device)"},
		{mcp.ToolOpenFile, map[string]any{"filePath": ws}, "not a regular file (a directory)"},
		{mcp.ToolOpenFile, map[string]any{"filePath": big}, "file too large"},
		{mcp.ToolOpenDiff, map[string]any{"old_file_path": fifo, "new_file_path": fifo, "new_file_contents": "x", "tab_name": "t1"}, "not a regular file (a FIFO)"},
		{mcp.ToolOpenDiff, map[string]any{"old_file_path": zero, "new_file_path": zero, "new_file_contents": "x", "tab_name": "t2"}, "not a regular file (a character device)"},
		{mcp.ToolGetDiagnostics, map[string]any{"uri": "file://" + fifo}, "not a regular file (a FIFO)"},
		{mcp.ToolGetDiagnostics, map[string]any{"uri": "file://" + zero}, "not a regular file (a character device)"},
		{mcp.ToolGetDiagnostics, map[string]any{"uri": "file://" + big}, "file too large"},
	} {
		m := c.call("tools/call", map[string]any{"name": tc.tool, "arguments": tc.args})
		if got := errorText(m); !strings.Contains(got, tc.want) {
			t.Errorf("%s %v: %s, want an error saying %q", tc.tool, tc.args, mustMarshal(m), tc.want)
		}
	}

	// Ordinary files are served as before, getDiagnostics included.
	var opened struct{ LineCount int }
	if err := json.Unmarshal([]byte(c.callTool(mcp.ToolOpenFile, map[string]any{"filePath": ok}).texts()[0]), &opened); err != nil || opened.LineCount != 2 {
		t.Errorf("openFile ok.txt: %+v %v", opened, err)
	}
	if got := c.callTool(mcp.ToolGetDiagnostics, map[string]any{"uri": "file://" + ok}).texts(); len(got) != 1 || !strings.Contains(got[0], "ok.txt") {
		t.Errorf("getDiagnostics ok.txt: %q", got)
	}
}

// One getDiagnostics call waiting for a language server that never
// answers does not hold up another: calls used to be answered one at a
// time.
func TestGetDiagnosticsCallsDoNotWaitForEachOther(t *testing.T) {
	bin := buildScriptls(t)
	ws := t.TempDir()
	writeText(t, filepath.Join(ws, "a.s"), "x\n")
	writeText(t, filepath.Join(ws, "b.txt"), "y\n")
	srv := startServer(t, &ideserver.Options{WorkspaceFolders: []string{ws}, NoLockfile: true})
	registerDiagnostics(t, srv, []lsp.ServerConfig{{
		Name: "silent", Command: bin, Args: []string{"-no-init"}, ExtensionToLanguage: map[string]string{".s": "s"},
		StartupTimeout: 5 * time.Second, NoRestartOnCrash: true,
	}})
	c := dial(t, srv)
	c.handshake(1)

	stuck := c.request("tools/call", map[string]any{"name": mcp.ToolGetDiagnostics, "arguments": map[string]any{"uri": "file://" + filepath.Join(ws, "a.s")}})
	time.Sleep(100 * time.Millisecond) // let it take whatever it takes first
	free := c.request("tools/call", map[string]any{"name": mcp.ToolGetDiagnostics, "arguments": map[string]any{"uri": "file://" + filepath.Join(ws, "b.txt")}})
	m := c.next()
	if string(m.ID) != string(free) || m.Error != nil {
		t.Fatalf("first answer %s, want the result of the call on b.txt (id %s) before the stuck one (id %s)", mustMarshal(m), free, stuck)
	}
	c.notify("notifications/cancelled", map[string]any{"requestId": json.RawMessage(stuck)})
}

// Paths are confined to the workspace folders after resolving symbolic
// links: absolute paths elsewhere, ../, %2e%2e, links out of the workspace,
// and file URIs of other hosts are refused by every tool, and
// getDiagnostics never hands a file outside to its language server.
func TestWorkspaceConfinement(t *testing.T) {
	bin := buildScriptls(t)
	ws, outside := t.TempDir(), t.TempDir()
	secretText := "SECRET-CONTENT ERROR\n"
	secret := filepath.Join(outside, "secret.s")
	writeText(t, secret, secretText)
	inside := filepath.Join(ws, "a.s")
	writeText(t, inside, "fine\n")
	if err := os.Symlink(secret, filepath.Join(ws, "link.s")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "nothing-yet.s"), filepath.Join(ws, "dangling.s")); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "lsp.log")
	srv := startServer(t, &ideserver.Options{WorkspaceFolders: []string{ws}, NoLockfile: true})
	registerDiagnostics(t, srv, []lsp.ServerConfig{{
		Name: "script", Command: bin, Args: []string{"-log", logFile}, ExtensionToLanguage: map[string]string{".s": "s"},
	}})
	c := dial(t, srv)
	c.handshake(1)

	up := "file://" + ws + "/%2e%2e/" + filepath.Base(outside) + "/secret.s"
	for _, p := range []string{
		"/etc/shadow", "/etc/passwd", secret, "../" + filepath.Base(outside) + "/secret.s", up,
		filepath.Join(ws, "link.s"), filepath.Join(ws, "out", "secret.s"), filepath.Join(ws, "dangling.s"),
		"file://" + secret,
	} {
		for _, tc := range []struct {
			tool string
			args map[string]any
		}{
			{mcp.ToolOpenFile, map[string]any{"filePath": p}},
			{mcp.ToolSaveDocument, map[string]any{"filePath": p}},
			{mcp.ToolCheckDocumentDirty, map[string]any{"filePath": p}},
			{mcp.ToolOpenDiff, map[string]any{"old_file_path": p, "new_file_path": p, "new_file_contents": "x", "tab_name": "t"}},
			{mcp.ToolGetDiagnostics, map[string]any{"uri": p}},
		} {
			m := c.call("tools/call", map[string]any{"name": tc.tool, "arguments": tc.args})
			if m.Error == nil || m.Error.Code != mcp.CodeInvalidParams || !strings.Contains(errorText(m), "outside the workspace") {
				t.Errorf("%s %s: %s, want -32602 outside the workspace", tc.tool, p, mustMarshal(m))
			}
		}
	}
	// A file URI naming another host is not this machine's file.
	for _, tool := range []string{mcp.ToolOpenFile, mcp.ToolGetDiagnostics} {
		arg := "filePath"
		if tool == mcp.ToolGetDiagnostics {
			arg = "uri"
		}
		m := c.call("tools/call", map[string]any{"name": tool, "arguments": map[string]any{arg: "file://otherhost" + inside}})
		if m.Error == nil || !strings.Contains(errorText(m), `names the host \"otherhost\"`) {
			t.Errorf("%s file://otherhost...: %s", tool, mustMarshal(m))
		}
	}

	// Inside the workspace everything works, links that stay inside and
	// files yet to be written included.
	if err := os.Symlink("a.s", filepath.Join(ws, "inner-link.s")); err != nil {
		t.Fatal(err)
	}
	c.callTool(mcp.ToolOpenFile, map[string]any{"filePath": inside})
	c.callTool(mcp.ToolOpenFile, map[string]any{"filePath": "a.s"})
	c.callTool(mcp.ToolOpenFile, map[string]any{"filePath": "file://localhost" + inside})
	c.callTool(mcp.ToolOpenFile, map[string]any{"filePath": filepath.Join(ws, "inner-link.s")})
	if got := c.callTool(mcp.ToolOpenDiff, map[string]any{"old_file_path": filepath.Join(ws, "new", "n.s"), "new_file_path": filepath.Join(ws, "new", "n.s"), "new_file_contents": "x", "tab_name": "t9"}).texts(); got[0] != mcp.DiffRejected {
		t.Errorf("openDiff of a new file: %q", got)
	}
	c.callTool(mcp.ToolGetDiagnostics, map[string]any{"uri": "file://" + inside})
	// Without a uri, nothing refused before shows up either.
	for _, text := range c.callTool(mcp.ToolGetDiagnostics, map[string]any{}).texts() {
		if strings.Contains(text, "secret") {
			t.Errorf("getDiagnostics {}: %s", text)
		}
	}
	logged, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logged), "fine") {
		t.Errorf("the language server never saw the file inside the workspace: %s", logged)
	}
	if strings.Contains(string(logged), "SECRET-CONTENT") || strings.Contains(string(logged), "secret.s") {
		t.Errorf("the language server was handed a file outside the workspace:\n%s", logged)
	}

	// Unconfined, the same file is served.
	free := startServer(t, &ideserver.Options{WorkspaceFolders: []string{ws}, NoLockfile: true, Unconfined: true})
	fc := dial(t, free)
	fc.handshake(1)
	fc.callTool(mcp.ToolOpenFile, map[string]any{"filePath": secret})
	fc.callTool(mcp.ToolOpenFile, map[string]any{"filePath": up})
	if m := fc.call("tools/call", map[string]any{"name": mcp.ToolOpenFile, "arguments": map[string]any{"filePath": "file://otherhost" + inside}}); m.Error == nil {
		t.Errorf("unconfined, another host's file URI: %s", mustMarshal(m))
	}
}

// Every call but openDiff is answered within Options.CallTimeout, even
// when its handler does not return; openDiff waits for the user.
func TestCallTimeout(t *testing.T) {
	var causes sync.Map
	policy := ideserver.DiffPolicyFunc(func(ctx context.Context, req *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
		<-ctx.Done()
		causes.Store(req.TabName, context.Cause(ctx))
		return ideserver.DiffDecision{}, ctx.Err()
	})
	srv := startServer(t, &ideserver.Options{NoLockfile: true, CallTimeout: 200 * time.Millisecond, DiffPolicy: policy})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // runs before Close
	srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: "deaf"}, Handler: func(context.Context, *ideserver.ToolCall) (*mcp.ToolResult, error) {
		<-release // ignores its context
		return mcp.TextResult("late"), nil
	}})
	srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: "patient"}, Timeout: -1, Handler: func(ctx context.Context, _ *ideserver.ToolCall) (*mcp.ToolResult, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
			return mcp.TextResult("done"), nil
		}
	}})
	c := dial(t, srv)
	c.handshake(1)

	m := c.call("tools/call", map[string]any{"name": "deaf"})
	if !strings.Contains(errorText(m), "deaf did not finish within 200ms") {
		t.Errorf("deaf tool: %s, want a timeout error", mustMarshal(m))
	}
	if got := c.callTool("patient", nil).texts(); len(got) != 1 || got[0] != "done" {
		t.Errorf("a tool without a timeout: %q", got)
	}
	diff := c.request("tools/call", map[string]any{"name": mcp.ToolOpenDiff, "arguments": map[string]any{"old_file_path": "a", "new_file_path": "a", "new_file_contents": "x", "tab_name": "slow"}})
	time.Sleep(time.Second) // well past CallTimeout
	closeTab := c.request("tools/call", map[string]any{"name": mcp.ToolCloseTab, "arguments": map[string]any{"tab_name": "slow"}})
	// The two answers may come in either order.
	answers := map[string]*jsonrpc.Message{}
	for len(answers) < 2 {
		m := c.next()
		answers[string(m.ID)] = m
	}
	if m := answers[string(closeTab)]; m == nil || m.Error != nil {
		t.Errorf("close_tab: %s", mustMarshal(m))
	}
	if m := answers[string(diff)]; m == nil || m.Error != nil || decodeResult(t, m).texts()[0] != mcp.DiffRejected {
		t.Errorf("openDiff: %s", mustMarshal(m))
	}
	if cause, _ := causes.Load("slow"); !errors.Is(cause.(error), ideserver.ErrDiffClosed) {
		t.Errorf("openDiff ended by %v, want close_tab (ErrDiffClosed): it must not time out", cause)
	}

	for field, o := range map[string]*ideserver.Options{
		"CallTimeout":             {CallTimeout: -1}, // allowed: none
		"RequestTimeout":          {RequestTimeout: -time.Second},
		"MaxUnauthenticatedConns": {MaxUnauthenticatedConns: -1},
	} {
		_, err := ideserver.New(o)
		if field == "CallTimeout" {
			if err != nil {
				t.Errorf("New with CallTimeout -1: %v", err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("New with a negative %s: %v", field, err)
		}
	}
}

// rawRequest writes a request on a new TCP connection and returns the
// connection and the response's status line.
func rawRequest(t *testing.T, addr, req string) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(testTimeout))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", req, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return conn, br, resp.Status
}

// closedWithin reports whether the server closes conn within d (reading
// end of file or a reset).
func closedWithin(conn net.Conn, br *bufio.Reader, d time.Duration) bool {
	conn.SetReadDeadline(time.Now().Add(d))
	_, err := br.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// A refused request closes its connection: left open, refused
// connections used to pile up until the server ran out of descriptors.
func TestRefusedConnectionsAreClosed(t *testing.T) {
	for _, tr := range []string{lockfile.TransportWS, lockfile.TransportSSE} {
		t.Run(tr, func(t *testing.T) {
			srv := startServer(t, &ideserver.Options{Transport: tr, NoLockfile: true})
			addr := strings.TrimPrefix(strings.TrimPrefix(srv.URL(), "ws://"), "http://")
			addr = strings.TrimSuffix(strings.TrimSuffix(addr, "/sse"), "/")
			path := "/"
			if tr == lockfile.TransportSSE {
				path = "/sse"
			}
			tok := mcp.AuthHeader + ": " + srv.AuthToken() + "\r\n"
			for name, req := range map[string]string{
				"no token":     "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
				"foreign Host": "GET " + path + " HTTP/1.1\r\nHost: example.test\r\n" + tok + "\r\n",
				"unknown path": "GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n" + tok + "\r\n",
				"bad session":  "POST /messages?session=x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}",
			} {
				conn, br, status := rawRequest(t, addr, req)
				if strings.HasPrefix(status, "2") || strings.HasPrefix(status, "101") {
					t.Errorf("%s: %s, want a refusal", name, status)
					continue
				}
				if !closedWithin(conn, br, 5*time.Second) {
					t.Errorf("%s: the connection stayed open after %s", name, status)
				}
			}
		})
	}
}

// Over Options.MaxUnauthenticatedConns, the oldest connection that has not
// authenticated is closed, and the agent still gets in.
func TestUnauthenticatedConnectionsAreCapped(t *testing.T) {
	srv := startServer(t, &ideserver.Options{NoLockfile: true, MaxUnauthenticatedConns: 4, RequestTimeout: time.Minute})
	addr := strings.TrimSuffix(strings.TrimPrefix(srv.URL(), "ws://"), "/")
	var conns []net.Conn
	for range 10 {
		conn, err := net.DialTimeout("tcp", addr, testTimeout)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conns = append(conns, conn)
		time.Sleep(20 * time.Millisecond) // accepted in this order
	}
	isClosed := make([]bool, len(conns))
	var wg sync.WaitGroup
	for i, conn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			isClosed[i] = closedWithin(conn, bufio.NewReader(conn), 2*time.Second)
		}()
	}
	wg.Wait()
	closed := 0
	for i, c := range isClosed {
		if c {
			closed++
			if i >= 6 {
				t.Errorf("connection %d (one of the 4 newest) was closed", i)
			}
		}
	}
	if closed != 6 {
		t.Errorf("%d of 10 silent connections closed, want the 6 oldest", closed)
	}
	c := dial(t, srv)
	c.handshake(1)
	c.callTool(mcp.ToolGetWorkspaceFolders, nil)
}

// Idle and slow requests time out: a connection kept alive after a
// request, and an SSE POST whose body trickles in.
func TestSlowAndIdleConnectionsTimeOut(t *testing.T) {
	srv := startServer(t, &ideserver.Options{Transport: lockfile.TransportSSE, NoLockfile: true, RequestTimeout: 500 * time.Millisecond})
	c := dialSSE(t, srv)
	addr := strings.TrimPrefix(c.base, "http://")
	tok := mcp.AuthHeader + ": " + srv.AuthToken() + "\r\n"

	// Idle after a good POST.
	body := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	conn, br, status := rawRequest(t, addr, fmt.Sprintf("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Length: %d\r\n\r\n%s", c.endpoint, tok, len(body), body))
	if !strings.HasPrefix(status, "202") {
		t.Fatalf("POST: %s", status)
	}
	if !closedWithin(conn, br, 5*time.Second) {
		t.Error("an idle kept-alive connection stayed open")
	}

	// A body that trickles in, one byte every 100 ms.
	conn, err := net.DialTimeout("tcp", addr, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Length: 1000\r\n\r\n", c.endpoint, tok)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		io.Copy(io.Discard, conn) // until the server answers and closes
	}()
	for i := 0; ; i++ {
		select {
		case <-ended:
			return
		case <-time.After(100 * time.Millisecond):
		}
		if i == 100 {
			t.Fatal("a trickling POST body was still being read after 10 s")
		}
		conn.Write([]byte(" "))
	}
}

// A link inside the workspace that another process keeps swapping between
// a file inside and one outside never lets a tool read the outside file:
// confinement is judged on the descriptor that was opened, not only on a
// resolution made before the open.
func TestConfinementLinkSwapRace(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	writeText(t, filepath.Join(ws, "a.s"), "fine\n")
	secret := filepath.Join(outside, "secret.s")
	writeText(t, secret, strings.Repeat("SECRET\n", 50))
	var mu sync.Mutex
	policyLeaks := 0
	srv := startServer(t, &ideserver.Options{WorkspaceFolders: []string{ws}, NoLockfile: true,
		DiffPolicy: ideserver.DiffPolicyFunc(func(_ context.Context, req *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
			if strings.Contains(req.OldContents, "SECRET") {
				mu.Lock()
				policyLeaks++
				mu.Unlock()
			}
			return ideserver.DiffDecision{Action: ideserver.DiffReject}, nil
		})})
	c := dial(t, srv)
	c.handshake(1)

	flip, tmp := filepath.Join(ws, "flip.s"), filepath.Join(ws, ".flip.tmp")
	if err := os.Symlink("a.s", flip); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	swapped := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				swapped <- n
				return
			default:
			}
			target := "a.s"
			if n%2 == 0 {
				target = secret
			}
			if os.Symlink(target, tmp) == nil && os.Rename(tmp, flip) == nil {
				n++
			}
		}
	}()

	served, refused, lineLeaks := 0, 0, 0
	for i := 0; i < 3000; i++ {
		var m *jsonrpc.Message
		if i%2 == 0 {
			m = c.call("tools/call", map[string]any{"name": mcp.ToolOpenFile, "arguments": map[string]any{"filePath": flip}})
		} else {
			m = c.call("tools/call", map[string]any{"name": mcp.ToolOpenDiff, "arguments": map[string]any{
				"old_file_path": flip, "new_file_path": flip, "new_file_contents": "x", "tab_name": fmt.Sprint("t", i)}})
		}
		switch {
		case m.Error != nil:
			refused++
		case strings.Contains(string(m.Result), `\"lineCount\":50`):
			lineLeaks++
		default:
			served++
		}
	}
	close(stop)
	swaps := <-swapped
	mu.Lock()
	defer mu.Unlock()
	t.Logf("3000 calls during %d swaps: %d served, %d refused, %d line counts and %d old texts of the outside file", swaps, served, refused, lineLeaks, policyLeaks)
	if lineLeaks != 0 || policyLeaks != 0 {
		t.Errorf("the outside file was read: its line count %d times, its text handed to the diff policy %d times", lineLeaks, policyLeaks)
	}
	if served == 0 || refused == 0 || swaps < 100 {
		t.Errorf("the race was not exercised: %d served, %d refused, %d swaps", served, refused, swaps)
	}
}
