package lspdiag

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/idebridge/idebridge/diag"
)

const (
	gopls   = "plugin:go:gopls"
	pyright = "plugin:py:pyright"
	mainGo  = "file:///proj/main.go"
)

func ver(v int) *int { return &v }

func mkDiag(sev diag.Severity, line int, msg string) diag.Diagnostic {
	return diag.Diagnostic{
		Range:    diag.Range{Start: diag.Position{Line: line, Character: 4}, End: diag.Position{Line: line, Character: 9}},
		Severity: sev,
		Source:   "compiler",
		Message:  msg,
	}
}

func errs(n int, prefix string) []diag.Diagnostic {
	ds := make([]diag.Diagnostic, n)
	for i := range ds {
		ds[i] = mkDiag(diag.SeverityError, i, fmt.Sprintf("%s %d", prefix, i))
	}
	return ds
}

// newReg returns NewRegistry(opts), failing the test on an error.
func newReg(t testing.TB, opts *RegistryOptions) *Registry {
	t.Helper()
	r, err := NewRegistry(opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustPublish(t *testing.T, r *Registry, server, uri string, version *int, ds ...diag.Diagnostic) {
	t.Helper()
	if err := r.PublishParams(server, &diag.PublishParams{URI: uri, Version: version, Diagnostics: ds}); err != nil {
		t.Fatalf("PublishParams: %v", err)
	}
}

func mustPublishRaw(t *testing.T, r *Registry, server, raw string) {
	t.Helper()
	if err := r.Publish(server, json.RawMessage(raw)); err != nil {
		t.Fatalf("Publish(%s): %v", raw, err)
	}
}

func drainCount(r *Registry) int {
	a, ok := r.Drain()
	if !ok {
		return 0
	}
	return a.Count()
}

func messages(a *diag.Attachment) []string {
	var ms []string
	if a == nil {
		return nil
	}
	for _, f := range a.Files {
		for _, d := range f.Diagnostics {
			ms = append(ms, d.Message)
		}
	}
	return ms
}

// logBuffer is a concurrency-safe sink for a slog text handler.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newLogged(t testing.TB) (*Registry, *logBuffer) {
	buf := &logBuffer{}
	return newReg(t, &RegistryOptions{Logger: slog.New(slog.NewTextHandler(buf, nil))}), buf
}

func TestPublishShapeRejected(t *testing.T) {
	// What is wrong is the envelope: there is no set to keep.
	tests := []struct {
		name, raw, path string
	}{
		{"not an object", `[]`, ""},
		{"not JSON", `{"uri":`, ""},
		{"null", `null`, ""},
		{"uri missing", `{"diagnostics":[]}`, "uri"},
		{"uri a number", `{"uri":3,"diagnostics":[]}`, "uri"},
		{"uri empty", `{"uri":"","diagnostics":[]}`, "uri"},
		{"uri empty, bad item", `{"uri":"","diagnostics":[1]}`, "uri"},
		{"diagnostics missing", `{"uri":"file:///a"}`, "diagnostics"},
		{"diagnostics null", `{"uri":"file:///a","diagnostics":null}`, "diagnostics"},
		{"diagnostics an object", `{"uri":"file:///a","diagnostics":{}}`, "diagnostics"},
		{"version a string", `{"uri":"file:///a","version":"3","diagnostics":[]}`, "version"},
		{"version a string, bad item", `{"uri":"file:///a","version":"3","diagnostics":[1]}`, "version"},
		{"trailing garbage", `{"uri":"file:///a","diagnostics":[]} x`, ""},
		{"trailing garbage, bad item", `{"uri":"file:///a","diagnostics":[1]} x`, ""},
		{"repeated diagnostics", `{"uri":"file:///a","diagnostics":[{"message":7}],"diagnostics":[]}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReg(t, nil)
			err := r.Publish(gopls, json.RawMessage(tt.raw))
			if !errors.Is(err, diag.ErrBadShape) {
				t.Fatalf("Publish(%s) = %v, want ErrBadShape", tt.raw, err)
			}
			var se *diag.ShapeError
			if !errors.As(err, &se) || se.Path != tt.path {
				t.Fatalf("error %v: path %q, want %q", err, se.Path, tt.path)
			}
			if !strings.Contains(err.Error(), gopls) {
				t.Errorf("error %q does not name the server", err)
			}
			if s := r.Stats(); s.Rejected != 1 || s.Published != 0 {
				t.Errorf("stats = %+v, want 1 rejected, 0 published", s)
			}
			if r.ConsecutiveFailures(gopls) != 1 {
				t.Errorf("failures = %d, want 1", r.ConsecutiveFailures(gopls))
			}
			if _, ok := r.Drain(); ok {
				t.Error("a rejected publish was delivered")
			}
		})
	}
}

// TestInvalidDiagnosticsDropped: one malformed diagnostic costs only
// itself. The valid ones of the publish are delivered, the invalid ones
// dropped, counted (Stats.Invalid), logged, and noted in the next
// attachment, one note per server and document.
func TestInvalidDiagnosticsDropped(t *testing.T) {
	const good = `{"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":1}},"message":"good","severity":1}`
	const rng = `"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}}`
	tests := []struct {
		name, item, path string
	}{
		{"severity -3", `{` + rng + `,"message":"m","severity":-3}`, "diagnostics[1].severity"},
		{"severity 99", `{` + rng + `,"message":"m","severity":99}`, "diagnostics[1].severity"},
		{"severity 5", `{` + rng + `,"message":"m","severity":5}`, "diagnostics[1].severity"},
		{"severity unknown name", `{` + rng + `,"message":"m","severity":"Fatal"}`, "diagnostics[1].severity"},
		{"line negative", `{"range":{"start":{"line":-1,"character":0},"end":{"line":0,"character":1}},"message":"m"}`, "diagnostics[1].range.start.line"},
		{"character negative", `{"range":{"start":{"line":1,"character":-1},"end":{"line":1,"character":0}},"message":"m"}`, "diagnostics[1].range.start.character"},
		{"end character negative", `{"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":-7}},"message":"m"}`, "diagnostics[1].range.end.character"},
		{"line fractional", `{"range":{"start":{"line":1.5,"character":0},"end":{"line":0,"character":0}},"message":"m"}`, "diagnostics[1].range.start.line"},
		{"item not an object", `1`, "diagnostics[1]"},
		{"range missing", `{"message":"m"}`, "diagnostics[1].range"},
		{"range a string", `{"range":"1:2","message":"m"}`, "diagnostics[1].range"},
		{"start missing", `{"range":{"end":{"line":0,"character":0}},"message":"m"}`, "diagnostics[1].range.start"},
		{"message missing", `{` + rng + `}`, "diagnostics[1].message"},
		{"message a number", `{` + rng + `,"message":7}`, "diagnostics[1].message"},
		{"code an object", `{` + rng + `,"message":"m","code":{}}`, "diagnostics[1].code"},
		{"source a number", `{` + rng + `,"message":"m","source":1}`, "diagnostics[1].source"},
		// The typed pass stops at the first message; the last one is fine.
		{"conflicting keys", `{` + rng + `,"message":7,"message":"m"}`, "diagnostics[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, logs := newLogged(t)
			raw := `{"uri":"file:///proj/main.go","version":3,"diagnostics":[` + good + `,` + tt.item + `,` + good + `]}`
			if err := r.Publish(gopls, json.RawMessage(raw)); err != nil {
				t.Fatalf("Publish(%s) = %v, want the valid diagnostics kept", raw, err)
			}
			if s := r.Stats(); s.Invalid != 1 || s.Rejected != 0 || s.Published != 1 || s.Pending != 2 {
				t.Errorf("stats = %+v, want 1 invalid, 1 published, 2 pending", s)
			}
			if info, _ := r.LastPublish(gopls, mainGo); info.Count != 3 || info.Version != 3 {
				t.Errorf("LastPublish = %+v, want the 3 received for version 3", info)
			}
			a, ok := r.Drain()
			if !ok || a.Count() != 1 || messages(a)[0] != "good" {
				t.Fatalf("drained %v %+v, want the good diagnostic (once: the two are the same)", ok, a)
			}
			want := "/proj/main.go: 1 invalid diagnostic from " + gopls + " was dropped (" + tt.path
			if len(a.Notes) != 1 || !strings.HasPrefix(a.Notes[0], want) {
				t.Errorf("notes %q, want one starting %q", a.Notes, want)
			}
			if !strings.Contains(a.Render(nil), want) {
				t.Errorf("the block does not show the note:\n%s", a.Render(nil))
			}
			if l := logs.String(); !strings.Contains(l, "invalid diagnostics dropped") || !strings.Contains(l, tt.path) {
				t.Errorf("log %q does not report the drop", l)
			}
			if _, ok := r.Drain(); ok {
				t.Error("the note was handed out twice")
			}
		})
	}

	t.Run("DecodePublish then PublishDecoded", func(t *testing.T) {
		// What package lsp does: decode, adjust the diagnostics (columns),
		// register. What decoding left out must still be noted.
		for _, tt := range tests {
			r := newReg(t, nil)
			raw := `{"uri":"file:///proj/main.go","version":3,"diagnostics":[` + good + `,` + tt.item + `,` + good + `]}`
			d, err := DecodePublish(json.RawMessage(raw))
			if err != nil {
				t.Fatalf("%s: DecodePublish = %v, want the valid diagnostics kept", tt.name, err)
			}
			for i := range d.Params.Diagnostics {
				d.Params.Diagnostics[i].Range.Start.Character += 2
			}
			if err := r.PublishDecoded(gopls, d); err != nil {
				t.Fatalf("%s: PublishDecoded = %v", tt.name, err)
			}
			if info, _ := r.LastPublish(gopls, mainGo); info.Count != 3 {
				t.Errorf("%s: LastPublish = %+v, want the 3 received", tt.name, info)
			}
			a, ok := r.Drain()
			if !ok || a.Count() != 1 || a.Files[0].Diagnostics[0].Range.Start.Character != 2 {
				t.Fatalf("%s: drained %v %+v, want the adjusted good diagnostic", tt.name, ok, a)
			}
			want := "/proj/main.go: 1 invalid diagnostic from " + gopls + " was dropped ("
			if len(a.Notes) != 1 || !strings.HasPrefix(a.Notes[0], want) {
				t.Errorf("%s: notes %q, want one starting %q", tt.name, a.Notes, want)
			}
		}
		if _, err := DecodePublish(json.RawMessage(`{"uri":1,"diagnostics":[]}`)); !errors.Is(err, diag.ErrBadShape) {
			t.Errorf("a malformed envelope decoded: %v", err)
		}
	})

	t.Run("decoded", func(t *testing.T) {
		r := newReg(t, nil)
		bad := []diag.Diagnostic{mkDiag(1, 0, "ok"), mkDiag(7, 1, "sev 7"), mkDiag(-3, 1, "sev -3"), mkDiag(99, 1, "sev 99"), mkDiag(1, -2, "line -2"), mkDiag(2, 4, "ok too")}
		bad[4].Range.Start.Line = -2
		neg := mkDiag(1, 3, "negative end")
		neg.Range.End.Character = -1
		bad = append(bad, neg)
		in := slices.Clone(bad)
		if err := r.PublishParams(gopls, &diag.PublishParams{URI: mainGo, Diagnostics: bad}); err != nil {
			t.Fatalf("PublishParams = %v, want the valid diagnostics kept", err)
		}
		if d := cmp.Diff(in, bad); d != "" {
			t.Errorf("PublishParams changed the caller's params:\n%s", d)
		}
		if n := r.Stats().Invalid; n != 5 {
			t.Errorf("invalid = %d, want 5", n)
		}
		a, _ := r.Drain()
		if d := cmp.Diff([]string{"ok", "ok too"}, messages(a)); d != "" {
			t.Errorf("delivered (-want +got):\n%s", d)
		}
		want := []string{"/proj/main.go: 5 invalid diagnostics from " + gopls + " were dropped (diagnostics[1].severity: number 7 is not a severity (1 to 4))"}
		if d := cmp.Diff(want, a.Notes); d != "" {
			t.Errorf("notes (-want +got):\n%s", d)
		}
	})

	t.Run("one note per server and document", func(t *testing.T) {
		r := newReg(t, nil)
		other := "untitled:Untitled-1"
		badSev := mkDiag(42, 0, "bad")
		mustPublish(t, r, pyright, mainGo, nil, badSev, badSev)
		mustPublish(t, r, gopls, mainGo, nil, badSev, mkDiag(1, 1, "fine"))
		mustPublish(t, r, gopls, other, nil, badSev)
		a, ok := r.Drain()
		if !ok {
			t.Fatal("nothing drained")
		}
		want := []string{
			"/proj/main.go: 1 invalid diagnostic from " + gopls + " was dropped (diagnostics[0].severity: number 42 is not a severity (1 to 4))",
			"/proj/main.go: 2 invalid diagnostics from " + pyright + " were dropped (diagnostics[0].severity: number 42 is not a severity (1 to 4))",
			other + ": 1 invalid diagnostic from " + gopls + " was dropped (diagnostics[0].severity: number 42 is not a severity (1 to 4))",
		}
		if d := cmp.Diff(want, a.Notes); d != "" {
			t.Errorf("notes (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]string{"fine"}, messages(a)); d != "" {
			t.Errorf("delivered (-want +got):\n%s", d)
		}
	})

	t.Run("only invalid", func(t *testing.T) {
		// Nothing valid: the note alone is the attachment, and the set
		// replaces what the server had pending.
		r := newReg(t, nil)
		mustPublish(t, r, gopls, mainGo, nil, mkDiag(1, 0, "old"))
		mustPublish(t, r, gopls, mainGo, nil, mkDiag(9, 0, "bad"))
		a, ok := r.Drain()
		if !ok || len(a.Files) != 0 || len(a.Notes) != 1 {
			t.Fatalf("drained %v %+v, want the note only", ok, a)
		}
		if s := a.Render(nil); !strings.Contains(s, "was dropped") || strings.Contains(s, "old") {
			t.Errorf("block %q", s)
		}
	})

	t.Run("superseded or stale", func(t *testing.T) {
		// The note goes with its publish: a newer set replaces it, and a
		// set for an older version is dropped with it.
		r := newReg(t, nil)
		mustPublish(t, r, gopls, mainGo, ver(1), mkDiag(9, 0, "bad"))
		mustPublish(t, r, gopls, mainGo, ver(2), mkDiag(1, 0, "good"))
		a, _ := r.Drain()
		if len(a.Notes) != 0 || a.Count() != 1 {
			t.Errorf("superseded: %+v", a)
		}
		mustPublish(t, r, gopls, mainGo, ver(3), mkDiag(9, 0, "bad"))
		r.SetVersion(mainGo, 4)
		if a, ok := r.Drain(); ok {
			t.Errorf("stale: %+v", a)
		}
	})
}

func TestPublishParamsShapeRejected(t *testing.T) {
	tests := []struct {
		name string
		p    *diag.PublishParams
		path string
	}{
		{"nil", nil, ""},
		{"empty uri", &diag.PublishParams{Diagnostics: errs(1, "x")}, "uri"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReg(t, nil)
			err := r.PublishParams(gopls, tt.p)
			var se *diag.ShapeError
			if !errors.As(err, &se) || se.Path != tt.path || !errors.Is(err, diag.ErrBadShape) {
				t.Fatalf("PublishParams = %v, want a ShapeError at %q", err, tt.path)
			}
			if r.Stats().Rejected != 1 {
				t.Errorf("rejected = %d, want 1", r.Stats().Rejected)
			}
		})
	}
}

// TestOptionsValidated: zero is the default; negative is "no limit" for
// the limits of an attachment and an error for those that bound memory.
func TestOptionsValidated(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts RegistryOptions
		err  string // "" for accepted
	}{
		{"zero", RegistryOptions{}, ""},
		{"max", RegistryOptions{MaxPerPublish: math.MaxInt, MaxPerFile: math.MaxInt, MaxTotal: math.MaxInt, MaxDocuments: math.MaxInt, MaxDeliveredPerDocument: math.MaxInt}, ""},
		{"MaxPerFile -1", RegistryOptions{MaxPerFile: -1}, ""},
		{"MaxTotal -1", RegistryOptions{MaxTotal: -1}, ""},
		{"both -1", RegistryOptions{MaxPerFile: -1, MaxTotal: -1}, ""},
		{"MaxPerPublish -1", RegistryOptions{MaxPerPublish: -1}, "MaxPerPublish is -1"},
		{"MaxDocuments -1", RegistryOptions{MaxDocuments: -1}, "MaxDocuments is -1"},
		{"MaxDeliveredPerDocument -5", RegistryOptions{MaxDeliveredPerDocument: -5}, "MaxDeliveredPerDocument is -5"},
		{"MinSeverity 5", RegistryOptions{MinSeverity: 5}, "MinSeverity is 5"},
		{"MinSeverity -1", RegistryOptions{MinSeverity: -1}, "MinSeverity is -1"},
		{"two at once", RegistryOptions{MaxDocuments: math.MinInt, MinSeverity: 42}, "MinSeverity is 42"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewRegistry(&tt.opts)
			if tt.err != "" {
				if err == nil || r != nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("NewRegistry = %v, %v; want an error containing %q", r, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Whatever the limits, a publish and a drain work.
			mustPublish(t, r, gopls, mainGo, nil, errs(50, "e")...)
			a, ok := r.Drain()
			if !ok {
				t.Fatal("nothing drained")
			}
			limit := func(v, def int) int {
				switch {
				case v == 0:
					return def
				case v < 0:
					return math.MaxInt
				}
				return v
			}
			want := min(50, limit(tt.opts.MaxPerFile, DefaultMaxPerFile), limit(tt.opts.MaxTotal, DefaultMaxTotal))
			if a.Count() != want || a.Count()+a.Cut != 50 {
				t.Errorf("shown %d cut %d; want %d shown of 50", a.Count(), a.Cut, want)
			}
		})
	}
}

func TestDecodeWireForms(t *testing.T) {
	raw := `{"uri":"file:///proj/a.ts","version":4,"diagnostics":[
	 {"range":{"start":{"line":2,"character":4},"end":{"line":2,"character":9}},"message":"  Cannot find name 'x'.\n","severity":1,"code":2304,"source":"ts","tags":[1],
	  "codeDescription":{"href":"https://example.com/2304"},
	  "relatedInformation":[{"location":{"uri":"file:///proj/b.ts","range":{"start":{"line":1,"character":0},"end":{"line":1,"character":3}}},"message":"declared here"},{"bogus":true}]},
	 {"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}},"message":{"kind":"markdown","value":"**md**"},"severity":"Warning","code":"E1","source":null},
	 {"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":1}},"message":"no severity","tags":"junk","relatedInformation":7,"codeDescription":3},
	 {"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":1}},"message":"info","severity":"information"},
	 {"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":1}},"message":"hint","severity":"Hint"},
	 {"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":1}},"message":"null severity","severity":null,"code":null,"extra":{"x":1}}
	]}`
	var p diag.PublishParams
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		t.Fatal(err)
	}
	want := diag.PublishParams{URI: "file:///proj/a.ts", Version: ver(4), Diagnostics: []diag.Diagnostic{
		{Range: diag.Range{Start: diag.Position{Line: 2, Character: 4}, End: diag.Position{Line: 2, Character: 9}}, Message: "  Cannot find name 'x'.\n", Severity: diag.SeverityError,
			Code: "2304", Source: "ts", Tags: []int{diag.TagUnnecessary}, CodeDescription: "https://example.com/2304",
			RelatedInformation: []diag.RelatedInformation{{Location: diag.Location{URI: "file:///proj/b.ts",
				Range: diag.Range{Start: diag.Position{Line: 1, Character: 0}, End: diag.Position{Line: 1, Character: 3}}}, Message: "declared here"}}},
		{Range: diag.Range{End: diag.Position{Line: 0, Character: 1}}, Message: "**md**", Severity: diag.SeverityWarning, Code: "E1"},
		{Range: diag.Range{Start: diag.Position{Line: 1, Character: 0}, End: diag.Position{Line: 1, Character: 1}}, Message: "no severity"},
		{Range: diag.Range{Start: diag.Position{Line: 1, Character: 0}, End: diag.Position{Line: 1, Character: 1}}, Message: "info", Severity: diag.SeverityInformation},
		{Range: diag.Range{Start: diag.Position{Line: 1, Character: 0}, End: diag.Position{Line: 1, Character: 1}}, Message: "hint", Severity: diag.SeverityHint},
		{Range: diag.Range{Start: diag.Position{Line: 1, Character: 0}, End: diag.Position{Line: 1, Character: 1}}, Message: "null severity"},
	}}
	if d := cmp.Diff(want, p); d != "" {
		t.Errorf("decoded params (-want +got):\n%s", d)
	}
	// The same text through Publish: message trimmed, missing severity is
	// an error.
	r := newReg(t, &RegistryOptions{MaxPerFile: 100, MaxTotal: 100})
	mustPublishRaw(t, r, "plugin:ts:tsserver", raw)
	a, ok := r.Drain()
	if !ok {
		t.Fatal("nothing drained")
	}
	got := map[string]diag.Severity{}
	for _, d := range a.Files[0].Diagnostics {
		got[d.Message] = d.Severity
	}
	wantSev := map[string]diag.Severity{"Cannot find name 'x'.": 1, "**md**": 2, "no severity": 1, "info": 3, "hint": 4, "null severity": 1}
	if d := cmp.Diff(wantSev, got); d != "" {
		t.Errorf("severities after normalization (-want +got):\n%s", d)
	}
}

func TestVersionFilter(t *testing.T) {
	t.Run("stale publish dropped", func(t *testing.T) {
		r := newReg(t, nil)
		r.SetVersion(mainGo, 5)
		mustPublish(t, r, gopls, mainGo, ver(4), mkDiag(1, 0, "old"))
		if s := r.Stats(); s.Stale != 1 || s.Published != 0 {
			t.Errorf("stats = %+v, want 1 stale", s)
		}
		if _, ok := r.LastPublish(gopls, mainGo); ok {
			t.Error("a stale publish was recorded as the last publish")
		}
		if a, ok := r.Drain(); ok {
			t.Errorf("stale publish delivered: %v", messages(a))
		}
	})
	t.Run("stale publish keeps the pending one", func(t *testing.T) {
		r := newReg(t, nil)
		r.SetVersion(mainGo, 5)
		mustPublish(t, r, gopls, mainGo, ver(5), mkDiag(1, 0, "current"))
		mustPublish(t, r, gopls, mainGo, ver(3), mkDiag(1, 0, "late and old"))
		a, _ := r.Drain()
		if d := cmp.Diff([]string{"current"}, messages(a)); d != "" {
			t.Error(d)
		}
	})
	t.Run("pending publish goes stale", func(t *testing.T) {
		r := newReg(t, nil)
		r.SetVersion(mainGo, 1)
		mustPublish(t, r, gopls, mainGo, ver(1), mkDiag(1, 0, "v1"))
		r.SetVersion(mainGo, 2)
		if a, ok := r.Drain(); ok {
			t.Errorf("publish for version 1 delivered at version 2: %v", messages(a))
		}
		if r.Stats().Stale != 1 {
			t.Errorf("stale = %d, want 1", r.Stats().Stale)
		}
	})
	t.Run("no version is accepted", func(t *testing.T) {
		r := newReg(t, nil)
		r.SetVersion(mainGo, 9)
		mustPublish(t, r, gopls, mainGo, nil, mkDiag(1, 0, "unversioned"))
		if drainCount(r) != 1 {
			t.Error("unversioned publish not delivered")
		}
	})
	t.Run("current and newer accepted", func(t *testing.T) {
		r := newReg(t, nil)
		r.SetVersion(mainGo, 2)
		mustPublish(t, r, gopls, mainGo, ver(2), mkDiag(1, 0, "v2"))
		mustPublish(t, r, pyright, mainGo, ver(3), mkDiag(1, 1, "v3"))
		if n := drainCount(r); n != 2 {
			t.Errorf("delivered %d, want 2", n)
		}
	})
	t.Run("unknown document accepts any version", func(t *testing.T) {
		r := newReg(t, nil)
		mustPublish(t, r, gopls, mainGo, ver(-3), mkDiag(1, 0, "x"))
		if drainCount(r) != 1 {
			t.Error("not delivered")
		}
		if v, ok := r.Version(mainGo); ok {
			t.Errorf("Version = %d, true; want none", v)
		}
	})
}

func TestNormalization(t *testing.T) {
	r := newReg(t, nil)
	in := diag.Diagnostic{
		Range:   diag.Range{Start: diag.Position{Line: 3, Character: 7}, End: diag.Position{Line: 2, Character: 1}}, // end before start
		Message: "\t undefined: x \n", Source: " compiler ", Code: " UndeclaredName ",
		Tags: []int{diag.TagDeprecated}, CodeDescription: "https://pkg.go.dev/x",
		RelatedInformation: []diag.RelatedInformation{{Location: diag.Location{URI: "file:///proj/x.go"}, Message: "here"}},
	}
	p := &diag.PublishParams{URI: mainGo, Diagnostics: []diag.Diagnostic{in}}
	mustPublish(t, r, gopls, mainGo, nil, in)
	// The registry keeps a copy: changing the caller's value is harmless.
	p.Diagnostics[0].Tags[0] = 99
	in.RelatedInformation[0].Message = "changed"
	a, _ := r.Drain()
	want := diag.Diagnostic{
		Range:    diag.Range{Start: diag.Position{Line: 3, Character: 7}, End: diag.Position{Line: 3, Character: 7}},
		Severity: diag.SeverityError, Message: "undefined: x", Source: "compiler", Code: "UndeclaredName",
		Tags: []int{diag.TagDeprecated}, CodeDescription: "https://pkg.go.dev/x",
		RelatedInformation: []diag.RelatedInformation{{Location: diag.Location{URI: "file:///proj/x.go"}, Message: "here"}},
	}
	if d := cmp.Diff([]diag.Diagnostic{want}, a.Files[0].Diagnostics); d != "" {
		t.Errorf("normalized (-want +got):\n%s", d)
	}
}

func TestEmptyPublish(t *testing.T) {
	r := newReg(t, nil)
	mustPublish(t, r, gopls, mainGo, ver(1), mkDiag(1, 0, "x"))
	mustPublishRaw(t, r, gopls, `{"uri":"file:///proj/main.go","version":2,"diagnostics":[]}`)
	if a, ok := r.Drain(); ok {
		t.Errorf("a clean publish left the older set pending: %v", messages(a))
	}
	info, ok := r.LastPublish(gopls, mainGo)
	if !ok || info.Version != 2 || info.Count != 0 || info.Seq != 2 {
		t.Errorf("LastPublish = %+v, %v; want version 2, count 0, seq 2", info, ok)
	}
	mustPublishRaw(t, r, gopls, `{"uri":"file:///proj/main.go","diagnostics":[]}`)
	info, _ = r.LastPublish(gopls, mainGo)
	if info.Version != -1 || info.Seq != 3 {
		t.Errorf("LastPublish without version = %+v, want version -1, seq 3", info)
	}
	if _, ok := r.LastPublish(pyright, mainGo); ok {
		t.Error("LastPublish of a server that never published")
	}
	if r.Stats().Pending != 0 {
		t.Errorf("pending = %d", r.Stats().Pending)
	}
}

func TestNewerPublishReplacesPending(t *testing.T) {
	r := newReg(t, nil)
	mustPublish(t, r, gopls, mainGo, ver(1), mkDiag(1, 0, "first a"), mkDiag(1, 1, "first b"))
	mustPublish(t, r, gopls, mainGo, ver(2), mkDiag(2, 0, "second"))
	mustPublish(t, r, pyright, mainGo, ver(2), mkDiag(1, 5, "other server"))
	a, _ := r.Drain()
	if d := cmp.Diff([]string{"other server", "second"}, messages(a)); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff([]string{gopls, pyright}, a.Servers); d != "" {
		t.Error(d)
	}
	if s := r.Stats(); s.Superseded != 2 || s.Pending != 0 {
		t.Errorf("stats = %+v, want 2 superseded, 0 pending", s)
	}
}

func TestPerPublishCap(t *testing.T) {
	r := newReg(t, nil)
	ds := make([]diag.Diagnostic, 100_000)
	for i := range ds {
		// Mostly hints; every 1000th an error, every 100th a warning.
		sev := diag.SeverityHint
		switch {
		case i%1000 == 0:
			sev = diag.SeverityError
		case i%100 == 0:
			sev = diag.SeverityWarning
		}
		ds[i] = mkDiag(sev, 100_000-i, fmt.Sprint("d", i))
	}
	mustPublish(t, r, gopls, mainGo, nil, ds...)
	s := r.Stats()
	if s.Pending != DefaultMaxPerPublish || s.Truncated != 100_000-DefaultMaxPerPublish {
		t.Fatalf("pending %d truncated %d; want %d and %d", s.Pending, s.Truncated, DefaultMaxPerPublish, 100_000-DefaultMaxPerPublish)
	}
	if info, _ := r.LastPublish(gopls, mainGo); info.Count != 100_000 {
		t.Errorf("LastPublish.Count = %d, want the count received", info.Count)
	}
	a, _ := r.Drain()
	got := a.Files[0].Diagnostics
	if len(got) != 10 {
		t.Fatalf("delivered %d, want 10", len(got))
	}
	for i, d := range got {
		// The 100 errors are kept, sorted by position: the ones published
		// last have the smallest lines.
		if d.Severity != diag.SeverityError || d.Range.Start.Line != 100_000-(99-i)*1000 {
			t.Errorf("diagnostic %d = %v line %d", i, d.Severity, d.Range.Start.Line)
		}
	}
	// The cap keeps 100 errors, 900 warnings; what is not shown, the
	// 99,000 the cap dropped included, is cut.
	if a.Cut != 99_990 || a.Files[0].Cut != 99_990 {
		t.Errorf("cut = %d/%d, want 99990", a.Cut, a.Files[0].Cut)
	}

	r = newReg(t, &RegistryOptions{MaxPerPublish: 3})
	mustPublish(t, r, gopls, mainGo, nil, mkDiag(4, 0, "h"), mkDiag(2, 9, "w9"), mkDiag(1, 5, "e"), mkDiag(2, 1, "w1"), mkDiag(3, 0, "i"))
	a, _ = r.Drain()
	if d := cmp.Diff([]string{"e", "w1", "w9"}, messages(a)); d != "" {
		t.Error(d)
	}
}

// TestTrueCounts: the count the block shows is the number of new
// diagnostics it does not show, whichever limit left them out; the
// per-publish cap's drops count unless delivered before or repeated.
func TestTrueCounts(t *testing.T) {
	t.Run("100,000 in one publish", func(t *testing.T) {
		r := newReg(t, nil)
		mustPublish(t, r, gopls, mainGo, nil, errs(100_000, "e")...)
		a, _ := r.Drain()
		if a.Count() != 10 || a.Cut != 99_990 || a.Files[0].Cut != 99_990 {
			t.Fatalf("shown %d, cut %d/%d; want 10 and 99990", a.Count(), a.Cut, a.Files[0].Cut)
		}
		if s := a.Render(nil); !strings.Contains(s, "… 99990 more not shown\n") {
			t.Errorf("block ends %q", s[strings.LastIndex(s, "\n  "):])
		}
		if s := r.Stats(); s.Cut != 99_990 || s.Truncated != 99_000 {
			t.Errorf("stats cut %d truncated %d", s.Cut, s.Truncated)
		}
		// Again: the 10 shown are not new any more; the rest still are.
		mustPublish(t, r, gopls, mainGo, nil, errs(100_000, "e")...)
		a, _ = r.Drain()
		if a.Count() != 10 || a.Cut != 99_980 {
			t.Errorf("republished: shown %d cut %d; want 10 and 99980", a.Count(), a.Cut)
		}
	})
	t.Run("drops delivered before or repeated", func(t *testing.T) {
		r := newReg(t, &RegistryOptions{MaxPerPublish: 3})
		mustPublish(t, r, gopls, mainGo, nil, mkDiag(2, 1, "a"), mkDiag(2, 2, "b"))
		drainCount(r)
		// Three errors fill the cap; a and b were delivered, h twice is one.
		mustPublish(t, r, gopls, mainGo, nil, mkDiag(1, 1, "e1"), mkDiag(1, 2, "e2"), mkDiag(1, 3, "e3"),
			mkDiag(2, 1, "a"), mkDiag(2, 2, "b"), mkDiag(4, 9, "h"), mkDiag(4, 9, "h"), mkDiag(1, 3, "e3"))
		a, _ := r.Drain()
		if d := cmp.Diff([]string{"e1", "e2", "e3"}, messages(a)); d != "" || a.Cut != 1 {
			t.Errorf("cut %d, want 1 (h); shown (-want +got):\n%s", a.Cut, d)
		}
	})
	t.Run("only drops new", func(t *testing.T) {
		// What the cap kept was all delivered before: the block still
		// says how many new ones there are.
		r := newReg(t, &RegistryOptions{MaxPerPublish: 2})
		mustPublish(t, r, gopls, mainGo, nil, errs(2, "e")...)
		drainCount(r)
		mustPublish(t, r, gopls, mainGo, nil, append(errs(2, "e"), mkDiag(2, 5, "w"))...)
		a, ok := r.Drain()
		if !ok || len(a.Files) != 0 || a.Cut != 1 {
			t.Fatalf("drained %v %+v, want a count of 1 alone", ok, a)
		}
		if s := a.Render(nil); !strings.Contains(s, "… 1 more not shown") {
			t.Errorf("block %q", s)
		}
	})
}

func TestDeliverOnce(t *testing.T) {
	r := newReg(t, nil)
	d := mkDiag(1, 3, "undefined: x")
	mustPublish(t, r, gopls, mainGo, ver(1), d)
	if n := drainCount(r); n != 1 {
		t.Fatalf("first turn delivered %d", n)
	}
	if _, ok := r.Drain(); ok {
		t.Fatal("pending entries replayed on the next drain")
	}
	// The server publishes the same set again (another change elsewhere).
	mustPublish(t, r, gopls, mainGo, ver(2), d, mkDiag(1, 4, "new one"))
	a, _ := r.Drain()
	if d := cmp.Diff([]string{"new one"}, messages(a)); d != "" {
		t.Errorf("second turn (-want +got):\n%s", d)
	}
	mustPublish(t, r, gopls, mainGo, ver(3), d)
	if a, ok := r.Drain(); ok {
		t.Errorf("third turn redelivered %v", messages(a))
	}
	if r.Stats().Deduplicated != 2 {
		t.Errorf("deduplicated = %d, want 2", r.Stats().Deduplicated)
	}
}

func TestDedupIdentity(t *testing.T) {
	base := mkDiag(1, 3, "undefined: x")
	base.Code = "UndeclaredName"
	variants := map[string]func(*diag.Diagnostic){
		"message":   func(d *diag.Diagnostic) { d.Message = "undefined: y" },
		"severity":  func(d *diag.Diagnostic) { d.Severity = diag.SeverityWarning },
		"start":     func(d *diag.Diagnostic) { d.Range.Start.Character++ },
		"end":       func(d *diag.Diagnostic) { d.Range.End.Line++ },
		"source":    func(d *diag.Diagnostic) { d.Source = "vet" },
		"code":      func(d *diag.Diagnostic) { d.Code = "Other" },
		"separator": func(d *diag.Diagnostic) { d.Message, d.Source = d.Message+"compiler", "" },
	}
	for name, change := range variants {
		t.Run(name, func(t *testing.T) {
			r := newReg(t, nil)
			mustPublish(t, r, gopls, mainGo, nil, base)
			drainCount(r)
			v := base
			change(&v)
			mustPublish(t, r, gopls, mainGo, nil, base, v)
			if a, _ := r.Drain(); a.Count() != 1 || cmp.Diff(v, a.Files[0].Diagnostics[0]) != "" {
				t.Errorf("a diagnostic differing in %s was not delivered", name)
			}
		})
	}
	t.Run("not identity", func(t *testing.T) {
		r := newReg(t, nil)
		mustPublish(t, r, gopls, mainGo, nil, base)
		drainCount(r)
		v := base
		v.Tags = []int{diag.TagDeprecated}
		v.CodeDescription = "https://x"
		v.Message = "  " + v.Message + "\n" // equal once normalized
		mustPublish(t, r, pyright, mainGo, nil, v)
		if a, ok := r.Drain(); ok {
			t.Errorf("tags, href or surrounding space made a new identity: %v", messages(a))
		}
	})
	t.Run("within a batch across servers", func(t *testing.T) {
		r := newReg(t, nil)
		mustPublish(t, r, pyright, mainGo, nil, base, base)
		mustPublish(t, r, gopls, mainGo, nil, base)
		a, _ := r.Drain()
		if a.Count() != 1 || a.Cut != 0 {
			t.Errorf("count %d cut %d, want 1 and 0", a.Count(), a.Cut)
		}
		// The first server by name supplies the copy delivered.
		if d := cmp.Diff([]string{gopls}, a.Servers); d != "" {
			t.Error(d)
		}
	})
	t.Run("same diagnostic in two files", func(t *testing.T) {
		r := newReg(t, nil)
		mustPublish(t, r, gopls, mainGo, nil, base)
		mustPublish(t, r, gopls, "file:///proj/other.go", nil, base)
		if n := drainCount(r); n != 2 {
			t.Errorf("delivered %d, want 2", n)
		}
	})
}

func TestReset(t *testing.T) {
	other := "file:///proj/other.go"
	r := newReg(t, nil)
	mustPublish(t, r, gopls, mainGo, nil, mkDiag(1, 0, "a"))
	mustPublish(t, r, gopls, other, nil, mkDiag(1, 0, "b"))
	drainCount(r)

	r.Reset(mainGo)
	mustPublish(t, r, gopls, mainGo, nil, mkDiag(1, 0, "a"))
	mustPublish(t, r, gopls, other, nil, mkDiag(1, 0, "b"))
	a, _ := r.Drain()
	if d := cmp.Diff([]string{"a"}, messages(a)); d != "" {
		t.Errorf("after Reset(main.go) (-want +got):\n%s", d)
	}

	// Reset drops pending entries too.
	mustPublish(t, r, gopls, mainGo, nil, mkDiag(1, 1, "pending"))
	r.Reset(mainGo)
	if a, ok := r.Drain(); ok {
		t.Errorf("Reset kept pending entries: %v", messages(a))
	}

	mustPublish(t, r, gopls, other, nil, mkDiag(1, 2, "pending too"))
	r.ResetAll()
	if _, ok := r.Drain(); ok {
		t.Error("ResetAll kept pending entries")
	}
	if s := r.Stats(); s.Pending != 0 || s.Documents != 0 {
		t.Errorf("after ResetAll: %+v", s)
	}
	mustPublish(t, r, gopls, mainGo, nil, mkDiag(1, 0, "a"))
	mustPublish(t, r, gopls, other, nil, mkDiag(1, 0, "b"))
	if n := drainCount(r); n != 2 {
		t.Errorf("after ResetAll delivered %d, want 2", n)
	}
	// LastPublish and versions survive resets; Forget drops them.
	r.SetVersion(mainGo, 3)
	r.ResetAll()
	if _, ok := r.LastPublish(gopls, mainGo); !ok {
		t.Error("ResetAll forgot LastPublish")
	}
	r.Forget(mainGo)
	if _, ok := r.LastPublish(gopls, mainGo); ok {
		t.Error("Forget kept LastPublish")
	}
	if _, ok := r.Version(mainGo); ok {
		t.Error("Forget kept the version")
	}
}

func TestPerFileLimit(t *testing.T) {
	r := newReg(t, nil)
	mustPublish(t, r, gopls, mainGo, nil, errs(11, "e")...)
	a, _ := r.Drain()
	if a.Count() != 10 || a.Cut != 1 || a.Files[0].Cut != 1 {
		t.Fatalf("count %d cut %d/%d; want 10 and 1", a.Count(), a.Cut, a.Files[0].Cut)
	}
	// The cut one was never delivered: a republish shows it.
	mustPublish(t, r, gopls, mainGo, nil, errs(11, "e")...)
	a, _ = r.Drain()
	if d := cmp.Diff([]string{"e 10"}, messages(a)); d != "" {
		t.Error(d)
	}
}

func TestTotalLimit(t *testing.T) {
	t.Run("5 files x 10 errors", func(t *testing.T) {
		r := newReg(t, nil)
		for f := range 5 {
			mustPublish(t, r, gopls, fmt.Sprintf("file:///proj/f%d.go", f), nil, errs(10, fmt.Sprint("f", f))...)
		}
		a, _ := r.Drain()
		if a.Count() != 30 || a.Cut != 20 || len(a.Files) != 3 {
			t.Fatalf("count %d cut %d files %d; want 30, 20, 3", a.Count(), a.Cut, len(a.Files))
		}
		for i, f := range a.Files {
			if f.URI != fmt.Sprintf("file:///proj/f%d.go", i) || len(f.Diagnostics) != 10 {
				t.Errorf("file %d = %s with %d", i, f.URI, len(f.Diagnostics))
			}
		}
	})
	t.Run("severity first across files", func(t *testing.T) {
		r := newReg(t, nil)
		var hints, warnings []diag.Diagnostic
		for i := range 10 {
			hints = append(hints, mkDiag(diag.SeverityHint, i, fmt.Sprint("hint ", i)))
			warnings = append(warnings, mkDiag(diag.SeverityWarning, i, fmt.Sprint("warning ", i)))
		}
		mustPublish(t, r, gopls, "file:///proj/a.go", nil, hints...)
		mustPublish(t, r, gopls, "file:///proj/b.go", nil, warnings...)
		mustPublish(t, r, gopls, "file:///proj/c.go", nil, errs(10, "c")...)
		mustPublish(t, r, gopls, "file:///proj/d.go", nil, append(errs(5, "d"), warnings[:5]...)...)
		a, _ := r.Drain()
		// 15 errors (c: 10, d: 5), then 15 warnings in file order (b: 10,
		// d: 5), no hints.
		got := map[string][2]int{}
		for _, f := range a.Files {
			var n [2]int
			for _, d := range f.Diagnostics {
				n[d.Severity-1]++
			}
			got[f.URI] = n
		}
		want := map[string][2]int{"file:///proj/b.go": {0, 10}, "file:///proj/c.go": {10, 0}, "file:///proj/d.go": {5, 5}}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("errors/warnings per file (-want +got):\n%s", d)
		}
		if a.Cut != 10 {
			t.Errorf("cut = %d, want the 10 hints", a.Cut)
		}
		// Within a file: severity, then position.
		ds := a.Files[2].Diagnostics
		for i := 1; i < len(ds); i++ {
			if compareDiagnostics(&ds[i-1], &ds[i]) > 0 {
				t.Errorf("d.go out of order at %d: %v", i, messages(a))
			}
		}
	})
	t.Run("configured", func(t *testing.T) {
		r := newReg(t, &RegistryOptions{MaxPerFile: 2, MaxTotal: 3})
		mustPublish(t, r, gopls, "file:///proj/a.go", nil, errs(3, "a")...)
		mustPublish(t, r, gopls, "file:///proj/b.go", nil, errs(3, "b")...)
		a, _ := r.Drain()
		if d := cmp.Diff([]string{"a 0", "a 1", "b 0"}, messages(a)); d != "" || a.Cut != 3 {
			t.Errorf("cut %d; messages (-want +got):\n%s", a.Cut, d)
		}
		if a.Files[0].Cut != 1 || a.Files[1].Cut != 2 {
			t.Errorf("file cuts %d, %d; want 1, 2", a.Files[0].Cut, a.Files[1].Cut)
		}
	})
}

func TestDeliveredLRU(t *testing.T) {
	r := newReg(t, nil)
	uri := func(i int) string { return fmt.Sprintf("file:///proj/f%03d.go", i) }
	same := mkDiag(1, 0, "same")
	for i := range 501 {
		mustPublish(t, r, gopls, uri(i), nil, same)
		if n := drainCount(r); n != 1 {
			t.Fatalf("document %d delivered %d", i, n)
		}
	}
	if s := r.Stats(); s.Documents != 500 || s.Evictions != 1 {
		t.Errorf("documents %d evictions %d; want 500 and 1", s.Documents, s.Evictions)
	}
	// The 501st document evicted the first one's delivered set.
	mustPublish(t, r, gopls, uri(0), nil, same)
	mustPublish(t, r, gopls, uri(1), nil, same)
	mustPublish(t, r, gopls, uri(500), nil, same)
	a, _ := r.Drain()
	if len(a.Files) != 1 || a.Files[0].URI != uri(0) {
		t.Errorf("delivered %v, want only %s", a.Files, uri(0))
	}

	r = newReg(t, &RegistryOptions{MaxDocuments: 2})
	for i := range 3 {
		mustPublish(t, r, gopls, uri(i), nil, same)
		drainCount(r)
	}
	// Delivering to f001 again (a new diagnostic) makes it recent: f002
	// stays, f001 stays, f000 was evicted.
	mustPublish(t, r, gopls, uri(1), nil, same, mkDiag(1, 1, "new"))
	drainCount(r)
	mustPublish(t, r, gopls, uri(3), nil, same)
	drainCount(r) // evicts f002, the least recently delivered
	// One batch, so that delivering does not change what is checked.
	for i := range 4 {
		mustPublish(t, r, gopls, uri(i), nil, same)
	}
	a, _ = r.Drain()
	var got []string
	for _, f := range a.Files {
		got = append(got, f.URI)
	}
	if d := cmp.Diff([]string{uri(0), uri(2)}, got); d != "" {
		t.Errorf("redelivered documents (-want +got):\n%s", d)
	}
}

// TestBoundedState: what the registry remembers per document is bounded
// by MaxDocuments beyond what is pending, whatever the URIs, the server
// names and the resets; reset frees what it resets.
func TestBoundedState(t *testing.T) {
	r := newReg(t, &RegistryOptions{MaxDocuments: 50})
	uri := func(i int) string { return fmt.Sprintf("file:///proj/f%06d.go", i) }
	for i := range 5000 {
		r.SetVersion(uri(i), 1)
		mustPublish(t, r, gopls, uri(i), ver(1), mkDiag(1, 0, "same"))
		if i%10 == 9 {
			if n := drainCount(r); n != 10 {
				t.Fatalf("drain %d delivered %d, want 10", i/10, n)
			}
			if s := r.Stats(); s.Tracked > 50 || s.Documents > 50 || len(r.docs) != s.Tracked {
				t.Fatalf("after %d URIs: %+v", i+1, s)
			}
		}
		if i%1000 == 999 {
			r.ResetAll()
			if s := r.Stats(); s.Documents != 0 || s.Pending != 0 || s.Tracked > 50 {
				t.Fatalf("after ResetAll: %+v", s)
			}
		}
	}
	// Versions only (a manager that opens documents nobody publishes for).
	for i := range 5000 {
		r.SetVersion(uri(10_000+i), i)
	}
	if s := r.Stats(); s.Tracked != 50 || len(r.docs) != 50 || r.lru.n != 50 {
		t.Errorf("after 5000 versions: tracked %d, docs %d, lru %d; want 50", s.Tracked, len(r.docs), r.lru.n)
	}
	if v, ok := r.Version(uri(14_999)); !ok || v != 4999 {
		t.Errorf("the most recent version was forgotten: %d %v", v, ok)
	}
	if _, ok := r.Version(uri(10_000)); ok {
		t.Error("the least recently used version is still remembered")
	}
	// Pending documents are never forgotten; once drained they are.
	for i := range 200 {
		mustPublish(t, r, gopls, uri(20_000+i), nil, mkDiag(1, 0, "pending"))
	}
	if s := r.Stats(); s.Tracked != 250 || s.Pending != 200 {
		t.Errorf("with 200 pending: %+v", s)
	}
	if n := drainCount(r); n != 30 {
		t.Errorf("drained %d, want 30", n)
	}
	if s := r.Stats(); s.Tracked != 50 {
		t.Errorf("after the drain: tracked %d, want 50", s.Tracked)
	}

	// Server names and failures come from callers: bounded too.
	for i := range 2 * maxFailingServers {
		r.ReportFailure(fmt.Sprint("plugin:x:s", i), errors.New("boom"))
	}
	if n := len(r.failures); n > maxFailingServers {
		t.Errorf("%d failure counters kept", n)
	}
	for i := range 3 * maxServersPerDocument {
		mustPublish(t, r, fmt.Sprint("plugin:x:s", i), mainGo, nil)
	}
	mustPublish(t, r, gopls, mainGo, nil, mkDiag(1, 0, "kept while pending"))
	for i := range 3 * maxServersPerDocument {
		mustPublish(t, r, fmt.Sprint("plugin:y:s", i), mainGo, nil)
	}
	if n := len(r.docs[mainGo].servers); n > maxServersPerDocument {
		t.Errorf("%d servers remembered for one document", n)
	}
	if _, ok := r.LastPublish(gopls, mainGo); !ok {
		t.Error("a server with something pending was forgotten")
	}
	if a, _ := r.Drain(); a == nil || messages(a)[0] != "kept while pending" {
		t.Errorf("drained %+v", a)
	}

	// A huge batch leaves no huge scratch behind.
	for i := range 3 * maxScratch {
		mustPublish(t, r, gopls, uri(30_000+i), nil, mkDiag(1, 0, "x"))
	}
	r.Drain()
	if cap(r.files) > maxScratch || len(r.seen) > maxScratch {
		t.Errorf("scratch kept: files %d seen %d", cap(r.files), len(r.seen))
	}
}

func TestDeliveredPerDocumentBound(t *testing.T) {
	r := newReg(t, &RegistryOptions{MaxDeliveredPerDocument: 3})
	for i := range 4 {
		mustPublish(t, r, gopls, mainGo, nil, mkDiag(1, i, fmt.Sprint("d", i)))
		drainCount(r)
	}
	// d0 was forgotten (oldest), d1..d3 are remembered.
	var all []diag.Diagnostic
	for i := range 4 {
		all = append(all, mkDiag(1, i, fmt.Sprint("d", i)))
	}
	mustPublish(t, r, gopls, mainGo, nil, all...)
	a, _ := r.Drain()
	if d := cmp.Diff([]string{"d0"}, messages(a)); d != "" {
		t.Error(d)
	}
}

func TestIdentityFailureStillDelivers(t *testing.T) {
	r, logs := newLogged(t)
	bad := mkDiag(1, 0, "bad \xff byte")
	mustPublish(t, r, gopls, mainGo, nil, bad, bad, mkDiag(1, 1, "good"))
	a, ok := r.Drain()
	if !ok {
		t.Fatal("a batch with a failed identity was lost")
	}
	// Without an identity there is no dedup: both copies are delivered.
	if d := cmp.Diff([]string{"bad \xff byte", "bad \xff byte", "good"}, messages(a)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if s := r.Stats(); s.IdentityFailures != 2 || s.Delivered != 3 {
		t.Errorf("stats = %+v", s)
	}
	if out := logs.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "without deduplication") || !strings.Contains(out, "count=2") {
		t.Errorf("log = %q, want a warning about 2 diagnostics", out)
	}
	// The good one is remembered, the bad one is not (it cannot be).
	mustPublish(t, r, gopls, mainGo, nil, bad, mkDiag(1, 1, "good"))
	a, _ = r.Drain()
	if d := cmp.Diff([]string{"bad \xff byte"}, messages(a)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestFailureCounter(t *testing.T) {
	r, logs := newLogged(t)
	boom := errors.New("handler exploded")
	r.ReportFailure(gopls, boom)
	if err := r.Publish(gopls, json.RawMessage(`{"uri":1}`)); err == nil {
		t.Fatal("bad shape accepted")
	}
	if strings.Contains(logs.String(), "WARN") {
		t.Fatalf("warned after two failures: %s", logs)
	}
	r.ReportFailure(gopls, boom)
	out := logs.String()
	if !strings.Contains(out, "keeps failing") || !strings.Contains(out, "consecutive=3") || !strings.Contains(out, gopls) || !strings.Contains(out, "handler exploded") {
		t.Fatalf("third failure log = %q", out)
	}
	r.ReportFailure(gopls, boom)
	if !strings.Contains(logs.String(), "consecutive=4") {
		t.Error("no warning on the fourth failure")
	}
	// Other servers count separately.
	r.ReportFailure(pyright, boom)
	if r.ConsecutiveFailures(pyright) != 1 {
		t.Errorf("pyright failures = %d", r.ConsecutiveFailures(pyright))
	}
	r.ReportSuccess(gopls)
	if r.ConsecutiveFailures(gopls) != 0 {
		t.Error("ReportSuccess did not reset the counter")
	}
	r.ReportFailure(gopls, boom)
	r.ReportFailure(gopls, boom)
	mustPublish(t, r, gopls, mainGo, nil) // an accepted publish is a success
	r.ReportFailure(gopls, boom)
	r.ReportFailure(gopls, boom)
	if n := strings.Count(logs.String(), "keeps failing"); n != 2 {
		t.Errorf("%d warnings, want 2 (third and fourth of the first run)", n)
	}
	// It never disables the server.
	mustPublish(t, r, gopls, mainGo, nil, mkDiag(1, 0, "still heard"))
	if drainCount(r) != 1 {
		t.Error("a failing server's publish was not delivered")
	}
}

func TestSilentWithoutLogger(t *testing.T) {
	r := newReg(t, nil)
	for range 5 {
		r.ReportFailure(gopls, errors.New("x"))
	}
	mustPublish(t, r, gopls, mainGo, nil, mkDiag(1, 0, "\xff"))
	if drainCount(r) != 1 {
		t.Error("not delivered")
	}
}

func TestFilters(t *testing.T) {
	unnecessary := mkDiag(diag.SeverityHint, 1, "x declared and not used")
	unnecessary.Tags = []int{diag.TagUnnecessary}
	all := []diag.Diagnostic{mkDiag(1, 0, "e"), mkDiag(2, 0, "w"), mkDiag(3, 0, "i"), mkDiag(4, 0, "h"), unnecessary}
	tests := []struct {
		opts *RegistryOptions
		want []string
	}{
		{nil, []string{"e", "w", "i", "h", "x declared and not used"}},
		{&RegistryOptions{MinSeverity: diag.SeverityWarning}, []string{"e", "w"}},
		{&RegistryOptions{MinSeverity: diag.SeverityError}, []string{"e"}},
		{&RegistryOptions{DropUnnecessary: true}, []string{"e", "w", "i", "h"}},
		{&RegistryOptions{MinSeverity: diag.SeverityHint}, []string{"e", "w", "i", "h", "x declared and not used"}},
	}
	for _, tt := range tests {
		r := newReg(t, tt.opts)
		mustPublish(t, r, gopls, mainGo, nil, all...)
		a, _ := r.Drain()
		if d := cmp.Diff(tt.want, messages(a)); d != "" {
			t.Errorf("%+v (-want +got):\n%s", tt.opts, d)
		}
		if got := r.Stats().Filtered; got != uint64(len(all)-len(tt.want)) {
			t.Errorf("%+v: filtered = %d", tt.opts, got)
		}
	}
}

func TestAttachmentJSON(t *testing.T) {
	r := newReg(t, nil)
	d := mkDiag(1, 2, "undefined: x")
	d.Code = "UndeclaredName"
	d.CodeDescription = "https://pkg.go.dev/UndeclaredName"
	mustPublish(t, r, gopls, mainGo, ver(1), d)
	mustPublish(t, r, gopls, "untitled:Untitled-1", nil, mkDiag(2, 0, "w"))
	a, _ := r.Drain()
	a.Notes = []string{"diagnostics for main.go may be stale"}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"servers":["plugin:go:gopls"],"files":[` +
		`{"uri":"file:///proj/main.go","path":"/proj/main.go","diagnostics":[{"range":{"start":{"line":2,"character":4},"end":{"line":2,"character":9}},"severity":1,"code":"UndeclaredName","codeDescription":"https://pkg.go.dev/UndeclaredName","source":"compiler","message":"undefined: x"}],"cut":0},` +
		`{"uri":"untitled:Untitled-1","diagnostics":[{"range":{"start":{"line":0,"character":4},"end":{"line":0,"character":9}},"severity":2,"source":"compiler","message":"w"}],"cut":0}],` +
		`"cut":0,"notes":["diagnostics for main.go may be stale"]}`
	if string(b) != want {
		t.Errorf("JSON\n got %s\nwant %s", b, want)
	}
	// It decodes back to the same attachment.
	var back diag.Attachment
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(a, &back); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	s, _ := json.Marshal(r.Stats())
	for _, key := range []string{`"published":2`, `"delivered":2`, `"identityFailures":0`, `"documents":2`} {
		if !strings.Contains(string(s), key) {
			t.Errorf("stats JSON %s lacks %s", s, key)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	r := newReg(t, nil)
	const writers, rounds = 4, 200
	var writing sync.WaitGroup
	for w := range writers {
		writing.Add(1)
		go func() {
			defer writing.Done()
			server := fmt.Sprint("plugin:p:s", w)
			uri := fmt.Sprintf("file:///proj/w%d.go", w)
			for i := range rounds {
				r.SetVersion(uri, i)
				if err := r.PublishParams(server, &diag.PublishParams{URI: uri, Version: ver(i),
					Diagnostics: []diag.Diagnostic{mkDiag(1, i, fmt.Sprint("w", w, " r", i))}}); err != nil {
					t.Error(err)
				}
				r.LastPublish(server, uri)
			}
		}()
	}
	delivered := map[string]int{}
	record := func(a *diag.Attachment) {
		for _, m := range messages(a) {
			delivered[m]++
		}
		_ = a.Render(nil)
	}
	done := make(chan struct{})
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for {
			select {
			case <-done:
				return
			default:
			}
			if a, ok := r.Drain(); ok {
				record(a)
			}
			_ = r.Stats()
		}
	}()
	writing.Wait()
	close(done)
	<-drained
	if a, ok := r.Drain(); ok {
		record(a)
	}
	for m, n := range delivered {
		if n != 1 {
			t.Errorf("%q delivered %d times", m, n)
		}
	}
	// Each writer's final publish is the last set of its document and is
	// for the current version: it was delivered.
	for w := range writers {
		if delivered[fmt.Sprint("w", w, " r", rounds-1)] != 1 {
			t.Errorf("writer %d's last diagnostic was not delivered", w)
		}
	}
	if s := r.Stats(); s.Pending != 0 || s.Published != writers*rounds {
		t.Errorf("stats after the last drain: %+v", s)
	}
}

// TestAgreesWithNaive drives the Registry and the naive model with the same
// random workloads and requires identical attachments.
func TestAgreesWithNaive(t *testing.T) {
	var total Stats
	var notes, bare uint64 // notes drained; attachments of notes or counts only
	for seed := range int64(40) {
		opts := &RegistryOptions{MaxPerPublish: 6, MaxPerFile: 3, MaxTotal: 7, MaxDocuments: 3, MaxDeliveredPerDocument: 5}
		if seed%4 == 1 {
			opts = nil
		}
		if seed%4 == 2 {
			opts.MinSeverity = diag.SeverityInformation
			opts.DropUnnecessary = true
		}
		w := newWorkload(seed, 6, 3)
		if seed%8 == 3 {
			// Limits in the hundreds and publishes that share lines: the
			// per-file selection cuts back many times within one drain.
			opts = &RegistryOptions{MaxPerPublish: 150, MaxPerFile: 40, MaxTotal: 100, MaxDocuments: 4, MaxDeliveredPerDocument: 300}
			w.maxDiags = 200
		}
		if seed%8 == 7 {
			opts = &RegistryOptions{MaxPerFile: -1, MaxTotal: -1}
			w.maxDiags = 60
		}
		fast, naive := newReg(t, opts), newNaive(opts)
		for turn := range 60 {
			for range w.rng.IntN(6) {
				switch op := w.rng.IntN(20); {
				case op == 0:
					uri := w.uri()
					fast.Reset(uri)
					naive.Reset(uri)
				case op == 1 && turn%7 == 0:
					fast.ResetAll()
					naive.ResetAll()
				case op < 5:
					uri, v := w.uri(), w.rng.IntN(5)
					fast.SetVersion(uri, v)
					naive.SetVersion(uri, v)
				default:
					server, p := w.publish()
					if err := fast.PublishParams(server, p); err != nil {
						t.Fatal(err)
					}
					naive.PublishParams(server, p)
				}
			}
			fa, fok := fast.Drain()
			na, nok := naive.Drain()
			if fok != nok {
				t.Fatalf("seed %d turn %d: fast ok=%v naive ok=%v\nfast %+v\nnaive %+v", seed, turn, fok, nok, fa, na)
			}
			if d := cmp.Diff(na, fa, cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("seed %d turn %d: attachments differ (-naive +fast):\n%s", seed, turn, d)
			}
			if fok {
				notes += uint64(len(fa.Notes))
				if len(fa.Files) == 0 {
					bare++
				}
			}
		}
		s := fast.Stats()
		total.Delivered += s.Delivered
		total.Deduplicated += s.Deduplicated
		total.Cut += s.Cut
		total.Stale += s.Stale
		total.Truncated += s.Truncated
		total.Filtered += s.Filtered
		total.IdentityFailures += s.IdentityFailures
		total.Evictions += s.Evictions
		total.Superseded += s.Superseded
		total.Invalid += s.Invalid
		total.Attachments += s.Attachments
	}
	// The workloads reach every rule, or agreement would prove little.
	for name, n := range map[string]uint64{"delivered": total.Delivered, "deduplicated": total.Deduplicated,
		"cut": total.Cut, "stale": total.Stale, "truncated": total.Truncated, "filtered": total.Filtered,
		"identity failures": total.IdentityFailures, "evictions": total.Evictions, "superseded": total.Superseded,
		"invalid": total.Invalid, "notes": notes, "attachments without files": bare} {
		if n < 10 {
			t.Errorf("the workloads exercised %s only %d times", name, n)
		}
	}
	t.Logf("totals: %+v", total)
}
