package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/idebridge/idebridge/internal/atomicfile"
	"github.com/idebridge/idebridge/internal/fileuri"
	"github.com/idebridge/idebridge/internal/udiff"
)

// lspTextEdit is a TextEdit (or AnnotatedTextEdit).
type lspTextEdit struct {
	Range   lspRange `json:"range"`
	NewText string   `json:"newText"`
}

// lspWorkspaceEdit is the part of a WorkspaceEdit a rename uses.
type lspWorkspaceEdit struct {
	Changes         map[string][]lspTextEdit `json:"changes"`
	DocumentChanges []json.RawMessage        `json:"documentChanges"`
}

// Rename asks the server how to rename the symbol at at to newName
// (textDocument/rename) and returns its WorkspaceEdit as proposed file
// texts with a unified diff. Nothing is written: see ApplyRename. Before
// asking, the documents open in the server are brought up to date with
// the disk, so that the edits apply to the files as they are. A
// WorkspaceEdit that creates, renames or deletes files is refused with an
// error naming them.
func (m *Manager) Rename(ctx context.Context, at Pos, newName string) (*RenameProposal, error) {
	if strings.TrimSpace(newName) == "" {
		return nil, errors.New("rename: the new name is empty")
	}
	t, r, err := m.navResolve(ctx, at)
	if err != nil {
		return nil, err
	}
	if err := m.syncOpen(ctx, t.srv); err != nil {
		return nil, err
	}
	params := t.positionParams(r)
	params["newName"] = newName
	var raw json.RawMessage
	a, err := m.request(ctx, t, OpRename, "textDocument/rename", params, &raw)
	if err != nil {
		return nil, err
	}
	a.At = t.at(r)
	if b := bytes.TrimSpace(raw); len(b) == 0 || bytes.Equal(b, []byte("null")) {
		return nil, fmt.Errorf("rename: %s found nothing to rename at %s", a.Server, Pos{Path: displayPath(m.opts.ProjectDir, t.abs), Line: r.line + 1, Column: r.col + 1})
	}
	var we lspWorkspaceEdit
	if err := json.Unmarshal(raw, &we); err != nil {
		return nil, fmt.Errorf("rename from %s: decoding the workspace edit: %w", a.Server, err)
	}
	edits, err := workspaceEdits(&we)
	if err != nil {
		return nil, fmt.Errorf("rename from %s: %w", a.Server, err)
	}
	p := &RenameProposal{Answer: a, NewName: newName, Files: []FileEdit{}}
	uris := make([]string, 0, len(edits))
	for u := range edits {
		uris = append(uris, u)
	}
	sort.Strings(uris)
	for _, u := range uris {
		fe, err := m.fileEdit(t, u, edits[u])
		if err != nil {
			return nil, fmt.Errorf("rename from %s: %w", a.Server, err)
		}
		if fe.OldText == fe.NewText {
			continue
		}
		p.Files = append(p.Files, fe)
	}
	sort.Slice(p.Files, func(i, j int) bool { return p.Files[i].Path < p.Files[j].Path })
	var diff strings.Builder
	for _, f := range p.Files {
		diff.WriteString(f.Diff)
	}
	p.Diff = diff.String()
	return p, nil
}

// workspaceEdits gathers the text edits of a WorkspaceEdit by canonical
// URI, refusing resource operations (create, rename, delete).
func workspaceEdits(we *lspWorkspaceEdit) (map[string][]lspTextEdit, error) {
	out := map[string][]lspTextEdit{}
	if len(we.DocumentChanges) > 0 {
		var ops []string
		for _, raw := range we.DocumentChanges {
			var dc struct {
				Kind         string `json:"kind"`
				URI          string `json:"uri"`
				OldURI       string `json:"oldUri"`
				NewURI       string `json:"newUri"`
				TextDocument struct {
					URI string `json:"uri"`
				} `json:"textDocument"`
				Edits []lspTextEdit `json:"edits"`
			}
			if err := json.Unmarshal(raw, &dc); err != nil {
				return nil, fmt.Errorf("decoding a document change: %w", err)
			}
			switch dc.Kind {
			case "":
				u := fileuri.Canonical(dc.TextDocument.URI)
				out[u] = append(out[u], dc.Edits...)
			case "rename":
				ops = append(ops, fmt.Sprintf("rename %s to %s", uriDisplay(dc.OldURI), uriDisplay(dc.NewURI)))
			default:
				ops = append(ops, dc.Kind+" "+uriDisplay(dc.URI))
			}
		}
		if len(ops) > 0 {
			return nil, fmt.Errorf("the rename also wants to %s, which this client does not do; rename those files yourself", strings.Join(ops, ", "))
		}
		return out, nil
	}
	for u, e := range we.Changes {
		cu := fileuri.Canonical(u)
		out[cu] = append(out[cu], e...)
	}
	return out, nil
}

func uriDisplay(u string) string {
	if p, ok := fileuri.ToPath(u); ok {
		return p
	}
	return u
}

// fileEdit applies edits to the file uri names, as the server has it.
func (m *Manager) fileEdit(t *navTarget, uri string, edits []lspTextEdit) (FileEdit, error) {
	path, ok := fileuri.ToPath(uri)
	if !ok || strings.HasPrefix(path, "//") {
		return FileEdit{}, fmt.Errorf("the rename edits %s, which is not a local file", uri)
	}
	data, base, err := atomicfile.Read(path)
	if err != nil {
		return FileEdit{}, err
	}
	if !base.Exists {
		return FileEdit{}, fmt.Errorf("the rename edits %s, which does not exist", path)
	}
	text := string(data)
	// A document open in the server must hold what the disk holds (Rename
	// synced them just before asking): otherwise the server's positions
	// are about another text.
	m.mu.Lock()
	doc, open := m.docs.Peek(path)
	m.mu.Unlock()
	if open && doc.srv == t.srv {
		t.srv.syncMu.Lock()
		same := doc.openOn != t.inst || doc.text == text
		t.srv.syncMu.Unlock()
		if !same {
			return FileEdit{}, fmt.Errorf("%s changed on disk while the rename was computed; ask again", path)
		}
	}
	newText, err := applyEdits(text, edits, t.enc)
	if err != nil {
		return FileEdit{}, fmt.Errorf("%s: %w", path, err)
	}
	rel := displayPath(m.opts.ProjectDir, path)
	name := strings.TrimPrefix(filepath.ToSlash(rel), "/")
	fe := FileEdit{Path: path, Edits: len(edits), OldText: text, NewText: newText, Base: base}
	fe.Diff = udiff.Unified("a/"+name, "b/"+name, fe.OldText, fe.NewText)
	return fe, nil
}

// applyEdits applies LSP text edits, whose positions count enc units, to
// text. Edits must not overlap; edits at the same place apply in their
// order.
func applyEdits(text string, edits []lspTextEdit, enc string) (string, error) {
	idx := newLineIndex(text)
	type span struct {
		start, end int
		text       string
	}
	spans := make([]span, 0, len(edits))
	for _, e := range edits {
		s, en := idx.offset(e.Range.Start.Line, e.Range.Start.Character, enc), idx.offset(e.Range.End.Line, e.Range.End.Character, enc)
		if en < s {
			return "", fmt.Errorf("an edit ends before it starts (%d:%d-%d:%d)",
				e.Range.Start.Line+1, e.Range.Start.Character+1, e.Range.End.Line+1, e.Range.End.Character+1)
		}
		spans = append(spans, span{s, en, e.NewText})
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	var b strings.Builder
	last := 0
	for i, s := range spans {
		if s.start < last {
			return "", fmt.Errorf("the edits overlap (edit %d of %d)", i+1, len(spans))
		}
		b.WriteString(text[last:s.start])
		b.WriteString(s.text)
		last = s.end
	}
	b.WriteString(text[last:])
	return b.String(), nil
}

// syncOpen brings every document open in s up to date with the disk.
func (m *Manager) syncOpen(ctx context.Context, s *server) error {
	m.mu.Lock()
	var paths []string
	for _, p := range m.docs.Keys() {
		if d, ok := m.docs.Peek(p); ok && d.srv == s {
			paths = append(paths, p)
		}
	}
	m.mu.Unlock()
	for _, p := range paths {
		if m.navOpenUnchanged(p) != nil {
			continue // the server has what the disk has
		}
		if err := m.Open(ctx, p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// ApplyRename writes the files of p.
//
// With propose nil, it writes them all or none (atomicfile.WriteAll):
// every file must still be what the rename was computed from (its content
// and identity: a file replaced since, even by a link to a file with the
// same text, counts as changed), every new text is staged beside its file
// before any file is replaced, and a failure while replacing puts back
// the files already replaced. The error then names the file that stopped
// the write and why (errors.Is ErrEditConflict when it changed on disk);
// nothing was written.
//
// With propose (an IDE's diff review, see ProposeFunc), each file is shown
// to the user, who decides; after ApplyCancelled, or once ctx has ended,
// the remaining files are ApplySkipped. Since the user may accept some
// files and not others, this path is not all or nothing, but every file
// is checked before the first is shown: a rename with a file already
// changed on disk is refused whole, as above.
//
// Either way, a rename with a file outside ManagerOptions.Roots (symbolic
// links resolved) is refused whole before anything is shown or written,
// with an error naming those files (errors.Is ErrOutsideRoots). The files
// written that are open in their servers are then synced with them, as
// Open does.
func (m *Manager) ApplyRename(ctx context.Context, p *RenameProposal, propose ProposeFunc) (*RenameApplied, error) {
	if p == nil {
		return nil, errors.New("applying a rename: no proposal")
	}
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return nil, ErrManagerClosed
	}
	changes := make([]atomicfile.Change, len(p.Files))
	for i, f := range p.Files {
		changes[i] = atomicfile.Change{Path: f.Path, Data: []byte(f.NewText), Base: f.Base}
	}
	wopts := &atomicfile.Options{Roots: m.opts.Roots}
	res := &RenameApplied{Files: make([]FileApplied, 0, len(p.Files))}
	if propose == nil {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("rename not applied: %w", err)
		}
		if err := atomicfile.WriteAll(changes, wopts); err != nil {
			return nil, fmt.Errorf("rename not applied: %w", err)
		}
		for _, f := range p.Files {
			res.Files = append(res.Files, FileApplied{Path: f.Path, Status: ApplyWritten})
		}
		res.Written = len(p.Files)
	} else {
		if err := atomicfile.Check(changes, wopts); err != nil {
			return nil, fmt.Errorf("rename not applied: %w", err)
		}
		m.review(ctx, p, propose, res)
	}
	open := map[string]bool{}
	for _, p := range m.OpenDocuments() {
		open[p] = true
	}
	for _, f := range res.Files {
		if f.Status == ApplyWritten && open[f.Path] {
			if err := m.Open(context.WithoutCancel(ctx), f.Path); err != nil {
				m.log.Debug("lsp: syncing a renamed file failed", "path", f.Path, "err", err)
			}
		}
	}
	return res, nil
}

// review proposes each file of p in turn, recording the outcomes in res.
func (m *Manager) review(ctx context.Context, p *RenameProposal, propose ProposeFunc, res *RenameApplied) {
	stop := false
	for i := range p.Files {
		f := &p.Files[i]
		out := FileApplied{Path: f.Path}
		if stop || ctx.Err() != nil {
			out.Status = ApplySkipped
			res.Files = append(res.Files, out)
			continue
		}
		var err error
		out.Status, err = propose(ctx, f)
		switch {
		case errors.Is(err, atomicfile.ErrConflict):
			out.Status = ApplyConflict
		case err != nil && (out.Status == ApplyWritten || out.Status == ""):
			out.Status = ApplyFailed
		case out.Status == "":
			out.Status = ApplyRejected
		}
		if err != nil {
			out.Error = err.Error()
		}
		if out.Status == ApplyCancelled {
			stop = true
		}
		if out.Status == ApplyWritten {
			res.Written++
		}
		res.Files = append(res.Files, out)
	}
}
