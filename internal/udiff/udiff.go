// Package udiff writes unified diffs (diff -u): the headless IDE shows
// them when it asks a person about a proposed edit, and package lsp
// returns them for a rename's proposed file texts.
package udiff

import (
	"strconv"
	"strings"
)

// Unified returns a unified diff, with three lines of context, that
// turns oldText into newText; its header names oldName and newName. It
// returns "" when the texts are equal. A last line without a line break is
// marked "\ No newline at end of file", as diff(1) does.
//
// The diff is minimal (Myers) for texts that differ in up to a few thousand
// lines after their common head and tail are set aside; beyond that the
// differing middle is shown as one replacement, which is still correct.
func Unified(oldName, newName, oldText, newText string) string {
	if oldText == newText {
		return ""
	}
	a, b := splitLines(oldText), splitLines(newText)
	ops := diffLines(a, b)
	var sb strings.Builder
	sb.WriteString("--- " + oldName + "\n+++ " + newName + "\n")
	writeHunks(&sb, ops, a, b, 3)
	return sb.String()
}

// splitLines splits s after each "\n"; the last line may lack one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

type opKind byte

const (
	opEqual opKind = iota
	opDelete
	opInsert
)

// op is one line of the edit script: a line of a (equal, delete) at ai, or
// of b (insert) at bi.
type op struct {
	kind   opKind
	ai, bi int
}

// maxEditDistance bounds Myers' search: its trace takes O(D²) memory.
const maxEditDistance = 2000

func diffLines(a, b []string) []op {
	// Common head and tail, which are most of a typical edit.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]op, 0, len(a)+len(b))
	for i := range pre {
		ops = append(ops, op{opEqual, i, i})
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	mid, ok := myers(am, bm, maxEditDistance)
	if !ok {
		mid = mid[:0]
		for i := range am {
			mid = append(mid, op{opDelete, i, 0})
		}
		for j := range bm {
			mid = append(mid, op{opInsert, len(am), j})
		}
	}
	for _, o := range mid {
		o.ai += pre
		o.bi += pre
		ops = append(ops, o)
	}
	for i := range suf {
		ops = append(ops, op{opEqual, len(a) - suf + i, len(b) - suf + i})
	}
	return ops
}

// myers computes a shortest edit script from a to b, or reports false when
// it needs more than maxD edits.
func myers(a, b []string, maxD int) ([]op, bool) {
	n, m := len(a), len(b)
	if n+m < maxD {
		maxD = n + m
	}
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	for d := 0; d <= maxD; d++ {
		// Keep v for k in [-d, d] as it was before this round.
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // step down: insert b[y]
			} else {
				x = v[off+k-1] + 1 // step right: delete a[x]
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, n, m, d), true
			}
		}
	}
	return nil, false
}

func backtrack(trace [][]int, n, m, dEnd int) []op {
	ops := make([]op, 0, n+m)
	x, y := n, m
	for d := dEnd; d > 0; d-- {
		prev := trace[d] // v before round d; index k+d
		get := func(k int) int { return prev[k+d] }
		k := x - y
		var pk int
		if k == -d || (k != d && get(k-1) < get(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := get(pk)
		py := px - pk
		for x > px && y > py {
			x--
			y--
			ops = append(ops, op{opEqual, x, y})
		}
		if x == px {
			y--
			ops = append(ops, op{opInsert, x, y})
		} else {
			x--
			ops = append(ops, op{opDelete, x, y})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		ops = append(ops, op{opEqual, x, y})
	}
	for i, j := 0, len(ops)-1; i < j; i, j = i+1, j-1 {
		ops[i], ops[j] = ops[j], ops[i]
	}
	return ops
}

// writeHunks prints the edit script as hunks with ctx lines of context.
func writeHunks(sb *strings.Builder, ops []op, a, b []string, ctx int) {
	for i := 0; i < len(ops); {
		// Find the next change.
		for i < len(ops) && ops[i].kind == opEqual {
			i++
		}
		if i == len(ops) {
			return
		}
		start := max(i-ctx, 0)
		// Extend while the gap to the next change is small enough to
		// share context.
		end := i
		for end < len(ops) {
			if ops[end].kind != opEqual {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == opEqual {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		writeHunk(sb, ops[start:end], a, b)
		i = end
	}
}

func writeHunk(sb *strings.Builder, h []op, a, b []string) {
	var aStart, bStart, aLen, bLen int
	aStart, bStart = h[0].ai, h[0].bi
	for _, o := range h {
		switch o.kind {
		case opEqual:
			aLen++
			bLen++
		case opDelete:
			aLen++
		case opInsert:
			bLen++
		}
	}
	sb.WriteString("@@ -" + hunkRange(aStart, aLen) + " +" + hunkRange(bStart, bLen) + " @@\n")
	for _, o := range h {
		switch o.kind {
		case opEqual:
			writeLine(sb, ' ', a[o.ai])
		case opDelete:
			writeLine(sb, '-', a[o.ai])
		case opInsert:
			writeLine(sb, '+', b[o.bi])
		}
	}
}

// hunkRange formats a hunk's start,length: 1-based, ",1" left out, and an
// empty range named by the line before it, as diff(1) does.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return strconv.Itoa(start) + ",0"
	case 1:
		return strconv.Itoa(start + 1)
	}
	return strconv.Itoa(start+1) + "," + strconv.Itoa(n)
}

func writeLine(sb *strings.Builder, prefix byte, line string) {
	sb.WriteByte(prefix)
	sb.WriteString(line)
	if !strings.HasSuffix(line, "\n") {
		sb.WriteString("\n\\ No newline at end of file\n")
	}
}
