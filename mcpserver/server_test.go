package mcpserver

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/idebridge/idebridge/idebridge/ideserver"
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
