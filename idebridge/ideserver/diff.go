package ideserver

import "context"

// DiffAction is what became of a proposed edit. The zero value is
// DiffReject, so a policy that returns an empty decision never accepts.
type DiffAction int

const (
	// DiffReject answers DIFF_REJECTED and the tab name: the agent keeps
	// the old file.
	DiffReject DiffAction = iota
	// DiffSave answers FILE_SAVED and DiffDecision.Text: the agent writes
	// that text (the proposal, or the user's edited version of it).
	DiffSave
	// DiffCloseTab answers TAB_CLOSED: the user closed the diff; Claude
	// Code then applies the proposed text.
	DiffCloseTab
)

func (a DiffAction) String() string {
	switch a {
	case DiffReject:
		return "reject"
	case DiffSave:
		return "save"
	case DiffCloseTab:
		return "close_tab"
	}
	return "unknown"
}

// DiffDecision is a DiffPolicy's answer to one openDiff.
type DiffDecision struct {
	Action DiffAction
	// Text is the final file text for DiffSave, sent verbatim (an empty
	// text is an empty file).
	Text string
}

// SaveDiff returns the decision to save text.
func SaveDiff(text string) DiffDecision { return DiffDecision{Action: DiffSave, Text: text} }

// DiffRequest is one openDiff call as a DiffPolicy sees it.
type DiffRequest struct {
	// OldPath and NewPath are the old_file_path and new_file_path
	// arguments (the same path for an edit of an existing file).
	OldPath, NewPath string
	// OldContents is OldPath's current text on disk; OldExists is false
	// when the file does not exist (a new file).
	OldContents string
	OldExists   bool
	// NewContents is the proposed text.
	NewContents string
	// TabName is the opaque, unique tab name the agent chose.
	TabName string
	// Client is the client that asked.
	Client ClientInfo
}

// A DiffPolicy decides openDiff calls. The IDE never writes the file itself:
// the decision goes back to the agent, which writes it.
//
// Decide may block until a user decides, but must return once ctx is done.
// ctx ends when the tab is closed by close_tab or closeAllDiffTabs (cause
// ErrDiffClosed), the server shuts down (ErrServerClosed), the client
// disconnects (ErrClientGone) or cancels the call (ErrRequestCancelled).
// Once ctx is done the server answers DIFF_REJECTED (or nothing, when the
// client is gone or cancelled) whatever Decide returns. A non-nil error
// from Decide while ctx is live is sent as a JSON-RPC error.
//
// Decide may be called concurrently for different tabs.
type DiffPolicy interface {
	Decide(ctx context.Context, req *DiffRequest) (DiffDecision, error)
}

// DiffPolicyFunc adapts a function to DiffPolicy: the callback policy.
type DiffPolicyFunc func(ctx context.Context, req *DiffRequest) (DiffDecision, error)

// Decide calls f.
func (f DiffPolicyFunc) Decide(ctx context.Context, req *DiffRequest) (DiffDecision, error) {
	return f(ctx, req)
}

var (
	// AcceptDiffs saves every proposal unchanged (FILE_SAVED + the
	// proposed text), as if the user accepted at once.
	AcceptDiffs DiffPolicy = DiffPolicyFunc(func(_ context.Context, req *DiffRequest) (DiffDecision, error) {
		return SaveDiff(req.NewContents), nil
	})
	// RejectDiffs rejects every proposal (DIFF_REJECTED + the tab name).
	RejectDiffs DiffPolicy = DiffPolicyFunc(func(context.Context, *DiffRequest) (DiffDecision, error) {
		return DiffDecision{Action: DiffReject}, nil
	})
)
