//go:build unix

package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The official SDK's client through the shared runtime: it lists the same
// tools as in-process, with the same schemas; its calls are answered;
// when the runtime is killed, the call after gets an answer from a new
// runtime, within the same SDK session.
func TestSDKClientThroughRuntime(t *testing.T) {
	s := newScene(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*testTimeout)
	defer cancel()
	env := s.runtimeEnv(t)
	viaRT, _ := s.mcpProcess(t, ctx, env)
	inproc, _ := s.mcpProcess(t, ctx, s.env, "--no-runtime")

	list := func(cs *mcp.ClientSession) map[string]string {
		out := map[string]string{}
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(tool)
			out[tool.Name] = string(b)
		}
		return out
	}
	got, want := list(viaRT), list(inproc)
	if len(got) != len(toolNames) {
		t.Errorf("through the runtime: %d tools, want %d", len(got), len(toolNames))
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("tool %s through the runtime:\n%s\nin-process:\n%s", name, got[name], w)
		}
	}
	callComplete(t, ctx, viaRT, "hover", transportCalls[0].args)
	res, err := viaRT.CallTool(ctx, &mcp.CallToolParams{Name: "diagnostics", Arguments: map[string]any{"files": []string{"broken.go"}}})
	if err != nil || res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "declared and not used: x") {
		t.Fatalf("diagnostics through the runtime: %v %+v", err, res)
	}

	status := func() (pid int, gopls int) {
		c := exec.Command(idebridgeBin(t), "runtime", "status", "--json")
		c.Env = env
		out, err := c.Output()
		if err != nil {
			t.Fatalf("runtime status: %v", err)
		}
		var st struct {
			PID      int
			Projects []struct{ Servers []struct{ PID int } }
		}
		if json.Unmarshal(out, &st) != nil || len(st.Projects) != 1 || len(st.Projects[0].Servers) != 1 {
			t.Fatalf("runtime status: %s", out)
		}
		return st.PID, st.Projects[0].Servers[0].PID
	}
	pid, gopls := status()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Gone: a zombie or no process. (A dying process loses its memory
	// before its sockets: VmRSS would say too early.)
	for deadline := time.Now().Add(testTimeout); running(pid) || running(gopls); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the killed runtime or its gopls is still there")
		}
	}
	callComplete(t, ctx, viaRT, "references", transportCalls[2].args)
	if newPID, _ := status(); newPID == pid {
		t.Errorf("runtime pid %d after it was killed", newPID)
	}
}

// running reports whether pid is a process that has not exited yet.
func running(pid int) bool {
	// Every thread: a process's first thread shows as a zombie while the
	// others still exit, holding its files (its sockets) open.
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/stat")
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X') {
			return true
		}
	}
	return false
}
