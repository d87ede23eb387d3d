package lspdiag

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/idebridge/idebridge/diag"
)

// naiveRegistry is the simplest correct implementation of the Registry's
// rules: it keeps every publish until the next drain and then sorts and
// filters everything, with string identities and linear-time LRUs. It is
// the model the Registry is checked against, and its benchmark baseline.
type naiveRegistry struct {
	o        RegistryOptions // resolved
	versions map[string]int
	pubs     []naivePub
	lru      []string // delivered documents, most recent first
	sets     map[string][]string
}

type naivePub struct {
	server, uri string
	version     *int
	diags       []diag.Diagnostic
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
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxPerPublish, DefaultMaxPerPublish)
	def(&o.MaxPerFile, DefaultMaxPerFile)
	def(&o.MaxTotal, DefaultMaxTotal)
	def(&o.MaxDocuments, DefaultMaxDocuments)
	def(&o.MaxDeliveredPerDocument, DefaultMaxDeliveredPerDocument)
	if !o.MinSeverity.Valid() {
		o.MinSeverity = diag.SeverityHint
	}
	return &naiveRegistry{o: o, versions: map[string]int{}, sets: map[string][]string{}}
}

func (n *naiveRegistry) SetVersion(uri string, v int) { n.versions[uri] = v }

func (n *naiveRegistry) PublishParams(server string, p *diag.PublishParams) {
	if cur, ok := n.versions[p.URI]; ok && p.Version != nil && *p.Version < cur {
		return
	}
	var ds []diag.Diagnostic
	for _, d := range p.Diagnostics {
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
		ds = ds[:n.o.MaxPerPublish]
	}
	n.pubs = append(n.pubs, naivePub{server: server, uri: p.URI, version: p.Version, diags: ds})
}

func (n *naiveRegistry) Reset(uri string) {
	n.pubs = slices.DeleteFunc(n.pubs, func(p naivePub) bool { return p.uri == uri })
	n.lru = slices.DeleteFunc(n.lru, func(u string) bool { return u == uri })
	delete(n.sets, uri)
}

func (n *naiveRegistry) Drain() (*diag.Attachment, bool) {
	// The last publish of each server for each document wins.
	last := map[[2]string]naivePub{}
	for _, p := range n.pubs {
		last[[2]string{p.server, p.uri}] = p
	}
	n.pubs = nil
	var rows []naiveRow
	for _, p := range last {
		if cur, ok := n.versions[p.uri]; ok && p.version != nil && *p.version < cur {
			continue
		}
		for i, d := range p.diags {
			key := fmt.Sprintf("%q|%d|%d:%d-%d:%d|%q|%q", d.Message, d.Severity,
				d.Range.Start.Line, d.Range.Start.Character, d.Range.End.Line, d.Range.End.Character, d.Source, d.Code)
			ok := utf8.ValidString(d.Message) && utf8.ValidString(d.Source) && utf8.ValidString(d.Code)
			rows = append(rows, naiveRow{server: p.server, uri: p.uri, index: i, d: d, key: key, keyOK: ok})
		}
	}
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
			if seen[k] || slices.Contains(n.sets[r.uri], r.key) {
				continue
			}
			seen[k] = true
		}
		fresh = append(fresh, r)
	}
	// Per-file limit, then the total limit by severity, then file order.
	cut := map[string]int{}
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
	if len(kept) == 0 {
		return nil, false
	}
	att := &diag.Attachment{Servers: []string{}, Files: []diag.FileDiagnostics{}}
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
	slices.Sort(att.Servers)
	return att, true
}

func (n *naiveRegistry) remember(uri, key string) {
	if i := slices.Index(n.lru, uri); i >= 0 {
		n.lru = slices.Delete(n.lru, i, i+1)
	} else if len(n.lru) == n.o.MaxDocuments {
		delete(n.sets, n.lru[len(n.lru)-1])
		n.lru = n.lru[:len(n.lru)-1]
	}
	n.lru = slices.Insert(n.lru, 0, uri)
	s := append(n.sets[uri], key)
	if len(s) > n.o.MaxDeliveredPerDocument {
		s = s[1:]
	}
	n.sets[uri] = s
}

func (n *naiveRegistry) ResetAll() {
	n.pubs, n.lru = nil, nil
	n.sets = map[string][]string{}
}
