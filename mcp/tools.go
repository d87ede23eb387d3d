package mcp

import (
	"strconv"
	"strings"
)

// The IDE tools, as deployed IDE extensions spell them.
const (
	// ToolOpenDiff shows a proposed edit and blocks until the user acts:
	// old_file_path, new_file_path, new_file_contents, tab_name. It
	// answers FileSaved and the final text, TabClosed, or DiffRejected
	// and the tab name.
	ToolOpenDiff = "openDiff"
	// ToolCloseTab closes a tab by name (tab_name); it answers TabClosed.
	// IDEs serve it without listing it.
	ToolCloseTab = "close_tab"
	// ToolCloseAllDiffTabs closes every diff tab; it answers
	// ClosedDiffTabs(n).
	ToolCloseAllDiffTabs = "closeAllDiffTabs"
	// ToolOpenFile opens a file, optionally selecting text: filePath,
	// preview, startText, endText, selectToEndOfLine, makeFrontmost.
	ToolOpenFile = "openFile"
	// ToolGetDiagnostics answers the diagnostics of one file (uri) or of
	// every open file, as JSON text.
	ToolGetDiagnostics = "getDiagnostics"
	// ToolGetOpenEditors lists the open editor tabs.
	ToolGetOpenEditors = "getOpenEditors"
	// ToolGetWorkspaceFolders lists the workspace folders.
	ToolGetWorkspaceFolders = "getWorkspaceFolders"
	// ToolGetCurrentSelection answers the active editor's selection.
	ToolGetCurrentSelection = "getCurrentSelection"
	// ToolGetLatestSelection answers the most recent selection.
	ToolGetLatestSelection = "getLatestSelection"
	// ToolCheckDocumentDirty reports unsaved changes (filePath).
	ToolCheckDocumentDirty = "checkDocumentDirty"
	// ToolSaveDocument saves a document (filePath).
	ToolSaveDocument = "saveDocument"
	// ToolExecuteCode runs code in the IDE's kernel (Jupyter in VS Code).
	ToolExecuteCode = "executeCode"
)

// The first text of openDiff's answer: what the user did with the diff.
// The IDE never writes the file itself; the agent does, as these say.
const (
	// FileSaved: the user accepted, perhaps after editing the proposal;
	// the second text block is the final text to write.
	FileSaved = "FILE_SAVED"
	// TabClosed: the user closed the diff tab; Claude Code then writes
	// the proposed text. It is also close_tab's answer.
	TabClosed = "TAB_CLOSED"
	// DiffRejected: the user rejected the edit; the second text block is
	// the tab name. The file stays as it is.
	DiffRejected = "DIFF_REJECTED"
)

// ClosedDiffTabs returns closeAllDiffTabs' answer for n closed tabs,
// "CLOSED_<n>_DIFF_TABS".
func ClosedDiffTabs(n int) string { return "CLOSED_" + strconv.Itoa(n) + "_DIFF_TABS" }

// ParseClosedDiffTabs reads closeAllDiffTabs' answer (surrounding space
// ignored); ok is false when text is not one.
func ParseClosedDiffTabs(text string) (n int, ok bool) {
	digits, found := strings.CutPrefix(strings.TrimSpace(text), "CLOSED_")
	if !found {
		return 0, false
	}
	if digits, found = strings.CutSuffix(digits, "_DIFF_TABS"); !found || digits == "" {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}
