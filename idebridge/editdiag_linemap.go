package idebridge

import "strings"

// maxLineDiffEdits bounds the line diff behind lineMap: beyond this many
// inserted plus deleted lines (in the part of the texts between their
// common prefix and suffix) that part is treated as replaced wholesale.
// Memory is quadratic in it (about 8 MB at the bound).
const maxLineDiffEdits = 1000

// lineMap maps the lines of a text before an edit to the lines of the text
// after it, through a line diff (Myers' algorithm): a line that the edit
// kept maps to where it is now; a line the edit deleted or changed maps to
// nothing. Lines are zero-based, as in LSP positions; the position just
// past the last line (a diagnostic at the end of the file) maps to the new
// text's end when the edit kept the old text's end.
type lineMap struct {
	old2new        []int // -1: deleted or changed
	oldEnd, newEnd int   // line counts
	endKept        bool
}

// newLineMap diffs oldText and newText line by line. Lines end at "\n";
// a line's terminator is part of it.
func newLineMap(oldText, newText string) *lineMap {
	a, b := splitLines(oldText), splitLines(newText)
	m := &lineMap{old2new: make([]int, len(a)), oldEnd: len(a), newEnd: len(b)}
	for i := range m.old2new {
		m.old2new[i] = -1
	}
	// Common prefix and suffix first: most edits touch one place.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		m.old2new[pre] = pre
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		m.old2new[len(a)-1-suf] = len(b) - 1 - suf
		suf++
	}
	m.endKept = suf > 0 || (pre == len(a) && pre == len(b))
	if pre == len(a)-suf || pre == len(b)-suf {
		return m // pure insertion or deletion
	}
	for _, p := range myersMatches(a[pre:len(a)-suf], b[pre:len(b)-suf]) {
		m.old2new[pre+p[0]] = pre + p[1]
	}
	return m
}

// Map returns where old line oldLine is in the new text, and false when
// the edit deleted or changed it (or it is out of range).
func (m *lineMap) Map(oldLine int) (int, bool) {
	switch {
	case oldLine >= 0 && oldLine < len(m.old2new):
		n := m.old2new[oldLine]
		return n, n >= 0
	case oldLine == m.oldEnd && m.endKept:
		return m.newEnd, true
	}
	return 0, false
}

// splitLines splits text after each "\n"; a last line without one is a
// line too. The empty text has no lines.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// myersMatches returns the pairs (i, j) of lines a[i] == b[j] that a
// shortest edit script keeps, in order; nil when the script would need
// more than maxLineDiffEdits edits.
func myersMatches(a, b []string) [][2]int {
	// Compare small integers, not strings.
	ids := map[string]int{}
	id := func(s string) int {
		v, ok := ids[s]
		if !ok {
			v = len(ids)
			ids[s] = v
		}
		return v
	}
	x := make([]int, len(a))
	for i, s := range a {
		x[i] = id(s)
	}
	y := make([]int, len(b))
	for i, s := range b {
		y[i] = id(s)
	}
	n, mm := len(x), len(y)
	maxD := min(n+mm, maxLineDiffEdits)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	for d := 0; d <= maxD; d++ {
		// Keep the part of v this round reads: diagonals -d-1..d+1.
		snap := make([]int, 2*d+3)
		copy(snap, v[off-d-1:off+d+2])
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				i = v[off+k+1] // down: an insertion
			} else {
				i = v[off+k-1] + 1 // right: a deletion
			}
			j := i - k
			for i < n && j < mm && x[i] == y[j] {
				i++
				j++
			}
			v[off+k] = i
			if i >= n && j >= mm {
				return backtrack(trace, x, y, d)
			}
		}
	}
	return nil
}

// backtrack walks the saved rounds back from (len(x), len(y)) and returns
// the matched pairs in order.
func backtrack(trace [][]int, x, y []int, dEnd int) [][2]int {
	var out [][2]int
	i, j := len(x), len(y)
	for d := dEnd; d > 0; d-- {
		snap := trace[d] // v before round d, diagonals -d-1..d+1
		at := func(k int) int { return snap[k+d+1] }
		k := i - j
		var prevK int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevI := at(prevK)
		prevJ := prevI - prevK
		// The snake of round d: matches from after the edit to (i, j).
		startI, startJ := prevI, prevJ
		if prevK == k+1 {
			startJ++ // the insertion moved down one
		} else {
			startI++ // the deletion moved right one
		}
		for i > startI && j > startJ {
			i--
			j--
			out = append(out, [2]int{i, j})
		}
		i, j = prevI, prevJ
	}
	// Round 0's snake: the common prefix (none here, trimmed before).
	for i > 0 && j > 0 {
		i--
		j--
		out = append(out, [2]int{i, j})
	}
	for l, r := 0, len(out)-1; l < r; l, r = l+1, r-1 {
		out[l], out[r] = out[r], out[l]
	}
	return out
}
