package ideserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/idebridge/idebridge/internal/fileuri"
	"github.com/idebridge/idebridge/mcp"
)

// defaultTools lists the default tool set in tools/list order (close_tab is
// callable but not listed, like in deployed IDEs).
var defaultTools = []string{
	mcp.ToolOpenFile, mcp.ToolOpenDiff, mcp.ToolCloseTab, mcp.ToolCloseAllDiffTabs,
	mcp.ToolGetWorkspaceFolders, mcp.ToolGetOpenEditors, mcp.ToolCheckDocumentDirty, mcp.ToolSaveDocument,
	mcp.ToolGetCurrentSelection, mcp.ToolGetLatestSelection,
}

// DefaultTools returns the names of the default tool set, in tools/list
// order; close_tab is among them but not listed, as in deployed IDEs.
// getDiagnostics is not: register it (backed by language servers, see
// Diagnostics) with RegisterTool. Options.DisabledTools names the ones not
// to register. The slice is the caller's.
func DefaultTools() []string { return slices.Clone(defaultTools) }

const schemaHead = `"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false`

func schema(props string, required ...string) json.RawMessage {
	s := "{" + schemaHead
	if props != "" {
		s += `,"properties":{` + props + `}`
	}
	if len(required) > 0 {
		q := make([]string, len(required))
		for i, r := range required {
			q[i] = strconv.Quote(r)
		}
		s += `,"required":[` + strings.Join(q, ",") + `]`
	}
	return json.RawMessage(s + "}")
}

const filePathProp = `"filePath":{"type":"string","description":"Path of the file"}`

func (s *Server) registerDefaults() {
	tools := map[string]Tool{
		mcp.ToolOpenFile: {
			Tool: mcp.Tool{Description: "Open a file in the editor, optionally selecting text in it",
				InputSchema: schema(filePathProp+
					`,"preview":{"type":"boolean","default":false,"description":"Open in preview mode"}`+
					`,"startText":{"type":"string","description":"Text where the selection starts"}`+
					`,"endText":{"type":"string","description":"Text where the selection ends"}`+
					`,"selectToEndOfLine":{"type":"boolean","default":false,"description":"Extend the selection to the end of endText's line"}`+
					`,"makeFrontmost":{"type":"boolean","default":true,"description":"Make the file the active editor"}`+
					`,"startLine":{"type":"integer","description":"Line where the selection starts"}`+
					`,"endLine":{"type":"integer","description":"Line where the selection ends"}`, "filePath")},
			Handler: s.toolOpenFile,
		},
		mcp.ToolOpenDiff: {
			Tool: mcp.Tool{Description: "Show a proposed change to a file and wait until the user accepts or rejects it",
				InputSchema: schema(`"old_file_path":{"type":"string","description":"Path of the file as it is"}`+
					`,"new_file_path":{"type":"string","description":"Path of the file after the change"}`+
					`,"new_file_contents":{"type":"string","description":"Proposed contents"}`+
					`,"tab_name":{"type":"string","description":"Unique name of the diff tab"}`,
					"old_file_path", "new_file_path", "new_file_contents", "tab_name")},
			Handler: s.toolOpenDiff,
			// It waits for the user; close_tab, closeAllDiffTabs, the
			// client and shutdown end it.
			Timeout: -1,
		},
		mcp.ToolCloseTab: {
			Tool: mcp.Tool{Description: "Close a tab by name",
				InputSchema: schema(`"tab_name":{"type":"string","description":"Name of the tab to close"}`, "tab_name")},
			Handler: s.toolCloseTab,
			Inline:  true,
			// Deployed IDEs answer close_tab without listing it.
			Hidden: true,
		},
		mcp.ToolCloseAllDiffTabs: {
			Tool: mcp.Tool{Description: "Close every diff tab",
				InputSchema: schema("")},
			Handler: s.toolCloseAllDiffTabs,
			Inline:  true,
		},
		mcp.ToolGetWorkspaceFolders: {
			Tool: mcp.Tool{Description: "List the workspace folders open in the editor",
				InputSchema: schema("")},
			Handler: s.toolGetWorkspaceFolders,
			Inline:  true,
		},
		mcp.ToolGetOpenEditors: {
			Tool: mcp.Tool{Description: "List the files open in the editor",
				InputSchema: schema("")},
			Handler: s.toolGetOpenEditors,
			Inline:  true,
		},
		mcp.ToolCheckDocumentDirty: {
			Tool: mcp.Tool{Description: "Report whether a document has unsaved changes",
				InputSchema: schema(filePathProp, "filePath")},
			Handler: s.toolCheckDocumentDirty,
		},
		mcp.ToolSaveDocument: {
			Tool: mcp.Tool{Description: "Save a document's unsaved changes",
				InputSchema: schema(filePathProp, "filePath")},
			Handler: s.toolSaveDocument,
		},
		mcp.ToolGetCurrentSelection: {
			Tool: mcp.Tool{Description: "Get the selection in the active editor (what openFile selected last in it)",
				InputSchema: schema("")},
			Handler: s.toolGetCurrentSelection,
			Inline:  true,
		},
		mcp.ToolGetLatestSelection: {
			Tool: mcp.Tool{Description: "Get the most recent selection, even in an editor that is no longer active",
				InputSchema: schema("")},
			Handler: s.toolGetLatestSelection,
			Inline:  true,
		},
	}
	for _, name := range defaultTools {
		if slices.Contains(s.cfg.DisabledTools, name) {
			continue
		}
		t := tools[name]
		t.Name = name
		s.tools.put(t)
	}
}

func invalidParams(format string, args ...any) *mcp.Error {
	return &mcp.Error{Code: mcp.CodeInvalidParams, Message: "Invalid params", Data: mustJSON(fmt.Sprintf(format, args...))}
}

type openFileResult struct {
	Success    bool   `json:"success"`
	FilePath   string `json:"filePath"`
	LanguageID string `json:"languageId"`
	LineCount  int    `json:"lineCount"`
}

func (s *Server) toolOpenFile(ctx context.Context, call *ToolCall) (*mcp.ToolResult, error) {
	var a openFileArgs
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	p, err := s.resolvePath(a.FilePath)
	if err != nil {
		return nil, err
	}
	n, err := s.countLines(ctx, p, s.cfg.MaxMessageSize)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		msg := "Cannot open file"
		if errors.Is(err, fs.ErrNotExist) {
			msg = "File not found"
		}
		return nil, &mcp.Error{Code: mcp.CodeServerError, Message: msg, Data: mustJSON(fmt.Sprintf("Cannot open %s: %v", p, unwrapPathError(err)))}
	}
	var sel *selection
	if a.wantsSelection() {
		text, err := s.readRegular(p, s.cfg.MaxMessageSize)
		if err != nil {
			return nil, &mcp.Error{Code: mcp.CodeServerError, Message: "Cannot read file", Data: mustJSON(fmt.Sprintf("Cannot select in %s: %v", p, unwrapPathError(err)))}
		}
		sel = selectIn(p, string(text), &a)
	}
	s.ed.openFile(p, sel)
	return JSONResult(openFileResult{Success: true, FilePath: p, LanguageID: languageID(p), LineCount: n})
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (s *Server) toolOpenDiff(ctx context.Context, call *ToolCall) (*mcp.ToolResult, error) {
	var a struct {
		OldPath  string  `json:"old_file_path"`
		NewPath  string  `json:"new_file_path"`
		Contents *string `json:"new_file_contents"`
		TabName  string  `json:"tab_name"`
	}
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	switch {
	case a.OldPath == "":
		return nil, invalidParams("old_file_path is required")
	case a.NewPath == "":
		return nil, invalidParams("new_file_path is required")
	case a.Contents == nil:
		return nil, invalidParams("new_file_contents is required")
	case a.TabName == "":
		return nil, invalidParams("tab_name is required")
	}
	req := &DiffRequest{OldPath: a.OldPath, NewPath: a.NewPath, NewContents: *a.Contents, TabName: a.TabName, Client: call.Client}
	oldPath, err := s.resolvePath(a.OldPath)
	if err != nil {
		return nil, err
	}
	if _, err := s.resolvePath(a.NewPath); err != nil {
		return nil, err
	}
	switch b, err := s.readRegular(oldPath, s.cfg.MaxMessageSize); {
	case err == nil:
		req.OldContents, req.OldExists = string(b), true
	case !errors.Is(err, fs.ErrNotExist):
		// A new file has no old contents; anything else that cannot be
		// shown as the old side is an error, not an empty file.
		return nil, &mcp.Error{Code: mcp.CodeServerError, Message: "Cannot open file", Data: mustJSON(fmt.Sprintf("Cannot open %s: %v", oldPath, unwrapPathError(err)))}
	}
	dctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	tab := s.ed.openTab(a.TabName, cancel)
	defer s.ed.resolve(tab)
	dec, err := s.cfg.DiffPolicy.Decide(dctx, req)
	if dctx.Err() != nil {
		// Closed by close_tab/closeAllDiffTabs or shutdown: rejected. (A
		// cancelled or vanished client gets no answer at all.)
		return mcp.TextResult(mcp.DiffRejected, a.TabName), nil
	}
	if err != nil {
		return nil, fmt.Errorf("openDiff %s: %w", a.TabName, err)
	}
	switch dec.Action {
	case DiffSave:
		return mcp.TextResult(mcp.FileSaved, dec.Text), nil
	case DiffCloseTab:
		return mcp.TextResult(mcp.TabClosed), nil
	default:
		return mcp.TextResult(mcp.DiffRejected, a.TabName), nil
	}
}

func (s *Server) toolCloseTab(_ context.Context, call *ToolCall) (*mcp.ToolResult, error) {
	var a struct {
		TabName string `json:"tab_name"`
	}
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	// Closing a tab that is not open is not an error for deployed IDEs.
	s.ed.closeTab(a.TabName)
	return mcp.TextResult(mcp.TabClosed), nil
}

func (s *Server) toolCloseAllDiffTabs(context.Context, *ToolCall) (*mcp.ToolResult, error) {
	n := s.ed.closeAll(ErrDiffClosed)
	return mcp.TextResult(mcp.ClosedDiffTabs(n)), nil
}

type workspaceFolder struct {
	Name string `json:"name"`
	URI  string `json:"uri"`
	Path string `json:"path"`
}

func (s *Server) toolGetWorkspaceFolders(context.Context, *ToolCall) (*mcp.ToolResult, error) {
	res := struct {
		Success  bool              `json:"success"`
		Folders  []workspaceFolder `json:"folders"`
		RootPath string            `json:"rootPath"`
	}{Success: true, RootPath: s.cfg.folders[0]}
	for _, f := range s.cfg.folders {
		res.Folders = append(res.Folders, workspaceFolder{Name: filepath.Base(f), URI: fileuri.FromPath(f), Path: f})
	}
	return JSONResult(res)
}

type editorTab struct {
	URI        string `json:"uri"`
	FilePath   string `json:"filePath"`
	Label      string `json:"label"`
	LanguageID string `json:"languageId"`
	IsActive   bool   `json:"isActive"`
	IsDirty    bool   `json:"isDirty"`
}

func (s *Server) toolGetOpenEditors(context.Context, *ToolCall) (*mcp.ToolResult, error) {
	open := s.ed.openFiles()
	res := struct {
		Tabs []editorTab `json:"tabs"`
	}{Tabs: make([]editorTab, 0, len(open))}
	for i, p := range open {
		res.Tabs = append(res.Tabs, editorTab{
			URI: fileuri.FromPath(p), FilePath: p, Label: filepath.Base(p), LanguageID: languageID(p),
			IsActive: i == len(open)-1,
		})
	}
	return JSONResult(res)
}

// documentState answers checkDocumentDirty and saveDocument: a plain
// directory has no unsaved buffers, so a document is "open" when it was
// opened or exists on disk, and is never dirty.
func (s *Server) documentState(call *ToolCall) (string, bool, error) {
	var a struct {
		FilePath string `json:"filePath"`
	}
	if err := call.Bind(&a); err != nil {
		return "", false, err
	}
	p, err := s.resolvePath(a.FilePath)
	if err != nil {
		return "", false, err
	}
	if s.ed.isOpen(p) {
		return p, true, nil
	}
	st, err := os.Stat(p)
	return p, err == nil && !st.IsDir(), nil
}

type notOpenResult struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}

func (s *Server) toolCheckDocumentDirty(_ context.Context, call *ToolCall) (*mcp.ToolResult, error) {
	p, ok, err := s.documentState(call)
	if err != nil {
		return nil, err
	}
	if !ok {
		return JSONResult(notOpenResult{Message: "Document not open: " + p})
	}
	return JSONResult(struct {
		Success    bool   `json:"success"`
		FilePath   string `json:"filePath"`
		IsDirty    bool   `json:"isDirty"`
		IsUntitled bool   `json:"isUntitled"`
	}{Success: true, FilePath: p})
}

func (s *Server) toolSaveDocument(_ context.Context, call *ToolCall) (*mcp.ToolResult, error) {
	p, ok, err := s.documentState(call)
	if err != nil {
		return nil, err
	}
	if !ok {
		return JSONResult(notOpenResult{Message: "Document not open: " + p})
	}
	return JSONResult(struct {
		Success  bool   `json:"success"`
		FilePath string `json:"filePath"`
		Saved    bool   `json:"saved"`
	}{Success: true, FilePath: p, Saved: true})
}

// languageIDs maps file extensions to LSP language identifiers.
var languageIDs = map[string]string{
	".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
	".cs": "csharp", ".css": "css", ".dart": "dart", ".ex": "elixir", ".exs": "elixir",
	".go": "go", ".html": "html", ".htm": "html", ".java": "java", ".js": "javascript",
	".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact", ".json": "json",
	".kt": "kotlin", ".lua": "lua", ".md": "markdown", ".php": "php", ".py": "python",
	".rb": "ruby", ".rs": "rust", ".scala": "scala", ".sh": "shellscript", ".bash": "shellscript",
	".sql": "sql", ".swift": "swift", ".toml": "toml", ".ts": "typescript", ".tsx": "typescriptreact",
	".txt": "plaintext", ".xml": "xml", ".yaml": "yaml", ".yml": "yaml", ".zig": "zig",
}

func languageID(path string) string {
	base := filepath.Base(path)
	switch base {
	case "Makefile", "makefile", "GNUmakefile":
		return "makefile"
	case "Dockerfile":
		return "dockerfile"
	case "go.mod":
		return "go.mod"
	}
	if id, ok := languageIDs[strings.ToLower(filepath.Ext(base))]; ok {
		return id
	}
	return "plaintext"
}
