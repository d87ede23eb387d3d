package lsp

import (
	"slices"

	"github.com/idebridge/idebridge/diag"
)

// recordSet remembers ds as the document's whole current set: the last
// publish (or pull) that counts for it. The registry hands out what is
// new; a check of an edit compares whole sets. Call with fmu held.
func (t *docTrack) recordSet(ds []diag.Diagnostic, off bool) {
	if off {
		return
	}
	t.set, t.hasSet = slices.Clone(ds), true
}

// currentSet returns the whole diagnostic set last published or pulled for
// the document at path in its server's running instance, and whether the
// server reported any for it since it was opened there.
func (m *Manager) currentSet(path string) ([]diag.Diagnostic, bool) {
	m.mu.Lock()
	doc, ok := m.docs.Peek(path)
	m.mu.Unlock()
	if !ok {
		return nil, false
	}
	doc.srv.syncMu.Lock()
	inst, closed := doc.openOn, doc.closed
	doc.srv.syncMu.Unlock()
	if inst == nil || closed {
		return nil, false
	}
	inst.fmu.Lock()
	defer inst.fmu.Unlock()
	t := inst.docs[doc.uri]
	if t == nil || !t.hasSet {
		return nil, false
	}
	return slices.Clone(t.set), true
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
