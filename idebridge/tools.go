package idebridge

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/idebridge/idebridge/internal/fileuri"
	"github.com/idebridge/idebridge/mcp"
	"github.com/idebridge/idebridge/mcpclient"

	"github.com/idebridge/idebridge/diag"

	"github.com/idebridge/idebridge/pathconv"
)

// argWriter appends a JSON object of arguments.
type argWriter struct{ m *mcpclient.Message }

func (w argWriter) str(first bool, key, val string) {
	if !first {
		w.m.AppendRaw(",")
	}
	w.m.AppendString(key)
	w.m.AppendRaw(":")
	w.m.AppendString(val)
}

func (w argWriter) boolean(key string, val bool) {
	w.m.AppendRaw(",")
	w.m.AppendString(key)
	if val {
		w.m.AppendRaw(":true")
	} else {
		w.m.AppendRaw(":false")
	}
}

// callWith calls a tool whose arguments are appended by args.
func (c *Client) callWith(ctx context.Context, name string, args func(w argWriter)) (*mcp.ToolResult, error) {
	return c.callTool(ctx, name, func(m *mcpclient.Message) error {
		m.AppendRaw("{")
		if args != nil {
			args(argWriter{m})
		}
		m.AppendRaw("}")
		return nil
	})
}

// OpenDiffArgs are openDiff's arguments.
type OpenDiffArgs struct {
	// OldPath is the file being changed (old_file_path), on the agent's
	// side; it is converted for the IDE.
	OldPath string
	// NewPath is new_file_path; empty means OldPath (an edit in place).
	NewPath string
	// NewContents is the proposed text (new_file_contents).
	NewContents string
	// TabName is tab_name, opaque and unique per diff; empty means one is
	// made up as Claude Code does (see Client.TabName). Use the same name
	// with CloseTab afterwards.
	TabName string
}

// DiffOutcome is the answer to openDiff.
type DiffOutcome struct {
	// Status is what the user did: EditAccepted (FILE_SAVED),
	// EditTabClosed (TAB_CLOSED), EditRejected (DIFF_REJECTED), or
	// EditNotAccepted for any other answer.
	Status EditStatus
	// FinalText is the text to write when Accepted: the IDE's final text
	// for EditAccepted (the user may have edited the proposal), the
	// proposal for EditTabClosed. The IDE never writes the file itself.
	FinalText string
	// TabName is the tab the diff was shown in (for CloseTab).
	TabName string
	// Result is the tool result as received.
	Result *mcp.ToolResult
}

// Accepted reports whether the file should be written with FinalText.
func (o *DiffOutcome) Accepted() bool { return o.Status.Accepted() }

// OpenDiff shows a proposed edit in the IDE's diff viewer and waits until
// the user acts; there is no default deadline (ctx still ends it, and the
// call fails at once if the connection is lost). Call CloseTab with the
// outcome's TabName afterwards, as Claude Code does.
func (c *Client) OpenDiff(ctx context.Context, a OpenDiffArgs) (*DiffOutcome, error) {
	if a.NewPath == "" {
		a.NewPath = a.OldPath
	}
	if a.TabName == "" {
		a.TabName = c.TabName(a.NewPath)
	}
	conv := converter{c.cfg.Paths}
	oldPath, newPath := conv.toIDE(a.OldPath), conv.toIDE(a.NewPath)
	r, err := c.callWith(ctx, mcp.ToolOpenDiff, func(w argWriter) {
		w.str(true, "old_file_path", oldPath)
		w.str(false, "new_file_path", newPath)
		w.str(false, "new_file_contents", a.NewContents)
		w.str(false, "tab_name", a.TabName)
	})
	if err != nil {
		return nil, err
	}
	out := &DiffOutcome{Status: EditNotAccepted, TabName: a.TabName, Result: r}
	var texts []string
	for _, b := range r.Content {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	if len(texts) == 0 {
		return out, nil
	}
	switch strings.TrimSpace(texts[0]) {
	case mcp.FileSaved:
		out.Status = EditAccepted
		out.FinalText = a.NewContents
		if len(texts) > 1 {
			out.FinalText = texts[1]
		}
	case mcp.TabClosed:
		out.Status = EditTabClosed
		out.FinalText = a.NewContents
	case mcp.DiffRejected:
		out.Status = EditRejected
	}
	return out, nil
}

// TabName makes up a diff tab name for path as Claude Code does, with the
// client's name (ClientOptions.ClientName): "✻ [idebridge] main.go (3f9a1c)
// ⧉". The six hex digits are random; IDEs show the name as the diff tab's
// title and only need it unique among open diffs.
func (c *Client) TabName(path string) string {
	var id [3]byte
	_, _ = rand.Read(id[:]) // never fails (crypto/rand, Go 1.24)
	return "✻ [" + c.cfg.ClientName + "] " + filepath.Base(path) + " (" + hex.EncodeToString(id[:]) + ") ⧉"
}

// CloseTab closes a tab by name (close_tab), typically a diff's tab after
// its outcome is known. Deployed IDEs answer TAB_CLOSED; after an accepted
// diff Neovim may answer with an error object instead, which comes back as
// a *mcp.ToolError that a caller whose outcome is already known can ignore.
func (c *Client) CloseTab(ctx context.Context, tabName string) error {
	_, err := c.callWith(ctx, mcp.ToolCloseTab, func(w argWriter) { w.str(true, "tab_name", tabName) })
	return err
}

// CloseAllDiffTabs closes every diff tab (Claude Code calls it at
// the start of each user turn and on cancel). It returns how many were
// closed, or -1 when the IDE did not say.
func (c *Client) CloseAllDiffTabs(ctx context.Context) (int, error) {
	r, err := c.callWith(ctx, mcp.ToolCloseAllDiffTabs, nil)
	if err != nil {
		return 0, err
	}
	if n, ok := mcp.ParseClosedDiffTabs(r.Text()); ok {
		return n, nil
	}
	return -1, nil
}

// OpenFileArgs are openFile's arguments.
type OpenFileArgs struct {
	// FilePath is the file to open, on the agent's side.
	FilePath string
	// Preview opens the file in preview mode.
	Preview bool
	// StartText and EndText select from the first match of StartText to
	// the end of the following match of EndText; empty means no selection.
	StartText, EndText string
	// SelectToEndOfLine extends the selection to the end of EndText's line.
	SelectToEndOfLine bool
	// Background opens the file without making it the active editor
	// (makeFrontmost false); by default it is brought to the front.
	Background bool
}

// OpenFileResult is openFile's answer.
type OpenFileResult struct {
	// FilePath, LanguageID and LineCount are set when the IDE answered
	// JSON (VS Code family, Neovim).
	FilePath   string `json:"filePath"`
	LanguageID string `json:"languageId"`
	LineCount  int    `json:"lineCount"`
	// Text is the answer's text as received.
	Text string `json:"-"`
}

// OpenFile opens a file in the IDE, optionally selecting text.
func (c *Client) OpenFile(ctx context.Context, a OpenFileArgs) (*OpenFileResult, error) {
	conv := converter{c.cfg.Paths}
	path := conv.toIDE(a.FilePath)
	r, err := c.callWith(ctx, mcp.ToolOpenFile, func(w argWriter) {
		w.str(true, "filePath", path)
		w.boolean("preview", a.Preview)
		if a.StartText != "" {
			w.str(false, "startText", a.StartText)
		}
		if a.EndText != "" {
			w.str(false, "endText", a.EndText)
		}
		w.boolean("selectToEndOfLine", a.SelectToEndOfLine)
		w.boolean("makeFrontmost", !a.Background)
	})
	if err != nil {
		return nil, err
	}
	out := &OpenFileResult{Text: r.Text()}
	if ok, err := decodeJSONText(mcp.ToolOpenFile, r, out); err != nil {
		return nil, err
	} else if ok {
		out.FilePath = conv.toLocal(out.FilePath)
	}
	return out, nil
}

// GetDiagnostics returns the IDE's diagnostics for one file (uri: a file://
// URI or an absolute path on the agent's side) or, when uri is empty, for
// every open file. Neovim answers -32001 for a file it has not opened.
func (c *Client) GetDiagnostics(ctx context.Context, uri string) ([]diag.FileDiagnostics, error) {
	conv := converter{c.cfg.Paths}
	if uri != "" && !strings.Contains(uri, "://") {
		uri = fileuri.FromPath(uri)
	}
	ideURI := conv.uriToIDE(uri)
	r, err := c.callWith(ctx, mcp.ToolGetDiagnostics, func(w argWriter) {
		if ideURI != "" {
			w.str(true, "uri", ideURI)
		}
	})
	if err != nil {
		return nil, err
	}
	files, err := parseDiagnostics(r)
	if err != nil {
		return nil, fmt.Errorf("decoding result of IDE tool %s: %w", mcp.ToolGetDiagnostics, err)
	}
	for i := range files {
		f := &files[i]
		f.URI = conv.uriToLocal(f.URI)
		if p, ok := fileuri.ToPath(f.URI); ok {
			f.Path = p
		} else if f.Path != "" {
			f.Path = conv.toLocal(f.Path)
		}
	}
	return files, nil
}

// lenientSeverity decodes a severity as diag.ParseSeverity reads it, and
// anything it does not know (a number out of range, an unknown name) as
// zero, "not given", so that one odd diagnostic does not hide the others.
type lenientSeverity diag.Severity

func (s *lenientSeverity) UnmarshalJSON(b []byte) error {
	*s = 0
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case float64:
		if sev := diag.Severity(v); float64(sev) == v && sev.Valid() {
			*s = lenientSeverity(sev)
		}
	case string:
		if sev, err := diag.ParseSeverity(v); err == nil {
			*s = lenientSeverity(sev)
		}
	}
	return nil
}

// wireDiagnostic covers both shapes deployed IDEs send: LSP-like entries
// inside {uri, diagnostics}, and older Neovim's one object per content
// block with filePath and one-based line and character.
type wireDiagnostic struct {
	Message   string          `json:"message"`
	Severity  lenientSeverity `json:"severity"`
	Source    string          `json:"source"`
	Code      flexString      `json:"code"`
	Range     *diag.Range     `json:"range"`
	FilePath  string          `json:"filePath"`
	Line      int             `json:"line"`
	Character int             `json:"character"`
}

type wireFileDiagnostics struct {
	URI         string            `json:"uri"`
	FilePath    string            `json:"filePath"`
	Diagnostics *[]wireDiagnostic `json:"diagnostics"`
	wireDiagnostic
}

func (d *wireDiagnostic) toDiagnostic() diag.Diagnostic {
	out := diag.Diagnostic{Message: d.Message, Severity: diag.Severity(d.Severity), Source: d.Source, Code: string(d.Code)}
	if d.Range != nil {
		out.Range = *d.Range
	} else if d.Line > 0 {
		p := diag.Position{Line: d.Line - 1, Character: max(d.Character-1, 0)}
		out.Range = diag.Range{Start: p, End: p}
	}
	return out
}

// parseDiagnostics reads every text block of a getDiagnostics result,
// grouping diagnostics by file in the order first seen.
func parseDiagnostics(r *mcp.ToolResult) ([]diag.FileDiagnostics, error) {
	files := []diag.FileDiagnostics{}
	index := map[string]int{}
	add := func(uri, path string, ds []diag.Diagnostic) {
		key := uri
		if key == "" {
			key = path
		}
		i, ok := index[key]
		if !ok {
			i = len(files)
			index[key] = i
			files = append(files, diag.FileDiagnostics{URI: uri, Path: path, Diagnostics: []diag.Diagnostic{}})
		}
		files[i].Diagnostics = append(files[i].Diagnostics, ds...)
	}
	addEntry := func(e *wireFileDiagnostics) {
		if e.Diagnostics != nil {
			ds := make([]diag.Diagnostic, 0, len(*e.Diagnostics))
			for i := range *e.Diagnostics {
				ds = append(ds, (*e.Diagnostics)[i].toDiagnostic())
			}
			add(e.URI, e.FilePath, ds)
			return
		}
		// A single diagnostic (older Neovim).
		uri := e.URI
		if uri == "" && e.FilePath != "" {
			uri = fileuri.FromPath(e.FilePath)
		}
		add(uri, e.FilePath, []diag.Diagnostic{e.wireDiagnostic.toDiagnostic()})
	}
	for _, b := range r.Content {
		if b.Type != "text" {
			continue
		}
		text := bytes.TrimSpace([]byte(b.Text))
		if len(text) == 0 {
			continue
		}
		switch text[0] {
		case '[':
			var entries []wireFileDiagnostics
			if err := json.Unmarshal(text, &entries); err != nil {
				return nil, err
			}
			for i := range entries {
				addEntry(&entries[i])
			}
		case '{':
			var e wireFileDiagnostics
			if err := json.Unmarshal(text, &e); err != nil {
				return nil, err
			}
			addEntry(&e)
		default:
			return nil, fmt.Errorf("unexpected text %q", truncateText(b.Text, 80))
		}
	}
	return files, nil
}

// flexString decodes a JSON string, number, or {"value": ...} object as text.
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*f = ""
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString(s)
	case b[0] == '{':
		var o struct {
			Value flexString `json:"value"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		*f = o.Value
	default:
		*f = flexString(b)
	}
	return nil
}

// OpenEditor is one editor tab open in the IDE.
type OpenEditor struct {
	// URI is the document's URI, converted to the agent's side.
	URI string `json:"uri"`
	// Path is the document's path on the agent's side, when known.
	Path       string `json:"path,omitempty"`
	Label      string `json:"label,omitempty"`
	LanguageID string `json:"languageId,omitempty"`
	IsActive   bool   `json:"isActive"`
	IsDirty    bool   `json:"isDirty"`
}

// GetOpenEditors returns the IDE's open editor tabs.
func (c *Client) GetOpenEditors(ctx context.Context) ([]OpenEditor, error) {
	r, err := c.callWith(ctx, mcp.ToolGetOpenEditors, nil)
	if err != nil {
		return nil, err
	}
	type wireEditor struct {
		OpenEditor
		FilePath string `json:"filePath"`
		FileName string `json:"fileName"`
	}
	var wrapped struct {
		Tabs []wireEditor `json:"tabs"`
	}
	text := bytes.TrimSpace([]byte(r.Text()))
	var tabs []wireEditor
	if len(text) > 0 && text[0] == '[' {
		err = json.Unmarshal(text, &tabs)
	} else {
		err = json.Unmarshal(text, &wrapped)
		tabs = wrapped.Tabs
	}
	if err != nil {
		return nil, fmt.Errorf("decoding result of IDE tool %s: %w", mcp.ToolGetOpenEditors, err)
	}
	conv := converter{c.cfg.Paths}
	out := make([]OpenEditor, 0, len(tabs))
	for _, t := range tabs {
		e := t.OpenEditor
		e.URI = conv.uriToLocal(e.URI)
		if p, ok := fileuri.ToPath(e.URI); ok {
			e.Path = p
		} else if t.FilePath != "" {
			e.Path = conv.toLocal(t.FilePath)
		} else if t.FileName != "" {
			e.Path = conv.toLocal(t.FileName)
		}
		out = append(out, e)
	}
	return out, nil
}

// WorkspaceFolder is one folder open in the IDE.
type WorkspaceFolder struct {
	Name string `json:"name"`
	// URI and Path are converted to the agent's side.
	URI  string `json:"uri"`
	Path string `json:"path"`
}

// WorkspaceFolders is getWorkspaceFolders' answer.
type WorkspaceFolders struct {
	Folders []WorkspaceFolder `json:"folders"`
	// RootPath is the first folder's path, on the agent's side.
	RootPath string `json:"rootPath"`
}

// GetWorkspaceFolders returns the folders open in the IDE.
func (c *Client) GetWorkspaceFolders(ctx context.Context) (*WorkspaceFolders, error) {
	r, err := c.callWith(ctx, mcp.ToolGetWorkspaceFolders, nil)
	if err != nil {
		return nil, err
	}
	var out WorkspaceFolders
	if _, err := decodeJSONText(mcp.ToolGetWorkspaceFolders, r, &out); err != nil {
		return nil, err
	}
	conv := converter{c.cfg.Paths}
	for i := range out.Folders {
		f := &out.Folders[i]
		f.URI = conv.uriToLocal(f.URI)
		f.Path = conv.toLocal(f.Path)
		if f.Path == "" {
			f.Path, _ = fileuri.ToPath(f.URI)
		}
	}
	out.RootPath = conv.toLocal(out.RootPath)
	return &out, nil
}

// GetCurrentSelection returns the selection in the active editor. An IDE
// with no active editor answers success false, returned as a *mcp.ToolError.
func (c *Client) GetCurrentSelection(ctx context.Context) (*Selection, error) {
	return c.selection(ctx, mcp.ToolGetCurrentSelection)
}

// GetLatestSelection returns the most recent selection, even in an editor
// that is no longer active.
func (c *Client) GetLatestSelection(ctx context.Context) (*Selection, error) {
	return c.selection(ctx, mcp.ToolGetLatestSelection)
}

func (c *Client) selection(ctx context.Context, tool string) (*Selection, error) {
	r, err := c.callWith(ctx, tool, nil)
	if err != nil {
		return nil, err
	}
	var s Selection
	if _, err := decodeJSONText(tool, r, &s); err != nil {
		return nil, err
	}
	conv := converter{c.cfg.Paths}
	s.FilePath = conv.toLocal(s.FilePath)
	s.FileURL = conv.uriToLocal(s.FileURL)
	return &s, nil
}

// DocumentStatus is the answer of checkDocumentDirty and saveDocument.
type DocumentStatus struct {
	// FilePath is on the agent's side.
	FilePath   string `json:"filePath"`
	IsDirty    bool   `json:"isDirty"`
	IsUntitled bool   `json:"isUntitled"`
	// Saved is saveDocument's answer.
	Saved   bool   `json:"saved"`
	Message string `json:"message,omitempty"`
}

// CheckDocumentDirty reports whether a document has unsaved changes. A
// document the IDE has not open is answered with success false, returned
// as a *mcp.ToolError.
func (c *Client) CheckDocumentDirty(ctx context.Context, path string) (*DocumentStatus, error) {
	return c.document(ctx, mcp.ToolCheckDocumentDirty, path)
}

// SaveDocument saves a document's unsaved changes.
func (c *Client) SaveDocument(ctx context.Context, path string) (*DocumentStatus, error) {
	return c.document(ctx, mcp.ToolSaveDocument, path)
}

func (c *Client) document(ctx context.Context, tool, path string) (*DocumentStatus, error) {
	conv := converter{c.cfg.Paths}
	idePath := conv.toIDE(path)
	r, err := c.callWith(ctx, tool, func(w argWriter) { w.str(true, "filePath", idePath) })
	if err != nil {
		return nil, err
	}
	var s DocumentStatus
	if _, err := decodeJSONText(tool, r, &s); err != nil {
		return nil, err
	}
	s.FilePath = conv.toLocal(s.FilePath)
	if s.FilePath == "" {
		s.FilePath = path
	}
	return &s, nil
}

// ExecuteCode runs code in the IDE's kernel (Jupyter in VS Code) and returns
// the result's content blocks.
func (c *Client) ExecuteCode(ctx context.Context, code string) (*mcp.ToolResult, error) {
	return c.callWith(ctx, mcp.ToolExecuteCode, func(w argWriter) { w.str(true, "code", code) })
}

// decodeJSONText decodes the result's text as JSON into v. A JSON object
// with "success": false is returned as a *mcp.ToolError carrying its message.
// Text that is not JSON is left alone (ok false) when v can live without
// it, which is only openFile's case.
func decodeJSONText(tool string, r *mcp.ToolResult, v any) (ok bool, err error) {
	text := bytes.TrimSpace([]byte(r.Text()))
	if len(text) == 0 || (text[0] != '{' && text[0] != '[') {
		if tool == mcp.ToolOpenFile {
			return false, nil
		}
		return false, fmt.Errorf("decoding result of IDE tool %s: not JSON: %q", tool, truncateText(string(text), 80))
	}
	var status struct {
		Success *bool  `json:"success"`
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	if text[0] == '{' && json.Unmarshal(text, &status) == nil && status.Success != nil && !*status.Success {
		msg := status.Message
		if msg == "" {
			msg = status.Error
		}
		return false, &mcp.ToolError{Tool: tool, Message: msg, Result: r}
	}
	if err := json.Unmarshal(text, v); err != nil {
		return false, fmt.Errorf("decoding result of IDE tool %s: %w", tool, err)
	}
	return true, nil
}

func truncateText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// converter applies a pathconv.Converter to paths and file URIs, and does
// nothing at all (URIs stay byte for byte) for the identity.
type converter struct{ c pathconv.Converter }

func (v converter) identity() bool { return v.c == nil || v.c == pathconv.Identity{} }

func (v converter) toLocal(p string) string {
	if p == "" || v.identity() {
		return p
	}
	return v.c.ToLocal(p)
}

func (v converter) toIDE(p string) string {
	if p == "" || v.identity() {
		return p
	}
	return v.c.ToIDE(p)
}

func (v converter) uriToLocal(u string) string {
	if u == "" || v.identity() {
		return u
	}
	p, ok := fileuri.ToPath(u)
	if !ok {
		return u
	}
	return fileuri.FromPath(v.c.ToLocal(p))
}

func (v converter) uriToIDE(u string) string {
	if u == "" || v.identity() {
		return u
	}
	p, ok := fileuri.ToPath(u)
	if !ok {
		return u
	}
	return fileuri.FromPath(v.c.ToIDE(p))
}
