package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `idebridge mcp`, the built command run from a directory outside the
// checkout as a client starts it, refuses every tool's path outside its
// --project (issue 19 row 1): a system file, an absolute path, a relative
// path out, a link inside the project to a file outside. A path inside is
// served.
func TestMCPCommandConfinesPaths(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "idebridge")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building idebridge: %v\n%s", err, out)
	}
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"go.mod":  "module example.com/m\n\ngo 1.22\n",
		"main.go": "package main\n\n// Answer is the answer.\nconst Answer = 42\n\nfunc main() {}\n",
	} {
		writeText(t, filepath.Join(proj, name), text)
	}
	secret := filepath.Join(root, "secret", "secret.go")
	writeText(t, secret, "package main\n\n// Key is secret.\nconst Key = \"s3cr3t-value\"\n")
	if err := os.Symlink(secret, filepath.Join(proj, "link.go")); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir() // the working directory: neither the project nor the checkout
	var lines []string
	add := func(m map[string]any) {
		b, _ := json.Marshal(m)
		lines = append(lines, string(b))
	}
	add(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}})
	add(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	type call struct {
		tool string
		args map[string]any
	}
	calls := []call{}
	for _, p := range []string{"/etc/passwd", secret, "../secret/secret.go", "link.go"} {
		calls = append(calls,
			call{"hover", map[string]any{"file": p, "line": 4, "column": 7}},
			call{"document_symbols", map[string]any{"file": p}},
			call{"diagnostics", map[string]any{"files": []string{p}}})
	}
	calls = append(calls, call{"hover", map[string]any{"file": "main.go", "line": 4, "symbol": "Answer"}})
	for i, c := range calls {
		add(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": map[string]any{"name": c.tool, "arguments": c.args}})
	}
	env := mcpEnv(t)
	environ := make([]string, 0, len(env))
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), mcpTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "mcp", "--project", proj, "--no-plugins", "--no-ide")
	cmd.Dir, cmd.Env = elsewhere, environ
	// The answers come as the calls finish; the input stays open until
	// the last has come.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(stdin, strings.Join(lines, "\n"))
	answers := map[int]string{}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	for len(answers) < len(calls)+1 && sc.Scan() {
		var m struct {
			ID     *int
			Result struct {
				Content []struct{ Text string }
				IsError bool
			}
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		text := ""
		for _, c := range m.Result.Content {
			text += c.Text
		}
		answers[*m.ID] = fmt.Sprintf("isError=%v %s", m.Result.IsError, text)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("idebridge mcp: %v\nstderr:\n%s", err, stderr.String())
	}
	for i, c := range calls {
		got := answers[i+1]
		inside := c.args["file"] == "main.go"
		switch {
		case inside && !strings.Contains(got, "const Answer untyped int = 42"):
			t.Errorf("%s %v inside the project: %s", c.tool, c.args, got)
		case !inside && (!strings.HasPrefix(got, "isError=true") || !strings.Contains(got, "is outside the project ("+proj+")")):
			t.Errorf("%s %v: %s\nwant it refused as outside the project", c.tool, c.args, got)
		}
		if strings.Contains(got, "s3cr3t") {
			t.Errorf("%s %v showed the secret: %s", c.tool, c.args, got)
		}
	}
}
