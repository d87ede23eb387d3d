package fuzz

import (
	"strings"
	"testing"

	"github.com/idebridge/idebridge/idebridge"
)

// FuzzCompareVersions checks that version comparison is an order:
// comparing a version with itself gives 0, swapping the arguments negates
// the result, whether a version can be compared does not depend on the
// other one, and a "v" prefix or build metadata changes nothing.
func FuzzCompareVersions(f *testing.F) {
	f.Fuzz(func(t *testing.T, a, b string) {
		ab, okAB := idebridge.CompareVersions(a, b)
		ba, okBA := idebridge.CompareVersions(b, a)
		if okAB != okBA || ab != -ba {
			t.Fatalf("(%q, %q) = %d %v but (%q, %q) = %d %v", a, b, ab, okAB, b, a, ba, okBA)
		}
		aa, okA := idebridge.CompareVersions(a, a)
		if okA && aa != 0 {
			t.Fatalf("(%q, %q) = %d", a, a, aa)
		}
		_, okBB := idebridge.CompareVersions(b, b)
		if okAB != (okA && okBB) {
			t.Fatalf("(%q, %q) ok %v, but alone %v and %v", a, b, okAB, okA, okBB)
		}
		if okA && !strings.Contains(a, "+") && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(a)), "v") {
			if c, ok := idebridge.CompareVersions("v"+strings.TrimSpace(a)+"+build.1", a); !ok || c != 0 {
				t.Fatalf("%q with a prefix and build metadata compares %d %v", a, c, ok)
			}
		}
	})
}
