package lspdiag

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/idebridge/idebridge/diag"
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
// field left at its zero value, means the default. A negative value means
// "no limit" for the limits of an attachment (MaxPerFile, MaxTotal), whose
// size is bounded by what is pending anyway; the limits that bound the
// registry's own memory reject it (NewRegistry returns an error).
type RegistryOptions struct {
	// MaxPerPublish bounds what one publish may keep pending: a publish
	// with more diagnostics keeps the most severe MaxPerPublish (then by
	// position); the new ones among the rest count in the attachment's
	// Cut. Default DefaultMaxPerPublish (1,000); negative is an error.
	MaxPerPublish int
	// MaxPerFile bounds the diagnostics of one file in an attachment.
	// Default DefaultMaxPerFile (10); negative means no limit.
	MaxPerFile int
	// MaxTotal bounds the diagnostics of an attachment. Default
	// DefaultMaxTotal (30); negative means no limit.
	MaxTotal int
	// MaxDocuments bounds the documents the registry remembers besides
	// those with diagnostics pending: their delivered identities, version
	// and last publishes. The least recently used (published, versioned,
	// drained or reset) is forgotten first, as Forget would: keep it above
	// the number of documents open at once, or a forgotten document's
	// stale publishes are no longer recognized. Default
	// DefaultMaxDocuments (500); negative is an error.
	MaxDocuments int
	// MaxDeliveredPerDocument bounds the delivered identities remembered
	// for one document (oldest forgotten first). Default
	// DefaultMaxDeliveredPerDocument (2,000); negative is an error.
	MaxDeliveredPerDocument int
	// MinSeverity is the least severe severity delivered: SeverityWarning
	// delivers errors and warnings. Default SeverityHint (everything, as
	// Claude Code does); a value outside 0 to 4 is an error.
	MinSeverity diag.Severity
	// DropUnnecessary drops diagnostics tagged TagUnnecessary (faded-out
	// unused code). Default false.
	DropUnnecessary bool
	// Logger receives warnings (a server failing repeatedly, invalid
	// diagnostics dropped, a diagnostic delivered without deduplication).
	// Nil is silent.
	Logger *slog.Logger
}

// PublishInfo describes the last accepted publish of a server for a
// document.
type PublishInfo struct {
	// Version is the document version the publish carried, -1 when it
	// carried none.
	Version int `json:"version"`
	// Count is the number of diagnostics in the publish as received,
	// invalid ones included; 0 means the server published the document
	// clean.
	Count int `json:"count"`
	// Seq is the registry-wide sequence number of the publish: every
	// accepted publish gets the next number, starting at 1.
	Seq uint64 `json:"seq"`
}

// Stats are cumulative counters of a Registry (Pending, Documents and
// Tracked are current sizes).
type Stats struct {
	Published        uint64 `json:"published"`        // publishes accepted
	Rejected         uint64 `json:"rejected"`         // publishes rejected for their shape
	Stale            uint64 `json:"stale"`            // publishes dropped as older than the document version
	Superseded       uint64 `json:"superseded"`       // pending diagnostics replaced by a newer publish before a drain
	Invalid          uint64 `json:"invalid"`          // diagnostics dropped from accepted publishes as invalid (and noted)
	Filtered         uint64 `json:"filtered"`         // diagnostics dropped by MinSeverity or DropUnnecessary
	Truncated        uint64 `json:"truncated"`        // diagnostics dropped by MaxPerPublish
	Deduplicated     uint64 `json:"deduplicated"`     // diagnostics already delivered or repeated in a batch
	Cut              uint64 `json:"cut"`              // new diagnostics left out of attachments by the limits
	Delivered        uint64 `json:"delivered"`        // diagnostics delivered in attachments
	Attachments      uint64 `json:"attachments"`      // drains that returned an attachment
	IdentityFailures uint64 `json:"identityFailures"` // diagnostics registered without identity (delivered without dedup)
	Evictions        uint64 `json:"evictions"`        // documents forgotten by the document LRU (MaxDocuments)
	Pending          int    `json:"pending"`          // diagnostics waiting for the next drain
	Documents        int    `json:"documents"`        // documents with a remembered delivered set
	Tracked          int    `json:"tracked"`          // documents remembered at all (pending, or in the LRU)
}

// Registry collects the publishDiagnostics of language servers and hands
// out, at each Drain, what is new: it is the boundary between servers,
// which publish whole sets whenever they like, and the model, which must
// see each problem once, freshly and in bounded space.
//
// Its memory is bounded by what is pending plus MaxDocuments documents:
// what it remembers of a document (versions, last publishes, each
// server's last set of at most MaxPerPublish diagnostics, delivered
// identities) is forgotten least recently used first. Each server's last
// set is kept after a drain for Readers (NewReader): the delivered
// memory of one client among several that share the registry.
//
// A Registry is safe for concurrent use. It starts no goroutines and does
// no I/O; its output is deterministic.
type Registry struct {
	mu sync.Mutex

	maxPerPublish, maxPerFile, maxTotal int
	maxDocuments, maxDeliveredPerDoc    int
	minSeverity                         diag.Severity
	dropUnnecessary                     bool
	logger                              *slog.Logger
	seed                                maphash.Seed

	docs        map[string]*docState // every document remembered
	pendingDocs map[string]*docState // documents with something pending (never in lru)
	lru         docList              // the other documents, most recently used first
	delivered   int                  // documents with a delivered set
	failures    map[string]int       // server -> consecutive failures (> 0 only)
	wide        map[string]bool      // servers seen publishing for documents nobody opened (see Reader)
	seq         uint64
	stats       Stats

	// Drain scratch space, reused across drains while it stays small.
	seen  map[identity]struct{}
	files []fileResult
}

// Bounds of the state that callers name rather than servers send.
const (
	// maxServersPerDocument bounds the servers remembered for one
	// document (LastPublish); beyond it the one that published least
	// recently, with nothing pending, is forgotten.
	maxServersPerDocument = 64
	// maxFailingServers bounds the consecutive-failure counters.
	maxFailingServers = 1024
	// maxScratch is the size above which drain scratch space is released
	// rather than kept for the next drain.
	maxScratch = 4096
)

// docState is what the registry knows about one document.
type docState struct {
	uri        string
	version    int
	hasVersion bool
	servers    []serverState // sorted by name; a handful at most
	npending   int           // servers with a pending publish
	set        *deliveredSet // delivered identities; nil when none
	prev, next *docState     // lru links
	inLRU      bool
}

type serverState struct {
	name string
	last PublishInfo
	// current is the server's last accepted publish for the document
	// (nil when it was clean), kept after a drain for Readers, which
	// deliver it to clients that have not seen it.
	current *pendingPublish
	// pending is current while the default drain has not consumed it,
	// else nil.
	pending *pendingPublish
}

type pendingPublish struct {
	version    int
	hasVersion bool
	entries    []entry
	// truncatedNew counts the diagnostics MaxPerPublish dropped that were
	// new when published: not delivered before, not repeated in the
	// publish. A drain counts them in Cut.
	truncatedNew int
	// truncatedAll counts the distinct diagnostics MaxPerPublish dropped
	// that are not in the publish's kept ones: what is new to a Reader
	// that has delivered nothing of the document.
	truncatedAll int
	// invalid counts the diagnostics dropped as invalid; firstInvalid
	// says what was wrong with the first of them. A drain notes them.
	invalid      int
	firstInvalid string
}

// entry is a normalized diagnostic with its identity.
type entry struct {
	d    diag.Diagnostic
	id   identity
	idOK bool // false: identity failed; delivered without dedup
}

// NewRegistry returns an empty registry. opts may be nil. It returns an
// error, and no registry, for options out of range (see RegistryOptions).
func NewRegistry(opts *RegistryOptions) (*Registry, error) {
	var o RegistryOptions
	if opts != nil {
		o = *opts
	}
	var problems []error
	bound := func(name string, v, d int) int {
		switch {
		case v == 0:
			return d
		case v < 0:
			problems = append(problems, fmt.Errorf("%s is %d: it bounds the registry's memory and must be positive (0 means the default, %d)", name, v, d))
		}
		return v
	}
	limit := func(v, d int) int {
		switch {
		case v == 0:
			return d
		case v < 0:
			return math.MaxInt // no limit
		}
		return v
	}
	r := &Registry{
		maxPerPublish:      bound("MaxPerPublish", o.MaxPerPublish, DefaultMaxPerPublish),
		maxPerFile:         limit(o.MaxPerFile, DefaultMaxPerFile),
		maxTotal:           limit(o.MaxTotal, DefaultMaxTotal),
		maxDocuments:       bound("MaxDocuments", o.MaxDocuments, DefaultMaxDocuments),
		maxDeliveredPerDoc: bound("MaxDeliveredPerDocument", o.MaxDeliveredPerDocument, DefaultMaxDeliveredPerDocument),
		minSeverity:        o.MinSeverity,
		dropUnnecessary:    o.DropUnnecessary,
		logger:             o.Logger,
		seed:               maphash.MakeSeed(),
		docs:               map[string]*docState{},
		pendingDocs:        map[string]*docState{},
		failures:           map[string]int{},
		wide:               map[string]bool{},
		seen:               map[identity]struct{}{},
	}
	switch {
	case r.minSeverity == 0:
		r.minSeverity = diag.SeverityHint
	case !r.minSeverity.Valid():
		problems = append(problems, fmt.Errorf("MinSeverity is %d: want 1 (error) to 4 (hint), or 0 for the default (hint)", int(r.minSeverity)))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("lspdiag: invalid RegistryOptions: %w", errors.Join(problems...))
	}
	return r, nil
}

// SetVersion records the current version of a document, as its owner (the
// manager that sends didOpen/didChange) knows it. Publishes that carry an
// older version are dropped from then on, including pending ones.
func (r *Registry) SetVersion(uri string, version int) {
	r.mu.Lock()
	ds := r.track(uri)
	ds.version, ds.hasVersion = version, true
	r.settle(ds)
	r.mu.Unlock()
}

// Version returns the version last given to SetVersion for uri, unless
// the registry has forgotten the document since (Forget, MaxDocuments).
func (r *Registry) Version(uri string) (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ds := r.docs[uri]; ds != nil && ds.hasVersion {
		return ds.version, true
	}
	return 0, false
}

// Publish registers the raw params of a textDocument/publishDiagnostics
// notification from server (named "plugin:<plugin>:<server>"). Params of
// the wrong shape (not an object; a uri, version or diagnostics member
// missing or of the wrong type) are rejected with an error matching
// ErrBadShape (a *ShapeError says what was wrong) and count as a failure
// of the server. A diagnostic of the wrong shape does not reject the
// publish: it is dropped and noted, as PublishParams does for invalid
// diagnostics. A publish older than the document's current version is
// dropped without error and counted in Stats.Stale.
func (r *Registry) Publish(server string, params json.RawMessage) error {
	d, err := DecodePublish(params)
	if err != nil {
		return r.reject(server, err)
	}
	return r.PublishDecoded(server, d)
}

// Decoded is a publishDiagnostics decoded the way Publish decodes one: a
// malformed diagnostic is left out and counted instead of refusing the
// whole publish. A caller that adjusts the diagnostics before registering
// them (package lsp converts their columns) decodes with DecodePublish,
// changes Params, and registers with PublishDecoded, so that what was left
// out is still noted.
type Decoded struct {
	// Params are the envelope and the well-formed diagnostics.
	Params  diag.PublishParams
	invalid invalidDiagnostics
}

// Dropped returns how many diagnostics decoding left out as malformed.
func (d *Decoded) Dropped() int { return d.invalid.n }

// DecodePublish decodes publishDiagnostics params. Only a malformed
// envelope (the uri, the version, the diagnostics array) is an error
// (matching diag.ErrBadShape); malformed diagnostics are left out and
// counted (see Decoded).
func DecodePublish(params json.RawMessage) (*Decoded, error) {
	p, err := diag.DecodePublishParams(params)
	if err == nil {
		return &Decoded{Params: p}, nil
	}
	sp, bad, ok := salvage(params)
	if !ok {
		return nil, err
	}
	if sp.URI == "" {
		return nil, &diag.ShapeError{Path: "uri", Problem: "empty"}
	}
	return &Decoded{Params: sp, invalid: bad}, nil
}

// invalidDiagnostics counts the diagnostics of a publish that were
// dropped as invalid.
type invalidDiagnostics struct {
	n     int
	first string // what was wrong with the first one
}

func (v *invalidDiagnostics) add(path, problem string) {
	if v.n == 0 {
		v.first = path + ": " + problem
	}
	v.n++
}

// salvage decodes params whose envelope (uri, version, diagnostics array)
// is well formed but some of whose diagnostics are not: it returns the
// well-formed diagnostics and counts the others. ok is false when the
// envelope is wrong or when no diagnostic is (the error was elsewhere).
func salvage(params json.RawMessage) (p diag.PublishParams, bad invalidDiagnostics, ok bool) {
	var env struct {
		URI         json.RawMessage   `json:"uri"`
		Version     json.RawMessage   `json:"version"`
		Diagnostics []json.RawMessage `json:"diagnostics"`
	}
	if json.Unmarshal(params, &env) != nil || env.Diagnostics == nil || len(env.URI) == 0 {
		return p, bad, false
	}
	// The envelope alone, through the one decoder that decides shapes.
	var shell bytes.Buffer
	shell.WriteString(`{"uri":`)
	shell.Write(env.URI)
	if len(env.Version) > 0 {
		shell.WriteString(`,"version":`)
		shell.Write(env.Version)
	}
	shell.WriteString(`,"diagnostics":[]}`)
	p, err := diag.DecodePublishParams(shell.Bytes())
	if err != nil {
		return p, bad, false
	}
	p.Diagnostics = make([]diag.Diagnostic, 0, len(env.Diagnostics))
	for i, item := range env.Diagnostics {
		var d diag.Diagnostic
		if err := d.UnmarshalJSON(item); err != nil {
			path, problem := "diagnostics["+strconv.Itoa(i)+"]", err.Error()
			var se *diag.ShapeError
			if errors.As(err, &se) {
				problem = se.Problem
				if se.Path != "" {
					path += "." + se.Path
				}
			}
			bad.add(path, problem)
			continue
		}
		p.Diagnostics = append(p.Diagnostics, d)
	}
	return p, bad, bad.n > 0
}

// PublishParams registers decoded publishDiagnostics params, like Publish.
// The registry copies what it keeps; p may be reused after the call.
// Publishes of one server are whole sets that replace each other, so
// register them in the order they arrived (from one goroutine per server).
//
// Each diagnostic is normalized: the message, source and code are trimmed
// of surrounding space, a missing severity becomes SeverityError, and an
// end before the start of the range is moved to the start. A diagnostic
// with a severity outside 0 to 4 or a negative position is invalid: it is
// dropped, the others are kept, and the next drain's attachment says so in
// a note (one per server and document, with the count); Stats.Invalid
// counts them and the Logger is told. Nil params or an empty URI reject
// the publish (ErrBadShape).
//
// An empty set registers nothing for delivery and clears what the server
// had pending for the document, but it is recorded (see LastPublish). A
// newer publish of the same server for the same document replaces the
// pending one: LSP publishes are whole sets.
func (r *Registry) PublishParams(server string, p *diag.PublishParams) error {
	return r.publishValid(server, p, invalidDiagnostics{})
}

// PublishDecoded registers params decoded by DecodePublish (and possibly
// adjusted since), like PublishParams, noting the diagnostics decoding
// left out together with any that are invalid now.
func (r *Registry) PublishDecoded(server string, d *Decoded) error {
	if d == nil {
		return r.reject(server, &diag.ShapeError{Path: "", Problem: "nil params"})
	}
	return r.publishValid(server, &d.Params, d.invalid)
}

// publishValid drops the invalid diagnostics of p, adds them to bad (what
// decoding already left out), and registers the rest.
func (r *Registry) publishValid(server string, p *diag.PublishParams, bad invalidDiagnostics) error {
	if p == nil {
		return r.reject(server, &diag.ShapeError{Path: "", Problem: "nil params"})
	}
	if p.URI == "" {
		return r.reject(server, &diag.ShapeError{Path: "uri", Problem: "empty"})
	}
	received := len(p.Diagnostics) + bad.n
	valid := p.Diagnostics
	dropped := false
	for i := range p.Diagnostics {
		if member, problem := invalidDiagnostic(&p.Diagnostics[i]); problem != "" {
			if !dropped {
				valid = slices.Clone(p.Diagnostics[:i])
				dropped = true
			}
			bad.add("diagnostics["+strconv.Itoa(i)+"]."+member, problem)
			continue
		}
		if dropped {
			valid = append(valid, p.Diagnostics[i])
		}
	}
	if !dropped {
		return r.publish(server, p, received, bad)
	}
	q := *p
	q.Diagnostics = valid
	return r.publish(server, &q, received, bad)
}

// invalidDiagnostic returns the member that makes d invalid and what is
// wrong with it; problem is "" for a valid diagnostic.
func invalidDiagnostic(d *diag.Diagnostic) (member, problem string) {
	if d.Severity != 0 && !d.Severity.Valid() {
		return "severity", "number " + strconv.Itoa(int(d.Severity)) + " is not a severity (1 to 4)"
	}
	if d.Range.Start.Line < 0 || d.Range.Start.Character < 0 || d.Range.End.Line < 0 || d.Range.End.Character < 0 {
		return "range", "negative position"
	}
	return "", ""
}

// publish registers p, whose diagnostics are all valid; received is the
// count as the server sent it and bad what was dropped as invalid.
func (r *Registry) publish(server string, p *diag.PublishParams, received int, bad invalidDiagnostics) error {
	// Normalize and hash outside the lock: it is the bulk of the work.
	var pp *pendingPublish
	var filtered, idFailures, truncated int
	var dropped []identity // distinct identities beyond the cap, not kept
	dropNoID := 0          // diagnostics beyond the cap without identity
	if len(p.Diagnostics) <= r.maxPerPublish {
		pp = getPending(len(p.Diagnostics))
		pp.entries, filtered, idFailures = r.normalize(pp.entries, p.Diagnostics)
	} else {
		// An absurd publish: sort it whole once, keep the best.
		var all []entry
		all, filtered, idFailures = r.normalize(nil, p.Diagnostics)
		if len(all) > r.maxPerPublish {
			slices.SortStableFunc(all, func(a, b entry) int { return compareDiagnostics(&a.d, &b.d) })
			kept, rest := all[:r.maxPerPublish], all[r.maxPerPublish:]
			truncated = len(rest)
			dropped, dropNoID = newBeyondCap(kept, rest)
			all = kept
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
	pp.invalid, pp.firstInvalid = bad.n, bad.first

	r.mu.Lock()
	ds := r.docs[p.URI]
	if p.Version != nil && ds != nil && ds.hasVersion && *p.Version < ds.version {
		r.stats.Stale++
		r.mu.Unlock()
		putPending(pp)
		return nil
	}
	if ds == nil {
		ds = r.track(p.URI)
	}
	if p.Version == nil && !ds.hasVersion && received > 0 && !r.wide[server] && len(r.wide) < maxFailingServers {
		// Diagnostics of a file nobody opened: the server diagnoses a
		// workspace, not only the open documents.
		r.wide[server] = true
	}
	r.seq++
	r.stats.Published++
	r.stats.Invalid += uint64(bad.n)
	r.stats.Filtered += uint64(filtered)
	r.stats.Truncated += uint64(truncated)
	r.stats.IdentityFailures += uint64(idFailures)
	delete(r.failures, server)

	pp.truncatedNew = dropNoID
	pp.truncatedAll = dropNoID + len(dropped)
	for _, id := range dropped {
		if !ds.set.has(id) {
			pp.truncatedNew++
		}
	}
	ss := r.serverOf(ds, server)
	ss.last = PublishInfo{Version: -1, Count: received, Seq: r.seq}
	if p.Version != nil {
		ss.last.Version = *p.Version
	}
	if old := ss.pending; old != nil {
		n := len(old.entries)
		r.stats.Superseded += uint64(n)
		r.stats.Pending -= n
		ss.pending = nil
		ds.npending--
	}
	if old := ss.current; old != nil {
		ss.current = nil
		putPending(old)
	}
	if len(pp.entries) > 0 || pp.invalid > 0 {
		ss.current, ss.pending = pp, pp
		ds.npending++
		r.stats.Pending += len(pp.entries)
	} else {
		putPending(pp)
	}
	r.settle(ds)
	r.mu.Unlock()

	if r.logger != nil {
		if bad.n > 0 {
			r.logger.Warn("lspdiag: invalid diagnostics dropped, the others kept",
				"server", server, "uri", p.URI, "count", bad.n, "first", bad.first)
		}
		if idFailures > 0 {
			r.logger.Warn("lspdiag: diagnostics without identity will be delivered without deduplication",
				"server", server, "uri", p.URI, "count", idFailures, "err", errInvalidUTF8)
		}
	}
	return nil
}

// newBeyondCap returns the distinct identities of rest (what MaxPerPublish
// drops) that are not among kept's, and the number of rest's diagnostics
// without identity (each of those is new).
func newBeyondCap(kept, rest []entry) (ids []identity, noID int) {
	seen := make(map[identity]struct{}, len(kept)+len(rest))
	for i := range kept {
		if kept[i].idOK {
			seen[kept[i].id] = struct{}{}
		}
	}
	for i := range rest {
		e := &rest[i]
		if !e.idOK {
			noID++
			continue
		}
		if _, dup := seen[e.id]; dup {
			continue
		}
		seen[e.id] = struct{}{}
		ids = append(ids, e.id)
	}
	return ids, noID
}

// reject counts a publish of the wrong shape, as a failure of its server.
func (r *Registry) reject(server string, err error) error {
	r.mu.Lock()
	r.stats.Rejected++
	r.mu.Unlock()
	r.ReportFailure(server, err)
	return fmt.Errorf("publishDiagnostics from %s: %w", server, err)
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

// serverOf returns the state of server in ds, adding it when missing (and
// forgetting the least recently published server with nothing pending
// when ds holds maxServersPerDocument already).
func (r *Registry) serverOf(ds *docState, name string) *serverState {
	i, found := slices.BinarySearchFunc(ds.servers, name, func(s serverState, n string) int {
		return strings.Compare(s.name, n)
	})
	if found {
		return &ds.servers[i]
	}
	if len(ds.servers) >= maxServersPerDocument {
		oldest := -1
		for j := range ds.servers {
			if ds.servers[j].pending == nil && (oldest < 0 || ds.servers[j].last.Seq < ds.servers[oldest].last.Seq) {
				oldest = j
			}
		}
		if oldest >= 0 {
			if cur := ds.servers[oldest].current; cur != nil {
				putPending(cur)
			}
			ds.servers = slices.Delete(ds.servers, oldest, oldest+1)
			if oldest < i {
				i--
			}
		}
	}
	ds.servers = slices.Insert(ds.servers, i, serverState{name: name})
	return &ds.servers[i]
}

// LastPublish returns the last accepted publish of server for uri,
// including clean (empty) ones; ok is false when there was none. Reset and
// ResetAll do not forget it; Forget does, and so does the document LRU
// (MaxDocuments).
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
// delivered: the next publish delivers them again. Its version and
// LastPublish are kept.
func (r *Registry) Reset(uri string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ds := r.docs[uri]
	if ds == nil {
		return
	}
	r.dropPending(ds)
	r.dropDelivered(ds)
	r.settle(ds)
}

// ResetAll forgets everything pending and delivered, for every document,
// and frees the memory that held it. Versions and LastPublish are kept
// (for at most MaxDocuments documents).
func (r *Registry) ResetAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	uris := make([]string, 0, len(r.pendingDocs))
	for uri := range r.pendingDocs {
		uris = append(uris, uri)
	}
	slices.Sort(uris)
	for _, uri := range uris {
		ds := r.pendingDocs[uri]
		r.dropPending(ds)
		r.settle(ds)
	}
	for _, ds := range r.docs {
		r.dropDelivered(ds)
	}
	// Maps keep their buckets when emptied: start afresh.
	r.pendingDocs = map[string]*docState{}
	r.seen = map[identity]struct{}{}
	r.files = nil
}

// Forget drops everything the registry knows about uri: pending and
// delivered diagnostics, its version and its last publishes. Use it when a
// document is closed for good.
func (r *Registry) Forget(uri string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ds := r.docs[uri]; ds != nil {
		r.drop(ds)
	}
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
	ds := r.docs[uri]
	if ds == nil {
		return
	}
	r.dropPending(ds)
	releaseCurrent(ds)
	ds.version, ds.hasVersion = 0, false
	ds.servers = nil
	r.settle(ds)
}

// track returns the state of uri, creating it when missing. A new state
// is neither pending nor in the LRU: the caller settles it.
func (r *Registry) track(uri string) *docState {
	ds := r.docs[uri]
	if ds == nil {
		ds = &docState{uri: uri}
		r.docs[uri] = ds
	}
	return ds
}

// settle files ds after a change: among the pending documents when it has
// something pending, else at the front of the LRU, forgetting the least
// recently used documents beyond MaxDocuments.
func (r *Registry) settle(ds *docState) {
	if ds.npending > 0 {
		r.lru.remove(ds)
		r.pendingDocs[ds.uri] = ds
		return
	}
	delete(r.pendingDocs, ds.uri)
	r.lru.pushFront(ds)
	for r.lru.n > r.maxDocuments {
		r.drop(r.lru.back())
		r.stats.Evictions++
	}
}

// drop forgets ds entirely.
func (r *Registry) drop(ds *docState) {
	r.dropPending(ds)
	releaseCurrent(ds)
	ds.servers = nil
	r.dropDelivered(ds)
	r.lru.remove(ds)
	delete(r.pendingDocs, ds.uri)
	delete(r.docs, ds.uri)
}

func (r *Registry) dropPending(ds *docState) {
	for i := range ds.servers {
		if pp := ds.servers[i].pending; pp != nil {
			r.stats.Pending -= len(pp.entries)
			ds.servers[i].pending = nil // still current, for Readers
		}
	}
	ds.npending = 0
}

// releaseCurrent recycles the last publishes of ds, which the caller is
// about to forget.
func releaseCurrent(ds *docState) {
	for i := range ds.servers {
		if pp := ds.servers[i].current; pp != nil {
			ds.servers[i].current, ds.servers[i].pending = nil, nil
			putPending(pp)
		}
	}
}

func (r *Registry) dropDelivered(ds *docState) {
	if ds.set != nil {
		ds.set = nil
		r.delivered--
	}
}

// docList is an intrusive doubly linked list of documents.
type docList struct {
	head, tail *docState
	n          int
}

func (l *docList) pushFront(ds *docState) {
	if l.head == ds {
		return
	}
	l.remove(ds)
	ds.next, ds.prev, ds.inLRU = l.head, nil, true
	if l.head != nil {
		l.head.prev = ds
	}
	l.head = ds
	if l.tail == nil {
		l.tail = ds
	}
	l.n++
}

func (l *docList) remove(ds *docState) {
	if !ds.inLRU {
		return
	}
	if ds.prev != nil {
		ds.prev.next = ds.next
	} else {
		l.head = ds.next
	}
	if ds.next != nil {
		ds.next.prev = ds.prev
	} else {
		l.tail = ds.prev
	}
	ds.prev, ds.next, ds.inLRU = nil, nil, false
	l.n--
}

func (l *docList) back() *docState { return l.tail }

// ReportFailure counts a failure of server (a handler error, a crash, a
// bad publish: Publish counts those itself). From the third consecutive
// failure on, each one is logged as a warning. The server is never
// disabled.
func (r *Registry) ReportFailure(server string, err error) {
	r.mu.Lock()
	if _, ok := r.failures[server]; !ok && len(r.failures) >= maxFailingServers {
		for s := range r.failures { // forget one counter to make room
			delete(r.failures, s)
			break
		}
	}
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
	delete(r.failures, server)
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
	s.Documents = r.delivered
	s.Tracked = len(r.docs)
	return s
}
