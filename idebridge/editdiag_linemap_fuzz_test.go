package idebridge

import "testing"

// FuzzLineMap checks the line map behind edit diagnostics against a model:
// every mapped line is the same line in the new text, mapped lines keep
// their order, as many lines are kept as a longest common subsequence of
// the two texts has (lcsLen, the textbook table), and the end of the file
// maps only to the new end.
func FuzzLineMap(f *testing.F) {
	f.Fuzz(func(t *testing.T, oldText, newText string) {
		a, b := modelLines(oldText), modelLines(newText)
		if len(a)*len(b) > 1<<20 {
			return // the model's table would be too large
		}
		m := newLineMap(oldText, newText)
		kept, last := 0, -1
		for i := range a {
			j, ok := m.Map(i)
			if !ok {
				continue
			}
			if j <= last || j >= len(b) || a[i] != b[j] {
				t.Fatalf("old line %d %q maps to %d (previous %d) of %q", i, a[i], j, last, b)
			}
			kept, last = kept+1, j
		}
		if len(a)+len(b) <= maxLineDiffEdits { // within the diff's edit bound
			if want := lcsLen(a, b); kept != want {
				t.Fatalf("kept %d lines, a longest common subsequence has %d", kept, want)
			}
		}
		if j, ok := m.Map(len(a)); ok && j != len(b) {
			t.Fatalf("the end maps to %d, the new text has %d lines", j, len(b))
		}
		if _, ok := m.Map(-1); ok {
			t.Fatal("line -1 maps")
		}
	})
}
