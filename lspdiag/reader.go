package lspdiag

import (
	"math"
	"slices"
	"strings"

	"github.com/idebridge/idebridge/diag"
)

// Reader is one client's delivered-diagnostics memory over a Registry that
// several clients share (the language servers of a project in a shared
// runtime): its Drain delivers what is new to it, whoever else drained, and
// with Drain's rules (versions, deduplication, MaxPerFile and MaxTotal,
// Cut, notes of invalid diagnostics). One difference: of what
// MaxPerPublish dropped from a publish, a Reader's Cut counts every
// distinct diagnostic as new, also one it was delivered before (the
// identities beyond the cap are not kept); exact for its first drain.
//
// What a Reader sees: the documents it watches (Watch: the ones its
// client opened), and what the servers of those documents (WatchServer)
// publish for documents nobody opened (no version was ever set for them,
// or the document was closed since: what servers publish on their own,
// such as a workspace's other files). The documents only other clients
// opened are theirs, not the Reader's, with one exception that keeps a
// shared registry's answers equal to a client's own: a server seen
// publishing diagnostics (a set that is not empty) for a document nobody
// opened diagnoses its workspace (gopls does; pyright by default, and
// typescript-language-server, only open files), so it would publish for
// that document too if this client alone had its servers, and the Reader
// sees that server's publishes for every document. (What the server says
// of another client's document then reflects the text that client gave
// it: a shared runtime's clients give the text on disk.)
//
// For each document it sees, a drain takes each server's last publish
// that the Reader has not drained yet, including one published before
// the Reader was made: a new Reader's first drain delivers what the
// servers have published and still stands, as the Registry's Drain does
// in a process whose Manager opened the same files.
//
// The registry's own Drain is the default reader and is unaffected by
// Readers, and they by it (Reset, ResetAll and Close of the registry are
// about its memory; Forget, and the document LRU, drop the publishes of a
// document for every reader). A Reader's memory is bounded like the
// registry's (MaxDocuments documents, MaxDeliveredPerDocument identities
// each); the registry keeps no reference to its readers, so a Reader that
// is dropped costs nothing, and Close frees its memory at once.
//
// A Reader is safe for concurrent use.
type Reader struct {
	r                    *Registry
	maxPerFile, maxTotal int
	// Guarded by r.mu.
	watched map[string]uint64 // uri -> last use (tick)
	servers map[string]bool   // the servers of the watched documents
	docs    map[string]*readerDoc
	tick    uint64
	closed  bool
}

// readerDoc is what a Reader remembers of a document.
type readerDoc struct {
	taken []takenSeq // per server, the Seq of the last publish drained
	set   *deliveredSet
	used  uint64
}

type takenSeq struct {
	server string
	seq    uint64
}

// ReaderOptions are a Reader's own limits of an attachment, for a client
// whose limits are not the registry's. Zero fields take the registry's;
// negative means no limit (as in RegistryOptions).
type ReaderOptions struct {
	// MaxPerFile bounds the diagnostics of one file in an attachment.
	MaxPerFile int `json:"maxPerFile,omitempty"`
	// MaxTotal bounds the diagnostics of an attachment.
	MaxTotal int `json:"maxTotal,omitempty"`
}

// NewReader returns a reader of r that has delivered nothing yet and
// watches no document. opts may be nil.
func (r *Registry) NewReader(opts *ReaderOptions) *Reader {
	rd := &Reader{r: r, maxPerFile: r.maxPerFile, maxTotal: r.maxTotal,
		watched: map[string]uint64{}, servers: map[string]bool{}, docs: map[string]*readerDoc{}}
	if opts != nil {
		rd.maxPerFile = readerLimit(opts.MaxPerFile, r.maxPerFile)
		rd.maxTotal = readerLimit(opts.MaxTotal, r.maxTotal)
	}
	return rd
}

func readerLimit(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return math.MaxInt
	}
	return v
}

// Watch adds uri to the documents the reader sees (its client opened it).
// At most MaxDocuments are watched: beyond, the least recently watched or
// drained is dropped. Watch on a closed reader does nothing.
func (rd *Reader) Watch(uri string) {
	rd.r.mu.Lock()
	defer rd.r.mu.Unlock()
	if rd.closed {
		return
	}
	rd.tick++
	rd.watched[uri] = rd.tick
	if len(rd.watched) > rd.r.maxDocuments {
		rd.evictWatch()
	}
}

// WatchServer adds server (named as in Publish) to the servers whose
// publishes for documents nobody opened the reader sees: call it with
// the server of each document watched. (At most 1,024 servers.)
func (rd *Reader) WatchServer(server string) {
	rd.r.mu.Lock()
	defer rd.r.mu.Unlock()
	if !rd.closed && len(rd.servers) < maxFailingServers {
		rd.servers[server] = true
	}
}

// Watching reports whether the reader watches uri.
func (rd *Reader) Watching(uri string) bool {
	rd.r.mu.Lock()
	defer rd.r.mu.Unlock()
	_, ok := rd.watched[uri]
	return ok
}

// evictWatch forgets the document watched least recently.
func (rd *Reader) evictWatch() {
	oldest, at := "", uint64(0)
	for k, t := range rd.watched {
		if oldest == "" || t < at {
			oldest, at = k, t
		}
	}
	delete(rd.watched, oldest)
}

// evictDoc forgets the document drained least recently.
func (rd *Reader) evictDoc() {
	oldest, at := "", uint64(0)
	for k, d := range rd.docs {
		if oldest == "" || d.used < at {
			oldest, at = k, d.used
		}
	}
	delete(rd.docs, oldest)
}

// Drain returns what is new to the reader in the documents it sees (see
// Reader), like Registry.Drain: nil, false when there is nothing. A
// closed reader returns nil, false.
func (rd *Reader) Drain() (*diag.Attachment, bool) {
	r := rd.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if rd.closed {
		return nil, false
	}
	var docs []*docState
	for _, ds := range r.docs {
		if rd.hasNew(ds) {
			docs = append(docs, ds)
		}
	}
	if len(docs) == 0 {
		return nil, false
	}
	slices.SortFunc(docs, func(a, b *docState) int { return strings.Compare(a.uri, b.uri) })
	rd.tick++
	var st Stats // a reader's counts are its own, not the registry's
	att, ok := r.drainDocs(docs, readerView{rd}, &st, rd.maxPerFile, rd.maxTotal)
	for len(rd.docs) > r.maxDocuments {
		rd.evictDoc()
	}
	return att, ok
}

// hasNew says whether a server of ds has a publish the reader has not
// drained.
func (rd *Reader) hasNew(ds *docState) bool {
	rdoc := rd.docs[ds.uri]
	for i := range ds.servers {
		ss := &ds.servers[i]
		if ss.current != nil && ss.last.Seq > rdoc.takenOf(ss.name) && rd.sees(ds, ss.name) {
			return true
		}
	}
	return false
}

// sees says whether the reader sees what server publishes for ds: see
// Reader.
func (rd *Reader) sees(ds *docState, server string) bool {
	if _, ok := rd.watched[ds.uri]; ok {
		return true
	}
	return rd.servers[server] && (!ds.hasVersion || rd.r.wide[server])
}

func (d *readerDoc) takenOf(server string) uint64 {
	if d == nil {
		return 0
	}
	for _, t := range d.taken {
		if t.server == server {
			return t.seq
		}
	}
	return 0
}

// doc returns the reader's state of ds, creating it.
func (rd *Reader) doc(ds *docState) *readerDoc {
	d := rd.docs[ds.uri]
	if d == nil {
		d = &readerDoc{}
		rd.docs[ds.uri] = d
	}
	d.used = rd.tick
	return d
}

// Close frees the reader's memory; its Drain returns nothing from then on.
func (rd *Reader) Close() {
	rd.r.mu.Lock()
	defer rd.r.mu.Unlock()
	rd.closed = true
	rd.watched, rd.servers, rd.docs = nil, nil, nil
}

// readerView is a Reader's drain: each server's current publish the
// reader has not taken, and the reader's delivered sets.
type readerView struct{ rd *Reader }

func (v readerView) take(ds *docState, si int) *pendingPublish {
	ss := &ds.servers[si]
	if ss.current == nil || !v.rd.sees(ds, ss.name) {
		return nil
	}
	d := v.rd.doc(ds)
	if ss.last.Seq <= d.takenOf(ss.name) {
		return nil
	}
	for i := range d.taken {
		if d.taken[i].server == ss.name {
			d.taken[i].seq = ss.last.Seq
			return ss.current
		}
	}
	if len(d.taken) >= maxServersPerDocument {
		d.taken = slices.Delete(d.taken, 0, 1) // the oldest server first taken
	}
	d.taken = append(d.taken, takenSeq{server: ss.name, seq: ss.last.Seq})
	return ss.current
}

func (v readerView) delivered(ds *docState) *deliveredSet { return v.rd.doc(ds).set }

func (v readerView) deliver(ds *docState, id identity) {
	d := v.rd.doc(ds)
	if d.set == nil {
		d.set = newDeliveredSet(v.rd.r.maxDeliveredPerDoc)
	}
	d.set.add(id)
}

// truncated: a reader counts every distinct diagnostic MaxPerPublish
// dropped as new (exact for its first drain of the document; the
// identities beyond the cap are not kept, to keep the registry bounded).
func (v readerView) truncated(pp *pendingPublish) int { return pp.truncatedAll }
