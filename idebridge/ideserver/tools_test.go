package ideserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// jsonTextOf checks that a result is one text block holding JSON with every
// slash escaped, as deployed IDEs write it, and decodes it.
func jsonTextOf(t *testing.T, r *toolResult) map[string]any {
	t.Helper()
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		t.Fatalf("want one text block, got %+v", r.Content)
	}
	text := r.Content[0].Text
	if strings.Contains(strings.ReplaceAll(text, `\/`, ""), "/") {
		t.Errorf("JSON text has an unescaped slash: %s", text)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("JSON text %q: %v", text, err)
	}
	return v
}

func TestOpenFileAndEditors(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "main.go"), "package main\n\nfunc main() {}\n")
	writeFile(t, filepath.Join(ws, "sub", "notes.md"), "no newline at end")
	writeFile(t, filepath.Join(ws, "empty.txt"), "")
	srv := startServer(t, &ideserver.Options{WorkspaceFolders: []string{ws}})
	c := dial(t, srv)
	c.handshake(1)

	// The arguments the Neovim transcript sends.
	got := jsonTextOf(t, c.callTool("openFile", map[string]any{
		"endText": "", "filePath": filepath.Join(ws, "main.go"), "makeFrontmost": false,
		"preview": false, "selectToEndOfLine": false, "startText": "",
	}))
	want := map[string]any{"success": true, "filePath": filepath.Join(ws, "main.go"), "languageId": "go", "lineCount": 3.0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("openFile main.go (-want +got):\n%s", diff)
	}
	// Relative paths resolve against the first workspace folder; file URIs
	// are accepted.
	got = jsonTextOf(t, c.callTool("openFile", map[string]any{"filePath": "sub/notes.md"}))
	if got["filePath"] != filepath.Join(ws, "sub", "notes.md") || got["lineCount"] != 1.0 || got["languageId"] != "markdown" {
		t.Errorf("openFile relative: %v", got)
	}
	got = jsonTextOf(t, c.callTool("openFile", map[string]any{"filePath": "file://" + filepath.Join(ws, "empty.txt")}))
	if got["lineCount"] != 1.0 || got["languageId"] != "plaintext" {
		t.Errorf("openFile empty: %v", got)
	}
	m := c.call("tools/call", map[string]any{"name": "openFile", "arguments": map[string]any{"filePath": "missing.go"}})
	if m.Error == nil || m.Error.Code != jsonrpc.CodeServerError {
		t.Errorf("openFile missing: %s", mustMarshal(m))
	}
	m = c.call("tools/call", map[string]any{"name": "openFile", "arguments": map[string]any{}})
	if m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("openFile without path: %s", mustMarshal(m))
	}
	m = c.call("tools/call", map[string]any{"name": "openFile", "arguments": map[string]any{"filePath": 7}})
	if m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("openFile with a number: %s", mustMarshal(m))
	}

	// main.go again: it moves to the end and is the active editor.
	c.callTool("openFile", map[string]any{"filePath": "main.go"})
	var editors struct {
		Tabs []struct {
			URI, FilePath, Label, LanguageID string
			IsActive, IsDirty                bool
		}
	}
	r := c.callTool("getOpenEditors", nil)
	jsonTextOf(t, r)
	if err := json.Unmarshal([]byte(r.Content[0].Text), &editors); err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, tab := range editors.Tabs {
		labels = append(labels, tab.Label)
		if tab.IsActive != (tab.Label == "main.go") || tab.IsDirty || tab.URI != "file://"+tab.FilePath {
			t.Errorf("tab %+v", tab)
		}
	}
	if want := []string{"notes.md", "empty.txt", "main.go"}; !slices.Equal(labels, want) {
		t.Errorf("open editors %v, want %v", labels, want)
	}
}

func TestWorkspaceFoldersAndDocuments(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(a, "x.py"), "print(1)\n")
	srv := startServer(t, &ideserver.Options{WorkspaceFolders: []string{a, b}})
	c := dial(t, srv)
	c.handshake(1)
	got := jsonTextOf(t, c.callTool("getWorkspaceFolders", map[string]any{}))
	want := map[string]any{
		"success":  true,
		"rootPath": a,
		"folders": []any{
			map[string]any{"name": filepath.Base(a), "uri": "file://" + a, "path": a},
			map[string]any{"name": filepath.Base(b), "uri": "file://" + b, "path": b},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("getWorkspaceFolders (-want +got):\n%s", diff)
	}
	if !slices.Equal(srv.WorkspaceFolders(), []string{a, b}) {
		t.Errorf("WorkspaceFolders() = %v", srv.WorkspaceFolders())
	}

	x := filepath.Join(a, "x.py")
	got = jsonTextOf(t, c.callTool("checkDocumentDirty", map[string]any{"filePath": x}))
	if diff := cmp.Diff(map[string]any{"success": true, "filePath": x, "isDirty": false, "isUntitled": false}, got); diff != "" {
		t.Errorf("checkDocumentDirty (-want +got):\n%s", diff)
	}
	got = jsonTextOf(t, c.callTool("saveDocument", map[string]any{"filePath": x}))
	if diff := cmp.Diff(map[string]any{"success": true, "filePath": x, "saved": true}, got); diff != "" {
		t.Errorf("saveDocument (-want +got):\n%s", diff)
	}
	missing := filepath.Join(a, "nope.py")
	for _, tool := range []string{"checkDocumentDirty", "saveDocument"} {
		got = jsonTextOf(t, c.callTool(tool, map[string]any{"filePath": missing}))
		if diff := cmp.Diff(map[string]any{"success": false, "message": "Document not open: " + missing}, got); diff != "" {
			t.Errorf("%s on a missing file (-want +got):\n%s", tool, diff)
		}
	}
}

func TestRegisterToolAndErrors(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.handshake(1)
	for _, bad := range []ideserver.Tool{
		{Tool: mcp.Tool{Name: ""}, Handler: echoHandler},
		{Tool: mcp.Tool{Name: "x"}},
		{Tool: mcp.Tool{Name: "x", InputSchema: json.RawMessage(`[1]`)}, Handler: echoHandler},
	} {
		if err := srv.RegisterTool(bad); err == nil {
			t.Errorf("RegisterTool(%+v) succeeded", bad)
		}
	}
	wrapped := fmt.Errorf("looking: %w", &mcp.Error{Code: jsonrpc.CodeFileNotOpen, Message: "File not open", Data: json.RawMessage(`"File must be open"`)})
	handlers := map[string]ideserver.ToolHandler{
		"rpcError": func(context.Context, *ideserver.ToolCall) (*mcp.ToolResult, error) { return nil, wrapped },
		"plain": func(context.Context, *ideserver.ToolCall) (*mcp.ToolResult, error) {
			return nil, errors.New("disk on fire")
		},
		"isError": func(context.Context, *ideserver.ToolCall) (*mcp.ToolResult, error) {
			return mcp.ErrorResult("bad input"), nil
		},
		"nil":    func(context.Context, *ideserver.ToolCall) (*mcp.ToolResult, error) { return nil, nil },
		"panics": func(context.Context, *ideserver.ToolCall) (*mcp.ToolResult, error) { panic("boom") },
		"cancelled": func(context.Context, *ideserver.ToolCall) (*mcp.ToolResult, error) {
			return nil, context.Canceled
		},
		"getDiagnostics": func(_ context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
			return ideserver.JSONResult([]any{})
		},
	}
	for name, h := range handlers {
		if err := srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: name}, Handler: h}); err != nil {
			t.Fatal(err)
		}
	}
	// Registering after clients initialized announces the change.
	for range handlers {
		if m := c.next(); m.Method != "notifications/tools/list_changed" {
			t.Fatalf("got %s, want tools/list_changed", mustMarshal(m))
		}
	}
	call := func(name string) string {
		m := c.call("tools/call", map[string]any{"name": name})
		if m.Error != nil {
			return mustMarshal(m.Error)
		}
		return string(m.Result)
	}
	for name, want := range map[string]string{
		"rpcError":       `{"code":-32001,"message":"File not open","data":"File must be open"}`,
		"plain":          `{"code":-32000,"message":"disk on fire"}`,
		"isError":        `{"content":[{"type":"text","text":"bad input"}],"isError":true}`,
		"nil":            `{"content":[]}`,
		"panics":         `{"code":-32603,"message":"Internal error","data":"tool handler panicked: boom"}`,
		"cancelled":      `{"code":-32800,"message":"context canceled"}`,
		"getDiagnostics": `{"content":[{"type":"text","text":"[]"}]}`,
	} {
		if got := call(name); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	// Replacing keeps the place in the list; unregistering removes.
	if err := srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: "openFile", Description: "mine"}, Handler: echoHandler}); err != nil {
		t.Fatal(err)
	}
	tools := srv.Tools()
	if tools[0].Name != "openFile" || tools[0].Description != "mine" {
		t.Errorf("replaced openFile: %+v", tools[0])
	}
	if !srv.UnregisterTool("plain") || srv.UnregisterTool("plain") {
		t.Error("UnregisterTool did not report existence")
	}
	if got := call("plain"); got != `{"code":-32601,"message":"Tool not found: plain"}` {
		t.Errorf("unregistered tool: %s", got)
	}
}

func TestDisabledTools(t *testing.T) {
	srv := startServer(t, &ideserver.Options{DisabledTools: []string{"openDiff", "saveDocument"}})
	var names []string
	for _, tl := range srv.Tools() {
		names = append(names, tl.Name)
	}
	want := slices.DeleteFunc(ideserver.DefaultTools(), func(n string) bool { return n == "openDiff" || n == "saveDocument" })
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

func TestCloseTabHiddenButCallable(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.handshake(1)
	if got := c.callTool("close_tab", map[string]any{"tab_name": "nope"}).texts(); !slices.Equal(got, []string{"TAB_CLOSED"}) {
		t.Errorf("close_tab: %v", got)
	}
	if got := c.callTool("closeAllDiffTabs", map[string]any{}).texts(); !slices.Equal(got, []string{"CLOSED_0_DIFF_TABS"}) {
		t.Errorf("closeAllDiffTabs: %v", got)
	}
}

// TestDebugLogNamesTheTool: the debug record of each message names its
// method, and for tools/call its tool (what `ide serve -v` shows).
func TestDebugLogNamesTheTool(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(lockedWriter{&mu, &buf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := startServer(t, &ideserver.Options{Logger: logger})
	c := dial(t, srv)
	c.handshake(1)
	c.callTool(mcp.ToolCloseAllDiffTabs, nil)
	c.callTool(mcp.ToolGetWorkspaceFolders, map[string]any{})
	mu.Lock()
	defer mu.Unlock()
	var tools []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec struct {
			Msg, Method, Tool string
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec.Msg != "received" {
			continue
		}
		if (rec.Method == mcp.MethodCallTool) != (rec.Tool != "") {
			t.Errorf("record %s: a tool named exactly for tools/call", line)
		}
		if rec.Tool != "" {
			tools = append(tools, rec.Tool)
		}
	}
	if want := []string{mcp.ToolCloseAllDiffTabs, mcp.ToolGetWorkspaceFolders}; !slices.Equal(tools, want) {
		t.Errorf("tools in the log %q, want %q", tools, want)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// openFile selects what it is asked to (lines, or text), and the selection
// tools answer it in VS Code's shape, columns in UTF-16 units.
func TestOpenFileSelection(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.go"), "package a\n\n// 🙂 smile\nfunc F() {}\r\nfunc G() {}\n")
	writeFile(t, filepath.Join(dir, "b.txt"), "one\ntwo\n")
	srv := startServer(t, &ideserver.Options{WorkspaceFolders: []string{dir}})
	c := dial(t, srv)
	c.handshake(1)
	none := jsonTextOf(t, c.callTool("getCurrentSelection", nil))
	if none["success"] != false {
		t.Errorf("selection before any file is open: %v, want success false", none)
	}
	type pos = map[string]any
	sel := func(tool string) map[string]any { return jsonTextOf(t, c.callTool(tool, nil)) }
	for _, tc := range []struct {
		args       map[string]any
		text       string
		start, end pos
	}{
		{map[string]any{"startLine": 3}, "// 🙂 smile", pos{"line": 2.0, "character": 0.0}, pos{"line": 2.0, "character": 11.0}},
		{map[string]any{"startLine": 4, "endLine": 5}, "func F() {}\r\nfunc G() {}", pos{"line": 3.0, "character": 0.0}, pos{"line": 4.0, "character": 11.0}},
		{map[string]any{"startLine": 99}, "", pos{"line": 5.0, "character": 0.0}, pos{"line": 5.0, "character": 0.0}},
		{map[string]any{"startText": "smile"}, "smile", pos{"line": 2.0, "character": 6.0}, pos{"line": 2.0, "character": 11.0}},
		{map[string]any{"startText": "🙂", "endText": "F", "selectToEndOfLine": true}, "🙂 smile\nfunc F() {}", pos{"line": 2.0, "character": 3.0}, pos{"line": 3.0, "character": 11.0}},
		{map[string]any{"startText": "absent"}, "", pos{"line": 0.0, "character": 0.0}, pos{"line": 0.0, "character": 0.0}},
	} {
		args := map[string]any{"filePath": "a.go"}
		for k, v := range tc.args {
			args[k] = v
		}
		c.callTool("openFile", args)
		got := sel("getCurrentSelection")
		want := map[string]any{
			"success": true, "text": tc.text, "filePath": filepath.Join(dir, "a.go"), "fileUrl": "file://" + filepath.Join(dir, "a.go"),
			"selection": map[string]any{"start": tc.start, "end": tc.end, "isEmpty": tc.text == ""},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("openFile %v, then getCurrentSelection (-want +got):\n%s", tc.args, diff)
		}
	}
	// Another file without a selection: the cursor at its start; the
	// latest selection is that one too, and a.go keeps its own.
	c.callTool("openFile", map[string]any{"filePath": "b.txt"})
	if got := sel("getLatestSelection"); got["filePath"] != filepath.Join(dir, "b.txt") || got["text"] != "" {
		t.Errorf("latest selection after opening b.txt: %v", got)
	}
	c.callTool("openFile", map[string]any{"filePath": "a.go"})
	if got := sel("getCurrentSelection"); got["filePath"] != filepath.Join(dir, "a.go") || got["selection"].(map[string]any)["start"].(map[string]any)["line"] != 0.0 {
		t.Errorf("a.go active again: %v, want its last selection (the cursor at the start)", got)
	}
}

// A tool with an output schema and annotations is listed with both, as
// given but compacted, and its structured content reaches the client
// beside its text; a schema that is not an object schema, or annotations
// that are not an object, are refused at registration. Tools that set
// neither are listed as before (the default tools' lines are unchanged).
func TestStructuredToolPassesThrough(t *testing.T) {
	srv := startServer(t, nil)
	for _, bad := range []ideserver.Tool{
		{Tool: mcp.Tool{Name: "x", OutputSchema: json.RawMessage(`{"type":"array"}`)}, Handler: echoHandler},
		{Tool: mcp.Tool{Name: "x", OutputSchema: json.RawMessage(`"object"`)}, Handler: echoHandler},
		{Tool: mcp.Tool{Name: "x", Annotations: json.RawMessage(`[true]`)}, Handler: echoHandler},
	} {
		if err := srv.RegisterTool(bad); err == nil {
			t.Errorf("RegisterTool with output schema %s, annotations %s succeeded", bad.OutputSchema, bad.Annotations)
		}
	}
	ro := true
	err := srv.RegisterTool(ideserver.Tool{
		Tool: mcp.Tool{Name: "where", OutputSchema: json.RawMessage("{ \"type\": \"object\",\n \"properties\": {\"line\": {\"type\": \"integer\"}} }"),
			Annotations: (&mcp.ToolAnnotations{Title: "Where", ReadOnlyHint: &ro}).Encode()},
		Handler: func(context.Context, *ideserver.ToolCall) (*mcp.ToolResult, error) {
			res := mcp.TextResult("line 3")
			res.StructuredContent = json.RawMessage(`{"line":3}`)
			return res, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv)
	c.handshake(1)
	var list struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(c.call("tools/list", map[string]any{}).Result, &list); err != nil {
		t.Fatal(err)
	}
	var where string
	for _, tl := range list.Tools {
		if strings.Contains(string(tl), `"name":"where"`) {
			where = string(tl)
		} else if strings.Contains(string(tl), "outputSchema") || strings.Contains(string(tl), "annotations") {
			t.Errorf("a default tool lists fields it never set: %s", tl)
		}
	}
	want := `{"name":"where","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"line":{"type":"integer"}}},"annotations":{"title":"Where","readOnlyHint":true}}`
	if where != want {
		t.Errorf("tools/list lists\n%s\nwant\n%s", where, want)
	}
	if got := string(c.call("tools/call", map[string]any{"name": "where"}).Result); got != `{"content":[{"type":"text","text":"line 3"}],"structuredContent":{"line":3}}` {
		t.Errorf("tools/call answered %s", got)
	}
}
