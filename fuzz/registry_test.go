package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/idebridge/idebridge/diag"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/idebridge/idebridge/lspdiag"
)

// Small limits, so that short inputs reach them.
var registryFuzzOpts = lspdiag.RegistryOptions{MaxPerFile: 3, MaxTotal: 5, MaxPerPublish: 4}

var fuzzServers = [2]string{"plugin:go:gopls", "plugin:go:other"}

// regModel is what the fuzz harness knows independently of the registry:
// document versions, the last accepted publish per server and document
// since the last drain, and every identity delivered.
type regModel struct {
	versions  map[string]int
	pending   map[[2]string]modelPublish // {server, uri}
	delivered map[string]map[string]bool // uri -> identities
	invalid   uint64                     // invalid diagnostics of accepted publishes
}

type modelPublish struct {
	version *int
	ids     []string
	invalid int  // diagnostics dropped as invalid
	capped  bool // more diagnostics than MaxPerPublish
}

// identityOf is the registry's identity rule, restated: message, severity,
// range, source and code after normalization.
func identityOf(d diag.Diagnostic) string {
	sev := d.Severity
	if sev == 0 {
		sev = diag.SeverityError
	}
	r := d.Range
	if r.End.Line < r.Start.Line || r.End.Line == r.Start.Line && r.End.Character < r.Start.Character {
		r.End = r.Start
	}
	return fmt.Sprintf("%q %d %v %q %q", strings.TrimSpace(d.Message), sev, r, strings.TrimSpace(d.Source), strings.TrimSpace(d.Code))
}

// accepted records a publish the registry accepted (its valid diagnostics
// and the number of invalid ones), unless stale.
func (m *regModel) accepted(server string, p *diag.PublishParams, invalid int) {
	if cur, ok := m.versions[p.URI]; ok && p.Version != nil && *p.Version < cur {
		return // dropped as stale
	}
	m.invalid += uint64(invalid)
	mp := modelPublish{version: p.Version, invalid: invalid, capped: len(p.Diagnostics) > registryFuzzOpts.MaxPerPublish}
	for _, d := range p.Diagnostics {
		mp.ids = append(mp.ids, identityOf(d))
	}
	k := [2]string{server, p.URI}
	if len(mp.ids) == 0 && invalid == 0 {
		delete(m.pending, k) // a clean set clears what was pending
		return
	}
	m.pending[k] = mp
}

// splitPublish is what Publish makes of raw params, restated on the
// exported decoders: the params as json.Unmarshal decodes them; or, when
// only some diagnostics fail to decode, the well-formed envelope with the
// diagnostics that decode and the number that do not. ok is false when
// Publish must reject raw.
func splitPublish(raw []byte) (p *diag.PublishParams, invalid int, ok bool) {
	var whole diag.PublishParams
	if json.Unmarshal(raw, &whole) == nil {
		return &whole, 0, whole.URI != ""
	}
	var env struct {
		URI         json.RawMessage   `json:"uri"`
		Version     json.RawMessage   `json:"version"`
		Diagnostics []json.RawMessage `json:"diagnostics"`
	}
	if json.Unmarshal(raw, &env) != nil || env.Diagnostics == nil || env.URI == nil {
		return nil, 0, false
	}
	shell := `{"uri":` + string(env.URI) + `,"diagnostics":[]`
	if env.Version != nil {
		shell += `,"version":` + string(env.Version)
	}
	var q diag.PublishParams
	if json.Unmarshal([]byte(shell+"}"), &q) != nil || q.URI == "" {
		return nil, 0, false
	}
	for _, item := range env.Diagnostics {
		var d diag.Diagnostic
		if json.Unmarshal(item, &d) != nil {
			invalid++
			continue
		}
		q.Diagnostics = append(q.Diagnostics, d)
	}
	return &q, invalid, invalid > 0
}

// FuzzRegistry feeds arbitrary JSON as publish params to a Registry, under
// a script of publishes, version changes, resets and drains taken from
// ops. Properties: nothing panics; a rejected publish is a shape error,
// and Publish accepts exactly what json.Unmarshal into PublishParams
// accepts plus well-formed envelopes of which only some diagnostics are
// not (those are dropped, counted in Stats.Invalid and noted in the next
// attachment, one note per server and document); every drained attachment
// respects the limits and its order, never repeats an identity already
// delivered (or one within itself), never holds a diagnostic whose
// publish is older than the document's current version, and accounts for
// every new diagnostic as shown or cut, the per-publish cap's drops
// included (exactly, unless two servers' capped publishes may share
// diagnostics: then between the distinct count and the per-server sum);
// its JSON round-trips; its rendering stays within the default budget.
func FuzzRegistry(f *testing.F) {
	f.Add([]byte(`{"uri":"file:///p/a.go","version":1,"diagnostics":[{"range":{"start":{"line":0,"character":1},"end":{"line":0,"character":2}},"message":"m","severity":1}]}`),
		[]byte(`{"uri":"file:///p/a.go","version":2,"diagnostics":[]}`), []byte{0, 4, 0, 4, 1, 4})
	f.Fuzz(func(t *testing.T, a, b, ops []byte) {
		if len(ops) > 256 {
			ops = ops[:256]
		}
		reg, err := lspdiag.NewRegistry(&registryFuzzOpts)
		if err != nil {
			t.Fatal(err)
		}
		m := &regModel{versions: map[string]int{}, pending: map[[2]string]modelPublish{}, delivered: map[string]map[string]bool{}}
		raws := [2][]byte{a, b}
		var decoded [2]*diag.PublishParams
		var invalid [2]int
		for i, raw := range raws {
			if p, n, ok := splitPublish(raw); ok {
				decoded[i], invalid[i] = p, n
			}
		}
		uriOf := func(i int) string {
			if decoded[i] != nil {
				return decoded[i].URI
			}
			return "file:///p/none.go"
		}
		// The fuzzer may hand ops as a slice of another argument's array
		// (a run gave ops = b[:5]): appending in place would overwrite b.
		for _, op := range append(slices.Clip(ops), 4) {
			which, server := int(op>>3)&1, fuzzServers[(op>>4)&1]
			switch op % 8 {
			case 0, 1: // raw publish
				err := reg.Publish(server, raws[which])
				if (err == nil) != (decoded[which] != nil) {
					t.Fatalf("Publish(%q) = %v, but the params decode as %+v", raws[which], err, decoded[which])
				}
				if err != nil {
					if !errors.Is(err, diag.ErrBadShape) {
						t.Fatalf("Publish error %v is not a shape error", err)
					}
					continue
				}
				m.accepted(server, decoded[which], invalid[which])
			case 2, 7: // decoded publish at a chosen version
				if decoded[which] == nil {
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
				m.accepted(server, &p, 0)
			case 3:
				v := int(op >> 5)
				reg.SetVersion(uriOf(which), v)
				m.versions[uriOf(which)] = v
			case 4:
				att, ok := reg.Drain()
				m.check(t, att, ok)
				if got := reg.Stats().Invalid; got != m.invalid {
					t.Fatalf("Stats.Invalid = %d, want %d", got, m.invalid)
				}
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
					continue
				}
				// A decoded publish with invalid diagnostics added: an
				// out-of-range severity or a negative position.
				if decoded[which] == nil {
					continue
				}
				p := *decoded[which]
				bad := diag.Diagnostic{Message: "bad", Severity: diag.Severity(99 - 102*int(op>>5&1))}
				if op&0x40 != 0 {
					bad.Severity, bad.Range.End.Character = 0, -1
				}
				p.Diagnostics = append(slices.Clone(p.Diagnostics), bad)
				if err := reg.PublishParams(server, &p); err != nil {
					t.Fatalf("PublishParams with an invalid diagnostic: %v", err)
				}
				p.Diagnostics = p.Diagnostics[:len(p.Diagnostics)-1]
				m.accepted(server, &p, 1)
			}
		}
	})
}

func (m *regModel) check(t *testing.T, att *diag.Attachment, ok bool) {
	t.Helper()
	// What may be delivered: the identities of the last accepted publish
	// of each server, when not older than the document's version. low is
	// the number of new ones per document; high counts a capped publish's
	// per server (the registry dedups the cap's drops within their publish
	// only, so a drop that another server published too may count twice).
	eligible := map[string]map[string]bool{}
	low, high := map[string]int{}, map[string]int{}
	servers, capped := map[string]int{}, map[string]bool{}
	wantNotes := 0
	for k, p := range m.pending {
		uri := k[1]
		if cur, has := m.versions[uri]; has && p.version != nil && *p.version < cur {
			continue
		}
		if p.invalid > 0 {
			wantNotes++
		}
		if eligible[uri] == nil {
			eligible[uri] = map[string]bool{}
		}
		own := map[string]bool{}
		for _, id := range p.ids {
			if !m.delivered[uri][id] {
				eligible[uri][id] = true
				own[id] = true
			}
		}
		high[uri] += len(own)
		servers[uri]++
		capped[uri] = capped[uri] || p.capped
	}
	clear(m.pending)
	newCount, highCount := 0, 0
	for uri, ids := range eligible {
		low[uri] = len(ids)
		newCount += len(ids)
		if !capped[uri] || servers[uri] == 1 {
			high[uri] = low[uri] // exact
		}
		highCount += high[uri]
	}
	if !ok {
		if att != nil {
			t.Fatal("Drain returned an attachment with ok false")
		}
		if newCount != 0 || wantNotes != 0 {
			t.Fatalf("Drain returned nothing but %d new diagnostics and %d notes were pending", newCount, wantNotes)
		}
		return
	}
	if len(att.Notes) != wantNotes {
		t.Fatalf("%d notes %q, want %d (one per publish with invalid diagnostics)", len(att.Notes), att.Notes, wantNotes)
	}
	for _, n := range att.Notes {
		if !strings.Contains(n, " invalid diagnostic") || !strings.Contains(n, "plugin:go:") || !strings.Contains(n, " dropped (diagnostics[") {
			t.Fatalf("note %q does not say which server's invalid diagnostics were dropped", n)
		}
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
		if n := len(f.Diagnostics) + f.Cut; n < low[f.URI] || n > high[f.URI] {
			t.Fatalf("file %s: %d shown + %d cut, but %d to %d new", f.URI, len(f.Diagnostics), f.Cut, low[f.URI], high[f.URI])
		}
	}
	if total > registryFuzzOpts.MaxTotal {
		t.Fatalf("%d diagnostics delivered (limit %d)", total, registryFuzzOpts.MaxTotal)
	}
	if att.Cut < fileCuts {
		t.Fatalf("attachment cut %d < sum of file cuts %d", att.Cut, fileCuts)
	}
	if n := total + att.Cut; n < newCount || n > highCount {
		t.Fatalf("%d shown + %d cut, but %d to %d new diagnostics", total, att.Cut, newCount, highCount)
	}
	// JSON round trip.
	b, err := json.Marshal(att)
	if err != nil {
		t.Fatal(err)
	}
	var back diag.Attachment
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("attachment JSON does not decode: %v\n%s", err, b)
	}
	if d := cmp.Diff(att, &back, cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("JSON round trip (-before +after):\n%s", d)
	}
	if s := att.Render(nil); utf8.RuneCountInString(s) > diag.DefaultMaxChars || s == "" {
		t.Fatalf("rendering of %d characters (budget %d)", utf8.RuneCountInString(s), diag.DefaultMaxChars)
	}
}

// FuzzPublishDecode checks the decoding of publishDiagnostics params, and
// of the same bytes as a single diagnostic, against a model written here
// on encoding/json's generic values: both accept the same inputs and give
// the same values. Publish accepts exactly the inputs whose envelope (an
// object with a non-empty string uri, an integer or null version and a
// diagnostics array) the model accepts, keeps the diagnostics the model
// accepts and counts the others in Stats.Invalid; its errors are shape
// errors. Inputs that repeat a key in an object, or spell a field name in
// another letter case (encoding/json matches those case-blind), are
// outside the model's domain and only checked not to panic, to be
// accepted when they decode, and to count nothing invalid then.
func FuzzPublishDecode(f *testing.F) {
	f.Add([]byte(`{"uri":"file:///p/a.go","version":3,"diagnostics":[{"range":{"start":{"line":1,"character":2},"end":{"line":1,"character":4}},"message":"m","severity":"Warning","code":12,"source":"s"}]}`))
	f.Add([]byte(`{"range":{"start":{"line":1,"character":2},"end":{"line":1,"character":4}},"message":{"kind":"plaintext","value":"v"},"tags":[1,null],"codeDescription":{"href":"h"},"relatedInformation":[{"location":{"uri":"u","range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}}},"message":"r"},1]}`))
	f.Add([]byte(`{"uri":"file:///p/a.go","diagnostics":[{"range":{"start":{"line":1,"character":2},"end":{"line":1,"character":4}},"message":"m","severity":99},{"range":{"start":{"line":-1,"character":2},"end":{"line":1,"character":4}},"message":"m"},{"range":{"start":{"line":1,"character":2},"end":{"line":1,"character":4}},"message":"ok"}]}`))
	f.Add([]byte(`{"uri":"file:///p/a.go","diagnostics":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}},"message":"m","severity":" WARN "},{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}},"message":"m","severity":"Informational"},{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}},"message":"m","severity":"\t4"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var p diag.PublishParams
		perr := json.Unmarshal(b, &p)
		var d diag.Diagnostic
		derr := json.Unmarshal(b, &d)
		reg, err := lspdiag.NewRegistry(nil)
		if err != nil {
			t.Fatal(err)
		}
		rerr := reg.Publish("plugin:x:y", b)
		if rerr != nil && !errors.Is(rerr, diag.ErrBadShape) {
			t.Fatalf("Publish error %v is not a shape error", rerr)
		}
		if perr == nil && p.URI != "" && (rerr != nil || reg.Stats().Invalid != 0) {
			t.Fatalf("Publish of params that decode = %v, %d invalid", rerr, reg.Stats().Invalid)
		}
		if !inModelDomain(b) {
			return
		}
		var v any
		ok := json.Valid(b)
		if ok {
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			ok = dec.Decode(&v) == nil
		}
		mp, mpOK := modelParams(v)
		if (perr == nil) != (ok && mpOK) {
			t.Fatalf("params: decoder error %v, model accepts %v", perr, ok && mpOK)
		}
		if perr == nil {
			if diff := cmp.Diff(mp, p, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("params (-model +decoder):\n%s", diff)
			}
		}
		uri, items, envOK := modelEnvelope(v)
		bad := 0
		for _, it := range items {
			if _, ok := modelDiag(it); !ok {
				bad++
			}
		}
		if want := ok && envOK && uri != ""; (rerr == nil) != want {
			t.Fatalf("Publish = %v, but the model's envelope is ok=%v (uri %q)", rerr, want, uri)
		}
		if rerr == nil {
			if s := reg.Stats(); s.Invalid != uint64(bad) || s.Pending != min(len(items)-bad, lspdiag.DefaultMaxPerPublish) {
				t.Fatalf("Publish kept %d and counted %d invalid; the model says %d valid, %d invalid", s.Pending, s.Invalid, len(items)-bad, bad)
			}
		}
		md, mdOK := modelDiag(v)
		if (derr == nil) != (ok && mdOK) {
			t.Fatalf("diagnostic: decoder error %v, model accepts %v", derr, ok && mdOK)
		}
		if derr == nil {
			if diff := cmp.Diff(md, d, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("diagnostic (-model +decoder):\n%s", diff)
			}
		}
	})
}

// modelEnvelope checks the envelope of publish params: an object with a
// string uri, an integer or null version (or none) and a diagnostics
// array, whose items it returns unchecked.
func modelEnvelope(v any) (uri string, items []any, ok bool) {
	m, isObj := v.(map[string]any)
	if !isObj {
		return "", nil, false
	}
	if uri, ok = m["uri"].(string); !ok {
		return "", nil, false
	}
	if x := m["version"]; x != nil {
		if _, ok := modelInt(x); !ok {
			return "", nil, false
		}
	}
	items, ok = m["diagnostics"].([]any)
	return uri, items, ok
}

var modelFields = []string{"uri", "version", "diagnostics", "range", "start", "end", "line", "character",
	"severity", "code", "codeDescription", "href", "source", "message", "value", "tags", "relatedInformation", "location"}

// inModelDomain reports whether no object in b repeats a key or spells a
// field name in another case. Invalid JSON is in the domain.
func inModelDomain(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		obj       bool
		keys      map[string]bool
		expectKey bool
	}
	var stack []*frame
	valueDone := func() {
		if len(stack) > 0 && stack[len(stack)-1].obj {
			stack[len(stack)-1].expectKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF || err != nil {
			return true
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				if top != nil && top.obj {
					top.expectKey = false
				}
				stack = append(stack, &frame{obj: true, keys: map[string]bool{}, expectKey: true})
			case '[':
				if top != nil && top.obj {
					top.expectKey = false
				}
				stack = append(stack, &frame{})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			if top != nil && top.obj && top.expectKey {
				if top.keys[tok] {
					return false
				}
				for _, name := range modelFields {
					if tok != name && strings.EqualFold(tok, name) {
						return false
					}
				}
				top.keys[tok] = true
				top.expectKey = false
				continue
			}
			valueDone()
		default:
			valueDone()
		}
	}
}

func modelInt(x any) (int, bool) {
	n, ok := x.(json.Number)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || int64(int(v)) != v {
		return 0, false
	}
	return int(v), true
}

func modelParams(v any) (diag.PublishParams, bool) {
	var p diag.PublishParams
	m, ok := v.(map[string]any)
	if !ok {
		return p, false
	}
	if p.URI, ok = m["uri"].(string); !ok {
		return p, false
	}
	if x := m["version"]; x != nil {
		n, ok := modelInt(x)
		if !ok {
			return p, false
		}
		p.Version = &n
	}
	items, ok := m["diagnostics"].([]any)
	if !ok {
		return p, false
	}
	p.Diagnostics = []diag.Diagnostic{}
	for _, it := range items {
		d, ok := modelDiag(it)
		if !ok {
			return p, false
		}
		p.Diagnostics = append(p.Diagnostics, d)
	}
	return p, true
}

func modelPos(v any) (diag.Position, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return diag.Position{}, false
	}
	l, ok1 := modelInt(m["line"])
	c, ok2 := modelInt(m["character"])
	return diag.Position{Line: l, Character: c}, ok1 && ok2 && l >= 0 && c >= 0
}

func modelRange(v any) (diag.Range, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return diag.Range{}, false
	}
	s, ok1 := modelPos(m["start"])
	e, ok2 := modelPos(m["end"])
	return diag.Range{Start: s, End: e}, ok1 && ok2
}

func modelMessage(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case map[string]any:
		s, ok := v["value"].(string)
		return s, ok
	}
	return "", false
}

func modelDiag(v any) (diag.Diagnostic, bool) {
	var d diag.Diagnostic
	m, ok := v.(map[string]any)
	if !ok {
		return d, false
	}
	if d.Range, ok = modelRange(m["range"]); !ok {
		return d, false
	}
	if d.Message, ok = modelMessage(m["message"]); !ok {
		return d, false
	}
	switch s := m["severity"].(type) {
	case nil:
	case json.Number:
		n, ok := modelInt(s)
		if !ok || n < 0 || n > 4 {
			return d, false
		}
		d.Severity = diag.Severity(n)
	case string:
		// diag.ParseSeverity's rule: a name in any letter case, or the
		// number's digit, with surrounding space.
		t := strings.TrimSpace(s)
		found := false
		for sev, names := range map[diag.Severity][]string{1: {"error"}, 2: {"warning", "warn"}, 3: {"info", "information", "informational"}, 4: {"hint"}} {
			for _, name := range names {
				if strings.EqualFold(t, name) {
					d.Severity, found = sev, true
				}
			}
			if t == strconv.Itoa(int(sev)) {
				d.Severity, found = sev, true
			}
		}
		if !found {
			return d, false
		}
	default:
		return d, false
	}
	switch c := m["code"].(type) {
	case nil:
	case string:
		d.Code = c
	case json.Number:
		d.Code = string(c)
	default:
		return d, false
	}
	switch s := m["source"].(type) {
	case nil:
	case string:
		d.Source = s
	default:
		return d, false
	}
	switch cd := m["codeDescription"].(type) {
	case string:
		d.CodeDescription = cd
	case map[string]any:
		d.CodeDescription, _ = cd["href"].(string)
	}
	if tags, ok := m["tags"].([]any); ok {
		var ints []int
		for _, x := range tags {
			if x == nil {
				ints = append(ints, 0)
				continue
			}
			n, ok := modelInt(x)
			if !ok {
				ints = nil
				break
			}
			ints = append(ints, n)
		}
		d.Tags = ints
	}
	if rel, ok := m["relatedInformation"].([]any); ok {
		for _, x := range rel {
			item, ok := x.(map[string]any)
			if !ok {
				continue
			}
			loc, ok := item["location"].(map[string]any)
			if !ok {
				continue
			}
			var ri diag.RelatedInformation
			var ok1, ok2, ok3 bool
			ri.Location.URI, ok1 = loc["uri"].(string)
			ri.Location.Range, ok2 = modelRange(loc["range"])
			ri.Message, ok3 = modelMessage(item["message"])
			if ok1 && ok2 && ok3 {
				d.RelatedInformation = append(d.RelatedInformation, ri)
			}
		}
	}
	return d, true
}
