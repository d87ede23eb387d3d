package idebridge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/lockfile"
	"github.com/idebridge/idebridge/mcp"
)

// Interoperability of the client with the server kit (package ideserver),
// over both transports, on loopback.

var transports = []string{lockfile.TransportWS, lockfile.TransportSSE}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// startServer runs an ideserver over transport in a temporary workspace.
func startServer(t *testing.T, transport string, opts *ideserver.Options) (*ideserver.Server, string) {
	t.Helper()
	dir := t.TempDir()
	o := ideserver.Options{}
	if opts != nil {
		o = *opts
	}
	o.Transport = transport
	o.WorkspaceFolders = []string{dir}
	if o.LockfileDir == "" {
		o.NoLockfile = true
	}
	srv, err := ideserver.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, dir
}

func dial(t *testing.T, srv *ideserver.Server, opts *idebridge.ClientOptions) *idebridge.Client {
	t.Helper()
	c, err := idebridge.DialURL(ctxFor(t), srv.URL(), srv.AuthToken(), opts)
	if err != nil {
		t.Fatalf("DialURL %s: %v", srv.URL(), err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestInteropDefaultTools(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			srv, dir := startServer(t, tr, &ideserver.Options{DiffPolicy: ideserver.AcceptDiffs, ToolsPageSize: 2})
			file := filepath.Join(dir, "main.go")
			if err := os.WriteFile(file, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			c := dial(t, srv, &idebridge.ClientOptions{ClientName: "interop"})
			ctx := ctxFor(t)
			if c.ProtocolVersion() != "2024-11-05" {
				t.Errorf("protocol %q, want the deployed IDEs' 2024-11-05", c.ProtocolVersion())
			}
			tools, err := c.Tools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			names := map[string]bool{}
			for _, tl := range tools {
				names[tl.Name] = true
			}
			for _, want := range []string{"openDiff", "openFile", "getWorkspaceFolders", "getOpenEditors", "checkDocumentDirty", "saveDocument", "closeAllDiffTabs"} {
				if !names[want] {
					t.Errorf("tools/list (pages of 2) lacks %s: %v", want, names)
				}
			}
			wf, err := c.GetWorkspaceFolders(ctx)
			if err != nil || len(wf.Folders) != 1 || wf.Folders[0].Path != dir {
				t.Errorf("getWorkspaceFolders: %+v, %v", wf, err)
			}
			of, err := c.OpenFile(ctx, idebridge.OpenFileArgs{FilePath: file})
			if err != nil || of.FilePath != file || of.LineCount != 3 {
				t.Errorf("openFile: %+v, %v", of, err)
			}
			eds, err := c.GetOpenEditors(ctx)
			if err != nil || len(eds) != 1 || eds[0].Path != file {
				t.Errorf("getOpenEditors: %+v, %v", eds, err)
			}
			if st, err := c.CheckDocumentDirty(ctx, file); err != nil || st.IsDirty {
				t.Errorf("checkDocumentDirty: %+v, %v", st, err)
			}
			if _, err := c.SaveDocument(ctx, file); err != nil {
				t.Errorf("saveDocument: %v", err)
			}
			// 5 MiB through openDiff: one frame over WebSocket (proven
			// frame by frame in transport_ws_test.go), one POST over SSE.
			big := strings.Repeat("// a line of a large generated file\n", 5<<20/36+1)
			out, err := c.OpenDiff(ctx, idebridge.OpenDiffArgs{OldPath: file, NewContents: big})
			if err != nil || out.Status != idebridge.EditAccepted || out.FinalText != big {
				t.Fatalf("5 MiB openDiff: kind %v, %d bytes back, %v", out.Status, len(out.FinalText), err)
			}
			if err := c.CloseTab(ctx, out.TabName); err != nil {
				t.Errorf("close_tab: %v", err)
			}
			if n, err := c.CloseAllDiffTabs(ctx); err != nil || n != 0 {
				t.Errorf("closeAllDiffTabs: %d, %v", n, err)
			}
			var te *mcp.ToolError
			if _, err := c.CallTool(ctx, "noSuchTool", nil); !errors.As(err, &te) || te.Code != mcp.CodeMethodNotFound {
				t.Errorf("unknown tool: %v", err)
			}
			cl := srv.Clients()
			if len(cl) != 1 || cl[0].Name != "interop" || cl[0].PID != os.Getpid() {
				t.Errorf("server sees clients %+v", cl)
			}
		})
	}
}

func TestInteropConcurrentCallsAndNotifications(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			srv, _ := startServer(t, tr, nil)
			const notes = 5
			err := srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: "echo"}, Handler: func(ctx context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
				var a struct {
					N      int  `json:"n"`
					Notify bool `json:"notify"`
				}
				if err := call.Bind(&a); err != nil {
					return nil, err
				}
				if a.Notify {
					for i := range notes {
						srv.Notify(mcp.MethodSelectionChanged, map[string]any{"text": fmt.Sprint(i), "filePath": "/p", "selection": nil})
					}
				}
				return mcp.TextResult(fmt.Sprint(a.N * 2)), nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			c := dial(t, srv, nil)
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 25 {
						n := w*100 + i
						r, err := c.CallTool(ctxFor(t), "echo", map[string]any{"n": n, "notify": i == 0})
						if err != nil {
							t.Errorf("call %d: %v", n, err)
							return
						}
						if r.Text() != fmt.Sprint(n*2) {
							t.Errorf("call %d answered %q", n, r.Text())
						}
					}
				}()
			}
			wg.Wait()
			// Eight calls each broadcast five notifications.
			for i := range 8 * notes {
				select {
				case n := <-c.Notifications():
					if sel, err := n.SelectionChanged(); err != nil || sel.FilePath != "/p" || sel.Selection != nil {
						t.Fatalf("notification %d: %+v, %v", i, sel, err)
					}
				case <-ctxFor(t).Done():
					t.Fatalf("only %d notifications arrived", i)
				}
			}
		})
	}
}

func TestInteropCancellation(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			srv, _ := startServer(t, tr, nil)
			causes := make(chan error, 1)
			started := make(chan struct{}, 1)
			srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: "block"}, Handler: func(ctx context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
				started <- struct{}{}
				<-ctx.Done()
				causes <- context.Cause(ctx)
				return nil, ctx.Err()
			}})
			c := dial(t, srv, nil)
			ctx, cancel := context.WithCancel(ctxFor(t))
			errc := make(chan error, 1)
			go func() {
				_, err := c.CallTool(ctx, "block", nil)
				errc <- err
			}()
			<-started
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled call: %v", err)
			}
			if cause := <-causes; !errors.Is(cause, ideserver.ErrRequestCancelled) {
				t.Fatalf("the server's handler ended with %v, want ErrRequestCancelled (notifications/cancelled)", cause)
			}
			if _, err := c.GetWorkspaceFolders(ctxFor(t)); err != nil {
				t.Fatalf("after a cancelled call: %v", err)
			}
		})
	}
}

func TestInteropAuthAndVersions(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			srv, _ := startServer(t, tr, nil)
			if _, err := idebridge.DialURL(ctxFor(t), srv.URL(), "not-the-token", nil); !errors.Is(err, idebridge.ErrAuthFailed) {
				t.Errorf("bad token: %v, want ErrAuthFailed", err)
			}
			if _, err := idebridge.DialURL(ctxFor(t), srv.URL(), "", nil); !errors.Is(err, idebridge.ErrAuthFailed) {
				t.Errorf("no token: %v, want ErrAuthFailed", err)
			}
			for _, v := range mcp.SupportedProtocolVersions() {
				srv, _ := startServer(t, tr, &ideserver.Options{ProtocolVersion: v})
				if c := dial(t, srv, nil); c.ProtocolVersion() != v {
					t.Errorf("server speaking %s: client says %s", v, c.ProtocolVersion())
				}
			}
			srv2, _ := startServer(t, tr, &ideserver.Options{ProtocolVersion: "2024-01-01"})
			if _, err := idebridge.DialURL(ctxFor(t), srv2.URL(), srv2.AuthToken(), nil); !errors.Is(err, idebridge.ErrUnsupportedProtocol) {
				t.Errorf("unknown version: %v, want ErrUnsupportedProtocol", err)
			}
		})
	}
}

func TestInteropConnectFromLockfile(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			lockDir := t.TempDir()
			srv, _ := startServer(t, tr, &ideserver.Options{LockfileDir: lockDir})
			data, err := os.ReadFile(srv.LockfilePath())
			if err != nil {
				t.Fatal(err)
			}
			lf, err := lockfile.Parse(srv.LockfilePath(), data)
			if err != nil {
				t.Fatal(err)
			}
			c, err := idebridge.Connect(ctxFor(t), idebridge.Candidate{Port: lf.Port, Transport: lf.Transport, AuthToken: lf.AuthToken}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.GetWorkspaceFolders(ctxFor(t)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestInteropRefusedPingKeepsSSEAlive(t *testing.T) {
	pings := make(chan struct{}, 100)
	log := slog.New(methodCounter{method: "ping", seen: pings})
	srv, _ := startServer(t, lockfile.TransportSSE, &ideserver.Options{RefusePing: true, Logger: log})
	c := dial(t, srv, &idebridge.ClientOptions{PingInterval: 100 * time.Millisecond})
	// Five keep-alive rounds answered -32601, and the connection stands.
	for range 5 {
		<-pings
	}
	if _, err := c.GetWorkspaceFolders(ctxFor(t)); err != nil || c.Err() != nil {
		t.Fatalf("%v, %v", err, c.Err())
	}
}

// methodCounter is a slog.Handler that signals every "received" debug
// record of the server for one method.
type methodCounter struct {
	method string
	seen   chan struct{}
}

func (h methodCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h methodCounter) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h methodCounter) WithGroup(string) slog.Handler            { return h }
func (h methodCounter) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "method" && a.Value.String() == h.method {
			select {
			case h.seen <- struct{}{}:
			default:
			}
			return false
		}
		return true
	})
	return nil
}

// The tests below run the IDE in a child process (this test binary started
// again), so that it can die (SIGKILL) or freeze (SIGSTOP: the kernel keeps
// the TCP connection, nobody reads it, nobody answers pings: a half-open
// connection) at a chosen moment.

// TestHelperIDEServer is the child: not a test of its own.
func TestHelperIDEServer(t *testing.T) {
	tr := os.Getenv("IDEBRIDGE_IDESERVER_CHILD")
	if tr == "" {
		return
	}
	// Unconfined: the parent's openDiff names a path of its own.
	srv, err := ideserver.New(&ideserver.Options{Transport: tr, WorkspaceFolders: []string{t.TempDir()}, NoLockfile: true, Unconfined: true})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: "block"}, Handler: func(ctx context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
		mu.Lock()
		fmt.Println("CALLED")
		mu.Unlock()
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	mu.Lock()
	fmt.Println("URL", srv.URL(), srv.AuthToken())
	mu.Unlock()
	io.Copy(io.Discard, os.Stdin) // until the parent goes away
}

type childIDE struct {
	cmd   *exec.Cmd
	lines *bufio.Scanner
	url   string
	token string
}

func startChildIDE(t *testing.T, transport string) *childIDE {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperIDEServer$", "-test.count=1")
	cmd.Env = append(os.Environ(), "IDEBRIDGE_IDESERVER_CHILD="+transport)
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
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	ch := &childIDE{cmd: cmd, lines: bufio.NewScanner(stdout)}
	for ch.lines.Scan() {
		if f := strings.Fields(ch.lines.Text()); len(f) == 3 && f[0] == "URL" {
			ch.url, ch.token = f[1], f[2]
			return ch
		}
	}
	t.Fatalf("the child IDE did not start: %v", ch.lines.Err())
	return nil
}

// waitCalled waits until the child has received n calls.
func (ch *childIDE) waitCalled(t *testing.T, n int) {
	t.Helper()
	for n > 0 && ch.lines.Scan() {
		if ch.lines.Text() == "CALLED" {
			n--
		}
	}
	if n > 0 {
		t.Fatalf("the child IDE stopped before receiving every call: %v", ch.lines.Err())
	}
}

func TestInteropServerDiesOrFreezesMidCall(t *testing.T) {
	for _, tr := range transports {
		for _, how := range []string{"dies", "freezes"} {
			t.Run(tr+"/"+how, func(t *testing.T) {
				if how == "freezes" && !canFreeze {
					t.Skip("this system cannot freeze a process with its sockets open (no SIGSTOP)")
				}
				ch := startChildIDE(t, tr)
				opts := &idebridge.ClientOptions{CallTimeout: -1, PingInterval: -1}
				if how == "freezes" {
					opts.PingInterval = 200 * time.Millisecond
				}
				c, err := idebridge.DialURL(ctxFor(t), ch.url, ch.token, opts)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				const n = 6
				errs := make(chan error, n)
				for i := range n {
					go func() {
						var err error
						if i%2 == 0 {
							_, err = c.CallTool(context.Background(), "block", nil)
						} else {
							// openDiff has no deadline of its own: only
							// the connection's death can end it here.
							_, err = c.OpenDiff(context.Background(), idebridge.OpenDiffArgs{OldPath: "/x", NewContents: "y"})
						}
						errs <- err
					}()
				}
				ch.waitCalled(t, n/2) // the blocking tool calls are in; openDiffs wait for the (rejecting) policy or are in flight
				switch how {
				case "dies":
					ch.cmd.Process.Kill()
				case "freezes":
					if err := freezeProcess(ch.cmd.Process); err != nil {
						t.Fatal(err)
					}
				}
				for range n {
					err := <-errs
					// openDiffs may already have been answered by the
					// child's default (rejecting) policy before it went.
					var ok bool
					if err == nil {
						ok = true
					} else {
						ok = errors.Is(err, idebridge.ErrConnectionLost)
					}
					if !ok {
						t.Errorf("pending call: %v, want ErrConnectionLost", err)
					}
				}
				<-c.Done()
				if !errors.Is(c.Err(), idebridge.ErrConnectionLost) {
					t.Errorf("Err() = %v", c.Err())
				}
				if how == "freezes" && !strings.Contains(c.Err().Error(), "keep-alive") {
					t.Errorf("a frozen IDE should be caught by the keep-alive: %v", c.Err())
				}
			})
		}
	}
}

func TestInteropOpenDiffPolicies(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			decide := make(chan ideserver.DiffDecision, 1)
			srv, dir := startServer(t, tr, &ideserver.Options{DiffPolicy: ideserver.DiffPolicyFunc(func(ctx context.Context, req *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
				select {
				case d := <-decide:
					return d, nil
				case <-ctx.Done():
					return ideserver.DiffDecision{}, ctx.Err()
				}
			})})
			file := filepath.Join(dir, "a.txt")
			os.WriteFile(file, []byte("old\n"), 0o644)
			c := dial(t, srv, &idebridge.ClientOptions{CallTimeout: 50 * time.Millisecond})
			for _, tc := range []struct {
				d    ideserver.DiffDecision
				kind idebridge.EditStatus
				text string
			}{
				{ideserver.SaveDiff("edited by the user\n"), idebridge.EditAccepted, "edited by the user\n"},
				{ideserver.DiffDecision{Action: ideserver.DiffCloseTab}, idebridge.EditTabClosed, "proposed\n"},
				{ideserver.DiffDecision{Action: ideserver.DiffReject}, idebridge.EditRejected, ""},
			} {
				errc := make(chan error, 1)
				var out *idebridge.DiffOutcome
				go func() {
					var err error
					out, err = c.OpenDiff(ctxFor(t), idebridge.OpenDiffArgs{OldPath: file, NewContents: "proposed\n"})
					errc <- err
				}()
				// Longer than CallTimeout: openDiff waits for the user.
				time.Sleep(120 * time.Millisecond)
				decide <- tc.d
				if err := <-errc; err != nil {
					t.Fatalf("%v: %v", tc.d.Action, err)
				}
				if out.Status != tc.kind || out.FinalText != tc.text {
					t.Errorf("%v: outcome %v %q, want %v %q", tc.d.Action, out.Status, out.FinalText, tc.kind, tc.text)
				}
			}
		})
	}
}

func TestInteropJSONAnswersDecode(t *testing.T) {
	// ideserver escapes slashes in JSON texts as deployed IDEs do.
	srv, dir := startServer(t, lockfile.TransportWS, nil)
	c := dial(t, srv, nil)
	r, err := c.CallTool(ctxFor(t), mcp.ToolGetWorkspaceFolders, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Text(), `\/`) {
		t.Errorf("expected escaped slashes in %s", r.Text())
	}
	var v struct {
		RootPath string `json:"rootPath"`
	}
	if err := json.Unmarshal([]byte(r.Text()), &v); err != nil || v.RootPath != dir {
		t.Errorf("%+v, %v", v, err)
	}
}
