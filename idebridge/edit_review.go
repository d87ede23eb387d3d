package idebridge

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/idebridge/idebridge/mcp"
)

// Review shows req in the IDE's diff viewer as ProposeEdit does and waits
// for the user, but writes nothing: the result says what the user did
// (Status, Cancelled, UserModified) and, when the file is to be written
// (Status.Accepted()), Text is the text to write — the IDE's final text,
// which the user may have edited, or the proposal for TAB_CLOSED. Written
// is always false. It is for a caller that writes several reviewed files
// together, all or none, once every one is accepted (lsp's
// ApplyOptions.Review). req.Base only sets Created. Errors are those of
// ProposeEdit, never a *ConflictError.
func (r *Reviewer) Review(ctx context.Context, req EditRequest) (*EditResult, error) {
	return r.propose(ctx, req, false)
}

// ReviewFunc returns a review of one file at a time in the shape of the
// lsp package's ApplyOptions.Review, for writing several files all or
// none: each call shows proposed for path (Review) and answers the text
// to write and true when the user accepted it (FILE_SAVED, perhaps after
// editing it, or TAB_CLOSED); false and a nil error when they rejected
// it; false and an error saying what happened otherwise (the review was
// cancelled, the IDE answered something else, or the review failed: the
// errors of Review). done, when not nil, receives each result.
func (r *Reviewer) ReviewFunc(done func(*EditResult)) func(ctx context.Context, path, proposed string) (string, bool, error) {
	return func(ctx context.Context, path, proposed string) (string, bool, error) {
		res, err := r.Review(ctx, EditRequest{Path: path, NewText: proposed})
		if err != nil {
			return "", false, err
		}
		if done != nil {
			done(res)
		}
		switch {
		case res.Cancelled:
			return "", false, errors.New("the user cancelled the review")
		case res.Status.Accepted():
			return res.Text, true, nil
		case res.Status == EditRejected:
			return "", false, nil
		}
		return "", false, fmt.Errorf("the IDE did not accept it (it answered %q)", res.IDEAnswer)
	}
}

// UnsavedFiles asks the IDE (checkDocumentDirty) which of paths have
// unsaved changes in its editors, in the order given. A file the IDE does
// not have open has none. When the IDE does not offer checkDocumentDirty,
// it returns (nil, false, nil): the IDE cannot say.
func (c *Client) UnsavedFiles(ctx context.Context, paths []string) (dirty []string, known bool, err error) {
	if !c.offers(ctx, mcp.ToolCheckDocumentDirty) {
		return nil, false, nil
	}
	for _, p := range paths {
		st, err := c.CheckDocumentDirty(ctx, p)
		var te *mcp.ToolError
		switch {
		case errors.As(err, &te):
			continue // not open in the IDE: nothing unsaved
		case err != nil:
			return nil, true, fmt.Errorf("asking the IDE whether %s has unsaved changes: %w", p, err)
		case st.IsDirty:
			dirty = append(dirty, p)
		}
	}
	return dirty, true, nil
}

// SaveUnsaved asks the IDE to save the unsaved changes of each of paths
// that has some (checkDocumentDirty, then saveDocument), and returns the
// files it saved. It fails, naming the file, when the IDE has unsaved
// changes it cannot save (it does not offer saveDocument, or answers that
// it did not save), or when it cannot tell which files have unsaved
// changes; files saved before the failure stay saved.
func (c *Client) SaveUnsaved(ctx context.Context, paths []string) ([]string, error) {
	dirty, known, err := c.UnsavedFiles(ctx, paths)
	if err != nil {
		return nil, err
	}
	if !known || len(dirty) == 0 {
		return nil, nil
	}
	if !c.offers(ctx, mcp.ToolSaveDocument) {
		return nil, fmt.Errorf("%s has unsaved changes in the IDE, which does not offer %s to save them", dirty[0], mcp.ToolSaveDocument)
	}
	var saved []string
	for _, p := range dirty {
		st, err := c.SaveDocument(ctx, p)
		if err != nil {
			return saved, fmt.Errorf("asking the IDE to save %s: %w", p, err)
		}
		if !st.Saved {
			return saved, fmt.Errorf("the IDE did not save %s", p)
		}
		saved = append(saved, p)
	}
	return saved, nil
}

// offers reports whether the IDE lists the tool name (false when the list
// cannot be had).
func (c *Client) offers(ctx context.Context, name string) bool {
	tools, err := c.Tools(ctx)
	return err == nil && slices.ContainsFunc(tools, func(t mcp.Tool) bool { return t.Name == name })
}
