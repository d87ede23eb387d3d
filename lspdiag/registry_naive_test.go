package lspdiag

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/idebridge/idebridge/diag"
)

// naiveRegistry is the simplest correct implementation of the Registry's
// rules: it keeps the last publish of each server for each document until
// the next drain and then sorts and filters everything, with string
// identities and a linear-time LRU. It is the model the Registry is
// checked against, and its benchmark baseline.
type naiveRegistry struct {
	o       RegistryOptions // resolved
	docs    map[string]*naiveDoc
	pending map[[2]string]naivePub // {server, uri}: the last publish with content
	lru     []string               // documents with nothing pending, most recent first
}

type naiveDoc struct {
	version *int
	set     []string // delivered identities, oldest first
}

type naivePub struct {
	server, uri string
	version     *int
	diags       []diag.Diagnostic // kept (MaxPerPublish), sorted
	dropped     []diag.Diagnostic // beyond MaxPerPublish
	invalid     int
	first       string // the first invalid diagnostic's problem
}

type naiveRow struct {
	server, uri string
	index       int
	d           diag.Diagnostic
	key         string
	keyOK       bool
}

func newNaive(opts *RegistryOptions) *naiveRegistry {
	var o RegistryOptions
	if opts != nil {
		o = *opts
	}
	def := func(v *int, d int) {
		switch {
		case *v == 0:
			*v = d
		case *v < 0:
			*v = math.MaxInt
		}
	}
	def(&o.MaxPerPublish, DefaultMaxPerPublish)
	def(&o.MaxPerFile, DefaultMaxPerFile)
	def(&o.MaxTotal, DefaultMaxTotal)
	def(&o.MaxDocuments, DefaultMaxDocuments)
	def(&o.MaxDeliveredPerDocument, DefaultMaxDeliveredPerDocument)
	if o.MinSeverity == 0 {
		o.MinSeverity = diag.SeverityHint
	}
	return &naiveRegistry{o: o, docs: map[string]*naiveDoc{}, pending: map[[2]string]naivePub{}}
}

func (n *naiveRegistry) isPending(uri string) bool {
	for k := range n.pending {
		if k[1] == uri {
			return true
		}
	}
	return false
}

// touch files uri after a change: out of the LRU while something is
// pending, else at its front, forgetting documents beyond MaxDocuments.
func (n *naiveRegistry) touch(uri string) {
	n.lru = slices.DeleteFunc(n.lru, func(u string) bool { return u == uri })
	if n.isPending(uri) {
		return
	}
	n.lru = slices.Insert(n.lru, 0, uri)
	for len(n.lru) > n.o.MaxDocuments {
		delete(n.docs, n.lru[len(n.lru)-1])
		n.lru = n.lru[:len(n.lru)-1]
	}
}

func (n *naiveRegistry) doc(uri string) *naiveDoc {
	d := n.docs[uri]
	if d == nil {
		d = &naiveDoc{}
		n.docs[uri] = d
	}
	return d
}

func (n *naiveRegistry) SetVersion(uri string, v int) {
	n.doc(uri).version = &v
	n.touch(uri)
}

func (n *naiveRegistry) PublishParams(server string, p *diag.PublishParams) {
	if d := n.docs[p.URI]; d != nil && d.version != nil && p.Version != nil && *p.Version < *d.version {
		return
	}
	pub := naivePub{server: server, uri: p.URI, version: p.Version}
	var ds []diag.Diagnostic
	for i, d := range p.Diagnostics {
		bad := ""
		switch {
		case d.Severity < 0 || d.Severity > diag.SeverityHint:
			bad = "diagnostics[" + strconv.Itoa(i) + "].severity: number " + strconv.Itoa(int(d.Severity)) + " is not a severity (1 to 4)"
		case d.Range.Start.Line < 0 || d.Range.Start.Character < 0 || d.Range.End.Line < 0 || d.Range.End.Character < 0:
			bad = "diagnostics[" + strconv.Itoa(i) + "].range: negative position"
		}
		if bad != "" {
			if pub.invalid == 0 {
				pub.first = bad
			}
			pub.invalid++
			continue
		}
		if d.Severity == 0 {
			d.Severity = diag.SeverityError
		}
		if d.Severity > n.o.MinSeverity || (n.o.DropUnnecessary && slices.Contains(d.Tags, diag.TagUnnecessary)) {
			continue
		}
		d.Message = strings.TrimSpace(d.Message)
		d.Source = strings.TrimSpace(d.Source)
		d.Code = strings.TrimSpace(d.Code)
		if comparePos(d.Range.End, d.Range.Start) < 0 {
			d.Range.End = d.Range.Start
		}
		ds = append(ds, d)
	}
	slices.SortStableFunc(ds, func(a, b diag.Diagnostic) int { return compareDiagnostics(&a, &b) })
	if len(ds) > n.o.MaxPerPublish {
		ds, pub.dropped = ds[:n.o.MaxPerPublish], ds[n.o.MaxPerPublish:]
	}
	pub.diags = ds
	n.doc(p.URI)
	k := [2]string{server, p.URI}
	if len(ds) > 0 || pub.invalid > 0 {
		n.pending[k] = pub
	} else {
		delete(n.pending, k)
	}
	n.touch(p.URI)
}

func (n *naiveRegistry) Reset(uri string) {
	if n.docs[uri] == nil {
		return
	}
	for k := range n.pending {
		if k[1] == uri {
			delete(n.pending, k)
		}
	}
	n.docs[uri].set = nil
	n.touch(uri)
}

func naiveKey(d diag.Diagnostic) (string, bool) {
	key := fmt.Sprintf("%q|%d|%d:%d-%d:%d|%q|%q", d.Message, d.Severity,
		d.Range.Start.Line, d.Range.Start.Character, d.Range.End.Line, d.Range.End.Character, d.Source, d.Code)
	return key, utf8.ValidString(d.Message) && utf8.ValidString(d.Source) && utf8.ValidString(d.Code)
}

func (n *naiveRegistry) Drain() (*diag.Attachment, bool) {
	var keys [][2]string
	for k := range n.pending {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]string) int { return cmp.Or(strings.Compare(a[1], b[1]), strings.Compare(a[0], b[0])) })
	var rows []naiveRow
	var notes []string
	cut := map[string]int{}
	var consumed []string
	for _, k := range keys {
		p := n.pending[k]
		if len(consumed) == 0 || consumed[len(consumed)-1] != p.uri {
			consumed = append(consumed, p.uri)
		}
		doc := n.docs[p.uri]
		if doc.version != nil && p.version != nil && *p.version < *doc.version {
			continue
		}
		if p.invalid > 0 {
			notes = append(notes, invalidNote(p.server, p.uri, p.invalid, p.first))
		}
		kept := map[string]bool{}
		for i, d := range p.diags {
			key, ok := naiveKey(d)
			rows = append(rows, naiveRow{server: p.server, uri: p.uri, index: i, d: d, key: key, keyOK: ok})
			if ok {
				kept[key] = true
			}
		}
		// The cap's drops are new unless delivered before or repeated in
		// their publish.
		for _, d := range p.dropped {
			key, ok := naiveKey(d)
			if ok && (kept[key] || slices.Contains(doc.set, key)) {
				continue
			}
			if ok {
				kept[key] = true
			}
			cut[p.uri]++
		}
	}
	clear(n.pending)
	slices.SortFunc(rows, func(a, b naiveRow) int {
		return cmp.Or(strings.Compare(a.uri, b.uri), compareDiagnostics(&a.d, &b.d),
			strings.Compare(a.server, b.server), cmp.Compare(a.index, b.index))
	})
	// Dedup per file, against the batch and what was delivered.
	var fresh []naiveRow
	seen := map[string]bool{}
	for _, r := range rows {
		if r.keyOK {
			k := r.uri + "\x00" + r.key
			if seen[k] || slices.Contains(n.docs[r.uri].set, r.key) {
				continue
			}
			seen[k] = true
		}
		fresh = append(fresh, r)
	}
	// Per-file limit, then the total limit by severity, then file order.
	var kept []naiveRow
	perFile := map[string]int{}
	for _, r := range fresh {
		if perFile[r.uri] < n.o.MaxPerFile {
			perFile[r.uri]++
			kept = append(kept, r)
		} else {
			cut[r.uri]++
		}
	}
	slices.SortStableFunc(kept, func(a, b naiveRow) int {
		return cmp.Or(cmp.Compare(a.d.Severity, b.d.Severity), strings.Compare(a.uri, b.uri))
	})
	for _, r := range kept[min(len(kept), n.o.MaxTotal):] {
		cut[r.uri]++
	}
	kept = kept[:min(len(kept), n.o.MaxTotal)]
	slices.SortStableFunc(kept, func(a, b naiveRow) int {
		return cmp.Or(strings.Compare(a.uri, b.uri), compareDiagnostics(&a.d, &b.d),
			strings.Compare(a.server, b.server), cmp.Compare(a.index, b.index))
	})
	att := &diag.Attachment{Servers: []string{}, Files: []diag.FileDiagnostics{}, Notes: notes}
	for _, c := range cut {
		att.Cut += c
	}
	for _, r := range kept {
		if !slices.Contains(att.Servers, r.server) {
			att.Servers = append(att.Servers, r.server)
		}
		if len(att.Files) == 0 || att.Files[len(att.Files)-1].URI != r.uri {
			att.Files = append(att.Files, diag.FileDiagnostics{URI: r.uri, Path: pathFromURI(r.uri), Cut: cut[r.uri]})
		}
		f := &att.Files[len(att.Files)-1]
		f.Diagnostics = append(f.Diagnostics, r.d)
		if r.keyOK {
			n.remember(r.uri, r.key)
		}
	}
	for _, uri := range consumed {
		n.touch(uri)
	}
	if len(att.Files) == 0 && att.Cut == 0 && len(att.Notes) == 0 {
		return nil, false
	}
	slices.Sort(att.Servers)
	return att, true
}

func (n *naiveRegistry) remember(uri, key string) {
	d := n.docs[uri]
	d.set = append(d.set, key)
	if len(d.set) > n.o.MaxDeliveredPerDocument {
		d.set = d.set[1:]
	}
}

func (n *naiveRegistry) ResetAll() {
	var uris []string
	for k := range n.pending {
		if !slices.Contains(uris, k[1]) {
			uris = append(uris, k[1])
		}
	}
	slices.Sort(uris)
	clear(n.pending)
	for _, uri := range uris {
		n.touch(uri)
	}
	for _, d := range n.docs {
		d.set = nil
	}
}
