package lspdiag

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/idebridge/idebridge/diag"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Defaults of RegistryOptions.
const (
	DefaultMaxPerPublish           = 1000
	DefaultMaxPerFile              = 10
	DefaultMaxTotal                = 30
	DefaultMaxDocuments            = 500
	DefaultMaxDeliveredPerDocument = 2000
)

// RegistryOptions configures a Registry. A nil *RegistryOptions, and any
// field left at its zero value (or set below zero), means the default.
type RegistryOptions struct {
	// MaxPerPublish bounds what one publish may keep pending: a publish
	// with more diagnostics keeps the most severe MaxPerPublish (then by
	// position). Default DefaultMaxPerPublish (1,000).
	MaxPerPublish int
	// MaxPerFile bounds the diagnostics of one file in an attachment.
	// Default DefaultMaxPerFile (10).
	MaxPerFile int
	// MaxTotal bounds the diagnostics of an attachment. Default
	// DefaultMaxTotal (30).
	MaxTotal int
	// MaxDocuments bounds how many documents' delivered identities are
	// remembered (least recently delivered forgotten first). Default
	// DefaultMaxDocuments (500).
	MaxDocuments int
	// MaxDeliveredPerDocument bounds the delivered identities remembered
	// for one document (oldest forgotten first). Default
	// DefaultMaxDeliveredPerDocument (2,000).
	MaxDeliveredPerDocument int
	// MinSeverity is the least severe severity delivered: SeverityWarning
	// delivers errors and warnings. Default SeverityHint (everything, as
	// Claude Code does).
	MinSeverity diag.Severity
	// DropUnnecessary drops diagnostics tagged TagUnnecessary (faded-out
	// unused code). Default false.
	DropUnnecessary bool
	// Logger receives warnings (a server failing repeatedly, a diagnostic
	// delivered without deduplication). Nil is silent.
	Logger *slog.Logger
}

// PublishInfo describes the last accepted publish of a server for a
// document.
type PublishInfo struct {
	// Version is the document version the publish carried, -1 when it
	// carried none.
	Version int `json:"version"`
	// Count is the number of diagnostics in the publish as received; 0
	// means the server published the document clean.
	Count int `json:"count"`
	// Seq is the registry-wide sequence number of the publish: every
	// accepted publish gets the next number, starting at 1.
	Seq uint64 `json:"seq"`
}

// Stats are cumulative counters of a Registry (Pending and Documents are
// current sizes).
type Stats struct {
	Published        uint64 `json:"published"`        // publishes accepted
	Rejected         uint64 `json:"rejected"`         // publishes rejected for their shape
	Stale            uint64 `json:"stale"`            // publishes dropped as older than the document version
	Superseded       uint64 `json:"superseded"`       // pending diagnostics replaced by a newer publish before a drain
	Filtered         uint64 `json:"filtered"`         // diagnostics dropped by MinSeverity or DropUnnecessary
	Truncated        uint64 `json:"truncated"`        // diagnostics dropped by MaxPerPublish
	Deduplicated     uint64 `json:"deduplicated"`     // diagnostics already delivered or repeated in a batch
	Cut              uint64 `json:"cut"`              // new diagnostics left out by MaxPerFile and MaxTotal
	Delivered        uint64 `json:"delivered"`        // diagnostics delivered in attachments
	Attachments      uint64 `json:"attachments"`      // drains that returned an attachment
	IdentityFailures uint64 `json:"identityFailures"` // diagnostics registered without identity (delivered without dedup)
	Evictions        uint64 `json:"evictions"`        // delivered sets forgotten by the document LRU
	Pending          int    `json:"pending"`          // diagnostics waiting for the next drain
	Documents        int    `json:"documents"`        // documents with a remembered delivered set
}

// Registry collects the publishDiagnostics of language servers and hands
// out, at each Drain, what is new: it is the boundary between servers,
// which publish whole sets whenever they like, and the model, which must
// see each problem once, freshly and in bounded space.
//
// A Registry is safe for concurrent use. It starts no goroutines and does
// no I/O; its output is deterministic.
type Registry struct {
	mu sync.Mutex

	maxPerPublish, maxPerFile, maxTotal int
	maxDeliveredPerDoc                  int
	minSeverity                         diag.Severity
	dropUnnecessary                     bool
	logger                              *slog.Logger
	seed                                maphash.Seed

	versions    map[string]int       // document -> current version (SetVersion)
	docs        map[string]*docState // document -> per-server state
	pendingDocs map[string]*docState // documents with something pending
	delivered   *simplelru.LRU[string, *deliveredSet]
	failures    map[string]int // server -> consecutive failures
	seq         uint64
	stats       Stats

	// Drain scratch space, reused across drains.
	seen     map[identity]struct{}
	files    []fileResult
	consumed []*pendingPublish
}

// docState is what the registry knows about one document, per server.
type docState struct {
	servers []serverState // sorted by name; a handful at most
}

type serverState struct {
	name    string
	last    PublishInfo
	pending *pendingPublish // nil when nothing is pending
}

type pendingPublish struct {
	version    int
	hasVersion bool
	entries    []entry
}

// entry is a normalized diagnostic with its identity.
type entry struct {
	d    diag.Diagnostic
	id   identity
	idOK bool // false: identity failed; delivered without dedup
}

// NewRegistry returns an empty registry. opts may be nil.
func NewRegistry(opts *RegistryOptions) *Registry {
	var o RegistryOptions
	if opts != nil {
		o = *opts
	}
	def := func(v, d int) int {
		if v <= 0 {
			return d
		}
		return v
	}
	r := &Registry{
		maxPerPublish:      def(o.MaxPerPublish, DefaultMaxPerPublish),
		maxPerFile:         def(o.MaxPerFile, DefaultMaxPerFile),
		maxTotal:           def(o.MaxTotal, DefaultMaxTotal),
		maxDeliveredPerDoc: def(o.MaxDeliveredPerDocument, DefaultMaxDeliveredPerDocument),
		minSeverity:        o.MinSeverity,
		dropUnnecessary:    o.DropUnnecessary,
		logger:             o.Logger,
		seed:               maphash.MakeSeed(),
		versions:           map[string]int{},
		docs:               map[string]*docState{},
		pendingDocs:        map[string]*docState{},
		failures:           map[string]int{},
		seen:               map[identity]struct{}{},
	}
	if !r.minSeverity.Valid() {
		r.minSeverity = diag.SeverityHint
	}
	// NewLRU fails only for a size <= 0, which def rules out.
	r.delivered, _ = simplelru.NewLRU[string, *deliveredSet](def(o.MaxDocuments, DefaultMaxDocuments), nil)
	return r
}

// SetVersion records the current version of a document, as its owner (the
// manager that sends didOpen/didChange) knows it. Publishes that carry an
// older version are dropped from then on, including pending ones.
func (r *Registry) SetVersion(uri string, version int) {
	r.mu.Lock()
	r.versions[uri] = version
	r.mu.Unlock()
}

// Version returns the version last given to SetVersion for uri.
func (r *Registry) Version(uri string) (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.versions[uri]
	return v, ok
}

// Publish registers the raw params of a textDocument/publishDiagnostics
// notification from server (named "plugin:<plugin>:<server>"). Params of
// the wrong shape are rejected with an error matching ErrBadShape (a
// *ShapeError says what was wrong) and count as a failure of the server.
// A publish older than the document's current version is dropped without
// error and counted in Stats.Stale.
func (r *Registry) Publish(server string, params json.RawMessage) error {
	p, err := diag.DecodePublishParams(params)
	if err != nil {
		return r.reject(server, err)
	}
	return r.PublishParams(server, &p)
}

// PublishParams registers decoded publishDiagnostics params, like Publish.
// The registry copies what it keeps; p may be reused after the call.
// Publishes of one server are whole sets that replace each other, so
// register them in the order they arrived (from one goroutine per server).
//
// Each diagnostic is normalized: the message, source and code are trimmed
// of surrounding space, a missing severity becomes SeverityError, and an
// end before the start of the range is moved to the start. A severity
// outside 1 to 4, a negative position or an empty URI rejects the publish
// (ErrBadShape).
//
// An empty set registers nothing for delivery and clears what the server
// had pending for the document, but it is recorded (see LastPublish). A
// newer publish of the same server for the same document replaces the
// pending one: LSP publishes are whole sets.
func (r *Registry) PublishParams(server string, p *diag.PublishParams) error {
	if err := checkParams(p); err != nil {
		return r.reject(server, err)
	}
	// Normalize and hash outside the lock: it is the bulk of the work.
	var pp *pendingPublish
	var filtered, idFailures, truncated int
	if len(p.Diagnostics) <= r.maxPerPublish {
		pp = getPending(len(p.Diagnostics))
		pp.entries, filtered, idFailures = r.normalize(pp.entries, p.Diagnostics)
	} else {
		// An absurd publish: sort it whole once, keep the best.
		var all []entry
		all, filtered, idFailures = r.normalize(nil, p.Diagnostics)
		if len(all) > r.maxPerPublish {
			slices.SortStableFunc(all, func(a, b entry) int { return compareDiagnostics(&a.d, &b.d) })
			truncated = len(all) - r.maxPerPublish
			all = all[:r.maxPerPublish]
			if idFailures > 0 {
				idFailures = 0
				for i := range all {
					if !all[i].idOK {
						idFailures++
					}
				}
			}
		}
		pp = getPending(len(all))
		pp.entries = append(pp.entries, all...)
	}
	if p.Version != nil {
		pp.version, pp.hasVersion = *p.Version, true
	}

	r.mu.Lock()
	if p.Version != nil {
		if cur, ok := r.versions[p.URI]; ok && *p.Version < cur {
			r.stats.Stale++
			r.mu.Unlock()
			putPending(pp)
			return nil
		}
	}
	r.seq++
	r.stats.Published++
	r.stats.Filtered += uint64(filtered)
	r.stats.Truncated += uint64(truncated)
	r.stats.IdentityFailures += uint64(idFailures)
	r.failures[server] = 0

	ds := r.docs[p.URI]
	if ds == nil {
		ds = &docState{}
		r.docs[p.URI] = ds
	}
	ss := ds.server(server)
	ss.last = PublishInfo{Version: -1, Count: len(p.Diagnostics), Seq: r.seq}
	if p.Version != nil {
		ss.last.Version = *p.Version
	}
	if old := ss.pending; old != nil {
		n := len(old.entries)
		r.stats.Superseded += uint64(n)
		r.stats.Pending -= n
		ss.pending = nil
		putPending(old)
	}
	if len(pp.entries) > 0 {
		ss.pending = pp
		r.stats.Pending += len(pp.entries)
		r.pendingDocs[p.URI] = ds
	} else {
		putPending(pp)
	}
	r.mu.Unlock()

	if idFailures > 0 && r.logger != nil {
		r.logger.Warn("lspdiag: diagnostics without identity will be delivered without deduplication",
			"server", server, "uri", p.URI, "count", idFailures, "err", errInvalidUTF8)
	}
	return nil
}

// reject counts a publish of the wrong shape, as a failure of its server.
func (r *Registry) reject(server string, err error) error {
	r.mu.Lock()
	r.stats.Rejected++
	r.mu.Unlock()
	r.ReportFailure(server, err)
	return fmt.Errorf("publishDiagnostics from %s: %w", server, err)
}

// checkParams applies the shape rules JSON decoding cannot express for a
// decoded value.
func checkParams(p *diag.PublishParams) error {
	if p == nil {
		return &diag.ShapeError{Path: "", Problem: "nil params"}
	}
	if p.URI == "" {
		return &diag.ShapeError{Path: "uri", Problem: "empty"}
	}
	for i := range p.Diagnostics {
		d := &p.Diagnostics[i]
		if d.Severity != 0 && !d.Severity.Valid() {
			return &diag.ShapeError{Path: "diagnostics[" + strconv.Itoa(i) + "].severity", Problem: "number " + strconv.Itoa(int(d.Severity)) + " is not a severity (1 to 4)"}
		}
		if d.Range.Start.Line < 0 || d.Range.Start.Character < 0 || d.Range.End.Line < 0 || d.Range.End.Character < 0 {
			return &diag.ShapeError{Path: "diagnostics[" + strconv.Itoa(i) + "].range", Problem: "negative position"}
		}
	}
	return nil
}

// normalize appends diagnostics to entries, applying the normalization
// rules and filters and computing identities.
func (r *Registry) normalize(entries []entry, ds []diag.Diagnostic) (_ []entry, filtered, idFailures int) {
	for i := range ds {
		src := &ds[i]
		sev := src.Severity
		if sev == 0 {
			sev = diag.SeverityError
		}
		if sev > r.minSeverity || (r.dropUnnecessary && slices.Contains(src.Tags, diag.TagUnnecessary)) {
			filtered++
			continue
		}
		entries = append(entries, entry{d: diag.Diagnostic{
			Range:              normalizeRange(src.Range),
			Severity:           sev,
			Code:               strings.TrimSpace(src.Code),
			CodeDescription:    src.CodeDescription,
			Source:             strings.TrimSpace(src.Source),
			Message:            strings.TrimSpace(src.Message),
			Tags:               slices.Clone(src.Tags),
			RelatedInformation: slices.Clone(src.RelatedInformation),
		}})
		e := &entries[len(entries)-1]
		var err error
		e.id, err = computeIdentity(r.seed, &e.d)
		e.idOK = err == nil
		if !e.idOK {
			idFailures++
		}
	}
	return entries, filtered, idFailures
}

func normalizeRange(rg diag.Range) diag.Range {
	if rg.End.Line < rg.Start.Line || (rg.End.Line == rg.Start.Line && rg.End.Character < rg.Start.Character) {
		rg.End = rg.Start
	}
	return rg
}

func (ds *docState) server(name string) *serverState {
	i, found := slices.BinarySearchFunc(ds.servers, name, func(s serverState, n string) int {
		return strings.Compare(s.name, n)
	})
	if !found {
		ds.servers = slices.Insert(ds.servers, i, serverState{name: name})
	}
	return &ds.servers[i]
}

// LastPublish returns the last accepted publish of server for uri,
// including clean (empty) ones; ok is false when there was none. Reset and
// ResetAll do not forget it; Forget does.
func (r *Registry) LastPublish(server, uri string) (PublishInfo, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ds := r.docs[uri]
	if ds == nil {
		return PublishInfo{}, false
	}
	for _, ss := range ds.servers {
		if ss.name == server && ss.last.Seq != 0 {
			return ss.last, true
		}
	}
	return PublishInfo{}, false
}

// Reset forgets what is pending for uri and which of its diagnostics were
// delivered: the next publish delivers them again. Versions and
// LastPublish are kept.
func (r *Registry) Reset(uri string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropPending(uri)
	r.delivered.Remove(uri)
}

// ResetAll forgets everything pending and delivered, for every document.
// Versions and LastPublish are kept.
func (r *Registry) ResetAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for uri := range r.pendingDocs {
		r.dropPending(uri)
	}
	r.delivered.Purge()
}

// Forget drops everything the registry knows about uri: pending and
// delivered diagnostics, its version and its last publishes. Use it when a
// document is closed for good, to keep the registry's size bounded by the
// documents in use.
func (r *Registry) Forget(uri string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropPending(uri)
	r.delivered.Remove(uri)
	delete(r.docs, uri)
	delete(r.versions, uri)
}

// Close is Forget for a document that is closed but may be opened again:
// it drops what is pending for uri, its version and its last publishes,
// and keeps which of its diagnostics were delivered, so that a document
// closed (or evicted) and opened again unchanged delivers nothing twice.
// The delivered memory stays bounded by MaxDocuments; Reset and Forget
// still clear it when asked.
func (r *Registry) Close(uri string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropPending(uri)
	delete(r.docs, uri)
	delete(r.versions, uri)
}

func (r *Registry) dropPending(uri string) {
	ds := r.pendingDocs[uri]
	if ds == nil {
		return
	}
	for i := range ds.servers {
		if pp := ds.servers[i].pending; pp != nil {
			r.stats.Pending -= len(pp.entries)
			ds.servers[i].pending = nil
			putPending(pp)
		}
	}
	delete(r.pendingDocs, uri)
}

// ReportFailure counts a failure of server (a handler error, a crash, a
// bad publish: Publish counts those itself). From the third consecutive
// failure on, each one is logged as a warning. The server is never
// disabled.
func (r *Registry) ReportFailure(server string, err error) {
	r.mu.Lock()
	r.failures[server]++
	n := r.failures[server]
	r.mu.Unlock()
	if n >= 3 && r.logger != nil {
		r.logger.Warn("lspdiag: language server keeps failing", "server", server, "consecutive", n, "err", err)
	}
}

// ReportSuccess resets the consecutive failure count of server. An
// accepted publish does the same.
func (r *Registry) ReportSuccess(server string) {
	r.mu.Lock()
	r.failures[server] = 0
	r.mu.Unlock()
}

// ConsecutiveFailures returns the current consecutive failure count of
// server.
func (r *Registry) ConsecutiveFailures(server string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[server]
}

// Stats returns a snapshot of the counters.
func (r *Registry) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Documents = r.delivered.Len()
	return s
}
