package warm

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/idebridge/idebridge/lsp"
)

// TestHTTPSharesGoplsWithStdio: a Streamable HTTP client and a stdio
// session on one project share one gopls: both navigate on it, and status
// shows one project, one server and two sessions, the HTTP one naming its
// client. The HTTP client's requests go over TCP with the token, and over
// the unix socket without one.
func TestHTTPSharesGoplsWithStdio(t *testing.T) {
	gopls, err := lsp.FindGopls(os.Getenv)
	if err != nil {
		t.Fatalf("this test needs gopls: %v", err)
	}
	mod := goModule(t)
	p := &Project{Dir: mod, Configs: []lsp.ServerConfig{lsp.GoplsConfig(gopls, mod)}, NoIDE: true}
	co, st, _ := httpServe(t, &ServeOptions{Env: append(os.Environ(), "GOPLSCACHE="+t.TempDir(), "GOPROXY=off"),
		HTTP: HTTPOptions{Project: fixedProject(p)}})

	stdio := openSession(t, co, p)
	if h := stdio.call("hover", map[string]any{"file": "main.go", "line": 6, "column": 14}); !strings.Contains(h, "greet says hello") {
		t.Fatalf("hover over stdio: %q", h)
	}
	h := tcpClient(t, st, mod)
	h.initialize("http-client")
	if d := h.call("definition", map[string]any{"file": "main.go", "line": 6, "column": 14}); !strings.Contains(d, "greet.go:4") {
		t.Fatalf("definition over HTTP: %q", d)
	}
	st, err = GetStatus(context.Background(), co)
	if err != nil || len(st.Projects) != 1 || len(st.Projects[0].Servers) != 1 || len(st.Projects[0].Sessions) != 2 {
		t.Fatalf("status: %+v, %v; want one project, one server, two sessions", st, err)
	}
	ps := st.Projects[0]
	if ps.Sessions[0].Transport != "" || ps.Sessions[1].Transport != "http" || ps.Sessions[1].Client != "http-client 1" {
		t.Errorf("sessions %+v: want the stdio one, then the HTTP one naming its client", ps.Sessions)
	}
	if !strings.Contains(strings.Join(ps.Clients, ","), "http-client 1") || !strings.Contains(strings.Join(ps.Clients, ","), "warm-test 1") {
		t.Errorf("clients %q: want both", ps.Clients)
	}
	u := unixClient(t, st.HTTP.Socket, mod)
	u.initialize("unix-client")
	if r := u.call("references", map[string]any{"file": "greet.go", "line": 4, "column": 6}); !strings.Contains(r, "main.go:6") {
		t.Fatalf("references over the unix socket: %q", r)
	}
	st, _ = GetStatus(context.Background(), co)
	if len(st.Projects) != 1 || len(st.Projects[0].Servers) != 1 || st.Sessions != 3 {
		t.Errorf("status after the unix client: %+v", st)
	}
}

// TestHTTPOtherUserRefused: another user (uid 65534; the test runs as
// root) reaching the runtime's HTTP socket anyway (a link to it, opened to
// all) has its connection closed without an answer.
func TestHTTPOtherUserRefused(t *testing.T) {
	if sock := os.Getenv("WARM_TEST_HTTP_DIAL"); sock != "" {
		c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		}}}
		resp, err := c.Post(HTTPURL("http://localhost/mcp", os.Getenv("WARM_TEST_HTTP_PROJECT")), "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		if err != nil {
			os.Stdout.WriteString("failed: " + err.Error())
			return
		}
		b, _ := io.ReadAll(resp.Body)
		os.Stdout.WriteString("answered " + resp.Status + " " + string(b))
		return
	}
	if os.Getuid() != 0 {
		t.Skip("needs root to run a process as another user")
	}
	proj := noServers(t)
	_, st, _ := httpServe(t, &ServeOptions{HTTP: HTTPOptions{Project: fixedProject(proj)}})
	pub, err := os.MkdirTemp("", "warmpub")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(pub) })
	os.Chmod(pub, 0o755)
	exe := filepath.Join(pub, "warm.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	exposed := filepath.Join(pub, "exposed.sock")
	if err := os.Link(st.HTTP.Socket, exposed); err != nil {
		t.Fatal(err)
	}
	os.Chmod(exposed, 0o666)
	dialAs := func(uid uint32) string {
		cmd := exec.Command(exe, "-test.run=^TestHTTPOtherUserRefused$")
		cmd.Env = append(os.Environ(), "WARM_TEST_HTTP_DIAL="+exposed, "WARM_TEST_HTTP_PROJECT="+proj.Dir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("the dialing process: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := dialAs(65534); !strings.HasPrefix(out, "failed: ") {
		t.Errorf("another user through a link to the HTTP socket: %q, want the connection closed unanswered", out)
	}
	if out := dialAs(0); !strings.HasPrefix(out, "answered 400") || !strings.Contains(out, "initialize") {
		t.Errorf("this user through the same link: %q, want the answer to a request outside a session", out)
	}
}
