package fuzz

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/unicode/norm"

	"github.com/idebridge/idebridge/lockfile"
)

// FuzzLockfileRoundTrip checks that a lockfile that parses, written back
// with Marshal and parsed again, is the same lockfile; and that every
// failure is a *ParseError naming the file.
func FuzzLockfileRoundTrip(f *testing.F) {
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		lf, err := lockfile.Parse(name, data)
		if err != nil {
			var pe *lockfile.ParseError
			if !errors.As(err, &pe) || pe.Path != name || !strings.Contains(err.Error(), name) {
				t.Fatalf("Parse(%q) error %v is not a *ParseError naming the file", name, err)
			}
			return
		}
		if port, ok := lockfile.PortFromName(name); !ok || port != lf.Port {
			t.Fatalf("Parse(%q) gave port %d", name, lf.Port)
		}
		if lf.Transport != lockfile.TransportWS && lf.Transport != lockfile.TransportSSE {
			t.Fatalf("transport %q", lf.Transport)
		}
		out, err := lf.Marshal()
		if err != nil {
			t.Fatalf("a parsed lockfile does not marshal: %v\nparsed %+v from %q", err, lf, data)
		}
		again, err := lockfile.Parse(name, out)
		if err != nil {
			t.Fatalf("Parse(Marshal(lf)) = %v\nmarshalled %q from %q", err, out, data)
		}
		if diff := cmp.Diff(lf, again); diff != "" {
			t.Fatalf("round trip changed the lockfile (-first +second):\n%s\ninput %q\nmarshalled %q", diff, data, out)
		}
	})
}

// nfcElements NFC-normalises each element of a slash-separated path on its
// own, as Match compares them: a whole-string pass is not stable when the
// path holds invalid UTF-8 (norm treats a mark at the end of the string
// differently from the same mark before a slash).
func nfcElements(p string) string {
	parts := strings.Split(p, "/")
	for i, e := range parts {
		parts[i] = norm.NFC.String(e)
	}
	return strings.Join(parts, "/")
}

// FuzzMatch checks Match on absolute POSIX paths against a model built on
// filepath.Rel: cwd matches a folder exactly when the path from the folder
// to cwd does not climb out of it.
func FuzzMatch(f *testing.F) {
	f.Fuzz(func(t *testing.T, folder, cwd string) {
		if !strings.HasPrefix(folder, "/") || !strings.HasPrefix(cwd, "/") {
			return
		}
		got := lockfile.Match([]string{folder}, cwd, nil)
		rel, err := filepath.Rel(nfcElements(folder), nfcElements(cwd))
		want := err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
		if got != want {
			t.Fatalf("Match([%q], %q) = %v, model says %v (rel %q, %v)", folder, cwd, got, want, rel, err)
		}
		// A folder always contains itself, however it is spelled.
		if !lockfile.Match([]string{folder}, folder+"/./", nil) {
			t.Fatalf("Match([%q], itself) = false", folder)
		}
	})
}
