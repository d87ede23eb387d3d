package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRuntimeSharedPyright: two `idebridge mcp` processes on one Python
// project share one pyright in the runtime, and a SIGKILL of the runtime
// leaves no pyright process behind (node and whatever it started).
func TestRuntimeSharedPyright(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs pyright")
	}
	bin, err := buildCommand()
	if err != nil {
		t.Fatalf("building idebridge: %v", err)
	}
	pyright := filepath.Join(lspBin(t, "pyright-langserver"), "pyright-langserver")
	dir := t.TempDir()
	src := filepath.Join("..", "..", "lsp", "testdata", "conformance", "python")
	for _, name := range []string{"broken.py", "clean.py"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		writeText(t, filepath.Join(dir, name), string(data))
	}
	writeConfig(t, dir, map[string]any{"python": map[string]any{
		"command": pyright, "args": []string{"--stdio"}, "extensionToLanguage": map[string]string{".py": "python"},
	}})
	rtDir := filepath.Join(shortDir(t), "rt")
	env := rtEnv(t, rtDir, time.Minute)
	want := `"undefined_name" is not defined`
	a := startRTClient(t, bin, dir, env, "--no-ide", "--config", "lsp.json")
	a.diagnose("broken.py", want)
	b := startRTClient(t, bin, dir, env, "--no-ide", "--config", "lsp.json")
	b.diagnose("broken.py", want)

	socks, _ := filepath.Glob(filepath.Join(rtDir, "*.sock"))
	if len(socks) != 1 {
		t.Fatalf("runtime sockets %v, want one", socks)
	}
	build := strings.TrimSuffix(filepath.Base(socks[0]), ".sock")
	st, err := rtStatus(t, rtDir, build)
	if err != nil {
		t.Fatal(err)
	}
	server := 0
	if len(st.Projects) == 1 {
		for _, s := range st.Projects[0].Servers {
			switch {
			case s.Name == "python" && s.State == "running":
				server = s.PID
			case s.State == "running":
				t.Errorf("server %s runs too", s.Name) // the built-in gopls has no .go file to start for
			}
		}
	}
	if len(st.Projects) != 1 || len(st.Projects[0].Sessions) != 2 || server == 0 {
		t.Fatalf("two clients on one Python project: status %+v, want one project, two sessions, pyright running", st)
	}
	tree := descendants(server)
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pyright and everything it started to die with the runtime", func() bool {
		for _, p := range append(tree, server, st.PID) {
			if alive(p) {
				return false
			}
		}
		return true
	})
	b.diagnose("broken.py", want)
	a.in.Close()
	b.in.Close()
	a.cmd.Wait()
	b.cmd.Wait()
	stop := exec.Command(bin, "runtime", "stop")
	stop.Env = env
	stop.Run()
}

// descendants are the processes below pid now (from /proc/*/stat).
func descendants(pid int) []int {
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 {
			continue
		}
		p, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		pp, _ := strconv.Atoi(fields[1])
		children[pp] = append(children[pp], p)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}
