package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// callRaw sends a tools/call and returns its whole answer.
func (c *serveClient) callRaw(tool string, args any) string {
	c.t.Helper()
	c.id++
	c.send(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	for {
		c.c.SetReadDeadline(time.Now().Add(serveTestTimeout))
		_, data, err := c.c.ReadMessage()
		if err != nil {
			c.t.Fatalf("%s: %v", tool, err)
		}
		var m struct{ ID *int }
		if json.Unmarshal(data, &m) == nil && m.ID != nil && *m.ID == c.id {
			return string(data)
		}
	}
}

// `ide serve` keeps its tools inside the workspace folders unless told
// --unconfined.
func TestServeConfinedToWorkspace(t *testing.T) {
	wd, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CLAUDE_CONFIG_DIR": t.TempDir()}

	r := startServe(t, wd, env, nil, "--diff", "reject")
	c := dialServe(t, r.info)
	for _, tool := range []string{"openFile", "saveDocument"} {
		if got := c.callRaw(tool, map[string]any{"filePath": secret}); !strings.Contains(got, "outside the workspace") {
			t.Errorf("%s outside the workspace: %s", tool, got)
		}
	}
	if got := c.callRaw("getDiagnostics", map[string]any{"uri": "file://" + secret}); !strings.Contains(got, "outside the workspace") {
		t.Errorf("getDiagnostics outside the workspace: %s", got)
	}
	r.stop()

	r = startServe(t, wd, env, nil, "--diff", "reject", "--unconfined")
	c = dialServe(t, r.info)
	if got := c.callRaw("openFile", map[string]any{"filePath": secret}); !strings.Contains(got, `"success\":true`) {
		t.Errorf("openFile with --unconfined: %s", got)
	}
}
