package idebridge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

// exchange is one client message of a transcript and the IDE's messages
// that followed it, byte for byte.
type exchange struct {
	client  json.RawMessage
	answers []json.RawMessage
}

func loadTranscript(t *testing.T, path string) []exchange {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []exchange
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Dir string          `json:"dir"`
			Msg json.RawMessage `json:"msg"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		switch line.Dir {
		case "client->ide":
			out = append(out, exchange{client: line.Msg})
		case "ide->client":
			out[len(out)-1].answers = append(out[len(out)-1].answers, line.Msg)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameArgs compares two JSON values, ignoring empty strings in want's
// objects (the transcript's probe sent startText "" where we send nothing).
func sameJSON(t *testing.T, got, want json.RawMessage) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: %v", want, err)
	}
	return reflect.DeepEqual(g, dropEmptyStrings(w))
}

func dropEmptyStrings(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if x == "" {
				delete(v, k)
				continue
			}
			v[k] = dropEmptyStrings(x)
		}
	case []any:
		for i := range v {
			v[i] = dropEmptyStrings(v[i])
		}
	}
	return v
}

// TestNeovimTranscriptReplay drives the typed tools against the Neovim
// plugin's recorded answers, replayed byte for byte; the server checks that
// each request the client sends matches the recorded one (method, id,
// params with the deployed argument names).
func TestNeovimTranscriptReplay(t *testing.T) {
	script := loadTranscript(t, "testdata/mcp/ide-neovim-plugin.jsonl")
	// The client never sends an MCP ping over WebSocket (keep-alive is
	// WebSocket ping/pong), so the recorded ping exchange is left out.
	var filtered []exchange
	for _, e := range script {
		m, err := jsonrpc.Decode(e.client)
		if err != nil {
			t.Fatal(err)
		}
		if m.Method != "ping" {
			filtered = append(filtered, e)
		}
	}
	script = filtered

	f := newFakeIDE(t)
	next := 0
	f.Handle = func(c *fakeConn, got *jsonrpc.Message) bool {
		if next >= len(script) {
			t.Errorf("unexpected message %s after the transcript ended", got.Method)
			return true
		}
		e := script[next]
		next++
		want, _ := jsonrpc.Decode(e.client)
		if got.Method != want.Method || string(got.ID) != string(want.ID) {
			t.Errorf("message %d: got %s id %s, want %s id %s", next, got.Method, got.ID, want.Method, want.ID)
		} else if len(want.Params) > 0 && !sameJSON(t, got.Params, want.Params) {
			t.Errorf("message %d (%s): params\n got %s\nwant %s", next, got.Method, got.Params, want.Params)
		}
		for _, a := range e.answers {
			c.Send(a)
		}
		return true
	}
	c := dialFake(t, f, &ClientOptions{ClientName: "p2", ClientVersion: "0", PID: 4242})
	ctx := testCtx(t)
	if c.ProtocolVersion() != "2024-11-05" || c.ServerInfo().Name != "claudecode-neovim" {
		t.Errorf("handshake: %s %+v", c.ProtocolVersion(), c.ServerInfo())
	}
	tools, _ := c.Tools(ctx)
	if len(tools) != 10 || tools[6].Name != "openDiff" || !bytes.Contains(tools[6].InputSchema, []byte("new_file_contents")) {
		t.Errorf("tools: %d, %+v", len(tools), tools)
	}

	of, err := c.OpenFile(ctx, OpenFileArgs{FilePath: "/home/dev/proj/main.go", Background: true})
	if err != nil || of.FilePath != "/home/dev/proj/main.go" || of.LanguageID != "go" || of.LineCount != 3 {
		t.Errorf("openFile: %+v, %v", of, err)
	}
	diags, err := c.GetDiagnostics(ctx, "file:///home/dev/proj/main.go")
	if err != nil || len(diags) != 0 {
		t.Errorf("getDiagnostics(uri): %+v, %v", diags, err)
	}
	diags, err = c.GetDiagnostics(ctx, "")
	if err != nil || len(diags) != 0 {
		t.Errorf("getDiagnostics(): %+v, %v", diags, err)
	}
	wf, err := c.GetWorkspaceFolders(ctx)
	if err != nil || len(wf.Folders) != 1 || wf.Folders[0] != (WorkspaceFolder{Name: "ws", URI: "file:///home/dev/proj", Path: "/home/dev/proj"}) || wf.RootPath != "/home/dev/proj" {
		t.Errorf("getWorkspaceFolders: %+v, %v", wf, err)
	}
	if n, err := c.CloseAllDiffTabs(ctx); n != 0 || err != nil {
		t.Errorf("closeAllDiffTabs: %d, %v", n, err)
	}
	if err := c.CloseTab(ctx, "nope"); err != nil {
		t.Errorf("close_tab: %v", err)
	}
	var te *mcp.ToolError
	if _, err := c.CallTool(ctx, "noSuchTool", nil); !errors.As(err, &te) || te.Code != jsonrpc.CodeMethodNotFound || te.Message != "Tool not found: noSuchTool" {
		t.Errorf("unknown tool: %v", err)
	}

	out, err := c.OpenDiff(ctx, OpenDiffArgs{OldPath: "/home/dev/proj/main.go", NewContents: "package main\n\nfunc main() { println(1) }\n", TabName: "main.go-accept"})
	if err != nil || out.Status != EditAccepted || !out.Accepted() || out.FinalText != "package main\n\nfunc main() { println(1) }\n" || out.TabName != "main.go-accept" {
		t.Errorf("openDiff accept: %+v, %v", out, err)
	}
	// The selection_changed sent while the diff was pending arrived.
	n := <-c.Notifications()
	sel, err := n.SelectionChanged()
	if err != nil || sel.FilePath != "/home/dev/proj/main.go-accept (proposed)" || sel.Selection == nil || !sel.Selection.IsEmpty {
		t.Errorf("selection_changed: %+v, %v", sel, err)
	}
	// Neovim's quirk: an error object inside result, after an accepted diff.
	if err := c.CloseTab(ctx, "main.go-accept"); !errors.As(err, &te) || te.Code != jsonrpc.CodeServerError || te.Message != "Buffer operation error" {
		t.Errorf("close_tab after accept: %v", err)
	}
	out, err = c.OpenDiff(ctx, OpenDiffArgs{OldPath: "/home/dev/proj/main.go", NewContents: "package main\n\nfunc main() { println(2) }\n", TabName: "main.go-deny"})
	if err != nil || out.Status != EditRejected || out.Accepted() {
		t.Errorf("openDiff deny: %+v, %v", out, err)
	}
	if _, err := c.GetDiagnostics(ctx, "/no/such/file.go"); !errors.As(err, &te) || te.Code != jsonrpc.CodeFileNotOpen {
		t.Errorf("getDiagnostics of a file not open: %v", err)
	}
	if next != len(script) {
		t.Errorf("replayed %d of %d transcript messages", next, len(script))
	}
}
