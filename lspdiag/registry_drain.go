package lspdiag

import (
	"cmp"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/internal/fileuri"
)

// identity is the compact dedup key of a diagnostic: its severity and
// range, exactly, and a 64-bit seeded hash of message, source and code.
// Two diagnostics with equal identities are the same diagnostic except with
// probability about 2^-64 per pair that share severity and range.
type identity struct {
	h          uint64
	start, end uint64 // line<<32 | character, saturated
	sev        diag.Severity
}

var errInvalidUTF8 = errors.New("diagnostic identity: message, source or code is not valid UTF-8")

// computeIdentity fails on text that is not valid UTF-8: such text does not
// survive a JSON round trip (invalid bytes become U+FFFD), so its identity
// would not be stable across the C ABI and the command line. The caller
// delivers such a diagnostic without deduplication.
func computeIdentity(seed maphash.Seed, d *diag.Diagnostic) (identity, error) {
	if !utf8.ValidString(d.Message) || !utf8.ValidString(d.Source) || !utf8.ValidString(d.Code) {
		return identity{}, errInvalidUTF8
	}
	var h maphash.Hash
	h.SetSeed(seed)
	writeField(&h, d.Message)
	writeField(&h, d.Source)
	writeField(&h, d.Code)
	var pos [32]byte
	binary.LittleEndian.PutUint64(pos[0:], uint64(d.Range.Start.Line))
	binary.LittleEndian.PutUint64(pos[8:], uint64(d.Range.Start.Character))
	binary.LittleEndian.PutUint64(pos[16:], uint64(d.Range.End.Line))
	binary.LittleEndian.PutUint64(pos[24:], uint64(d.Range.End.Character))
	h.Write(pos[:])
	return identity{
		h:     h.Sum64(),
		start: packPos(d.Range.Start),
		end:   packPos(d.Range.End),
		sev:   d.Severity,
	}, nil
}

// writeField writes s length-prefixed, so that field boundaries count.
func writeField(h *maphash.Hash, s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.WriteString(s)
}

func packPos(p diag.Position) uint64 {
	return uint64(min(uint(p.Line), 1<<32-1))<<32 | uint64(min(uint(p.Character), 1<<32-1))
}

// compareDiagnostics orders by severity (most severe first), then start and
// end position, then message, source and code.
func compareDiagnostics(a, b *diag.Diagnostic) int {
	if c := cmp.Compare(a.Severity, b.Severity); c != 0 {
		return c
	}
	if c := comparePos(a.Range.Start, b.Range.Start); c != 0 {
		return c
	}
	if c := comparePos(a.Range.End, b.Range.End); c != 0 {
		return c
	}
	if c := strings.Compare(a.Message, b.Message); c != 0 {
		return c
	}
	if c := strings.Compare(a.Source, b.Source); c != 0 {
		return c
	}
	return strings.Compare(a.Code, b.Code)
}

func comparePos(a, b diag.Position) int {
	if c := cmp.Compare(a.Line, b.Line); c != 0 {
		return c
	}
	return cmp.Compare(a.Character, b.Character)
}

// deliveredSet remembers the delivered identities of one document, at
// most max of them, forgetting the oldest first.
type deliveredSet struct {
	ids   map[identity]struct{}
	order []identity // ring of insertion order once full
	next  int        // next slot of order to overwrite once full
	max   int
}

func newDeliveredSet(max int) *deliveredSet {
	return &deliveredSet{ids: make(map[identity]struct{}), max: max}
}

func (s *deliveredSet) has(id identity) bool {
	if s == nil {
		return false
	}
	_, ok := s.ids[id]
	return ok
}

func (s *deliveredSet) add(id identity) {
	if _, ok := s.ids[id]; ok {
		return
	}
	if len(s.order) < s.max {
		s.order = append(s.order, id)
	} else {
		delete(s.ids, s.order[s.next])
		s.order[s.next] = id
		s.next = (s.next + 1) % s.max
	}
	s.ids[id] = struct{}{}
}

// candidate is a new diagnostic of the file being drained.
type candidate struct {
	e      *entry
	server int // index into the document's servers
	index  int // index in its publish
}

func compareCandidates(a, b *candidate) int {
	if c := compareDiagnostics(&a.e.d, &b.e.d); c != 0 {
		return c
	}
	if c := cmp.Compare(a.server, b.server); c != 0 {
		return c
	}
	return cmp.Compare(a.index, b.index)
}

// fileResult is one document's part of a drain.
type fileResult struct {
	ds      *docState
	top     []candidate // the best maxPerFile new diagnostics, sorted once collected
	bar     candidate   // with full: the worst of top at the last prune
	full    bool        // top held maxPerFile candidates at the last prune
	unique  int         // new diagnostics after dedup, the cap's drops included
	deliver int         // how many of top survive the total limit
}

// offer adds c to the candidates of fr, keeping the best k. Candidates
// gather unsorted up to about 2k, then are sorted and cut back to k, so
// that n offers cost O(n log k) whatever their order; one no better than
// the worst kept at the last cut is refused at once.
func (fr *fileResult) offer(c candidate, k int) {
	if fr.full && compareCandidates(&c, &fr.bar) >= 0 {
		return
	}
	fr.top = append(fr.top, c)
	if len(fr.top) >= pruneAt(k) {
		fr.prune(k)
	}
}

// pruneAt is how many candidates offer gathers before cutting back to k.
func pruneAt(k int) int {
	if k > math.MaxInt/2-16 {
		return math.MaxInt
	}
	return 2*k + 16
}

// prune sorts the candidates and keeps the best k.
func (fr *fileResult) prune(k int) {
	slices.SortFunc(fr.top, func(a, b candidate) int { return compareCandidates(&a, &b) })
	if len(fr.top) > k {
		clear(fr.top[k:])
		fr.top = fr.top[:k]
		fr.bar, fr.full = fr.top[k-1], true
	}
}

// note is a line for the attachment about one server's publish for one
// document.
type note struct {
	uri, text string
}

// Drain returns the new diagnostics since the last drain and clears what
// was pending: nothing is handed out twice. It returns nil, false when
// there is nothing new and nothing to note.
//
// The pending publishes are filtered by the documents' current versions,
// deduplicated (identity: message, severity, range, source, code) within
// the batch and against what was delivered before, sorted, and bounded:
// at most MaxPerFile per file and MaxTotal in all, the most severe first
// (across files, ties go to the file that sorts first). What the limits
// leave out is counted in Cut and not remembered as delivered; Cut also
// counts what MaxPerPublish dropped from a publish that was new (not
// delivered before, not repeated in that publish; a drop another server
// also published counts once per server). Invalid diagnostics dropped from
// a publish are noted in Notes, one line per server and document. Cut
// and Notes alone make an attachment: the block then says how many new
// diagnostics it does not show, or why some were dropped.
//
// Drain costs O(n log n) in the n pending diagnostics.
func (r *Registry) Drain() (*diag.Attachment, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.pendingDocs) == 0 {
		return nil, false
	}
	docs := make([]*docState, 0, len(r.pendingDocs))
	for _, ds := range r.pendingDocs {
		docs = append(docs, ds)
	}
	slices.SortFunc(docs, func(a, b *docState) int { return strings.Compare(a.uri, b.uri) })
	r.stats.Pending = 0
	att, ok := r.drainDocs(docs, defaultView{r}, &r.stats, r.maxPerFile, r.maxTotal)
	// The drained documents have nothing pending any more: into the LRU,
	// in URI order.
	for _, ds := range docs {
		ds.npending = 0
		r.settle(ds)
	}
	if len(r.pendingDocs) == 0 && len(docs) > maxScratch {
		r.pendingDocs = map[string]*docState{} // let a large map's buckets go
	}
	return att, ok
}

// drainView is whose drain it is: the registry's own (Drain) or a
// Reader's. It says which publish of a document's server the drain takes,
// and keeps the delivered identities.
type drainView interface {
	// take returns the publish of ds.servers[si] to drain, marking it
	// drained, or nil.
	take(ds *docState, si int) *pendingPublish
	// delivered returns the identities of ds delivered before (nil: none).
	delivered(ds *docState) *deliveredSet
	// deliver remembers id as delivered for ds.
	deliver(ds *docState, id identity)
	// truncated is how many of what MaxPerPublish dropped from pp count
	// as new in Cut.
	truncated(pp *pendingPublish) int
}

// defaultView is the registry's own drain: the pending publishes, and
// the documents' delivered sets.
type defaultView struct{ r *Registry }

func (v defaultView) take(ds *docState, si int) *pendingPublish {
	ss := &ds.servers[si]
	pp := ss.pending
	ss.pending = nil
	return pp
}

func (v defaultView) delivered(ds *docState) *deliveredSet { return ds.set }

func (v defaultView) deliver(ds *docState, id identity) { v.r.deliveredSet(ds).add(id) }

func (v defaultView) truncated(pp *pendingPublish) int { return pp.truncatedNew }

// drainDocs is a drain of docs (sorted by URI) through v, counted in st,
// with the limits perFile and total: see Drain. Call with r.mu held.
func (r *Registry) drainDocs(docs []*docState, v drainView, st *Stats, perFile, total int) (*diag.Attachment, bool) {
	files := r.files[:0]
	var notes []note
	var bySeverity [diag.SeverityHint + 1]int // kept per-file candidates per severity
	kept := 0
	for _, ds := range docs {
		fr := fileResult{ds: ds}
		if len(files) < cap(files) {
			fr.top = files[:len(files)+1][len(files)].top[:0] // reuse scratch
		}
		notes = r.collect(&fr, notes, v, st, perFile)
		if fr.unique == 0 {
			continue
		}
		for _, c := range fr.top {
			bySeverity[c.e.d.Severity]++
		}
		kept += len(fr.top)
		files = append(files, fr)
	}

	// The total limit: all candidates more severe than the threshold
	// severity, then threshold ones in file order. Each file's top is
	// sorted by severity, so what survives is a prefix of it.
	threshold, quota := diag.SeverityHint, total
	if kept > total {
		for s := diag.SeverityError; s <= diag.SeverityHint; s++ {
			if bySeverity[s] >= quota {
				threshold = s
				break
			}
			quota -= bySeverity[s]
		}
	} else {
		quota = kept
	}
	for i := range files {
		fr := &files[i]
		n := 0
		for n < len(fr.top) && fr.top[n].e.d.Severity < threshold {
			n++
		}
		for n < len(fr.top) && fr.top[n].e.d.Severity == threshold && quota > 0 {
			n++
			quota--
		}
		fr.deliver = n
	}

	att := &diag.Attachment{Servers: []string{}, Files: []diag.FileDiagnostics{}}
	var servers []string
	for i := range files {
		fr := &files[i]
		cut := fr.unique - fr.deliver
		att.Cut += cut
		st.Cut += uint64(cut)
		if fr.deliver == 0 {
			continue
		}
		fd := diag.FileDiagnostics{URI: fr.ds.uri, Path: pathFromURI(fr.ds.uri), Cut: cut,
			Diagnostics: make([]diag.Diagnostic, fr.deliver)}
		for j, c := range fr.top[:fr.deliver] {
			fd.Diagnostics[j] = c.e.d
			if name := fr.ds.servers[c.server].name; !slices.Contains(servers, name) {
				servers = append(servers, name)
			}
			if c.e.idOK {
				v.deliver(fr.ds, c.e.id)
			}
		}
		st.Delivered += uint64(fr.deliver)
		att.Files = append(att.Files, fd)
	}
	for _, n := range notes {
		att.Notes = append(att.Notes, n.text)
	}
	r.releaseScratch(files)

	if len(att.Files) == 0 && att.Cut == 0 && len(att.Notes) == 0 {
		return nil, false
	}
	slices.Sort(servers)
	att.Servers = append(att.Servers, servers...)
	st.Attachments++
	return att, true
}

// releaseScratch keeps the drain's scratch space for the next drain when
// it is small, and lets it go otherwise; either way it drops the entries
// it points to.
func (r *Registry) releaseScratch(files []fileResult) {
	for i := range files {
		clear(files[i].top)
		files[i].ds = nil
		files[i].bar = candidate{}
		if cap(files[i].top) > maxScratch {
			files[i].top = nil
		}
	}
	if cap(files) > maxScratch {
		files = nil
	}
	r.files = files[:0]
	if len(r.seen) > maxScratch {
		r.seen = map[identity]struct{}{}
	}
}

// collect gathers the new diagnostics of one document into fr, taking
// its publishes through v, and appends their notes to notes.
func (r *Registry) collect(fr *fileResult, notes []note, v drainView, st *Stats, perFile int) []note {
	ds := fr.ds
	set := v.delivered(ds)
	clear(r.seen)
	for si := range ds.servers {
		ss := &ds.servers[si]
		pp := v.take(ds, si)
		if pp == nil {
			continue
		}
		if pp.hasVersion && ds.hasVersion && pp.version < ds.version {
			st.Stale++
			continue
		}
		if pp.invalid > 0 {
			notes = append(notes, note{uri: ds.uri, text: invalidNote(ss.name, ds.uri, pp.invalid, pp.firstInvalid)})
		}
		fr.unique += v.truncated(pp)
		for ei := range pp.entries {
			e := &pp.entries[ei]
			if e.idOK {
				if set.has(e.id) {
					st.Deduplicated++
					continue
				}
				if _, dup := r.seen[e.id]; dup {
					st.Deduplicated++
					continue
				}
				r.seen[e.id] = struct{}{}
			}
			fr.unique++
			fr.offer(candidate{e: e, server: si, index: ei}, perFile)
		}
	}
	fr.prune(perFile)
	return notes
}

// invalidNote is the attachment's line about n invalid diagnostics that
// server published for uri.
func invalidNote(server, uri string, n int, first string) string {
	name := pathFromURI(uri)
	if name == "" {
		name = uri
	}
	what := "1 invalid diagnostic from " + server + " was"
	if n != 1 {
		what = strconv.Itoa(n) + " invalid diagnostics from " + server + " were"
	}
	return name + ": " + what + " dropped (" + first + ")"
}

// deliveredSet returns the delivered identities of ds, creating them.
func (r *Registry) deliveredSet(ds *docState) *deliveredSet {
	if ds.set == nil {
		ds.set = newDeliveredSet(r.maxDeliveredPerDoc)
		r.delivered++
	}
	return ds.set
}

// pathFromURI returns the path of a file:// URI (see fileuri.ToPath), or "".
func pathFromURI(uri string) string {
	p, _ := fileuri.ToPath(uri)
	return p
}
