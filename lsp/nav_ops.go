package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/idebridge/idebridge/internal/fileuri"
)

// navTarget is the server a navigation request goes to and, for a request
// about a document, that document as the server has it.
type navTarget struct {
	srv  *server
	inst *instance
	enc  string
	tun  loadTuning
	// The document, when the request is about one.
	abs, uri string
	idx      *lineIndex
	// indexes caches the texts of the documents an answer names, by
	// canonical URI; uris the canonical URI and path of each URI as the
	// server wrote it.
	indexes   map[string]*lineIndex
	uris      map[string]uriInfo
	diskReads int
}

type uriInfo struct {
	canon, path string
}

func newTarget(srv *server, inst *instance) *navTarget {
	return &navTarget{srv: srv, inst: inst, enc: inst.encoding(), tun: tuningOf(&srv.cfg),
		indexes: map[string]*lineIndex{}, uris: map[string]uriInfo{}}
}

// navOpen opens the file at path in its server, or brings it up to date
// with the disk (as Open does), and returns it as the server has it.
func (m *Manager) navOpen(ctx context.Context, path string) (*navTarget, error) {
	if path == "" {
		return nil, errors.New("no file given")
	}
	for attempt := 0; ; attempt++ {
		if t := m.navOpenUnchanged(path); t != nil {
			return t, nil
		}
		if err := m.Open(ctx, path); err != nil {
			return nil, err
		}
		r, abs, err := m.route(path)
		if err != nil {
			return nil, err
		}
		m.mu.Lock()
		doc, ok := m.docs.Peek(abs)
		m.mu.Unlock()
		var inst *instance
		var text string
		var version int
		if ok {
			r.srv.syncMu.Lock()
			if !doc.closed {
				inst, text, version = doc.openOn, doc.text, doc.version
			}
			r.srv.syncMu.Unlock()
		}
		if inst == nil || inst.isGone() {
			if err := r.srv.failure(); err != nil {
				return nil, err
			}
			if attempt < 3 {
				continue // closed, evicted or restarted meanwhile
			}
			return nil, fmt.Errorf("opening %s: %w", abs, ErrNotOpen)
		}
		return newDocTarget(r.srv, inst, doc, text, version), nil
	}
}

// navOpenUnchanged returns the target for path when the file is open in a
// running server and unchanged on disk since it was last synced (its size,
// time and inode agree): one stat instead of Open's read.
func (m *Manager) navOpenUnchanged(path string) *navTarget {
	r, abs, err := m.route(path)
	if err != nil {
		return nil
	}
	m.mu.Lock()
	doc, ok := m.docs.Get(abs)
	m.mu.Unlock()
	if !ok {
		return nil
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil
	}
	srv := r.srv
	srv.syncMu.Lock()
	inst, text, version, stamp, closed := doc.openOn, doc.text, doc.version, doc.stamp, doc.closed
	srv.syncMu.Unlock()
	if closed || inst == nil || srv.current() != inst || !stamp.ok || stampOf(fi) != stamp {
		return nil
	}
	return newDocTarget(srv, inst, doc, text, version)
}

// newDocTarget is the target for doc, open in inst with text at version;
// its line index is the instance's, built once per version.
func newDocTarget(srv *server, inst *instance, doc *document, text string, version int) *navTarget {
	t := newTarget(srv, inst)
	t.abs, t.uri = doc.path, doc.uri
	t.idx = inst.docIndex(doc.uri, version)
	if t.idx == nil || t.idx.text != text {
		t.idx = newLineIndex(text)
	}
	t.indexes[doc.uri] = t.idx
	t.uris[doc.uri] = uriInfo{doc.uri, doc.path}
	return t
}

// docIndex returns the line index of the open document uri when the
// instance has it at version, else nil.
func (inst *instance) docIndex(uri string, version int) *lineIndex {
	inst.fmu.Lock()
	defer inst.fmu.Unlock()
	if tr := inst.docs[uri]; tr != nil && tr.version == version {
		return tr.index()
	}
	return nil
}

// navResolve opens the file of p and finds p in it. A file that is not
// open yet is read and p checked in it first, so that a missing file or a
// place that names nothing is reported before a server is started.
func (m *Manager) navResolve(ctx context.Context, p Pos) (*navTarget, resolved, error) {
	if p.Path != "" && m.navOpenUnchanged(p.Path) == nil {
		if _, abs, err := m.route(p.Path); err == nil {
			dv, err := readDisk(abs)
			if err != nil {
				return nil, resolved{}, fmt.Errorf("reading %s: %w", abs, err)
			}
			if _, err := resolvePos(newLineIndex(dv.text), p); err != nil {
				var pe *PosError
				if errors.As(err, &pe) {
					pe.Pos.Path = displayPath(m.opts.ProjectDir, abs)
				}
				return nil, resolved{}, err
			}
		}
	}
	t, err := m.navOpen(ctx, p.Path)
	if err != nil {
		return nil, resolved{}, err
	}
	r, err := resolvePos(t.idx, p)
	if err != nil {
		var pe *PosError
		if errors.As(err, &pe) {
			pe.Pos.Path = displayPath(m.opts.ProjectDir, t.abs)
		}
		return nil, resolved{}, err
	}
	return t, r, nil
}

// displayPath is path relative to dir when it lies inside it.
func displayPath(dir, path string) string {
	if dir == "" {
		return path
	}
	if rel, ok := relInside(dir, path); ok {
		return rel
	}
	return path
}

// lspPos is an LSP position, in the server's encoding.
type lspPos struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type lspRange struct {
	Start lspPos `json:"start"`
	End   lspPos `json:"end"`
}

// positionParams are the params of a request about a place.
func (t *navTarget) positionParams(r resolved) map[string]any {
	return map[string]any{
		"textDocument": map[string]string{"uri": t.uri},
		"position":     lspPos{Line: r.line, Character: t.idx.fromRunes(r.line, r.col, t.enc)},
	}
}

// at is the Location of the place asked about.
func (t *navTarget) at(r resolved) *Location {
	return &Location{Path: t.abs, URI: t.uri, Line: r.line + 1, Column: r.col + 1,
		EndLine: r.line + 1, EndColumn: r.col + 1 + r.n, Text: clipLine(r.text)}
}

// request sends method to t's server once it has loaded (waiting at most
// ManagerOptions.LoadWait, and ctx), decodes the answer into result, and returns
// the Answer with what is known of its completeness.
func (m *Manager) request(ctx context.Context, t *navTarget, op NavOp, method string, params map[string]any, result any) (Answer, error) {
	a := Answer{Op: op, Server: t.srv.cfg.Name}
	if ok, capability := t.inst.offers(method); !ok {
		return a, fmt.Errorf("%s does not offer %s (%s: its initialize answer has no %s): %w", a.Server, op, method, capability, ErrUnsupported)
	}
	wait := m.opts.LoadWait
	deadline := time.Now().Add(max(wait, 0))
	before := t.inst.awaitLoad(ctx, t.tun, t.uri, wait)
	backoff := 100 * time.Millisecond
	for {
		if err := ctx.Err(); err != nil {
			if before.loading {
				return a, fmt.Errorf("%s: waiting for %s to load the workspace: %w", op, a.Server, err)
			}
			return a, fmt.Errorf("%s: %w", op, err)
		}
		params["workDoneToken"] = nextNavToken()
		mark := t.inst.conn.received()
		var raw json.RawMessage
		if err := t.inst.callRequest(ctx, method, params, &raw); err != nil {
			if ferr := t.inst.failed(err); ferr != nil {
				return a, ferr
			}
			if errors.Is(err, ErrMethodNotFound) {
				return a, fmt.Errorf("%s does not offer %s (%s): %w", a.Server, op, method, ErrUnsupported)
			}
			return a, fmt.Errorf("%s from %s: %w", op, a.Server, err)
		}
		now := time.Now()
		empty := emptyAnswer(raw)
		t.inst.fmu.Lock()
		// Progress begun after the request was sent is not loading for
		// this answer: the request's own work (pylsp reports one under a
		// token of its own for each request), or a load that began right
		// after it, which an empty answer waits for below.
		after := t.inst.loadStateLocked(t.tun, mark, now)
		early := empty && t.inst.emptyMayBeEarly(t.uri, wait, now)
		if !empty {
			t.inst.navAnswered(t.uri)
		}
		t.inst.fmu.Unlock()
		// An empty answer from a server that is loading, began loading
		// right after the request, or has not answered anything about the
		// document yet (see emptyMayBeEarly), is asked again within the
		// load wait before it is reported.
		var retry bool
		switch {
		case wait < 0 || !now.Before(deadline):
		case !empty && after.loading && !before.loading:
			// The server began loading (or created a token for it)
			// between the wait and the request: its answer may come from
			// before the load, so it is asked again once the load ends
			// (pyright creates a token for its background analysis at
			// any time; on a busy machine the request often follows the
			// create before the progress begins).
			retry = true
			before = t.inst.awaitLoad(ctx, t.tun, t.uri, deadline.Sub(now))
		case !empty:
		case before.loading || after.loading || after.beganAfter:
			retry = true
			before = t.inst.awaitLoad(ctx, t.tun, t.uri, deadline.Sub(now))
		case early:
			retry = true
			if !sleepCtx(ctx, min(backoff, deadline.Sub(now))) {
				continue // ctx ended: said above
			}
			backoff = min(2*backoff, time.Second)
			before = t.inst.awaitLoad(ctx, t.tun, t.uri, max(time.Until(deadline), 0))
		}
		if retry {
			continue
		}
		if result != nil && len(raw) > 0 {
			if rm, ok := result.(*json.RawMessage); ok {
				*rm = raw
			} else if err := json.Unmarshal(raw, result); err != nil {
				return a, fmt.Errorf("%s from %s: decoding the answer: %w", op, a.Server, err)
			}
		}
		switch {
		case before.loading || before.firstPending:
			a.Incomplete, a.Reason = true, before.reason
		case after.loading:
			a.Incomplete, a.Reason = true, after.reason
		case empty && after.beganAfter:
			a.Incomplete, a.Reason = true, fmt.Sprintf("%s began loading the workspace right after the request and had not finished", a.Server)
		}
		a.Status = StatusComplete
		if a.Incomplete {
			a.Status = StatusPartial
		}
		return a, nil
	}
}

// sleepCtx sleeps for d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// emptyAnswer reports whether raw, a navigation answer, holds nothing:
// null, an empty list or object, or a hover without contents.
func emptyAnswer(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	switch string(raw) {
	case "", "null", "[]", "{}":
		return true
	}
	if raw[0] != '{' {
		return false
	}
	var h struct {
		Contents json.RawMessage `json:"contents"`
	}
	if json.Unmarshal(raw, &h) != nil || h.Contents == nil {
		return false
	}
	c := bytes.TrimSpace(h.Contents)
	switch string(c) {
	case "", "null", `""`, "[]":
		return true
	}
	var mc struct {
		Value *string `json:"value"`
	}
	return c[0] == '{' && json.Unmarshal(c, &mc) == nil && mc.Value != nil && strings.TrimSpace(*mc.Value) == ""
}

// index returns the text of uri for converting an answer's positions: the
// document asked about, another document open in the same server
// instance, or the file on disk; nil when it cannot be read.
func (m *Manager) index(t *navTarget, uri string) *lineIndex {
	if idx, ok := t.indexes[uri]; ok {
		return idx
	}
	var idx *lineIndex
	if path, ok := fileuri.ToPath(uri); ok && !strings.HasPrefix(path, "//") {
		m.mu.Lock()
		doc, open := m.docs.Peek(path)
		m.mu.Unlock()
		if open && doc.srv == t.srv {
			t.srv.syncMu.Lock()
			if doc.openOn == t.inst && !doc.closed {
				idx = t.inst.docIndex(doc.uri, doc.version)
				if idx == nil || idx.text != doc.text {
					idx = newLineIndex(doc.text)
				}
			}
			t.srv.syncMu.Unlock()
		}
		if idx == nil && t.diskReads < maxNavDiskReads {
			t.diskReads++
			idx = diskIndex(uri)
		}
	}
	t.indexes[uri] = idx
	return idx
}

// maxNavDiskReads bounds the files one answer makes navigation read for
// their source lines and columns: a server that answers with locations in
// a hundred thousand files gets the rest as it sent them (columns in its
// units, no source line).
const maxNavDiskReads = 1000

// maxLocationText bounds Location.Text, in characters (a minified file's
// line can be megabytes).
const maxLocationText = 1000

func clipLine(s string) string { return shorten(s, maxLocationText) }

// location converts an LSP location of t's server.
func (m *Manager) location(t *navTarget, uri string, r lspRange) Location {
	u, ok := t.uris[uri]
	if !ok {
		u.canon = fileuri.Canonical(uri)
		u.path, _ = fileuri.ToPath(u.canon)
		t.uris[uri] = u
	}
	uri = u.canon
	loc := Location{URI: uri, Path: u.path}
	sc, ec := r.Start.Character, r.End.Character
	if idx := m.index(t, uri); idx != nil {
		sc = idx.toRunes(r.Start.Line, sc, t.enc)
		ec = idx.toRunes(r.End.Line, ec, t.enc)
		text, _ := idx.line(r.Start.Line)
		loc.Text = clipLine(text)
	}
	loc.Line, loc.Column, loc.EndLine, loc.EndColumn = r.Start.Line+1, sc+1, r.End.Line+1, ec+1
	return loc
}

// lspLocationish is a Location or a LocationLink.
type lspLocationish struct {
	URI                  string    `json:"uri"`
	Range                lspRange  `json:"range"`
	TargetURI            string    `json:"targetUri"`
	TargetRange          lspRange  `json:"targetRange"`
	TargetSelectionRange *lspRange `json:"targetSelectionRange"`
}

// decodeLocations decodes Location | Location[] | LocationLink[] | null.
func decodeLocations(raw json.RawMessage) ([]lspLocationish, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var list []lspLocationish
	if raw[0] == '{' {
		var one lspLocationish
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, fmt.Errorf("decoding a location: %w", err)
		}
		list = []lspLocationish{one}
	} else if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("decoding locations: %w", err)
	}
	for i := range list {
		l := &list[i]
		if l.TargetURI != "" {
			l.URI, l.Range = l.TargetURI, l.TargetRange
			if l.TargetSelectionRange != nil {
				l.Range = *l.TargetSelectionRange
			}
		}
	}
	return list, nil
}

// sortLocations sorts by path (or URI), then position, and drops
// duplicates.
func sortLocations(locs []Location) []Location {
	key := func(l *Location) string {
		if l.Path != "" {
			return l.Path
		}
		return l.URI
	}
	sort.SliceStable(locs, func(i, j int) bool {
		a, b := &locs[i], &locs[j]
		if ka, kb := key(a), key(b); ka != kb {
			return ka < kb
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		if a.EndLine != b.EndLine {
			return a.EndLine < b.EndLine
		}
		return a.EndColumn < b.EndColumn
	})
	out := locs[:0]
	for i, l := range locs {
		if i > 0 && l == locs[i-1] {
			continue
		}
		out = append(out, l)
	}
	return out
}

// locations runs a request whose answer is locations.
func (m *Manager) locations(ctx context.Context, op NavOp, method string, at Pos, extra map[string]any) (*Locations, error) {
	t, r, err := m.navResolve(ctx, at)
	if err != nil {
		return nil, err
	}
	params := t.positionParams(r)
	for k, v := range extra {
		params[k] = v
	}
	var raw json.RawMessage
	a, err := m.request(ctx, t, op, method, params, &raw)
	if err != nil {
		return nil, err
	}
	list, err := decodeLocations(raw)
	if err != nil {
		return nil, fmt.Errorf("%s from %s: %w", op, a.Server, err)
	}
	a.At = t.at(r)
	res := &Locations{Answer: a, Locations: make([]Location, 0, len(list))}
	for _, l := range list {
		res.Locations = append(res.Locations, m.location(t, l.URI, l.Range))
	}
	res.Locations = sortLocations(res.Locations)
	res.Total = len(res.Locations)
	return res, nil
}

// Definition returns where the symbol at at is defined
// (textDocument/definition).
func (m *Manager) Definition(ctx context.Context, at Pos) (*Locations, error) {
	return m.locations(ctx, OpDefinition, "textDocument/definition", at, nil)
}

// Declaration returns where the symbol at at is declared
// (textDocument/declaration): in C and C++ the header's declaration rather
// than the definition.
func (m *Manager) Declaration(ctx context.Context, at Pos) (*Locations, error) {
	return m.locations(ctx, OpDeclaration, "textDocument/declaration", at, nil)
}

// TypeDefinition returns where the type of the symbol at at is defined
// (textDocument/typeDefinition).
func (m *Manager) TypeDefinition(ctx context.Context, at Pos) (*Locations, error) {
	return m.locations(ctx, OpTypeDefinition, "textDocument/typeDefinition", at, nil)
}

// Implementation returns the implementations of the interface, abstract
// method or virtual function at at (textDocument/implementation).
func (m *Manager) Implementation(ctx context.Context, at Pos) (*Locations, error) {
	return m.locations(ctx, OpImplementation, "textDocument/implementation", at, nil)
}

// References returns the references to the symbol at at
// (textDocument/references), with its declaration when includeDeclaration
// is set.
func (m *Manager) References(ctx context.Context, at Pos, includeDeclaration bool) (*Locations, error) {
	return m.locations(ctx, OpReferences, "textDocument/references", at, map[string]any{
		"context": map[string]bool{"includeDeclaration": includeDeclaration},
	})
}

// Hover returns what the server shows when hovering over at
// (textDocument/hover): usually the symbol's signature and documentation.
func (m *Manager) Hover(ctx context.Context, at Pos) (*Hover, error) {
	t, r, err := m.navResolve(ctx, at)
	if err != nil {
		return nil, err
	}
	// A null answer leaves raw empty.
	var raw struct {
		Contents json.RawMessage `json:"contents"`
		Range    *lspRange       `json:"range"`
	}
	a, err := m.request(ctx, t, OpHover, "textDocument/hover", t.positionParams(r), &raw)
	if err != nil {
		return nil, err
	}
	a.At = t.at(r)
	h := &Hover{Answer: a, Markdown: hoverMarkdown(raw.Contents)}
	if raw.Range != nil {
		l := m.location(t, t.uri, *raw.Range)
		h.Range = &l
	}
	return h, nil
}

// hoverMarkdown normalises hover contents (MarkupContent, MarkedString,
// MarkedString[]) to Markdown.
func hoverMarkdown(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	var parts []json.RawMessage
	if raw[0] == '[' {
		if json.Unmarshal(raw, &parts) != nil {
			return ""
		}
	} else {
		parts = []json.RawMessage{raw}
	}
	var out []string
	for _, p := range parts {
		var s string
		if json.Unmarshal(p, &s) == nil {
			out = append(out, strings.TrimSpace(s))
			continue
		}
		var obj struct {
			Kind     string `json:"kind"`
			Language string `json:"language"`
			Value    string `json:"value"`
		}
		if json.Unmarshal(p, &obj) != nil {
			continue
		}
		v := strings.Trim(obj.Value, "\n")
		switch {
		case obj.Kind != "":
			out = append(out, strings.TrimSpace(v))
		case strings.TrimSpace(v) != "":
			out = append(out, "```"+obj.Language+"\n"+v+"\n```")
		}
	}
	var kept []string
	for _, s := range out {
		if s != "" {
			kept = append(kept, s)
		}
	}
	return strings.Join(kept, "\n\n")
}

// lspSymbol is a DocumentSymbol or a SymbolInformation (or a
// WorkspaceSymbol, whose location may lack a range).
type lspSymbol struct {
	Name           string      `json:"name"`
	Detail         string      `json:"detail"`
	Kind           SymbolKind  `json:"kind"`
	Range          *lspRange   `json:"range"`
	SelectionRange *lspRange   `json:"selectionRange"`
	Children       []lspSymbol `json:"children"`
	Location       *struct {
		URI   string    `json:"uri"`
		Range *lspRange `json:"range"`
	} `json:"location"`
	ContainerName string `json:"containerName"`
}

// symbol converts a symbol of t's server; uri is the document of a
// DocumentSymbol.
func (m *Manager) symbol(t *navTarget, uri string, s *lspSymbol) Symbol {
	out := Symbol{Name: s.Name, Kind: s.Kind, Detail: s.Detail, Container: s.ContainerName}
	switch {
	case s.Location != nil:
		r := lspRange{}
		if s.Location.Range != nil {
			r = *s.Location.Range
		}
		out.Location = m.location(t, s.Location.URI, r)
		if s.Location.Range == nil {
			out.Location.Line, out.Location.Column, out.Location.EndLine, out.Location.EndColumn, out.Location.Text = 0, 0, 0, 0, ""
		} else {
			out.EndLine = r.End.Line + 1
		}
	case s.SelectionRange != nil || s.Range != nil:
		sel := s.SelectionRange
		if sel == nil {
			sel = s.Range
		}
		out.Location = m.location(t, uri, *sel)
		if s.Range != nil {
			out.EndLine = s.Range.End.Line + 1
		}
	}
	for i := range s.Children {
		out.Children = append(out.Children, m.symbol(t, uri, &s.Children[i]))
	}
	return out
}

// DocumentSymbols returns the symbols declared in the file at path, as a
// tree (textDocument/documentSymbol).
func (m *Manager) DocumentSymbols(ctx context.Context, path string) (*Symbols, error) {
	t, err := m.navOpen(ctx, path)
	if err != nil {
		return nil, err
	}
	var list []lspSymbol
	a, err := m.request(ctx, t, OpDocumentSymbols, "textDocument/documentSymbol",
		map[string]any{"textDocument": map[string]string{"uri": t.uri}}, &list)
	if err != nil {
		return nil, err
	}
	res := &Symbols{Answer: a, Path: t.abs, Symbols: make([]Symbol, 0, len(list))}
	for i := range list {
		res.Symbols = append(res.Symbols, m.symbol(t, t.uri, &list[i]))
	}
	sortSymbols(res.Symbols)
	res.Total = len(res.Symbols)
	return res, nil
}

// sortSymbols puts symbols, and their children, in document order
// (typescript-language-server sends them sorted by name).
func sortSymbols(s []Symbol) {
	sort.SliceStable(s, func(i, j int) bool {
		a, b := s[i].Location, s[j].Location
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	for i := range s {
		sortSymbols(s[i].Children)
	}
}

// WorkspaceSymbols returns the symbols of the workspace that match query
// (workspace/symbol). path picks the server (the server of path's
// extension, started and given the file when needed); with path "", every
// running server is asked and the results are joined in server order.
func (m *Manager) WorkspaceSymbols(ctx context.Context, query, path string) (*Symbols, error) {
	var targets []*navTarget
	if path != "" {
		t, err := m.navOpen(ctx, path)
		if err != nil {
			return nil, err
		}
		targets = append(targets, t)
	} else {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, ErrManagerClosed
		}
		servers := append([]*server(nil), m.servers...)
		m.mu.Unlock()
		for _, s := range servers {
			if inst := s.current(); inst != nil {
				targets = append(targets, newTarget(s, inst))
			}
		}
		if len(targets) == 0 {
			return nil, fmt.Errorf("workspace symbols: no language server is running yet; name a file so that its server starts: %w", ErrNoServer)
		}
	}
	res := &Symbols{Answer: Answer{Op: OpWorkspaceSymbols, Status: StatusComplete}, Query: query, Symbols: []Symbol{}}
	var names, reasons []string
	for _, t := range targets {
		var list []lspSymbol
		a, err := m.request(ctx, t, OpWorkspaceSymbols, "workspace/symbol", map[string]any{"query": query}, &list)
		if err != nil {
			if len(targets) > 1 && errors.Is(err, ErrUnsupported) {
				continue
			}
			return nil, err
		}
		names = append(names, a.Server)
		if a.Incomplete {
			res.Incomplete, res.Status = true, StatusPartial
			reasons = append(reasons, a.Reason)
		}
		for i := range list {
			res.Symbols = append(res.Symbols, m.symbol(t, "", &list[i]))
		}
	}
	res.Server = strings.Join(names, ", ")
	res.Reason = strings.Join(reasons, "; ")
	res.Total = len(res.Symbols)
	return res, nil
}

// lspCallItem is a CallHierarchyItem.
type lspCallItem struct {
	Name           string     `json:"name"`
	Kind           SymbolKind `json:"kind"`
	Detail         string     `json:"detail"`
	URI            string     `json:"uri"`
	Range          lspRange   `json:"range"`
	SelectionRange lspRange   `json:"selectionRange"`
}

func (m *Manager) callItem(t *navTarget, raw json.RawMessage) (CallItem, error) {
	var it lspCallItem
	if err := json.Unmarshal(raw, &it); err != nil {
		return CallItem{}, fmt.Errorf("decoding a call hierarchy item: %w", err)
	}
	return CallItem{Name: it.Name, Kind: it.Kind, Detail: it.Detail,
		Location: m.location(t, it.URI, it.SelectionRange), raw: append([]byte(nil), raw...)}, nil
}

// prepare runs prepareCallHierarchy.
func (m *Manager) prepare(ctx context.Context, op NavOp, at Pos) (*navTarget, *CallHierarchy, error) {
	t, r, err := m.navResolve(ctx, at)
	if err != nil {
		return nil, nil, err
	}
	var list []json.RawMessage
	a, err := m.request(ctx, t, op, "textDocument/prepareCallHierarchy", t.positionParams(r), &list)
	if err != nil {
		return nil, nil, err
	}
	a.At = t.at(r)
	res := &CallHierarchy{Answer: a, Items: []CallItem{}}
	for _, raw := range list {
		it, err := m.callItem(t, raw)
		if err != nil {
			return nil, nil, fmt.Errorf("%s from %s: %w", op, a.Server, err)
		}
		res.Items = append(res.Items, it)
	}
	return t, res, nil
}

// PrepareCallHierarchy returns the call hierarchy items at at
// (textDocument/prepareCallHierarchy): the function or method named there.
func (m *Manager) PrepareCallHierarchy(ctx context.Context, at Pos) (*CallHierarchy, error) {
	_, res, err := m.prepare(ctx, OpPrepareCallHierarchy, at)
	return res, err
}

// IncomingCalls returns the callers of the function or method at at
// (prepareCallHierarchy, then callHierarchy/incomingCalls).
func (m *Manager) IncomingCalls(ctx context.Context, at Pos) (*CallHierarchy, error) {
	return m.calls(ctx, OpIncomingCalls, at)
}

// OutgoingCalls returns what the function or method at at calls
// (prepareCallHierarchy, then callHierarchy/outgoingCalls).
func (m *Manager) OutgoingCalls(ctx context.Context, at Pos) (*CallHierarchy, error) {
	return m.calls(ctx, OpOutgoingCalls, at)
}

func (m *Manager) calls(ctx context.Context, op NavOp, at Pos) (*CallHierarchy, error) {
	t, res, err := m.prepare(ctx, op, at)
	if err != nil {
		return nil, err
	}
	method, field := "callHierarchy/incomingCalls", "from"
	if op == OpOutgoingCalls {
		method, field = "callHierarchy/outgoingCalls", "to"
	}
	res.Calls = []Call{}
	for _, item := range res.Items {
		var list []map[string]json.RawMessage
		a, err := m.request(ctx, t, op, method, map[string]any{"item": json.RawMessage(item.raw)}, &list)
		if err != nil {
			return nil, err
		}
		if a.Incomplete && !res.Incomplete {
			res.Incomplete, res.Reason, res.Status = true, a.Reason, StatusPartial
		}
		for _, c := range list {
			other, err := m.callItem(t, c[field])
			if err != nil {
				return nil, fmt.Errorf("%s from %s: %w", op, a.Server, err)
			}
			var ranges []lspRange
			if err := json.Unmarshal(c["fromRanges"], &ranges); err != nil && len(c["fromRanges"]) > 0 {
				return nil, fmt.Errorf("%s from %s: decoding fromRanges: %w", op, a.Server, err)
			}
			// The ranges lie in the caller: the other item for incoming
			// calls, the item asked about for outgoing calls.
			in := other.Location.URI
			if op == OpOutgoingCalls {
				in = item.Location.URI
			}
			call := Call{Item: other, Sites: make([]Location, 0, len(ranges))}
			for _, r := range ranges {
				call.Sites = append(call.Sites, m.location(t, in, r))
			}
			call.Sites = sortLocations(call.Sites)
			res.Calls = append(res.Calls, call)
		}
	}
	sort.SliceStable(res.Calls, func(i, j int) bool {
		a, b := res.Calls[i].Item.Location, res.Calls[j].Item.Location
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	res.Total = len(res.Calls)
	return res, nil
}

// Navigate runs the operation req names and returns its result: a page
// of it when req has an Offset or a Limit and the result is a list (of
// locations, symbols, calls or types; see NavRequest and PageOf).
func (m *Manager) Navigate(ctx context.Context, req NavRequest) (NavResult, error) {
	if req.Offset < 0 || req.Limit < 0 {
		return nil, fmt.Errorf("%s: offset and limit must not be negative (got %d and %d)", req.Op, req.Offset, req.Limit)
	}
	res, err := m.navigate(ctx, req)
	if err != nil || req.Offset == 0 && req.Limit == 0 {
		return res, err
	}
	switch r := res.(type) {
	case *Locations:
		return r.Page(req.Offset, req.Limit), nil
	case *Symbols:
		return r.Page(req.Offset, req.Limit), nil
	case *CallHierarchy:
		return r.Page(req.Offset, req.Limit), nil
	case *TypeHierarchy:
		return r.Page(req.Offset, req.Limit), nil
	}
	return res, nil
}

func (m *Manager) navigate(ctx context.Context, req NavRequest) (NavResult, error) {
	switch req.Op {
	case OpDefinition:
		return nonNil(m.Definition(ctx, req.At))
	case OpDeclaration:
		return nonNil(m.Declaration(ctx, req.At))
	case OpTypeDefinition:
		return nonNil(m.TypeDefinition(ctx, req.At))
	case OpImplementation:
		return nonNil(m.Implementation(ctx, req.At))
	case OpReferences:
		return nonNil(m.References(ctx, req.At, req.IncludeDeclaration))
	case OpHover:
		return nonNil(m.Hover(ctx, req.At))
	case OpDocumentSymbols:
		return nonNil(m.DocumentSymbols(ctx, req.At.Path))
	case OpWorkspaceSymbols:
		return nonNil(m.WorkspaceSymbols(ctx, req.Query, req.At.Path))
	case OpPrepareCallHierarchy:
		return nonNil(m.PrepareCallHierarchy(ctx, req.At))
	case OpIncomingCalls:
		return nonNil(m.IncomingCalls(ctx, req.At))
	case OpOutgoingCalls:
		return nonNil(m.OutgoingCalls(ctx, req.At))
	case OpRename:
		return nonNil(m.Rename(ctx, req.At, req.NewName))
	case OpPrepareTypeHierarchy:
		return nonNil(m.PrepareTypeHierarchy(ctx, req.At))
	case OpSupertypes:
		return nonNil(m.Supertypes(ctx, req.At))
	case OpSubtypes:
		return nonNil(m.Subtypes(ctx, req.At))
	}
	ops := make([]string, 0, len(NavOps()))
	for _, op := range NavOps() {
		ops = append(ops, string(op))
	}
	return nil, fmt.Errorf("unknown navigation operation %q (known: %s)", req.Op, strings.Join(ops, ", "))
}

// nonNil turns a typed nil result into a nil interface.
func nonNil[T interface {
	*Locations | *Hover | *Symbols | *CallHierarchy | *TypeHierarchy | *RenameProposal
	NavResult
}](r T, err error) (NavResult, error) {
	if err != nil {
		return nil, err
	}
	return r, nil
}
