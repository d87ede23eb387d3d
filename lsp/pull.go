package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/internal/fileuri"
)

// Pull diagnostics (LSP 3.17): a server that offers textDocument/diagnostic,
// in its initialize answer or by registering it later, answers a request
// for a document with the document's whole set, computed for the text it
// has when the request arrives. Settle asks whenever the server offers it:
// the answer is exact for the version asked, with no guessing about
// silence. workspace/diagnostic/refresh (the server's results changed,
// for another file's sake, say) makes the open documents be asked again.

// pullProvider is one offer of pull diagnostics.
type pullProvider struct {
	identifier string
	selector   []documentFilter // nil: every document
}

// documentFilter is an LSP DocumentFilter.
type documentFilter struct {
	Language string `json:"language"`
	Scheme   string `json:"scheme"`
	Pattern  string `json:"pattern"`
	glob     *glob
}

func (p *pullProvider) serves(uri, lang string) bool {
	if p.selector == nil {
		return true
	}
	for _, f := range p.selector {
		if f.Language != "" && f.Language != lang {
			continue
		}
		if f.Scheme != "" && f.Scheme != "file" {
			continue
		}
		if f.Pattern != "" {
			path, ok := fileuri.ToPath(uri)
			if f.glob == nil || !ok || !f.glob.match(strings.ReplaceAll(path, `\`, "/")) {
				continue
			}
		}
		return true
	}
	return false
}

// parsePullOptions reads DiagnosticOptions or DiagnosticRegistrationOptions;
// ok is false for null or a shape that offers nothing.
func parsePullOptions(raw json.RawMessage) (pullProvider, bool) {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "false" {
		return pullProvider{}, false
	}
	var o struct {
		Identifier       string            `json:"identifier"`
		DocumentSelector *[]documentFilter `json:"documentSelector"`
	}
	if string(raw) != "true" && json.Unmarshal(raw, &o) != nil {
		return pullProvider{}, false
	}
	p := pullProvider{identifier: o.Identifier}
	if o.DocumentSelector != nil {
		p.selector = *o.DocumentSelector
		for i := range p.selector {
			if pat := p.selector[i].Pattern; pat != "" {
				p.selector[i].glob, _ = compileGlob(pat)
			}
		}
		if p.selector == nil {
			p.selector = []documentFilter{}
		}
	}
	return p, true
}

// pullProviders returns the providers that serve uri, sorted by
// identifier; none when the server does not offer pulls or refused one.
// Call with inst.fmu held.
func (inst *instance) pullProviders(uri, lang string) []pullProvider {
	if inst.pullOff {
		return nil
	}
	var out []pullProvider
	seen := map[string]bool{}
	add := func(p pullProvider) {
		if !seen[p.identifier] && p.serves(uri, lang) {
			seen[p.identifier] = true
			out = append(out, p)
		}
	}
	if inst.pullStatic != nil {
		add(*inst.pullStatic)
	}
	ids := make([]string, 0, len(inst.pullDyn))
	for id := range inst.pullDyn {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		add(inst.pullDyn[id])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].identifier < out[j].identifier })
	return out
}

// pullRecord is the last pull answered for a document.
type pullRecord struct {
	ok      bool
	version int
	sent    uint64 // the instance's count of messages sent, when the request was sent
	gen     uint64 // the instance's refresh generation then
	// provisional: answered during the server's first load (a progress
	// begun before the request still active, or a token created and not
	// begun, before any progress ended), or empty before the server had
	// answered anything and within its first-load grace. Such an answer
	// stands in the registry, but is asked again once the load is over.
	provisional bool
	loadReason  string
}

// documentDiagnosticReport is the answer to textDocument/diagnostic.
// gopls answers kind "" for a full report.
type documentDiagnosticReport struct {
	Kind     string            `json:"kind"`
	ResultID string            `json:"resultId"`
	Items    []diag.Diagnostic `json:"items"`
}

// errRetrigger: the server cancelled the request and asks for it again
// (ServerCancelled with retriggerRequest, or ContentModified).
var errRetrigger = errors.New("pull diagnostics: the server asks to be asked again")

// errNoPull: the server does not serve pulls after all.
var errNoPull = errors.New("pull diagnostics: not served")

// pull asks the server for the diagnostics of the document at uri, as it
// is when the request is sent (the request goes out under the server's
// sync lock, so the version it answers for is known), and records the
// answer: the registry gets the whole set, and the document's pull record
// says for which version and after which messages it holds.
func (inst *instance) pull(ctx context.Context, uri string) error {
	s := inst.s
	s.syncMu.Lock()
	inst.fmu.Lock()
	t := inst.docs[uri]
	if t == nil {
		inst.fmu.Unlock()
		s.syncMu.Unlock()
		return fmt.Errorf("pulling diagnostics of %s: %w", uri, ErrNotOpen)
	}
	provs := inst.pullProviders(uri, t.lang)
	rec := pullRecord{ok: true, version: t.version, sent: inst.sent, gen: inst.refreshGen}
	mark := inst.conn.received()
	text := t.text
	prev := map[string]string{}
	for id, r := range t.resultIDs {
		if _, ok := t.items[id]; ok {
			prev[id] = r
		}
	}
	inst.fmu.Unlock()
	if len(provs) == 0 {
		s.syncMu.Unlock()
		return errNoPull
	}
	waits := make([]func(context.Context, any) error, len(provs))
	for i, p := range provs {
		params := map[string]any{"textDocument": map[string]string{"uri": uri}}
		if p.identifier != "" {
			params["identifier"] = p.identifier
		}
		if r := prev[p.identifier]; r != "" {
			params["previousResultId"] = r
		}
		w, err := inst.conn.start(ctx, "textDocument/diagnostic", params)
		if err != nil {
			s.syncMu.Unlock()
			return err
		}
		waits[i] = w
	}
	s.syncMu.Unlock()

	reports := make([]documentDiagnosticReport, len(provs))
	var firstErr error
	for i, w := range waits {
		if err := w(ctx, &reports[i]); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		switch {
		case errors.Is(firstErr, ErrMethodNotFound):
			inst.fmu.Lock()
			inst.pullOff = true
			inst.signal()
			inst.fmu.Unlock()
			s.log.Warn("lsp: the server offered pull diagnostics and does not serve them; using its publishes", "err", firstErr)
			return errNoPull
		case errors.Is(firstErr, ErrContentModified), errors.Is(firstErr, ErrServerCancelled) && retrigger(firstErr):
			return errRetrigger
		}
		return firstErr
	}

	idx := newLineIndex(text)
	enc := inst.encoding()
	inst.fmu.Lock()
	if inst.docs[uri] != t || inst.stopping.Load() {
		inst.fmu.Unlock()
		return nil // closed meanwhile; the answer is for a session that ended
	}
	if t.pulled.ok && (t.pulled.sent > rec.sent || t.pulled.gen > rec.gen) {
		// A pull sent later has answered already (pulls run side by side:
		// a refresh's and a Settle's): this older answer says nothing new,
		// and its items must not replace the newer ones.
		inst.fmu.Unlock()
		return nil
	}
	var all []diag.Diagnostic
	stale := false
	for i, p := range provs {
		r := &reports[i]
		switch r.Kind {
		case "unchanged":
			items, ok := t.items[p.identifier]
			if !ok {
				stale = true // we no longer have the set it refers to
				continue
			}
			all = append(all, items...)
		default: // "full", and gopls's ""
			items := r.Items
			if enc != EncodingUTF32 {
				for j := range items {
					items[j].Range = idx.convertRange(items[j].Range, enc)
					for k := range items[j].RelatedInformation {
						loc := &items[j].RelatedInformation[k].Location
						loc.URI = fileuri.Canonical(loc.URI)
						if loc.URI == uri {
							loc.Range = idx.convertRange(loc.Range, enc)
						}
					}
				}
			}
			if t.items == nil {
				t.items, t.resultIDs = map[string][]diag.Diagnostic{}, map[string]string{}
			}
			t.items[p.identifier] = items
			all = append(all, items...)
		}
		if t.resultIDs == nil {
			t.resultIDs = map[string]string{}
		}
		if r.ResultID != "" {
			t.resultIDs[p.identifier] = r.ResultID
		} else {
			delete(t.resultIDs, p.identifier)
		}
	}
	if stale {
		clear(t.resultIDs)
		inst.fmu.Unlock()
		return errRetrigger
	}
	now := time.Now()
	inGrace, _ := inst.inFirstGrace(now)
	switch {
	case inst.nav.ended == 0 && inst.loadingSince(mark, now):
		rec.provisional, rec.loadReason = true, "answered during its first load"
	case inst.statusBusy() != "":
		rec.provisional, rec.loadReason = true, "answered while it said it was busy ("+inst.statusBusy()+")"
	case len(all) == 0 && inGrace:
		rec.provisional, rec.loadReason = true, "answered empty before it had answered anything"
	}
	t.pulled = rec
	t.recordSet(all, s.cfg.NoDiagnostics)
	if len(all) > 0 {
		inst.navAnswered("")
	}
	// What the server published for the document stands beside what it
	// answered to the pull: the set is their union.
	all = append(all, t.pushedSet(uri, idx, enc)...)
	inst.activity = time.Now()
	// The registry gets the set under fmu, while the document is known to
	// be open: a close drops the document's track (under fmu) before it
	// clears the registry, so a pulled set never outlives its document.
	// Servers clear by publishing only what they published; a pulled set
	// left behind would stand for a closed file forever, and every later
	// client would read it as the file's.
	if !s.cfg.NoDiagnostics {
		v := rec.version
		if err := s.m.reg.PublishParams(s.cfg.Name, &diag.PublishParams{URI: uri, Version: &v, Diagnostics: all}); err != nil {
			s.log.Warn("lsp: pulled diagnostics rejected", "err", err)
		}
	}
	inst.signal()
	inst.fmu.Unlock()
	return nil
}

// A server that serves pulls may publish too: rust-analyzer answers a
// pull with its own analysis and publishes what cargo check finds (with
// versions, and again only when a check ends: a change keeps the last
// check's findings, at the places they were found). Neither replaces the
// other; the document's set is their union. The last publish is kept as
// the server sent it and converted with the document's text when the
// union is made, so that findings about an earlier text are placed (and
// clipped) in the current one, as a client that only takes publishes
// shows them.

// pushedSet returns the document's last published set, converted from
// enc to characters of the text idx indexes. Call with fmu held.
func (t *docTrack) pushedSet(uri string, idx *lineIndex, enc string) []diag.Diagnostic {
	if len(t.pushed) == 0 {
		return nil
	}
	out := cloneDiagnostics(t.pushed)
	if enc == EncodingUTF32 || idx == nil {
		return out
	}
	for i := range out {
		out[i].Range = idx.convertRange(out[i].Range, enc)
		for j := range out[i].RelatedInformation {
			loc := &out[i].RelatedInformation[j].Location
			if fileuri.Canonical(loc.URI) == uri {
				loc.Range = idx.convertRange(loc.Range, enc)
			}
		}
	}
	return out
}

// pulledSet returns the document's last pulled sets, of every provider
// in the order of their identifiers. Call with fmu held.
func (t *docTrack) pulledSet() []diag.Diagnostic {
	ids := make([]string, 0, len(t.items))
	for id := range t.items {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []diag.Diagnostic
	for _, id := range ids {
		out = append(out, t.items[id]...)
	}
	return out
}

// cloneDiagnostics copies ds deeply enough that converting the copy's
// ranges leaves ds as it was.
func cloneDiagnostics(ds []diag.Diagnostic) []diag.Diagnostic {
	out := make([]diag.Diagnostic, len(ds))
	copy(out, ds)
	for i := range out {
		if ri := out[i].RelatedInformation; ri != nil {
			out[i].RelatedInformation = append(ri[:0:0], ri...)
		}
	}
	return out
}

// retrigger reads ServerCancelled's data: {retriggerRequest: bool}, true
// when absent.
func retrigger(err error) bool {
	var re *RPCError
	if !errors.As(err, &re) || len(re.Data) == 0 {
		return true
	}
	var d struct {
		RetriggerRequest *bool `json:"retriggerRequest"`
	}
	if json.Unmarshal(re.Data, &d) != nil || d.RetriggerRequest == nil {
		return true
	}
	return *d.RetriggerRequest
}

// onRefresh handles workspace/diagnostic/refresh: every pulled result of
// the instance may be out of date. The documents are asked again in the
// background, and until then Settle and Drain do not take the old answers
// as current. Runs on the dispatch goroutine: it only records and signals.
func (inst *instance) onRefresh() {
	inst.fmu.Lock()
	inst.refreshGen++
	inst.signal()
	start := !inst.refreshing
	inst.refreshing = true
	inst.fmu.Unlock()
	inst.s.m.markDirty(inst.s)
	select {
	case inst.refreshC <- struct{}{}:
	default:
	}
	if start {
		go inst.refresher()
	}
}

// refresher pulls the open documents again after each refresh, one at a
// time, until the instance ends.
func (inst *instance) refresher() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-inst.gone
		cancel()
	}()
	for {
		select {
		case <-inst.gone:
			return
		case <-inst.refreshC:
		}
		inst.fmu.Lock()
		var uris []string
		for u, t := range inst.docs {
			if len(inst.pullProviders(u, t.lang)) > 0 {
				uris = append(uris, u)
			}
		}
		inst.fmu.Unlock()
		sort.Strings(uris)
		for _, u := range uris {
			for try := 0; try < 3; try++ {
				pctx, pcancel := context.WithTimeout(ctx, inst.s.m.opts.SettleTimeout)
				err := inst.pull(pctx, u)
				pcancel()
				if !errors.Is(err, errRetrigger) {
					if err != nil && ctx.Err() == nil && !inst.stopping.Load() && !errors.Is(err, errNoPull) &&
						!errors.Is(err, ErrNotOpen) && !errors.Is(err, ErrConnClosed) {
						inst.s.log.Debug("lsp: pulling diagnostics after a refresh failed", "uri", u, "err", err)
					}
					break
				}
			}
		}
	}
}
