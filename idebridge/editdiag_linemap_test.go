package idebridge

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// lcsLen is the length of a longest common subsequence of a and b, by the
// textbook table (kept two rows at a time): the model the line map must
// agree with.
func lcsLen(a, b []string) int {
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

// modelLines splits s after each "\n", as the line map counts lines.
func modelLines(s string) []string {
	if s == "" {
		return nil
	}
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

// checkLineMap checks the map's invariants: a mapped line is the same line
// in the new text, mapped lines keep their order, and as many lines are
// kept as a longest common subsequence has (the diff is minimal).
func checkLineMap(t *testing.T, oldText, newText string) {
	t.Helper()
	a, b := modelLines(oldText), modelLines(newText)
	m := newLineMap(oldText, newText)
	kept, last := 0, -1
	for i := range a {
		j, ok := m.Map(i)
		if !ok {
			continue
		}
		if j <= last || j >= len(b) || a[i] != b[j] {
			t.Fatalf("old line %d (%q) maps to %d (after %d) in %q", i, a[i], j, last, b)
		}
		kept, last = kept+1, j
	}
	if want := lcsLen(a, b); kept != want {
		t.Fatalf("%d lines kept, a longest common subsequence has %d:\nold %q\nnew %q", kept, want, a, b)
	}
	if _, ok := m.Map(-1); ok {
		t.Fatal("line -1 maps")
	}
	if _, ok := m.Map(len(a) + 1); ok {
		t.Fatal("a line past the end maps")
	}
}

func TestLineMap(t *testing.T) {
	tests := []struct{ old, new string }{
		{"", ""},
		{"", "a\n"},
		{"a\n", ""},
		{"a\nb\nc\n", "a\nb\nc\n"},
		{"a\nb\nc\n", "x\ny\na\nb\nc\n"},
		{"a\nb\nc\n", "a\nc\n"},
		{"a\nb\nc\nd\ne\n", "a\nX\nc\nY\ne\n"},
		{"a\nb", "a\nb\n"},
		{"a\nb\na\nb\n", "b\na\nb\na\n"},
	}
	for _, tt := range tests {
		checkLineMap(t, tt.old, tt.new)
	}
	// Lines inserted above: everything moves down by their number.
	m := newLineMap("a\nb\nc\n", "1\n2\na\nb\nc\n")
	for i := range 3 {
		if j, ok := m.Map(i); !ok || j != i+2 {
			t.Errorf("line %d maps to %d, %v", i, j, ok)
		}
	}
	// The end of the file moves with its last line.
	if j, ok := m.Map(3); !ok || j != 5 {
		t.Errorf("end maps to %d, %v", j, ok)
	}
	if _, ok := newLineMap("a\nb\n", "a\nc\n").Map(2); ok {
		t.Error("the end maps although the last line changed")
	}

	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a\n", "b\n", "c\n", "}\n", "\n"}
	gen := func() string {
		var sb strings.Builder
		for range r.IntN(12) {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return sb.String()
	}
	for range 3000 {
		checkLineMap(t, gen(), gen())
	}
}

// TestLineMapLarge: a big file with scattered edits is still mapped
// minimally, and a rewrite beyond the diff's bound maps what the common
// prefix and suffix keep.
func TestLineMapLarge(t *testing.T) {
	var a, b strings.Builder
	for i := range 1500 {
		line := "line " + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "\n"
		a.WriteString(line)
		switch {
		case i%150 == 0:
			b.WriteString("inserted\n" + line)
		case i%233 == 0:
			// deleted
		default:
			b.WriteString(line)
		}
	}
	checkLineMap(t, a.String(), b.String())

	var big, rewritten strings.Builder
	big.WriteString("head\n")
	rewritten.WriteString("head\n")
	for i := range 3000 {
		big.WriteString("old " + string(rune('a'+i%26)) + "\n")
		rewritten.WriteString("new " + string(rune('a'+i%26)) + "\n")
	}
	big.WriteString("tail\n")
	rewritten.WriteString("tail\n")
	m := newLineMap(big.String(), rewritten.String())
	if j, ok := m.Map(0); !ok || j != 0 {
		t.Errorf("head maps to %d, %v", j, ok)
	}
	if j, ok := m.Map(3001); !ok || j != 3001 {
		t.Errorf("tail maps to %d, %v", j, ok)
	}
	if _, ok := m.Map(1); ok {
		t.Error("a rewritten line maps")
	}
}

// BenchmarkLineMap maps a 10,000-line file through a typical agent
// edit: a few lines replaced in the middle.
func BenchmarkLineMap(b *testing.B) {
	var old strings.Builder
	for i := range 10000 {
		old.WriteString("\tx" + strings.Repeat("y", i%13) + " := compute(" + string(rune('a'+i%26)) + ")\n")
	}
	oldText := old.String()
	newText := strings.Replace(oldText, "\txyyyyy := compute(f)\n", "\t// changed\n\txyyyyy := compute(g)\n\tuse(xyyyyy)\n", 1)
	b.ReportAllocs()
	for b.Loop() {
		newLineMap(oldText, newText)
	}
}
