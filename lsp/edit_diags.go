package lsp

import (
	"context"
	"fmt"
	"slices"

	"github.com/idebridge/idebridge/diag"
)

// maxSetKept bounds the diagnostics kept per document as its whole
// current set (and as the last set a server published beside its pulls):
// a server that publishes 100,000 diagnostics for every document must not
// make each open document hold them all. The most severe are kept, and
// the true count beside them.
const maxSetKept = 1000

// mostSevere returns a copy of ds, cut to the max most severe (then by
// position) when it has more.
func mostSevere(ds []diag.Diagnostic, max int) []diag.Diagnostic {
	if len(ds) <= max {
		return slices.Clone(ds)
	}
	c := slices.Clone(ds)
	sortDiags(c)
	return slices.Clone(c[:max]) // not c's whole array
}

// recordSet remembers ds as the document's whole current set: the last
// publish (or pull) that counts for it, at most maxSetKept of it, with its
// true size. The registry hands out what is new; a check of an edit
// compares whole sets. Call with fmu held.
func (t *docTrack) recordSet(ds []diag.Diagnostic, off bool) {
	if off {
		return
	}
	t.set, t.setTotal, t.hasSet = mostSevere(ds, maxSetKept), len(ds), true
}

// currentSet returns the diagnostic set last published or pulled for the
// document at path in its server's running instance (at most maxSetKept,
// the most severe), its true size, and whether the server reported any
// for it since it was opened there.
func (m *Manager) currentSet(path string) ([]diag.Diagnostic, int, bool) {
	m.mu.Lock()
	doc, ok := m.docs.Peek(path)
	m.mu.Unlock()
	if !ok {
		return nil, 0, false
	}
	doc.srv.syncMu.Lock()
	inst, closed := doc.openOn, doc.closed
	doc.srv.syncMu.Unlock()
	if inst == nil || closed {
		return nil, 0, false
	}
	inst.fmu.Lock()
	defer inst.fmu.Unlock()
	t := inst.docs[doc.uri]
	if t == nil || !t.hasSet {
		return nil, 0, false
	}
	return slices.Clone(t.set), t.setTotal, true
}

// serverText returns the text of path as its server has it, and whether
// it is open in a running instance.
func (m *Manager) serverText(path string) (string, bool) {
	m.mu.Lock()
	doc, ok := m.docs.Peek(path)
	m.mu.Unlock()
	if !ok {
		return "", false
	}
	doc.srv.syncMu.Lock()
	defer doc.srv.syncMu.Unlock()
	if doc.closed || doc.openOn == nil || doc.openOn.isGone() {
		return "", false
	}
	return doc.text, true
}

// resend sends the open document at path again, unchanged, as a new
// version, so that the next diagnostics counted for it are computed after
// everything sent before: a publish for its current version may have been
// computed before the server took in a change of another file sent just
// before it (the staged texts go out one file after another), and arrive
// after that change was sent. It reopens the document (didClose, then
// didOpen with the new version): a didChange to the same text is not
// enough, since some servers skip a change that changes nothing, or
// publish only when the set changed, and then never answer the new
// version (clangd 14 and typescript-language-server, where gopls and
// pyright answer both; see TestResendAnswered). Nothing is sent for a
// document that is not open in a running server.
func (m *Manager) resend(ctx context.Context, path string) error {
	m.mu.Lock()
	doc, ok := m.docs.Peek(path)
	m.mu.Unlock()
	if !ok {
		return nil
	}
	srv := doc.srv
	srv.syncMu.Lock()
	inst := doc.openOn
	if doc.closed || inst == nil || inst.isGone() || srv.current() != inst {
		srv.syncMu.Unlock()
		return nil
	}
	doc.version = m.nextVersion(doc.uri)
	// The close's own answer (an empty publish) is expected and set
	// aside (dropText), as for any close.
	inst.dropText(doc.uri, true)
	err := inst.conn.notify(ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]string{"uri": doc.uri}})
	if err == nil {
		err = m.didOpen(ctx, inst, doc, true)
	}
	doc.dirty.Store(true)
	srv.syncMu.Unlock()
	if err != nil {
		if ferr := inst.failed(err); ferr != nil {
			return ferr
		}
		return fmt.Errorf("syncing %s with %s: %w", path, srv.cfg.Name, err)
	}
	return nil
}
