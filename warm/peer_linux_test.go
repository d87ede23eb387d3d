package warm

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOtherUserRefused connects as another user (uid 65534, the test runs
// as root): the 0700 directory keeps it from the socket, and a socket it
// can reach anyway (a link to it, opened to all, in an open directory) is
// closed on it without a word by the SO_PEERCRED check.
func TestOtherUserRefused(t *testing.T) {
	if os.Getenv("WARM_TEST_DIAL") != "" {
		c, err := net.Dial("unix", os.Getenv("WARM_TEST_DIAL"))
		if err != nil {
			os.Stdout.WriteString("dial failed: " + err.Error())
			return
		}
		b, _ := io.ReadAll(bufio.NewReader(c))
		os.Stdout.WriteString("read " + string(b))
		return
	}
	if os.Getuid() != 0 {
		t.Skip("needs root to run a process as another user")
	}
	dir := runtimeDir(t)
	sock, _, _ := serveInProcess(t, &ServeOptions{Dir: dir, Build: "b1", Idle: -1})

	// The test binary, where uid 65534 may run it.
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
	dialAs := func(path string) string {
		cmd := exec.Command(exe, "-test.run=^TestOtherUserRefused$")
		cmd.Env = append(os.Environ(), "WARM_TEST_DIAL="+path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("the other user's process: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := dialAs(sock); !strings.Contains(out, "permission denied") {
		t.Errorf("another user dialing the socket in its 0700 directory: %q, want permission denied", out)
	}
	exposed := filepath.Join(pub, "exposed.sock")
	if err := os.Link(sock, exposed); err != nil {
		t.Fatal(err)
	}
	os.Chmod(exposed, 0o666)
	if out := dialAs(exposed); !strings.HasPrefix(out, "read ") || strings.Contains(out, "b1") {
		t.Errorf("another user reaching the socket: %q, want the connection closed without a hello", out)
	}
	// This user still gets in by the same path.
	c, err := net.Dial("unix", exposed)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(line, `"build":"b1"`) {
		t.Errorf("this user's hello: %q, %v", line, err)
	}
}
