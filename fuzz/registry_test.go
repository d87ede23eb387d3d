package fuzz

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/idebridge/idebridge/lspdiag"
)

// Small limits, so that short inputs reach them.
var registryFuzzOpts = lspdiag.RegistryOptions{MaxPerFile: 3, MaxTotal: 5}

var fuzzServers = [2]string{"plugin:go:gopls", "plugin:go:other"}

// regModel is what the fuzz harness knows independently of the registry:
// document versions, the last accepted publish per server and document
// since the last drain, and every identity delivered.
type regModel struct {
	versions  map[string]int
	pending   map[[2]string]modelPublish // {server, uri}
	delivered map[string]map[string]bool // uri -> identities
	tooBig    bool                       // a publish exceeded MaxPerPublish: counts are not modelled
}

type modelPublish struct {
	version *int
	ids     []string
}

// identityOf is the registry's identity rule, restated: message, severity,
// range, source and code after normalization.
func identityOf(d lspdiag.Diagnostic) string {
	sev := d.Severity
	if sev == 0 {
		sev = lspdiag.SeverityError
	}
	r := d.Range
	if r.End.Line < r.Start.Line || r.End.Line == r.Start.Line && r.End.Character < r.Start.Character {
		r.End = r.Start
	}
	return fmt.Sprintf("%q %d %v %q %q", strings.TrimSpace(d.Message), sev, r, strings.TrimSpace(d.Source), strings.TrimSpace(d.Code))
}

// accepted records a publish the registry accepted, unless stale.
func (m *regModel) accepted(server string, p *lspdiag.PublishParams) {
	if cur, ok := m.versions[p.URI]; ok && p.Version != nil && *p.Version < cur {
		return // dropped as stale
	}
	if len(p.Diagnostics) > lspdiag.DefaultMaxPerPublish {
		m.tooBig = true
	}
	mp := modelPublish{version: p.Version}
	for _, d := range p.Diagnostics {
		mp.ids = append(mp.ids, identityOf(d))
	}
	m.pending[[2]string{server, p.URI}] = mp
}

// FuzzRegistry feeds arbitrary JSON as publish params to a Registry, under
// a script of publishes, version changes, resets and drains taken from
// ops. Properties: nothing panics; a rejected publish is a shape error,
// and Publish accepts exactly what json.Unmarshal into PublishParams
// accepts; every drained attachment respects the limits and its order,
// never repeats an identity already delivered (or one within itself),
// never holds a diagnostic whose publish is older than the document's
// current version, and accounts for every new diagnostic as shown or cut;
// its JSON round-trips; its rendering stays within the default budget.
func FuzzRegistry(f *testing.F) {
	f.Add([]byte(`{"uri":"file:///p/a.go","version":1,"diagnostics":[{"range":{"start":{"line":0,"character":1},"end":{"line":0,"character":2}},"message":"m","severity":1}]}`),
		[]byte(`{"uri":"file:///p/a.go","version":2,"diagnostics":[]}`), []byte{0, 4, 0, 4, 1, 4})
	f.Fuzz(func(t *testing.T, a, b, ops []byte) {
		if len(ops) > 256 {
			ops = ops[:256]
		}
		reg := lspdiag.NewRegistry(&registryFuzzOpts)
		m := &regModel{versions: map[string]int{}, pending: map[[2]string]modelPublish{}, delivered: map[string]map[string]bool{}}
		raws := [2][]byte{a, b}
		var decoded [2]*lspdiag.PublishParams
		for i, raw := range raws {
			var p lspdiag.PublishParams
			if err := json.Unmarshal(raw, &p); err == nil {
				decoded[i] = &p
			}
		}
		uriOf := func(i int) string {
			if decoded[i] != nil {
				return decoded[i].URI
			}
			return "file:///p/none.go"
		}
		for _, op := range append(ops, 4) {
			which, server := int(op>>3)&1, fuzzServers[(op>>4)&1]
			switch op % 8 {
			case 0, 1: // raw publish
				err := reg.Publish(server, raws[which])
				if (err == nil) != (decoded[which] != nil && decoded[which].URI != "") {
					t.Fatalf("Publish(%q) = %v, but json.Unmarshal gave %+v", raws[which], err, decoded[which])
				}
				if err != nil {
					if !errors.Is(err, lspdiag.ErrBadShape) {
						t.Fatalf("Publish error %v is not a shape error", err)
					}
					continue
				}
				m.accepted(server, decoded[which])
			case 2, 7: // decoded publish at a chosen version
				if decoded[which] == nil || decoded[which].URI == "" {
					continue
				}
				p := *decoded[which]
				v := int(op>>5) - 1
				if v >= 0 {
					p.Version = &v
				} else {
					p.Version = nil
				}
				if err := reg.PublishParams(server, &p); err != nil {
					t.Fatalf("PublishParams of decoded params: %v", err)
				}
				m.accepted(server, &p)
			case 3:
				v := int(op >> 5)
				reg.SetVersion(uriOf(which), v)
				m.versions[uriOf(which)] = v
			case 4:
				att, ok := reg.Drain()
				m.check(t, att, ok)
			case 5:
				reg.Reset(uriOf(which))
				for k := range m.pending {
					if k[1] == uriOf(which) {
						delete(m.pending, k)
					}
				}
				delete(m.delivered, uriOf(which))
			case 6:
				if op&0x80 != 0 {
					reg.ResetAll()
					clear(m.pending)
					clear(m.delivered)
				}
			}
		}
	})
}

func (m *regModel) check(t *testing.T, att *lspdiag.Attachment, ok bool) {
	t.Helper()
	// What may be delivered: the identities of the last accepted publish
	// of each server, when not older than the document's version.
	eligible := map[string]map[string]bool{}
	for k, p := range m.pending {
		uri := k[1]
		if cur, has := m.versions[uri]; has && p.version != nil && *p.version < cur {
			continue
		}
		if eligible[uri] == nil {
			eligible[uri] = map[string]bool{}
		}
		for _, id := range p.ids {
			if !m.delivered[uri][id] {
				eligible[uri][id] = true
			}
		}
	}
	clear(m.pending)
	newCount := 0
	for _, ids := range eligible {
		newCount += len(ids)
	}
	if !ok {
		if att != nil {
			t.Fatal("Drain returned an attachment with ok false")
		}
		if newCount != 0 && !m.tooBig {
			t.Fatalf("Drain returned nothing but %d new diagnostics were pending", newCount)
		}
		return
	}
	total := 0
	fileCuts := 0
	for i, f := range att.Files {
		if i > 0 && att.Files[i-1].URI >= f.URI {
			t.Fatalf("files out of order or repeated: %q then %q", att.Files[i-1].URI, f.URI)
		}
		if len(f.Diagnostics) == 0 || len(f.Diagnostics) > registryFuzzOpts.MaxPerFile {
			t.Fatalf("file %s has %d diagnostics (limit %d)", f.URI, len(f.Diagnostics), registryFuzzOpts.MaxPerFile)
		}
		total += len(f.Diagnostics)
		fileCuts += f.Cut
		if m.delivered[f.URI] == nil {
			m.delivered[f.URI] = map[string]bool{}
		}
		for j, d := range f.Diagnostics {
			if j > 0 && f.Diagnostics[j-1].Severity > d.Severity {
				t.Fatalf("file %s not sorted by severity", f.URI)
			}
			if !d.Severity.Valid() {
				t.Fatalf("delivered severity %d", d.Severity)
			}
			id := identityOf(d)
			if m.delivered[f.URI][id] {
				t.Fatalf("identity delivered twice in %s: %s", f.URI, id)
			}
			if !eligible[f.URI][id] {
				t.Fatalf("delivered %s in %s, which no current publish holds", id, f.URI)
			}
			m.delivered[f.URI][id] = true
		}
		if !m.tooBig && len(f.Diagnostics)+f.Cut > len(eligible[f.URI]) {
			t.Fatalf("file %s: %d shown + %d cut, but only %d new", f.URI, len(f.Diagnostics), f.Cut, len(eligible[f.URI]))
		}
	}
	if total > registryFuzzOpts.MaxTotal {
		t.Fatalf("%d diagnostics delivered (limit %d)", total, registryFuzzOpts.MaxTotal)
	}
	if att.Cut < fileCuts {
		t.Fatalf("attachment cut %d < sum of file cuts %d", att.Cut, fileCuts)
	}
	if !m.tooBig && total+att.Cut != newCount {
		t.Fatalf("%d shown + %d cut != %d new diagnostics", total, att.Cut, newCount)
	}
	// JSON round trip.
	b, err := json.Marshal(att)
	if err != nil {
		t.Fatal(err)
	}
	var back lspdiag.Attachment
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("attachment JSON does not decode: %v\n%s", err, b)
	}
	if d := cmp.Diff(att, &back, cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("JSON round trip (-before +after):\n%s", d)
	}
	if s := att.Render(nil); utf8.RuneCountInString(s) > lspdiag.DefaultMaxChars || s == "" {
		t.Fatalf("rendering of %d characters (budget %d)", utf8.RuneCountInString(s), lspdiag.DefaultMaxChars)
	}
}
