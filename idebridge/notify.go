package idebridge

import (
	"encoding/json"
	"fmt"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/mcp"

	"github.com/idebridge/idebridge/pathconv"
)

// Notification is one notification from the IDE, params still raw. The
// typed accessors decode the known ones, converting paths to the agent's
// side. Its JSON form is {"method":...,"params":...}.
type Notification struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`

	paths pathconv.Converter
}

// SelectionRange is a selection in an editor; IsEmpty is true for a bare
// cursor.
type SelectionRange struct {
	Start   diag.Position `json:"start"`
	End     diag.Position `json:"end"`
	IsEmpty bool          `json:"isEmpty"`
}

// Selection is the editor selection carried by selection_changed and
// answered by getCurrentSelection and getLatestSelection.
type Selection struct {
	// Text is the selected text ("" for a cursor).
	Text string `json:"text"`
	// FilePath is the file, as a path on the agent's side. While a diff is
	// shown it may name the diff buffer ("<file>-<tab> (proposed)").
	FilePath string `json:"filePath"`
	// FileURL is the file's URI, converted like FilePath.
	FileURL string `json:"fileUrl,omitempty"`
	// Selection is nil when the IDE sent null (no editor).
	Selection *SelectionRange `json:"selection"`
}

// AtMentioned is an at_mentioned notification: the user sent a file, or
// lines of it (zero-based, inclusive), to the agent.
type AtMentioned struct {
	FilePath  string `json:"filePath"`
	LineStart *int   `json:"lineStart,omitempty"`
	LineEnd   *int   `json:"lineEnd,omitempty"`
}

// SelectionChanged decodes a selection_changed notification.
func (n Notification) SelectionChanged() (*Selection, error) {
	if n.Method != mcp.MethodSelectionChanged {
		return nil, fmt.Errorf("notification is %q, not %s", n.Method, mcp.MethodSelectionChanged)
	}
	var s Selection
	if err := json.Unmarshal(n.Params, &s); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", n.Method, err)
	}
	conv := converter{n.paths}
	s.FilePath = conv.toLocal(s.FilePath)
	s.FileURL = conv.uriToLocal(s.FileURL)
	return &s, nil
}

// AtMentioned decodes an at_mentioned notification.
func (n Notification) AtMentioned() (*AtMentioned, error) {
	if n.Method != mcp.MethodAtMentioned {
		return nil, fmt.Errorf("notification is %q, not %s", n.Method, mcp.MethodAtMentioned)
	}
	var a AtMentioned
	if err := json.Unmarshal(n.Params, &a); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", n.Method, err)
	}
	a.FilePath = converter{n.paths}.toLocal(a.FilePath)
	return &a, nil
}
