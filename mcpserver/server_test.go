package mcpserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/lsp"
)

// An agent with an MCP server of its own mounts the tools on it, over
// language servers it already runs (Options.Diagnostics): the tools
// answer from them, and Close leaves them running for their owner.
func TestMountOnOwnServerWithOwnDiagnostics(t *testing.T) {
	dir := t.TempDir()
	testModule(t, dir)
	env := testEnv(t)
	own, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{dir}, NoLockfile: true, NoDefaultTools: true})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	d, err := ideserver.NewDiagnostics(own, &ideserver.DiagnosticsOptions{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())
	s := newTestServer(t, dir, &Options{Diagnostics: d, NoIDE: true, Env: env})
	if err := s.srv.Register(own); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range own.Tools() {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "hover") || !slices.Contains(names, "diagnostics") || len(names) != len(s.tools) {
		t.Errorf("the own server lists %v", names)
	}
	if text := s.diagnosed("main.go").Text(); !strings.Contains(text, "declared and not used: unused") {
		t.Errorf("diagnostics from the agent's servers:\n%s", text)
	}
	if u := s.srv.Underlying(); u == own || len(u.Tools()) != len(s.tools) {
		t.Errorf("the underlying server lists %d tools", len(u.Tools()))
	}
	if err := s.srv.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	reps, err := d.Check(ctx, []string{"main.go"})
	if err != nil || len(reps) != 1 || reps[0].Err != nil || len(reps[0].Diagnostics) == 0 {
		t.Errorf("the agent's language servers after Close: %+v, %v", reps, err)
	}
}

// Options.SettleTimeout bounds the tools' wait for a file's diagnostics:
// a server that never publishes (scriptls -never-publish) is answered as
// unknown after it, the answer naming it and never reading "No
// diagnostics in" the file; a negative one is refused.
func TestSettleTimeoutOption(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "scriptls")
	if out, err := exec.Command("go", "build", "-o", bin, "../lsp/testdata/scriptls").CombinedOutput(); err != nil {
		t.Fatalf("building scriptls: %v\n%s", err, out)
	}
	mute := lsp.ServerConfig{Name: "mute", Command: bin, Args: []string{"-never-publish"}, ExtensionToLanguage: map[string]string{".txt": "plaintext"}}
	if _, err := New(&Options{ProjectDir: dir, Configs: []lsp.ServerConfig{mute}, NoIDE: true, SettleTimeout: -time.Second}); err == nil ||
		!strings.Contains(err.Error(), "SettleTimeout") {
		t.Errorf("a negative SettleTimeout: %v, want an error naming it", err)
	}
	s := newTestServer(t, dir, &Options{Configs: []lsp.ServerConfig{mute}, NoIDE: true, SettleTimeout: 300 * time.Millisecond})
	start := time.Now()
	text := s.ok("diagnostics", map[string]any{"files": []string{"notes.txt"}}).Text()
	if !strings.Contains(text, "No diagnostics received for notes.txt, and that is not known to be current.") ||
		!strings.Contains(text, "no publish for it from mute within 300ms") || strings.Contains(text, "No diagnostics in") {
		t.Errorf("diagnostics from a server that never answers, SettleTimeout 300ms (answered after %v):\n%s", time.Since(start).Round(time.Millisecond), text)
	}
}
