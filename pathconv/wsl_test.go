package pathconv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func TestIdentity(t *testing.T) {
	for _, p := range []string{"", "/a", `C:\x`} {
		if (Identity{}).ToLocal(p) != p || (Identity{}).ToIDE(p) != p {
			t.Errorf("Identity changed %q", p)
		}
	}
	// Converters are compared to tell "no conversion" apart.
	var a, b Converter = Identity{}, Identity{}
	if a != b {
		t.Error("two Identity converters are not equal")
	}
}

func TestWSLToLocal(t *testing.T) {
	w := NewWSL("Ubuntu", nil)
	tests := []struct{ in, want string }{
		{`C:\Users\me\p`, "/mnt/c/Users/me/p"},
		{`c:\Users\me\p`, "/mnt/c/Users/me/p"},
		{`C:/Users/me/p`, "/mnt/c/Users/me/p"},
		{`C:\Users\me\p\`, "/mnt/c/Users/me/p"},
		{`D:\`, "/mnt/d"},
		{`D:`, "/mnt/d"},
		{`C:\a\\b\.\c`, "/mnt/c/a/b/c"},
		{`C:\a\..\..\b`, "/mnt/c/b"},
		{`C:\Program Files (x86)\é`, "/mnt/c/Program Files (x86)/é"},
		{`\\?\C:\long\path`, "/mnt/c/long/path"},
		{`\\wsl$\Ubuntu\home\me\p`, "/home/me/p"},
		{`\\wsl.localhost\Ubuntu\home\me\p`, "/home/me/p"},
		{`\\WSL.LOCALHOST\ubuntu\home`, "/home"},
		{`//wsl$/Ubuntu/home/me`, "/home/me"},
		{`\\wsl$\Ubuntu`, "/"},
		{`\\wsl$\Ubuntu\`, "/"},
		{`\\wsl$\Ubuntu\mnt\c\x`, "/mnt/c/x"},
		{`\\?\UNC\wsl$\Ubuntu\srv`, "/srv"},
		// Left as they are.
		{`\\wsl$\Debian\home\me`, `\\wsl$\Debian\home\me`},
		{`\\wsl.localhost\Debian\home`, `\\wsl.localhost\Debian\home`},
		{`\\server\share\x`, `\\server\share\x`},
		{`\\wsl$`, `\\wsl$`},
		{"/home/me/p", "/home/me/p"},
		{`relative\path`, `relative\path`},
		{`C:relative`, `C:relative`},
		{`1:\x`, `1:\x`},
		{"", ""},
	}
	for _, tt := range tests {
		if got := w.ToLocal(tt.in); got != tt.want {
			t.Errorf("ToLocal(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWSLToIDE(t *testing.T) {
	w := NewWSL("Ubuntu", nil)
	tests := []struct{ in, want string }{
		{"/mnt/c/Users/me/p", `C:\Users\me\p`},
		{"/mnt/c", `C:\`},
		{"/mnt/c/", `C:\`},
		{"/mnt/d/x/../y", `D:\y`},
		{"/home/me/p", `\\wsl$\Ubuntu\home\me\p`},
		{"/", `\\wsl$\Ubuntu\`},
		{"/mnt", `\\wsl$\Ubuntu\mnt`},
		{"/mnt/cc/x", `\\wsl$\Ubuntu\mnt\cc\x`},
		{"/mnt/C/x", `\\wsl$\Ubuntu\mnt\C\x`},
		{"/mnt/wsl/x", `\\wsl$\Ubuntu\mnt\wsl\x`},
		// Left as they are: relative, or not representable on Windows.
		{"rel/path", "rel/path"},
		{"", ""},
		{`/home/a\b`, `/home/a\b`},
		{"/home/a:b", "/home/a:b"},
		{"/home/what?", "/home/what?"},
		{"/home/a\nb", "/home/a\nb"},
		{`C:\already`, `C:\already`},
	}
	for _, tt := range tests {
		if got := w.ToIDE(tt.in); got != tt.want {
			t.Errorf("ToIDE(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWSLOptions(t *testing.T) {
	w := NewWSL("Arch", &WSLOptions{MountRoot: "/win/", UNCHost: "wsl.localhost"})
	if got := w.ToLocal(`E:\data`); got != "/win/e/data" {
		t.Errorf("ToLocal with mount root = %q", got)
	}
	if got := w.ToIDE("/win/e/data"); got != `E:\data` {
		t.Errorf("ToIDE with mount root = %q", got)
	}
	if got := w.ToIDE("/mnt/c/x"); got != `\\wsl.localhost\Arch\mnt\c\x` {
		t.Errorf("ToIDE outside the mount root = %q", got)
	}
	if w.Distro() != "Arch" {
		t.Errorf("Distro = %q", w.Distro())
	}

	// Drives mounted at the root (automount root = /).
	r := NewWSL("Arch", &WSLOptions{MountRoot: "/"})
	if got := r.ToLocal(`C:\x`); got != "/c/x" {
		t.Errorf("ToLocal with root mount = %q", got)
	}
	if got, back := r.ToIDE("/c/x"), r.ToIDE("/c"); got != `C:\x` || back != `C:\` {
		t.Errorf("ToIDE with root mount = %q, %q", got, back)
	}
	if got := r.ToIDE("/home"); got != `\\wsl$\Arch\home` {
		t.Errorf("ToIDE(/home) with root mount = %q", got)
	}

	// Without a distribution only drive paths convert.
	n := NewWSL("", nil)
	if got := n.ToIDE("/home/me"); got != "/home/me" {
		t.Errorf("ToIDE without distro = %q", got)
	}
	if got := n.ToLocal(`\\wsl$\Ubuntu\home`); got != `\\wsl$\Ubuntu\home` {
		t.Errorf("ToLocal without distro = %q", got)
	}
	if got := n.ToIDE("/mnt/z"); got != `Z:\` {
		t.Errorf("ToIDE(/mnt/z) without distro = %q", got)
	}
}

func TestWSLPathTimeoutNegativeIsOff(t *testing.T) {
	calls := 0
	tool := func(context.Context, bool, string) (string, error) {
		calls++
		return "/from/the/tool", nil
	}
	off := NewWSL("Ubuntu", &WSLOptions{WSLPath: tool, WSLPathTimeout: -1})
	if got := off.ToLocal(`C:\x`); got != "/mnt/c/x" || calls != 0 {
		t.Errorf("negative timeout: ToLocal = %q after %d tool calls; want the pure-Go answer and no call", got, calls)
	}
	on := NewWSL("Ubuntu", &WSLOptions{WSLPath: tool})
	if got := on.ToLocal(`C:\x`); got != "/from/the/tool" || calls != 1 {
		t.Errorf("zero timeout: ToLocal = %q after %d tool calls; want the tool's answer (the default timeout)", got, calls)
	}
}

func TestWSLRoundTrip(t *testing.T) {
	w := NewWSL("Ubuntu", nil)
	for _, p := range []string{"/", "/mnt", "/mnt/c", "/mnt/c/Users/me/p", "/home/me/a b/ü", "/mnt/z/x/y", "/..."} {
		win := w.ToIDE(p)
		if win == p {
			t.Errorf("ToIDE(%q) did not convert", p)
		}
		if back := w.ToLocal(win); back != p {
			t.Errorf("ToLocal(ToIDE(%q)) = ToLocal(%q) = %q", p, win, back)
		}
	}
}

// writeScript writes an executable shell script standing in for wslpath.
func writeScript(t *testing.T, body string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Fatal("shell scripts need a Unix system")
	}
	path := filepath.Join(t.TempDir(), "wslpath")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestWSLPathTool(t *testing.T) {
	calls := filepath.Join(t.TempDir(), "calls")
	// Answers like a real wslpath would for drive paths, counts its calls,
	// and fails for anything under C:\fail.
	script := writeScript(t, `printf '%s %s\n' "$1" "$2" >> `+calls+`
case "$2" in
  *fail*) printf 'wslpath: %s: error\n' "$2" >&2; exit 1;;
esac
if [ "$1" = "-w" ]; then printf '%s\n' 'X:\from-tool'; else printf '/from/tool\n'; fi
`)
	w := NewWSL("Ubuntu", &WSLOptions{WSLPath: CommandWSLPath(script)})

	if got := w.ToIDE("/mnt/c/a"); got != `X:\from-tool` {
		t.Errorf("ToIDE = %q, want the tool's answer", got)
	}
	if got := w.ToLocal(`C:\a`); got != "/from/tool" {
		t.Errorf("ToLocal = %q, want the tool's answer", got)
	}
	// Cached: the tool is not asked again.
	w.ToIDE("/mnt/c/a")
	w.ToLocal(`C:\a`)
	// Not recognised by the pure-Go code: the tool is not asked at all.
	if got := w.ToLocal(`\\wsl$\Debian\x`); got != `\\wsl$\Debian\x` {
		t.Errorf("other distro = %q", got)
	}
	// The tool fails: the pure-Go answer is used.
	if got := w.ToLocal(`C:\fail\x`); got != "/mnt/c/fail/x" {
		t.Errorf("ToLocal with a failing tool = %q", got)
	}
	data, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	want := "-w /mnt/c/a\n-u C:\\a\n-u C:\\fail\\x\n"
	if string(data) != want {
		t.Errorf("tool calls:\n%s\nwant:\n%s", data, want)
	}
}

func TestCommandWSLPathErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := CommandWSLPath(filepath.Join(t.TempDir(), "missing"))(ctx, true, "/x"); err == nil {
		t.Error("a missing tool succeeded")
	}
	empty := writeScript(t, "exit 0\n")
	if _, err := CommandWSLPath(empty)(ctx, true, "/x"); err == nil {
		t.Error("empty output accepted")
	}
	twoLines := writeScript(t, "echo a; echo b\n")
	if _, err := CommandWSLPath(twoLines)(ctx, true, "/x"); err == nil {
		t.Error("two lines of output accepted")
	}
	crlf := writeScript(t, `printf 'C:\\x\r\n'`+"\n")
	if got, err := CommandWSLPath(crlf)(ctx, true, "/x"); err != nil || got != `C:\x` {
		t.Errorf("CRLF output = %q, %v", got, err)
	}
	slow := writeScript(t, "exec sleep 10\n")
	w := NewWSL("U", &WSLOptions{WSLPath: CommandWSLPath(slow), WSLPathTimeout: 50_000_000})
	if got := w.ToIDE("/mnt/c/x"); got != `C:\x` {
		t.Errorf("timed-out tool: ToIDE = %q, want the pure-Go answer", got)
	}
}

func TestWSLConcurrent(t *testing.T) {
	script := writeScript(t, `printf 'tool:%s\n' "$2"`+"\n")
	w := NewWSL("Ubuntu", &WSLOptions{WSLPath: CommandWSLPath(script)})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 5 {
				p := fmt.Sprintf("/mnt/c/%d", (i+j)%3)
				if got := w.ToIDE(p); !strings.HasPrefix(got, "tool:") {
					t.Errorf("ToIDE(%q) = %q", p, got)
				}
			}
		}()
	}
	wg.Wait()
}

func TestSystemWSLPath(t *testing.T) {
	// Present or not, the result must be usable as an option.
	w := NewWSL("Ubuntu", &WSLOptions{WSLPath: SystemWSLPath()})
	if got := w.ToLocal(`C:\Windows`); got != "/mnt/c/Windows" {
		t.Errorf("ToLocal = %q", got)
	}
}
