package idebridge

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/idebridge/idebridge/internal/fileuri"
	"github.com/idebridge/idebridge/mcp"

	"github.com/idebridge/idebridge/diag"

	"github.com/google/go-cmp/cmp"

	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/pathconv"
)

// cannedIDE answers each tool with a fixed result and records the
// arguments it was called with.
type cannedIDE struct {
	mu      sync.Mutex
	args    map[string]json.RawMessage
	results map[string]any // a result object, or a string sent raw
}

func newCannedIDE(t *testing.T, results map[string]any, opts *ClientOptions) (*Client, *cannedIDE) {
	t.Helper()
	ci := &cannedIDE{args: map[string]json.RawMessage{}, results: results}
	f := newFakeIDE(t)
	f.OnCall = func(c *fakeConn, m *jsonrpc.Message, name string, args json.RawMessage) {
		ci.mu.Lock()
		ci.args[name] = args
		res, ok := ci.results[name]
		ci.mu.Unlock()
		switch r := res.(type) {
		case string:
			c.Send([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + r + `}`))
		default:
			if !ok {
				c.ReplyError(m.ID, -32601, "Tool not found: "+name)
				return
			}
			c.Reply(m.ID, r)
		}
	}
	return dialFake(t, f, opts), ci
}

func (ci *cannedIDE) set(name string, result any) {
	ci.mu.Lock()
	defer ci.mu.Unlock()
	ci.results[name] = result
}

func (ci *cannedIDE) argsOf(t *testing.T, name string) map[string]any {
	t.Helper()
	ci.mu.Lock()
	defer ci.mu.Unlock()
	var m map[string]any
	if err := json.Unmarshal(ci.args[name], &m); err != nil {
		t.Fatalf("%s args %s: %v", name, ci.args[name], err)
	}
	return m
}

func TestGetDiagnosticsShapes(t *testing.T) {
	lspShape := `[{"uri":"file:///p/a.go","diagnostics":[
		{"message":"e1","severity":"Error","source":"go","code":"UndeclaredName","range":{"start":{"line":3,"character":1},"end":{"line":3,"character":5}}},
		{"message":"w","severity":"Warning","range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}}},
		{"message":"i1","severity":"Info","code":1005,"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":1}}},
		{"message":"i2","severity":"Information","code":{"value":"E7","target":"https://x"},"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":1}}},
		{"message":"h","severity":"hint","range":{"start":{"line":2,"character":0},"end":{"line":2,"character":1}}},
		{"message":"n1","severity":1,"range":{"start":{"line":2,"character":0},"end":{"line":2,"character":1}}},
		{"message":"n4","severity":4,"range":{"start":{"line":2,"character":0},"end":{"line":2,"character":1}}},
		{"message":"odd","severity":"Fatal","range":{"start":{"line":2,"character":0},"end":{"line":2,"character":1}}}
	]},{"uri":"file:///p/b.go","diagnostics":[]}]`
	// Older Neovim: one content block per diagnostic, one-based positions,
	// vim severities (same numbers as LSP).
	oldNeovim := []any{
		map[string]any{"type": "text", "text": `{"filePath":"/p/c.go","line":4,"character":2,"severity":2,"message":"old1","source":"gopls"}`},
		map[string]any{"type": "text", "text": `{"filePath":"/p/c.go","line":1,"character":1,"severity":1,"message":"old2"}`},
	}
	c, _ := newCannedIDE(t, map[string]any{mcp.ToolGetDiagnostics: textResult(lspShape)}, nil)
	got, err := c.GetDiagnostics(testCtx(t), "")
	if err != nil {
		t.Fatal(err)
	}
	r := func(l1, c1, l2, c2 int) diag.Range {
		return diag.Range{Start: diag.Position{Line: l1, Character: c1}, End: diag.Position{Line: l2, Character: c2}}
	}
	want := []diag.FileDiagnostics{
		{URI: "file:///p/a.go", Path: "/p/a.go", Diagnostics: []diag.Diagnostic{
			{Message: "e1", Severity: diag.SeverityError, Source: "go", Code: "UndeclaredName", Range: r(3, 1, 3, 5)},
			{Message: "w", Severity: diag.SeverityWarning, Range: r(0, 0, 0, 1)},
			{Message: "i1", Severity: diag.SeverityInformation, Code: "1005", Range: r(1, 0, 1, 1)},
			{Message: "i2", Severity: diag.SeverityInformation, Code: "E7", Range: r(1, 0, 1, 1)},
			{Message: "h", Severity: diag.SeverityHint, Range: r(2, 0, 2, 1)},
			{Message: "n1", Severity: diag.SeverityError, Range: r(2, 0, 2, 1)},
			{Message: "n4", Severity: diag.SeverityHint, Range: r(2, 0, 2, 1)},
			{Message: "odd", Severity: 0, Range: r(2, 0, 2, 1)},
		}},
		{URI: "file:///p/b.go", Path: "/p/b.go", Diagnostics: []diag.Diagnostic{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LSP shape (-want +got):\n%s", diff)
	}

	c2, _ := newCannedIDE(t, map[string]any{mcp.ToolGetDiagnostics: map[string]any{"content": oldNeovim}}, nil)
	got, err = c2.GetDiagnostics(testCtx(t), "")
	if err != nil {
		t.Fatal(err)
	}
	want = []diag.FileDiagnostics{{URI: "file:///p/c.go", Path: "/p/c.go", Diagnostics: []diag.Diagnostic{
		{Message: "old1", Severity: diag.SeverityWarning, Source: "gopls", Range: r(3, 1, 3, 1)},
		{Message: "old2", Severity: diag.SeverityError, Range: r(0, 0, 0, 0)},
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("old Neovim shape (-want +got):\n%s", diff)
	}

	c3, _ := newCannedIDE(t, map[string]any{mcp.ToolGetDiagnostics: textResult("no diagnostics here")}, nil)
	if _, err := c3.GetDiagnostics(testCtx(t), ""); err == nil {
		t.Error("plain text accepted as diagnostics")
	}
}

func TestSeverityNames(t *testing.T) {
	for in, want := range map[string]diag.Severity{
		`"Error"`: diag.SeverityError, `"ERROR"`: diag.SeverityError, `"warn"`: diag.SeverityWarning, `"Info"`: diag.SeverityInformation,
		`"Information"`: diag.SeverityInformation, `"Hint"`: diag.SeverityHint, `2`: diag.SeverityWarning, `3`: diag.SeverityInformation,
		`"3"`: diag.SeverityInformation, `null`: 0, `"?"`: 0, `7`: 0, `2.5`: 0, `" hint "`: diag.SeverityHint, `"informational"`: diag.SeverityInformation,
	} {
		var s lenientSeverity
		if err := json.Unmarshal([]byte(in), &s); err != nil || diag.Severity(s) != want {
			t.Errorf("%s decoded as %v (%v), want %v", in, s, err, want)
		}
	}
	if diag.SeverityWarning.String() != "Warning" || diag.Severity(9).String() != "Severity(9)" || diag.Severity(0).String() != "Error" {
		t.Error("Severity.String")
	}
}

// TestPathsConvertBothWays runs the typed tools for an IDE on Windows and
// an agent in WSL: arguments go out as Windows paths and URIs, results come
// back as WSL paths.
func TestPathsConvertBothWays(t *testing.T) {
	results := map[string]any{
		mcp.ToolOpenDiff:            textResult("FILE_SAVED", "new text"),
		mcp.ToolOpenFile:            textResult(`{"success":true,"filePath":"C:\\Users\\me\\p\\main.go","languageId":"go","lineCount":3}`),
		mcp.ToolSaveDocument:        textResult(`{"success":true,"filePath":"C:\\Users\\me\\p\\main.go","saved":true,"message":"Document saved"}`),
		mcp.ToolCheckDocumentDirty:  textResult(`{"success":true,"filePath":"C:\\Users\\me\\p\\main.go","isDirty":true,"isUntitled":false}`),
		mcp.ToolGetDiagnostics:      textResult(`[{"uri":"file:///c%3A/Users/me/p/main.go","diagnostics":[{"message":"m","severity":"Error","range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}}}]}]`),
		mcp.ToolGetWorkspaceFolders: textResult(`{"success":true,"folders":[{"name":"p","uri":"file:///C:/Users/me/p","path":"C:\\Users\\me\\p"}],"rootPath":"C:\\Users\\me\\p"}`),
		mcp.ToolGetOpenEditors:      textResult(`{"tabs":[{"uri":"file:///C:/Users/me/p/main.go","isActive":true,"label":"main.go","languageId":"go","isDirty":false}]}`),
		mcp.ToolGetCurrentSelection: textResult(`{"success":true,"text":"x","filePath":"C:\\Users\\me\\p\\main.go","fileUrl":"file:///C:/Users/me/p/main.go","selection":{"start":{"line":1,"character":0},"end":{"line":1,"character":1},"isEmpty":false}}`),
	}
	c, ci := newCannedIDE(t, results, &ClientOptions{Paths: pathconv.NewWSL("Ubuntu", nil)})
	ctx := testCtx(t)
	const local = "/mnt/c/Users/me/p/main.go"
	const ide = `C:\Users\me\p\main.go`

	out, err := c.OpenDiff(ctx, OpenDiffArgs{OldPath: local, NewContents: "new text"})
	if err != nil || out.FinalText != "new text" {
		t.Fatalf("openDiff: %+v, %v", out, err)
	}
	a := ci.argsOf(t, mcp.ToolOpenDiff)
	if a["old_file_path"] != ide || a["new_file_path"] != ide || a["new_file_contents"] != "new text" {
		t.Errorf("openDiff args %v", a)
	}
	if tab, _ := a["tab_name"].(string); !strings.HasPrefix(tab, "✻ [idebridge] main.go (") || !strings.HasSuffix(tab, ") ⧉") || tab != out.TabName {
		t.Errorf("made-up tab name %q (outcome says %q)", tab, out.TabName)
	}

	of, err := c.OpenFile(ctx, OpenFileArgs{FilePath: local, StartText: "func", EndText: "}", SelectToEndOfLine: true})
	if err != nil || of.FilePath != local {
		t.Errorf("openFile: %+v, %v", of, err)
	}
	want := map[string]any{"filePath": ide, "preview": false, "startText": "func", "endText": "}", "selectToEndOfLine": true, "makeFrontmost": true}
	if diff := cmp.Diff(want, ci.argsOf(t, mcp.ToolOpenFile)); diff != "" {
		t.Errorf("openFile args (-want +got):\n%s", diff)
	}

	st, err := c.SaveDocument(ctx, local)
	if err != nil || st.FilePath != local || !st.Saved {
		t.Errorf("saveDocument: %+v, %v", st, err)
	}
	if a := ci.argsOf(t, mcp.ToolSaveDocument); a["filePath"] != ide {
		t.Errorf("saveDocument args %v", a)
	}
	st, err = c.CheckDocumentDirty(ctx, local)
	if err != nil || st.FilePath != local || !st.IsDirty {
		t.Errorf("checkDocumentDirty: %+v, %v", st, err)
	}

	diags, err := c.GetDiagnostics(ctx, local)
	if err != nil || len(diags) != 1 || diags[0].Path != local || diags[0].URI != "file://"+local {
		t.Errorf("getDiagnostics: %+v, %v", diags, err)
	}
	if a := ci.argsOf(t, mcp.ToolGetDiagnostics); a["uri"] != "file:///C:/Users/me/p/main.go" {
		t.Errorf("getDiagnostics args %v", a)
	}

	wf, err := c.GetWorkspaceFolders(ctx)
	if err != nil || wf.RootPath != "/mnt/c/Users/me/p" || wf.Folders[0].Path != "/mnt/c/Users/me/p" || wf.Folders[0].URI != "file:///mnt/c/Users/me/p" {
		t.Errorf("getWorkspaceFolders: %+v, %v", wf, err)
	}
	eds, err := c.GetOpenEditors(ctx)
	if err != nil || len(eds) != 1 || eds[0].Path != local || !eds[0].IsActive || eds[0].LanguageID != "go" {
		t.Errorf("getOpenEditors: %+v, %v", eds, err)
	}
	sel, err := c.GetCurrentSelection(ctx)
	if err != nil || sel.FilePath != local || sel.FileURL != "file://"+local || sel.Text != "x" {
		t.Errorf("getCurrentSelection: %+v, %v", sel, err)
	}

	// Notifications convert too.
	n := Notification{Method: mcp.MethodAtMentioned, Params: json.RawMessage(`{"filePath":"C:\\Users\\me\\p\\main.go","lineStart":1}`), paths: c.cfg.Paths}
	am, err := n.AtMentioned()
	if err != nil || am.FilePath != local || *am.LineStart != 1 || am.LineEnd != nil {
		t.Errorf("at_mentioned: %+v, %v", am, err)
	}
}

func TestToolOutcomes(t *testing.T) {
	results := map[string]any{
		mcp.ToolOpenDiff:            textResult("TAB_CLOSED"),
		mcp.ToolCloseAllDiffTabs:    textResult("CLOSED_2_DIFF_TABS"),
		mcp.ToolCheckDocumentDirty:  textResult(`{"success":false,"message":"Document not open: /x"}`),
		mcp.ToolGetLatestSelection:  textResult(`{"success":false,"message":"No selection available"}`),
		mcp.ToolOpenFile:            textResult("Opened file: /x"),
		mcp.ToolExecuteCode:         map[string]any{"content": []any{map[string]any{"type": "text", "text": "42"}, map[string]any{"type": "image", "data": "AA==", "mimeType": "image/png"}}},
		mcp.ToolGetOpenEditors:      textResult(`[{"uri":"file:///x","label":"x","isActive":false,"isDirty":true}]`),
		mcp.ToolGetWorkspaceFolders: textResult("not json"),
	}
	c, ci := newCannedIDE(t, results, nil)
	ctx := testCtx(t)
	out, err := c.OpenDiff(ctx, OpenDiffArgs{OldPath: "/x", NewPath: "/y", NewContents: "proposed", TabName: "tab"})
	if err != nil || out.Status != EditTabClosed || !out.Accepted() || out.FinalText != "proposed" || string(out.Status) != "tab_closed" {
		t.Errorf("TAB_CLOSED: %+v, %v", out, err)
	}
	if a := ci.argsOf(t, mcp.ToolOpenDiff); a["old_file_path"] != "/x" || a["new_file_path"] != "/y" || a["tab_name"] != "tab" {
		t.Errorf("openDiff args %v", a)
	}
	ci.set(mcp.ToolOpenDiff, textResult("SOMETHING_ELSE"))
	if out, err := c.OpenDiff(ctx, OpenDiffArgs{OldPath: "/x", NewContents: "p"}); err != nil || out.Status != EditNotAccepted || out.Accepted() || out.FinalText != "" {
		t.Errorf("other answer: %+v, %v", out, err)
	}
	if n, err := c.CloseAllDiffTabs(ctx); n != 2 || err != nil {
		t.Errorf("closeAllDiffTabs: %d, %v", n, err)
	}
	if a := ci.argsOf(t, mcp.ToolCloseAllDiffTabs); len(a) != 0 {
		t.Errorf("closeAllDiffTabs args %v, want {}", a)
	}
	ci.set(mcp.ToolCloseAllDiffTabs, textResult("done"))
	if n, err := c.CloseAllDiffTabs(ctx); n != -1 || err != nil {
		t.Errorf("closeAllDiffTabs without a count: %d, %v", n, err)
	}
	var te *mcp.ToolError
	if _, err := c.CheckDocumentDirty(ctx, "/x"); !errors.As(err, &te) || te.Message != "Document not open: /x" || te.Tool != mcp.ToolCheckDocumentDirty {
		t.Errorf("success false: %v", err)
	}
	if _, err := c.GetLatestSelection(ctx); !errors.As(err, &te) || te.Message != "No selection available" {
		t.Errorf("no selection: %v", err)
	}
	if of, err := c.OpenFile(ctx, OpenFileArgs{FilePath: "/x", Background: true}); err != nil || of.Text != "Opened file: /x" || of.FilePath != "" {
		t.Errorf("plain-text openFile: %+v, %v", of, err)
	}
	if a := ci.argsOf(t, mcp.ToolOpenFile); a["makeFrontmost"] != false {
		t.Errorf("Background did not send makeFrontmost false: %v", a)
	}
	r, err := c.ExecuteCode(ctx, "print(42)")
	if err != nil || r.Text() != "42" || len(r.Content) != 2 {
		t.Errorf("executeCode: %+v, %v", r, err)
	}
	if a := ci.argsOf(t, mcp.ToolExecuteCode); a["code"] != "print(42)" {
		t.Errorf("executeCode args %v", a)
	}
	eds, err := c.GetOpenEditors(ctx)
	if err != nil || len(eds) != 1 || eds[0].Path != "/x" || !eds[0].IsDirty {
		t.Errorf("getOpenEditors (bare array): %+v, %v", eds, err)
	}
	if _, err := c.GetWorkspaceFolders(ctx); err == nil {
		t.Error("non-JSON workspace folders accepted")
	}
	if _, err := c.GetCurrentSelection(ctx); !errors.As(err, &te) || te.Code != -32601 {
		t.Errorf("tool the IDE lacks: %v", err)
	}
}

func TestFileURIConversion(t *testing.T) {
	for _, tc := range []struct{ uri, path string }{
		{"file:///home/me/a%20b.go", "/home/me/a b.go"},
		{"file:///C:/Users/me/x.go", `C:\Users\me\x.go`},
		{"file:///c%3A/Users/me/x.go", `c:\Users\me\x.go`},
	} {
		p, ok := fileuri.ToPath(tc.uri)
		if !ok || p != tc.path {
			t.Errorf("fileuri.ToPath(%s) = %q, %v; want %q", tc.uri, p, ok, tc.path)
		}
	}
	if _, ok := fileuri.ToPath("untitled:Untitled-1"); ok {
		t.Error("untitled: URI taken for a file")
	}
	if got := fileuri.FromPath(`C:\Users\me\x.go`); got != "file:///C:/Users/me/x.go" {
		t.Errorf("fileuri.FromPath(windows) = %s", got)
	}
	if got := fileuri.FromPath("/home/me/a b.go"); got != "file:///home/me/a%20b.go" {
		t.Errorf("fileuri.FromPath(unix) = %s", got)
	}
	// The identity converter leaves URIs byte for byte, even odd ones.
	odd := "file:///home/dev/proj/main.go-accept (proposed)"
	if got := (converter{pathconv.Identity{}}).uriToLocal(odd); got != odd {
		t.Errorf("identity changed %q to %q", odd, got)
	}
}
