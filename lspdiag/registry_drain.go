package lspdiag

import (
	"cmp"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"slices"
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
	uri     string
	ds      *docState
	top     []candidate // the best maxPerFile new diagnostics, sorted
	unique  int         // new diagnostics after dedup
	deliver int         // how many of top survive the total limit
}

// Drain returns the new diagnostics since the last drain and clears what
// was pending: nothing is handed out twice. It returns nil, false when
// there is nothing new.
//
// The pending publishes are filtered by the documents' current versions,
// deduplicated (identity: message, severity, range, source, code) within
// the batch and against what was delivered before, sorted, and bounded:
// at most MaxPerFile per file and MaxTotal in all, the most severe first
// (across files, ties go to the file that sorts first). What the limits
// leave out is counted in Cut and not remembered as delivered.
func (r *Registry) Drain() (*diag.Attachment, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.pendingDocs) == 0 {
		return nil, false
	}
	uris := make([]string, 0, len(r.pendingDocs))
	for uri := range r.pendingDocs {
		uris = append(uris, uri)
	}
	slices.Sort(uris)

	files := r.files[:0]
	var bySeverity [diag.SeverityHint + 1]int // kept per-file candidates per severity
	kept := 0
	for _, uri := range uris {
		ds := r.pendingDocs[uri]
		fr := fileResult{uri: uri, ds: ds}
		if len(files) < cap(files) {
			fr.top = files[:len(files)+1][len(files)].top[:0] // reuse scratch
		}
		r.collect(&fr)
		if fr.unique == 0 {
			continue
		}
		for _, c := range fr.top {
			bySeverity[c.e.d.Severity]++
		}
		kept += len(fr.top)
		files = append(files, fr)
	}
	clear(r.pendingDocs)
	r.stats.Pending = 0

	// The total limit: all candidates more severe than the threshold
	// severity, then threshold ones in file order. Each file's top is
	// sorted by severity, so what survives is a prefix of it.
	threshold, quota := diag.SeverityHint, r.maxTotal
	if kept > r.maxTotal {
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
		r.stats.Cut += uint64(cut)
		if fr.deliver == 0 {
			continue
		}
		fd := diag.FileDiagnostics{URI: fr.uri, Path: pathFromURI(fr.uri), Cut: cut,
			Diagnostics: make([]diag.Diagnostic, fr.deliver)}
		var set *deliveredSet
		for j, c := range fr.top[:fr.deliver] {
			fd.Diagnostics[j] = c.e.d
			if name := fr.ds.servers[c.server].name; !slices.Contains(servers, name) {
				servers = append(servers, name)
			}
			if !c.e.idOK {
				continue
			}
			if set == nil {
				set = r.deliveredSetFor(fr.uri)
			}
			set.add(c.e.id)
		}
		r.stats.Delivered += uint64(fr.deliver)
		att.Files = append(att.Files, fd)
	}
	// Keep the scratch candidate slices for the next drain, but not the
	// entries they point to.
	for i := range files {
		clear(files[i].top)
		files[i].ds = nil
	}
	r.files = files[:0]
	for i, pp := range r.consumed {
		putPending(pp)
		r.consumed[i] = nil
	}
	r.consumed = r.consumed[:0]

	if len(att.Files) == 0 {
		return nil, false
	}
	slices.Sort(servers)
	att.Servers = append(att.Servers, servers...)
	r.stats.Attachments++
	return att, true
}

// collect gathers the new diagnostics of one pending document into fr,
// consuming its pending publishes.
func (r *Registry) collect(fr *fileResult) {
	cur, hasCur := r.versions[fr.uri]
	set, _ := r.delivered.Peek(fr.uri)
	clear(r.seen)
	for si := range fr.ds.servers {
		ss := &fr.ds.servers[si]
		pp := ss.pending
		if pp == nil {
			continue
		}
		ss.pending = nil
		r.consumed = append(r.consumed, pp)
		if pp.hasVersion && hasCur && pp.version < cur {
			r.stats.Stale++
			continue
		}
		for ei := range pp.entries {
			e := &pp.entries[ei]
			if e.idOK {
				if set.has(e.id) {
					r.stats.Deduplicated++
					continue
				}
				if _, dup := r.seen[e.id]; dup {
					r.stats.Deduplicated++
					continue
				}
				r.seen[e.id] = struct{}{}
			}
			fr.unique++
			c := candidate{e: e, server: si, index: ei}
			fr.top = insertTop(fr.top, c, r.maxPerFile)
		}
	}
}

// insertTop inserts c into top, which is sorted and holds at most k.
func insertTop(top []candidate, c candidate, k int) []candidate {
	if len(top) == k && compareCandidates(&c, &top[k-1]) >= 0 {
		return top
	}
	i, j := 0, len(top) // first index whose candidate sorts after c
	for i < j {
		h := int(uint(i+j) >> 1)
		if compareCandidates(&top[h], &c) <= 0 {
			i = h + 1
		} else {
			j = h
		}
	}
	if len(top) < k {
		top = append(top, candidate{})
	}
	copy(top[i+1:], top[i:len(top)-1])
	top[i] = c
	return top
}

func (r *Registry) deliveredSetFor(uri string) *deliveredSet {
	if set, ok := r.delivered.Get(uri); ok {
		return set
	}
	set := newDeliveredSet(r.maxDeliveredPerDoc)
	if r.delivered.Add(uri, set) {
		r.stats.Evictions++
	}
	return set
}

// pathFromURI returns the path of a file:// URI (see fileuri.ToPath), or "".
func pathFromURI(uri string) string {
	p, _ := fileuri.ToPath(uri)
	return p
}
