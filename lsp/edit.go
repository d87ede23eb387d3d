package lsp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/internal/atomicfile"
	"github.com/idebridge/idebridge/internal/udiff"
)

// MaxCheckedFiles bounds the files one EditSet checks: the edited files
// first, then their dependents; the dependents left out are counted
// (EditCheck.Unchecked).
const MaxCheckedFiles = 50

// SymbolAction is what a symbol-level Edit does to the symbol it names.
type SymbolAction string

// The symbol actions.
const (
	// SymbolBody replaces the symbol's body: what lies between the braces
	// that end its declaration, or the indented block after the colon
	// that ends its first line (Python).
	SymbolBody SymbolAction = "body"
	// SymbolReplace replaces the whole declaration (its range as the
	// server reports it).
	SymbolReplace SymbolAction = "replace"
	// SymbolInsertBefore inserts the text, as lines, before the
	// declaration; SymbolInsertAfter after it. A blank line separates
	// them.
	SymbolInsertBefore SymbolAction = "insert_before"
	SymbolInsertAfter  SymbolAction = "insert_after"
	// SymbolDelete deletes the declaration's lines. It is refused while
	// the server finds references to the symbol outside its own
	// declaration, unless Edit.Force is set.
	SymbolDelete SymbolAction = "delete"
)

// Edit is one change of one file, in one of three forms:
//
//   - OldString and NewString: OldString must occur exactly once in the
//     file's text (as staged so far); it is replaced by NewString. No
//     match, or several, is an error that says so (with the lines of the
//     matches).
//   - NewText: the file's whole new text.
//   - Symbol: a symbol found through the server's document symbols, by
//     its name path ("Square.Area", "main", "(*Square).Area"; "[2]"
//     after the path picks the second of several symbols with that
//     path), and Action on it with Text (Body sets both: the body
//     action with its text).
//   - Format: the file's text as staged so far, formatted by its server
//     (textDocument/formatting).
//   - Fix and Line: the code action titled Fix (exactly, or the one
//     title that contains it) that the server offers for the 1-based
//     Line of the staged text (see Manager.CodeActions): a quick fix, a
//     refactoring, organize imports. Its edit must change only this file.
//
// The JSON names are those of the MCP tools and the command line.
type Edit struct {
	// File is the file's path; relative paths are relative to the
	// working directory.
	File      string `json:"file"`
	OldString string `json:"old_string,omitempty"`
	NewString string `json:"new_string,omitempty"`
	// NewText is the whole new text (an empty file is a pointer to "").
	NewText *string `json:"new_text,omitempty"`
	// Symbol is the name path of the symbol a symbol-level edit acts on.
	Symbol string `json:"symbol,omitempty"`
	// Action is what to do to Symbol; default SymbolBody when Body is
	// set.
	Action SymbolAction `json:"action,omitempty"`
	// Body is the symbol's new body (Action SymbolBody).
	Body *string `json:"body,omitempty"`
	// Text is the new declaration, or the text to insert.
	Text string `json:"text,omitempty"`
	// Force deletes a symbol that still has references.
	Force bool `json:"force,omitempty"`
	// Format formats the file with its server.
	Format bool `json:"format,omitempty"`
	// Fix is the title of a code action at Line.
	Fix  string `json:"fix,omitempty"`
	Line int    `json:"line,omitempty"`

	// expect, when set, is the text the edit was computed from (a
	// rename's): the file's staged text must still be it.
	expect *string
}

// ErrEditSetBusy is matched (errors.Is) by the error of Stage when the
// context ended while another EditSet was staged on the same Manager.
var ErrEditSetBusy = errors.New("another edit set is staged on this manager")

// EditSet stages edits as unsaved text in the language servers, checks
// what they break or fix anywhere the servers can tell (Check), and then
// either writes them all (Apply) or puts every server back on the disk's
// text (Discard). Nothing is written to disk before Apply.
//
// One EditSet at a time is staged on a Manager: a second one's Stage waits
// until the first is applied or discarded (or its ctx ends). Every set
// that staged something must end with Apply or Discard. The Manager's
// other users (Open, Change, a getDiagnostics) should leave the staged
// files alone meanwhile: Check notices a staged text replaced under it and
// sends it again. A Drain while a set is staged may deliver diagnostics of
// the staged text; after Discard, none. An EditSet is safe for concurrent
// use; its operations run one at a time.
type EditSet struct {
	m *Manager

	mu      sync.Mutex
	held    bool // holds m.edit
	files   map[string]*stagedFile
	order   []string // staged files, in the order first staged
	check   []string // the files checked: staged first, then dependents
	inCheck map[string]bool
	more    int // dependents beyond MaxCheckedFiles
	base    map[string]fileSet
	opened  map[string]bool // files this set opened in their servers
	// changed: a text the set sent changed what a server had, since the
	// last settle; lastChanged is the last file so changed.
	changed     bool
	lastChanged string
}

// stagedFile is one file of the set.
type stagedFile struct {
	path  string
	disk  string // the text on disk when first staged
	state *atomicfile.State
	text  string // the staged text
	edits int
}

// fileSet is a file's diagnostics as one settle found them.
type fileSet struct {
	text   string // the text they are about
	diags  []diag.Diagnostic
	total  int // the set's true size; diags holds at most maxSetKept
	server string
	res    SettleResult
	err    error
}

// NewEditSet returns an empty edit set on m.
func (m *Manager) NewEditSet() *EditSet {
	return &EditSet{m: m, files: map[string]*stagedFile{}, inCheck: map[string]bool{},
		base: map[string]fileSet{}, opened: map[string]bool{}}
}

// Edits returns the proposal as edits (each file's whole new text), to
// stage a rename with other edits and check it before it is written.
// Staging one fails when its file no longer holds the text the rename
// was computed from (it changed on disk since, or an edit staged before
// changed it).
func (p *RenameProposal) Edits() []Edit {
	out := make([]Edit, 0, len(p.Files))
	for _, f := range p.Files {
		t, old := f.NewText, f.OldText
		out = append(out, Edit{File: f.Path, NewText: &t, expect: &old})
	}
	return out
}

// acquire makes s the set staged on its manager, waiting for another.
func (s *EditSet) acquire(ctx context.Context) error {
	if s.held {
		return nil
	}
	select {
	case s.m.edit <- struct{}{}:
		s.held = true
		return nil
	default:
	}
	select {
	case s.m.edit <- struct{}{}:
		s.held = true
		return nil
	case <-ctx.Done():
		return fmt.Errorf("staging edits: %w (%w)", ErrEditSetBusy, ctx.Err())
	}
}

func (s *EditSet) release() {
	if s.held {
		s.held = false
		<-s.m.edit
	}
}

// Stage applies edits, in order, to the staged texts of their files (a
// file's first edit applies to its text on disk) and sends the results to
// the files' servers as unsaved changes (didChange); nothing is written.
// Before anything is sent, it finds the files the edits may affect and
// records their diagnostics as the disk has them, the baseline of Check:
// the files that reference the symbols whose declarations the edits touch
// (the servers' references), and the other files of the edited files'
// directories that the same server serves; at most MaxCheckedFiles in all.
//
// An edit that cannot be applied (no match or several for OldString, an
// unknown symbol, a delete of a symbol still referenced, a file that does
// not exist) fails the whole call with an error naming the edit: none of
// its edits is staged, and the edits staged before stay as they were.
func (s *EditSet) Stage(ctx context.Context, edits []Edit) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(edits) == 0 {
		return errors.New("staging edits: no edits given")
	}
	if err := s.acquire(ctx); err != nil {
		return err
	}
	err := s.stage(ctx, edits)
	if len(s.files) == 0 {
		// Nothing staged: the set holds nothing open and no lock.
		s.closeOpened(context.WithoutCancel(ctx))
		s.reset()
	}
	return err
}

func (s *EditSet) stage(ctx context.Context, edits []Edit) (err error) {
	pending := map[string]*stagedFile{}
	var newOrder []string
	var refFiles []string
	committed := false
	defer func() {
		if err == nil || committed {
			return
		}
		// Asking for symbols sent the servers texts of this call's edits:
		// put back what they had.
		bctx := context.WithoutCancel(ctx)
		for p := range pending {
			if s.files[p] != nil {
				continue
			}
			if s.opened[p] {
				delete(s.opened, p)
				_ = s.m.Close(bctx, p)
			} else if oerr := s.m.Open(bctx, p); oerr != nil {
				s.m.log.Debug("lsp: edit: putting a file back on its disk text failed", "path", p, "err", oerr)
			}
		}
		if serr := s.send(bctx); serr != nil {
			s.m.log.Debug("lsp: edit: sending the staged texts again failed", "err", serr)
		}
	}()
	for i, e := range edits {
		where := fmt.Sprintf("edit %d (%s)", i+1, e.File)
		if e.File == "" {
			return fmt.Errorf("edit %d: no file given", i+1)
		}
		abs, err := filepath.Abs(e.File)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		sf := pending[abs]
		if sf == nil {
			if old := s.files[abs]; old != nil {
				c := *old
				sf = &c
			} else {
				if fi, err := os.Stat(abs); err == nil && fi.Size() > maxTrackedFileBytes {
					return fmt.Errorf("%s: the file is %d bytes, more than the %d a language server is sent", where, fi.Size(), maxTrackedFileBytes)
				}
				data, st, err := atomicfile.Read(abs)
				if err != nil {
					return fmt.Errorf("%s: reading the file: %w", where, err)
				}
				if !st.Exists {
					return fmt.Errorf("%s: the file does not exist", where)
				}
				sf = &stagedFile{path: abs, disk: string(data), state: st, text: string(data)}
				newOrder = append(newOrder, abs)
			}
			pending[abs] = sf
		}
		if e.expect != nil && *e.expect != sf.text {
			return fmt.Errorf("%s: the file is no longer the text the proposal was computed from (it changed since); ask for the proposal again", where)
		}
		next, refs, err := s.apply(ctx, sf, e)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		sf.text = next
		sf.edits++
		refFiles = append(refFiles, refs...)
	}
	// Every edit applies: commit them.
	committed = true
	s.order = append(s.order, newOrder...)
	for p, sf := range pending {
		s.files[p] = sf
	}
	add := append(append([]string(nil), newOrder...), refFiles...)
	for _, p := range newOrder {
		add = append(add, s.siblings(p)...)
	}
	fresh := s.addToCheck(add)
	if err := s.baseline(ctx, fresh); err != nil {
		return err
	}
	return s.send(ctx)
}

// apply computes the text of sf after e, and the files that reference
// the symbols e touches.
func (s *EditSet) apply(ctx context.Context, sf *stagedFile, e Edit) (string, []string, error) {
	kinds := 0
	if e.OldString != "" {
		kinds++
	}
	if e.NewText != nil {
		kinds++
	}
	if e.Symbol != "" {
		kinds++
	}
	if e.Format {
		kinds++
	}
	if e.Fix != "" {
		kinds++
	}
	if kinds != 1 {
		return "", nil, errors.New("give exactly one of old_string (with new_string), new_text, symbol, format, or fix (with line)")
	}
	cur := sf.text
	var next string
	var syms *fileSymbols
	switch {
	case e.OldString != "":
		start, err := uniqueMatch(cur, e.OldString)
		if err != nil {
			return "", nil, err
		}
		next = cur[:start] + e.NewString + cur[start+len(e.OldString):]
	case e.NewText != nil:
		next = *e.NewText
	case e.Format:
		var err error
		if next, err = s.format(ctx, sf.path, cur); err != nil {
			return "", nil, err
		}
	case e.Fix != "":
		if e.Line < 1 {
			return "", nil, errNoFixLine
		}
		var err error
		if next, err = s.fix(ctx, sf.path, cur, e.Line, e.Fix); err != nil {
			return "", nil, err
		}
	default:
		var err error
		syms, err = s.symbols(ctx, sf.path, cur)
		if err != nil {
			return "", nil, err
		}
		next, err = s.symbolEdit(ctx, syms, e)
		if err != nil {
			return "", nil, err
		}
	}
	if next == cur {
		return next, nil, nil
	}
	refs := s.dependents(ctx, sf.path, cur, next, syms)
	return next, refs, nil
}

// uniqueMatch returns where old occurs in text, or an error when it
// occurs nowhere or more than once.
func uniqueMatch(text, old string) (int, error) {
	var at []int
	for i := 0; ; {
		j := strings.Index(text[i:], old)
		if j < 0 {
			break
		}
		at = append(at, i+j)
		i += j + 1
	}
	switch len(at) {
	case 1:
		return at[0], nil
	case 0:
		if strings.Contains(strings.Join(strings.Fields(text), " "), strings.Join(strings.Fields(old), " ")) {
			return 0, errors.New("old_string does not occur in the file as given; it does with other white space: copy it exactly")
		}
		return 0, errors.New("old_string does not occur in the file")
	}
	lines := make([]string, 0, min(len(at), 10))
	for _, o := range at[:min(len(at), 10)] {
		lines = append(lines, fmt.Sprint(strings.Count(text[:o], "\n")+1))
	}
	more := ""
	if len(at) > 10 {
		more = ", …"
	}
	return 0, fmt.Errorf("old_string occurs %d times in the file (at lines %s%s); give more of the text around it so that it occurs once", len(at), strings.Join(lines, ", "), more)
}

// dependents asks the server which files reference the symbols whose
// declarations the change from cur to next touches (nil when the server
// cannot tell).
func (s *EditSet) dependents(ctx context.Context, path, cur, next string, syms *fileSymbols) []string {
	if _, err := s.m.ServerFor(path); err != nil {
		return nil
	}
	start, end := changedSpan(cur, next)
	if syms == nil {
		var err error
		if syms, err = s.symbols(ctx, path, cur); err != nil {
			s.m.log.Debug("lsp: edit: no symbols to find dependents", "path", path, "err", err)
			return nil
		}
	}
	touched := syms.touching(start, end)
	if len(touched) > maxTouchedSymbols {
		touched = touched[:maxTouchedSymbols]
	}
	var out []string
	for _, n := range touched {
		locs, err := s.m.References(ctx, syms.pos(n), false)
		if err != nil {
			s.m.log.Debug("lsp: edit: references failed", "path", path, "symbol", n.path, "err", err)
			continue
		}
		for _, l := range locs.Locations {
			if l.Path != "" && l.Path != path {
				out = append(out, l.Path)
			}
		}
	}
	return out
}

// maxTouchedSymbols bounds the symbols whose references one edit asks for.
const maxTouchedSymbols = 20

// changedSpan returns the byte span of a that b replaces: a's text
// between the common prefix and suffix of a and b.
func changedSpan(a, b string) (int, int) {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	q := 0
	for q < len(a)-p && q < len(b)-p && a[len(a)-1-q] == b[len(b)-1-q] {
		q++
	}
	return p, len(a) - q
}

// siblings returns the other files of path's directory that path's server
// serves, sorted.
func (s *EditSet) siblings(path string) []string {
	srv, err := s.m.ServerFor(path)
	if err != nil {
		return nil
	}
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(filepath.Dir(path), e.Name())
		if p == path {
			continue
		}
		if name, err := s.m.ServerFor(p); err == nil && name == srv {
			out = append(out, p)
		}
	}
	return out
}

// addToCheck adds paths to the check set (bounded), returning those new
// to it.
func (s *EditSet) addToCheck(paths []string) []string {
	limit := min(MaxCheckedFiles, s.m.opts.MaxOpenDocuments)
	var fresh []string
	for _, p := range paths {
		if s.inCheck[p] {
			continue
		}
		if _, staged := s.files[p]; !staged && len(s.check) >= limit {
			s.more++
			s.inCheck[p] = true // counted once
			continue
		}
		s.inCheck[p] = true
		s.check = append(s.check, p)
		fresh = append(fresh, p)
	}
	return fresh
}

// isOpen reports whether path is open in its server.
func (s *EditSet) isOpen(path string) bool {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	return s.m.docs.Contains(path)
}

// touch opens path in its server with text (the disk's when text is
// nil), remembering that the set opened it.
func (s *EditSet) touch(ctx context.Context, path string, text *string) error {
	if !s.isOpen(path) && !s.opened[path] {
		s.opened[path] = true
	}
	before, wasOpen := s.m.serverText(path)
	var err error
	if text == nil {
		err = s.m.Open(ctx, path)
	} else {
		err = s.m.Change(ctx, path, *text)
	}
	after, _ := s.m.serverText(path)
	sf := s.files[path]
	if wasOpen && before != after || !wasOpen && sf != nil && after != sf.disk {
		// The server's text of the file changed: what it says of other
		// files may change too (see settleAll).
		s.changed, s.lastChanged = true, path
	}
	return err
}

// baseline records the disk's diagnostics of paths. Staged texts already
// sent are taken back to the disk's first, and sent again by the caller.
func (s *EditSet) baseline(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	for _, p := range s.order {
		if t, ok := s.m.serverText(p); ok && t != s.files[p].disk {
			disk := s.files[p].disk
			if err := s.touch(ctx, p, &disk); err != nil {
				return err
			}
		}
	}
	texts := make([]*string, len(paths))
	for i, p := range paths {
		if sf := s.files[p]; sf != nil {
			texts[i] = &sf.disk
		}
	}
	sets := s.settleAll(ctx, paths, texts)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("staging edits: %w", err)
	}
	for i, p := range paths {
		s.base[p] = sets[i]
	}
	return nil
}

// send sends every staged text to its server.
func (s *EditSet) send(ctx context.Context) error {
	for _, p := range s.order {
		if err := s.touch(ctx, p, &s.files[p].text); err != nil && !errors.Is(err, ErrNoServer) {
			return fmt.Errorf("staging %s: %w", p, err)
		}
	}
	return nil
}

// settleAll opens each of paths with its text (nil: the disk's), waits
// for its diagnostics, side by side, and returns them. When the set
// changed a server's text since the last settle, every file but the last
// one changed is sent again as a new version once all are sent (see
// Manager.resend), so that no file's diagnostics are taken from before
// another file's change.
func (s *EditSet) settleAll(ctx context.Context, paths []string, texts []*string) []fileSet {
	out := make([]fileSet, len(paths))
	var served []int
	for i, p := range paths {
		fs := &out[i]
		if texts[i] != nil {
			fs.text = *texts[i]
		} else if dv, err := readDisk(p); err == nil {
			fs.text = dv.text
		} else {
			fs.err = err
			continue
		}
		name, err := s.m.ServerFor(p)
		if errors.Is(err, ErrNoServer) {
			continue
		}
		fs.server = name
		if err == nil {
			t := fs.text
			err = s.touch(ctx, p, &t)
		}
		if err != nil {
			fs.err = err
			continue
		}
		served = append(served, i)
	}
	if s.changed {
		for _, i := range served {
			if paths[i] == s.lastChanged {
				continue
			}
			if err := s.m.resend(ctx, paths[i]); err != nil {
				out[i].err = err
			}
		}
		s.changed = false
	}
	var wg sync.WaitGroup
	for _, i := range served {
		if out[i].err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i].res, out[i].err = s.m.Settle(ctx, paths[i])
		}()
	}
	wg.Wait()
	for _, i := range served {
		if out[i].err == nil {
			out[i].diags, out[i].total, _ = s.m.currentSet(paths[i])
		}
	}
	return out
}

// Check sends the staged texts again where a server no longer has them,
// waits until the diagnostics of every checked file are known for the
// staged texts (as Settle does), and returns what the staged edits change:
// per file, the diagnostics introduced and resolved against the disk's.
// Several staged edits are judged together. Nothing is written.
func (s *EditSet) Check(ctx context.Context) (*EditCheck, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.files) == 0 {
		return nil, errors.New("checking edits: nothing is staged")
	}
	return s.checkLocked(ctx)
}

func (s *EditSet) checkLocked(ctx context.Context) (*EditCheck, error) {
	var sets []fileSet
	for attempt := 0; ; attempt++ {
		if err := s.send(ctx); err != nil {
			return nil, err
		}
		texts := make([]*string, len(s.check))
		for i, p := range s.check {
			if sf := s.files[p]; sf != nil {
				texts[i] = &sf.text
			}
		}
		sets = s.settleAll(ctx, s.check, texts)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("checking edits: %w", err)
		}
		// Another user of the manager may have sent a staged file's disk
		// text meanwhile: send it again and check again, once.
		replaced := ""
		for _, p := range s.order {
			if t, ok := s.m.serverText(p); ok && t != s.files[p].text {
				replaced = p
				break
			}
		}
		if replaced == "" {
			break
		}
		if attempt == 1 {
			return nil, fmt.Errorf("checking edits: the staged text of %s was replaced in its server while it was checked", s.m.display(replaced))
		}
	}
	res := &EditCheck{Files: make([]FileCheck, 0, len(s.check)), Unchecked: s.more, Diff: s.diffLocked()}
	for i, p := range s.check {
		_, edited := s.files[p]
		fc := compareSets(p, edited, s.base[p], sets[i])
		res.Introduced += len(fc.Introduced)
		res.Resolved += len(fc.Resolved)
		res.Files = append(res.Files, fc)
	}
	res.Status = worstStatus(res.Files)
	return res, nil
}

// Diff returns the unified diff of every staged file against its text on
// disk, in the order the files were first staged, with paths relative to
// the project.
func (s *EditSet) Diff() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.diffLocked()
}

func (s *EditSet) diffLocked() string {
	var b strings.Builder
	for _, p := range s.order {
		sf := s.files[p]
		name := strings.TrimPrefix(filepath.ToSlash(displayPath(s.m.opts.ProjectDir, p)), "/")
		b.WriteString(udiff.Unified("a/"+name, "b/"+name, sf.disk, sf.text))
	}
	return b.String()
}

// Files returns the staged files' paths, in the order first staged.
func (s *EditSet) Files() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.order...)
}

// Discard drops every staged edit and puts the servers back on the disk's
// text: a staged file that was open before the set staged it is sent its
// text on disk, and every file the set opened is closed (didClose), so
// that the servers' next diagnostics are the disk's; the checked files
// that stay open are settled, so that the next Drain delivers no
// diagnostic of the staged text. The set is then
// empty and no longer holds its Manager. Discard may be called more than
// once.
func (s *EditSet) Discard(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.discardLocked(ctx)
}

func (s *EditSet) discardLocked(ctx context.Context) error {
	var errs []error
	staged := false
	for _, p := range s.order {
		if t, ok := s.m.serverText(p); ok && t != s.files[p].disk {
			staged = true
		}
	}
	for _, p := range s.order {
		if s.opened[p] {
			continue
		}
		// Open sends the disk's text when the server has another; a file
		// that can no longer be read is closed, so that no staged text
		// stays in its server.
		if err := s.m.Open(ctx, p); err != nil && !errors.Is(err, ErrNoServer) {
			_ = s.m.Close(ctx, p)
			errs = append(errs, fmt.Errorf("putting %s back on its text on disk (closed it instead): %w", p, err))
		}
	}
	s.closeOpened(ctx)
	if staged {
		// The files left open (open before the set) wait for the disk's
		// diagnostics, so that the registry holds no staged text's set for
		// the next Drain to deliver.
		var still []string
		for _, p := range s.check {
			if s.isOpen(p) {
				still = append(still, p)
			}
		}
		s.changed, s.lastChanged = true, ""
		s.settleAll(ctx, still, make([]*string, len(still)))
		s.closeOpened(ctx)
	}
	s.reset()
	return errors.Join(errs...)
}

// closeOpened closes the files the set opened.
func (s *EditSet) closeOpened(ctx context.Context) {
	for p := range s.opened {
		if err := s.m.Close(ctx, p); err != nil {
			s.m.log.Debug("lsp: edit: closing a checked file failed", "path", p, "err", err)
		}
	}
	clear(s.opened)
}

func (s *EditSet) reset() {
	clear(s.files)
	clear(s.inCheck)
	clear(s.base)
	s.order, s.check, s.more = nil, nil, 0
	s.changed, s.lastChanged = false, ""
	s.release()
}

// ApplyOptions adjust Apply. A nil *ApplyOptions means none.
type ApplyOptions struct {
	// BeforeWrite, when set, is called with the staged files' paths
	// before anything is written (and before any review); an error from
	// it refuses the write (nothing is written, the edits stay staged)
	// and is returned as it is. An editor integration asks there whether
	// any of the files has unsaved changes.
	BeforeWrite func(ctx context.Context, paths []string) error
	// Review, when set, is asked about every staged file, one after the
	// other in the order first staged, before anything is written: path
	// and its proposed (staged) text. ok true accepts the file with
	// final, the text to write, which may differ from proposed (the
	// user edited it while reviewing); ok false refuses it, err (or nil)
	// saying what happened. An error refuses it too. Nothing is written
	// unless every file is accepted: the first refusal ends the review,
	// and Apply returns a *ReviewRefusedError naming the file, with the
	// edits still staged. An editor integration shows each file in the
	// IDE's diff viewer there.
	Review func(ctx context.Context, path, proposed string) (final string, ok bool, err error)
}

// ReviewRefusedError is Apply's error when ApplyOptions.Review refused a
// file: nothing was written and the edits stay staged.
type ReviewRefusedError struct {
	// Path is the file refused; Reviewed how many files had been
	// accepted before it.
	Path     string
	Reviewed int
	// Err is what the review said (nil: the file was rejected).
	Err error
}

func (e *ReviewRefusedError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("edits not applied: the edit of %s was rejected in review; nothing was written", e.Path)
	}
	return fmt.Sprintf("edits not applied: the review of %s: %v; nothing was written", e.Path, e.Err)
}

// Unwrap returns what the review said.
func (e *ReviewRefusedError) Unwrap() error { return e.Err }

// EditApplied is the result of Apply.
type EditApplied struct {
	// Written are the files written, in the order first staged.
	Written []string `json:"written"`
	// Modified are the files whose reviewed text (ApplyOptions.Review)
	// differed from the staged one: that text was written, and checked.
	Modified []string `json:"modified,omitempty"`
	// Check is the check of what was written, against the diagnostics
	// the files had before.
	Check *EditCheck `json:"check"`
}

// Apply writes every staged file, all or none (atomicfile's WriteAll):
// each file must still be what it was on disk when first staged (its
// content and identity), and lie inside ManagerOptions.Roots (symbolic
// links resolved; errors.Is ErrOutsideRoots); otherwise nothing is
// written, the error names the file (errors.Is ErrEditConflict when it
// changed on disk), and the edits stay staged (Discard them, or Apply
// again). With ApplyOptions.Review, every file is reviewed first (once
// the checks above pass: a write they would refuse is refused before
// anyone is asked), and nothing is written unless all are accepted (see
// ApplyOptions); a text the review changed replaces the staged one, and
// the files depending on what that change touches join the check. After
// the write the servers are told the files were saved, and the written
// files are checked again: the result's Check is the delta of what was
// written. The set is then empty.
func (s *EditSet) Apply(ctx context.Context, opts *ApplyOptions) (*EditApplied, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.files) == 0 {
		return nil, errors.New("applying edits: nothing is staged")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("edits not applied: %w", err)
	}
	paths := append([]string(nil), s.order...)
	if opts != nil && opts.BeforeWrite != nil {
		if err := opts.BeforeWrite(ctx, paths); err != nil {
			return nil, err
		}
	}
	wopts := &atomicfile.Options{Roots: s.m.opts.Roots}
	var modified []string
	if opts != nil && opts.Review != nil {
		// A write that would be refused is refused before anyone is
		// asked about it.
		if err := atomicfile.Check(s.changes(), wopts); err != nil {
			return nil, fmt.Errorf("edits not applied: %w", err)
		}
		var err error
		if modified, err = s.review(ctx, opts.Review); err != nil {
			return nil, err
		}
	}
	if err := atomicfile.WriteAll(s.changes(), wopts); err != nil {
		return nil, fmt.Errorf("edits not applied: %w", err)
	}
	out := &EditApplied{Written: paths, Modified: modified}
	diff := s.diffLocked()
	wctx := context.WithoutCancel(ctx)
	for _, p := range s.order {
		// The server has the text; it learns the disk has it too.
		if err := s.m.Save(wctx, p); err != nil && !errors.Is(err, ErrNoServer) {
			s.m.log.Debug("lsp: edit: save notification failed", "path", p, "err", err)
		}
	}
	// What is on disk is now the staged text: check it as staged.
	for _, p := range s.order {
		sf := s.files[p]
		sf.disk = sf.text
	}
	c, err := s.checkLocked(ctx)
	for _, p := range s.order {
		delete(s.opened, p) // written: it stays open with the disk's text
	}
	s.closeOpened(wctx)
	s.reset()
	if err != nil {
		return out, fmt.Errorf("edits applied; checking them afterwards: %w", err)
	}
	c.Diff = diff
	out.Check = c
	return out, nil
}

// changes are the staged files as a write of them all.
func (s *EditSet) changes() []atomicfile.Change {
	changes := make([]atomicfile.Change, 0, len(s.order))
	for _, p := range s.order {
		sf := s.files[p]
		changes = append(changes, atomicfile.Change{Path: p, Data: []byte(sf.text), Base: sf.state})
	}
	return changes
}

// review asks review about every staged file and, when all are accepted,
// stages the texts the review changed (with the dependents of what they
// touch), returning those files. On a refusal nothing changes.
func (s *EditSet) review(ctx context.Context, review func(ctx context.Context, path, proposed string) (string, bool, error)) ([]string, error) {
	finals := make(map[string]string, len(s.order))
	for i, p := range s.order {
		if err := ctx.Err(); err != nil {
			return nil, &ReviewRefusedError{Path: p, Reviewed: i, Err: err}
		}
		final, ok, err := review(ctx, p, s.files[p].text)
		if err == nil && !ok && ctx.Err() != nil {
			err = ctx.Err()
		}
		if err != nil || !ok {
			return nil, &ReviewRefusedError{Path: p, Reviewed: i, Err: err}
		}
		finals[p] = final
	}
	var modified, refs []string
	for _, p := range s.order {
		sf := s.files[p]
		if finals[p] == sf.text {
			continue
		}
		modified = append(modified, p)
		refs = append(refs, s.dependents(ctx, p, sf.text, finals[p], nil)...)
		sf.text = finals[p]
		sf.edits++
	}
	if len(modified) == 0 {
		return nil, nil
	}
	// The reviewed texts were never checked: they are staged like any
	// edit, with a baseline for the files they newly reach.
	if err := s.baseline(ctx, s.addToCheck(refs)); err != nil {
		return modified, fmt.Errorf("edits not applied: %w", err)
	}
	if err := s.send(ctx); err != nil {
		return modified, fmt.Errorf("edits not applied: %w", err)
	}
	return modified, nil
}
