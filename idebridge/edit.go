package idebridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"
)

// DefaultCloseTabTimeout bounds the close_tab call that follows a review.
const DefaultCloseTabTimeout = 5 * time.Second

// EditStatus is what became of a proposed edit: the user's answer to
// openDiff (Client.OpenDiff, Reviewer.ProposeEdit), or ApplyEdit's direct
// write. Its values are the strings of EditResult's JSON form.
type EditStatus string

// Edit statuses.
const (
	// EditAccepted: the user accepted (FILE_SAVED); the IDE's final text,
	// which the user may have edited, is to be written.
	EditAccepted EditStatus = "accepted"
	// EditTabClosed: the user closed the diff tab (TAB_CLOSED); the
	// proposed text is to be written, as Claude Code does.
	EditTabClosed EditStatus = "tab_closed"
	// EditRejected: the user rejected the edit (DIFF_REJECTED), or it was
	// cancelled (EditResult.Cancelled); the file stays as it is.
	EditRejected EditStatus = "rejected"
	// EditNotAccepted: the IDE answered something else; the file stays as
	// it is.
	EditNotAccepted EditStatus = "not_accepted"
	// EditApplied: ApplyEdit wrote the edit directly, without an IDE.
	EditApplied EditStatus = "applied"
)

// Accepted reports whether the status means the file is to be written:
// EditAccepted, EditTabClosed or EditApplied.
func (s EditStatus) Accepted() bool {
	return s == EditAccepted || s == EditTabClosed || s == EditApplied
}

// EditRequest is one proposed edit of one file.
type EditRequest struct {
	// Path is the file to change; a relative path is taken relative to
	// the working directory. It need not exist (the edit creates it).
	Path string
	// NewText is the proposed content of the whole file.
	NewText string
	// Base is the file's state the edit was computed from (StatFile when
	// the agent read it). Nil means the state when the edit is proposed.
	// The edit is written only if the file still has this content.
	Base *FileState
	// TabName names the diff tab; empty means one made up by
	// Client.TabName.
	TabName string
}

// EditResult is the outcome of an edit.
type EditResult struct {
	// Path is the file's absolute path.
	Path string `json:"path"`
	// Status says what the user (or ApplyEdit) did.
	Status EditStatus `json:"status"`
	// Written is true when the file now holds Text.
	Written bool `json:"written"`
	// Text is the text written, or that would have been written when a
	// conflict stopped it; "" when nothing was to be written.
	Text string `json:"-"`
	// Bytes is len(Text).
	Bytes int `json:"bytes"`
	// UserModified is true when the IDE saved a text other than the
	// proposal: the user edited it in the diff view.
	UserModified bool `json:"userModified,omitempty"`
	// Created is true when the file did not exist before the edit.
	Created bool `json:"created,omitempty"`
	// Cancelled is true when CancelAll resolved the edit (Status is then
	// EditRejected).
	Cancelled bool `json:"cancelled,omitempty"`
	// ViaIDE is false for ApplyEdit, which wrote without asking anyone.
	ViaIDE bool `json:"viaIDE"`
	// TabName is the diff tab the edit was shown in.
	TabName string `json:"tabName,omitempty"`
	// IDEAnswer is the IDE's first text for EditNotAccepted.
	IDEAnswer string `json:"ideAnswer,omitempty"`
	// CloseTabError is why close_tab failed after the outcome was known;
	// it never changes the outcome (the Neovim plugin answers close_tab
	// after an accepted diff with an error object).
	CloseTabError string `json:"closeTabError,omitempty"`
}

// ReviewError is a review that ended without an outcome: the connection to
// the IDE was lost (it then matches ErrConnectionLost), the context ended,
// or openDiff failed. The file is untouched.
type ReviewError struct {
	// Path is the file; TabName the diff tab.
	Path, TabName string
	// Err is the cause.
	Err error
}

func (e *ReviewError) Error() string {
	return fmt.Sprintf("reviewing the edit of %s in the IDE (tab %q): %v; the file is untouched", e.Path, e.TabName, e.Err)
}

// Unwrap returns the cause.
func (e *ReviewError) Unwrap() error { return e.Err }

// errEditCancelled is the cause given to the openDiff calls CancelAll ends.
var errEditCancelled = errors.New("edit review cancelled")

// ReviewerOptions configure a Reviewer. A nil *ReviewerOptions, and every
// zero field, means the documented default.
type ReviewerOptions struct {
	// CloseTabTimeout bounds the close_tab call that follows each review.
	// Default DefaultCloseTabTimeout; negative means no bound of its own
	// (the client's ClientOptions.CallTimeout still applies).
	CloseTabTimeout time.Duration
	// Logger receives warnings about close_tab failures after a known
	// outcome. Nil is silent.
	Logger *slog.Logger
}

// Reviewer shows proposed edits in the IDE's diff viewer and writes the
// files the user accepts. Several edits may be under review at once, each
// in its own tab; CancelAll ends them all as the user's ESC does. A
// Reviewer is safe for concurrent use.
type Reviewer struct {
	c            *Client
	closeTimeout time.Duration
	log          *slog.Logger

	mu      sync.Mutex
	pending map[string]*review
}

// review is one openDiff in flight.
type review struct {
	cancel    context.CancelCauseFunc
	cancelled bool // set by CancelAll before it closes the tabs
	settled   bool // the outcome is being acted on; CancelAll leaves it
}

// NewReviewer returns a Reviewer that uses c. With a nil c, ProposeEdit
// and CancelAll return an error matching ErrNoIDE.
func NewReviewer(c *Client, opts *ReviewerOptions) *Reviewer {
	r := &Reviewer{c: c, closeTimeout: DefaultCloseTabTimeout, pending: map[string]*review{}}
	if opts != nil {
		if opts.CloseTabTimeout != 0 {
			r.closeTimeout = opts.CloseTabTimeout
		}
		r.log = opts.Logger
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r
}

// ProposeEdit shows req in the IDE's diff viewer (openDiff with
// old_file_path and new_file_path both the file, the proposed text, and a
// tab name of its own), waits until the user acts, and applies the
// outcome:
//
//   - FILE_SAVED: the IDE's final text is written (EditAccepted; the user
//     may have edited it: UserModified);
//   - TAB_CLOSED: the proposed text is written (EditTabClosed);
//   - DIFF_REJECTED: the file is untouched (EditRejected);
//   - anything else: the file is untouched (EditNotAccepted).
//
// Then the tab is closed (close_tab); a failure there is logged and
// reported in EditResult.CloseTabError, never returned. Writing is atomic
// (WriteFileAtomic) and keeps the file's mode. When the file changed on
// disk since req.Base (or since the proposal), nothing is written and the
// error is a *ConflictError, returned together with the result.
//
// There is no deadline: the user may take as long as they like; ctx ends
// the wait. When ctx ends, the connection is lost, or openDiff fails, the
// file is untouched and the error is a *ReviewError (matching
// ErrConnectionLost for a lost connection). An edit ended by CancelAll
// returns EditRejected with Cancelled set and no error.
func (r *Reviewer) ProposeEdit(ctx context.Context, req EditRequest) (*EditResult, error) {
	return r.propose(ctx, req, true)
}

// propose shows req for review and, when write is set, writes the
// accepted text.
func (r *Reviewer) propose(ctx context.Context, req EditRequest, write bool) (*EditResult, error) {
	if r.c == nil {
		return nil, fmt.Errorf("proposing an edit of %s: %w (use ApplyEdit to write without one)", req.Path, ErrNoIDE)
	}
	abs, err := filepath.Abs(req.Path)
	if err != nil {
		return nil, fmt.Errorf("proposing an edit of %s: %w", req.Path, err)
	}
	base := req.Base
	if base == nil {
		if base, err = StatFile(abs); err != nil {
			return nil, fmt.Errorf("proposing an edit: %w", err)
		}
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	rv := &review{cancel: cancel}
	tab := req.TabName
	r.mu.Lock()
	if tab == "" {
		// A name of our own is never refused: make another if it is
		// taken (six random hex digits can repeat).
		tab = r.c.TabName(abs)
		for r.pending[tab] != nil {
			tab = r.c.TabName(abs)
		}
	} else if r.pending[tab] != nil {
		r.mu.Unlock()
		return nil, fmt.Errorf("proposing an edit of %s: tab %q is already under review", abs, tab)
	}
	r.pending[tab] = rv
	r.mu.Unlock()

	out, err := r.c.OpenDiff(rctx, OpenDiffArgs{OldPath: abs, NewPath: abs, NewContents: req.NewText, TabName: tab})

	r.mu.Lock()
	delete(r.pending, tab)
	cancelled := rv.cancelled
	rv.settled = true
	r.mu.Unlock()

	res := &EditResult{Path: abs, TabName: tab, ViaIDE: true, Created: !base.Exists}
	if cancelled {
		// CancelAll closed every diff tab: whatever the IDE answered
		// (an IDE may answer TAB_CLOSED to a tab it closed), the user
		// cancelled.
		res.Status, res.Cancelled = EditRejected, true
		return res, nil
	}
	if err != nil {
		if r.c.Err() == nil {
			// The IDE still holds the tab (ctx ended, or openDiff
			// failed): close it so it does not linger.
			r.closeTab(ctx, res)
		}
		return nil, &ReviewError{Path: abs, TabName: tab, Err: err}
	}

	var werr error
	res.Status = out.Status
	switch {
	case out.Accepted():
		res.Text, res.Bytes = out.FinalText, len(out.FinalText)
		res.UserModified = out.Status == EditAccepted && out.FinalText != req.NewText
		if !write {
			break
		}
		if werr = WriteFileAtomic(abs, []byte(out.FinalText), base); werr == nil {
			res.Written = true
		}
	case out.Status == EditNotAccepted:
		res.IDEAnswer = truncateText(out.Result.Text(), 200)
	}
	r.closeTab(ctx, res)
	if werr != nil {
		return res, werr
	}
	return res, nil
}

// closeTab closes res's tab, recording (never returning) a failure.
func (r *Reviewer) closeTab(ctx context.Context, res *EditResult) {
	cctx := context.WithoutCancel(ctx)
	if r.closeTimeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(cctx, r.closeTimeout)
		defer cancel()
	}
	if err := r.c.CloseTab(cctx, res.TabName); err != nil {
		res.CloseTabError = err.Error()
		r.log.Warn("closing the diff tab after the review; the outcome stands", "tab", res.TabName, "path", res.Path, "status", res.Status, "err", err)
	}
}

// CancelAll ends every edit under review, as the user's ESC does: it marks
// each one cancelled, calls closeAllDiffTabs once, and ends the pending
// openDiff calls. Each cancelled ProposeEdit returns EditRejected with
// Cancelled set, its file untouched, whatever the IDE answers. It returns
// how many edits it cancelled, and closeAllDiffTabs' error (the edits are
// cancelled even then). closeAllDiffTabs is called even when nothing is
// pending, since the IDE may still show tabs.
func (r *Reviewer) CancelAll(ctx context.Context) (int, error) {
	if r.c == nil {
		return 0, fmt.Errorf("cancelling edit reviews: %w", ErrNoIDE)
	}
	r.mu.Lock()
	var victims []*review
	for _, rv := range r.pending {
		if !rv.settled && !rv.cancelled {
			rv.cancelled = true
			victims = append(victims, rv)
		}
	}
	r.mu.Unlock()
	_, err := r.c.CloseAllDiffTabs(ctx)
	for _, rv := range victims {
		rv.cancel(errEditCancelled)
	}
	if err != nil {
		return len(victims), fmt.Errorf("cancelling %d edit review(s): %w", len(victims), err)
	}
	return len(victims), nil
}

// Pending returns how many edits are under review.
func (r *Reviewer) Pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}

// ApplyEdit is the path for when no IDE is connected: it writes req
// directly (atomically, keeping the mode, refusing with a *ConflictError
// when the file no longer matches req.Base) and reports that it did so
// (EditApplied, ViaIDE false). req.TabName is ignored.
func ApplyEdit(req EditRequest) (*EditResult, error) {
	abs, err := filepath.Abs(req.Path)
	if err != nil {
		return nil, fmt.Errorf("applying an edit of %s: %w", req.Path, err)
	}
	base := req.Base
	if base == nil {
		if base, err = StatFile(abs); err != nil {
			return nil, fmt.Errorf("applying an edit: %w", err)
		}
	}
	res := &EditResult{Path: abs, Status: EditApplied, Text: req.NewText, Bytes: len(req.NewText), Created: !base.Exists}
	if err := WriteFileAtomic(abs, []byte(req.NewText), base); err != nil {
		return res, err
	}
	res.Written = true
	return res, nil
}
