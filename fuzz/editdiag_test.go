package fuzz

import (
	"strings"
	"testing"

	"github.com/idebridge/idebridge/idebridge"
)

// FuzzLineMap checks the line map behind edit diagnostics against a model:
// every mapped line is the same line in the new text, mapped lines keep
// their order, as many lines are kept as a longest common subsequence of
// the two texts has (computed by the textbook table), and the end of the
// file maps only to the new end.
func FuzzLineMap(f *testing.F) {
	f.Fuzz(func(t *testing.T, oldText, newText string) {
		a, b := lineMapLines(oldText), lineMapLines(newText)
		if len(a)*len(b) > 1<<20 {
			return // the model's table would be too large
		}
		m := idebridge.NewLineMap(oldText, newText)
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
		if len(a)+len(b) <= 1000 { // within the diff's edit bound
			if want := lineMapLCS(a, b); kept != want {
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

func lineMapLines(s string) []string {
	if s == "" {
		return nil
	}
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

func lineMapLCS(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				cur[j] = prev[j+1] + 1
			} else {
				cur[j] = max(prev[j], cur[j+1])
			}
		}
		prev, cur = cur, prev
	}
	return prev[0]
}
