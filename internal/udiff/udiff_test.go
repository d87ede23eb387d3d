package udiff_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/idebridge/idebridge/internal/udiff"
)

// The expected outputs are what GNU diff -u --label old --label new prints.
func TestUnifiedDiffGolden(t *testing.T) {
	tests := []struct{ old, new, want string }{
		{"a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n", "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nK\nl\nm\n",
			"--- old\n+++ new\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n d\n e\n@@ -8,5 +8,6 @@\n h\n i\n j\n-k\n+K\n l\n+m\n"},
		{"x\ny", "x\ny\n", "--- old\n+++ new\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+y\n"},
		{"", "new\nfile\n", "--- old\n+++ new\n@@ -0,0 +1,2 @@\n+new\n+file\n"},
		{"new\nfile\n", "", "--- old\n+++ new\n@@ -1,2 +0,0 @@\n-new\n-file\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n", "0\n1\n2\n3\n4\n5\n6\n7\n8\n",
			"--- old\n+++ new\n@@ -1,3 +1,4 @@\n+0\n 1\n 2\n 3\n@@ -6,4 +7,3 @@\n 6\n 7\n 8\n-9\n"},
		{"same\n", "same\n", ""},
	}
	for _, tt := range tests {
		if got := udiff.Unified("old", "new", tt.old, tt.new); got != tt.want {
			t.Errorf("UnifiedDiff(%q, %q) =\n%s\nwant\n%s", tt.old, tt.new, got, tt.want)
		}
	}
}

// applyUnifiedDiff is an independent patch(1) for one file: it checks every
// context and deleted line against old.
func applyUnifiedDiff(old, diff string) (string, error) {
	if diff == "" {
		return old, nil
	}
	src := strings.SplitAfter(old, "\n")
	if src[len(src)-1] == "" {
		src = src[:len(src)-1]
	}
	lines := strings.SplitAfter(diff, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return "", fmt.Errorf("bad header")
	}
	var out []string
	pos := 0 // next line of src to copy
	i := 2
	for i < len(lines) && lines[i] != "" {
		var as, al, bs, bl int
		h := strings.TrimSuffix(lines[i], "\n")
		if _, err := fmt.Sscanf(h, "@@ -%s +%s @@", new(string), new(string)); err != nil {
			return "", fmt.Errorf("bad hunk header %q", h)
		}
		f := strings.Fields(h)
		parse := func(s string) (int, int) {
			start, n, ok := strings.Cut(s[1:], ",")
			a, _ := strconv.Atoi(start)
			c := 1
			if ok {
				c, _ = strconv.Atoi(n)
			}
			return a, c
		}
		as, al = parse(f[1])
		bs, bl = parse(f[2])
		first := as - 1
		if al == 0 {
			first = as
		}
		if first < pos || first > len(src) {
			return "", fmt.Errorf("hunk at %d out of order", as)
		}
		out = append(out, src[pos:first]...)
		if len(out) != max(bs-1, 0) && !(bl == 0 && len(out) == bs) {
			return "", fmt.Errorf("hunk new start %d, have %d lines", bs, len(out))
		}
		pos = first
		i++
		var gotA, gotB int
		for i < len(lines) && lines[i] != "" && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			text := l[1:]
			if i+1 < len(lines) && lines[i+1] == "\\ No newline at end of file\n" {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(src) || src[pos] != text {
					return "", fmt.Errorf("line %d does not match", pos+1)
				}
				pos++
				gotA++
				if l[0] == ' ' {
					out = append(out, text)
					gotB++
				}
			case '+':
				out = append(out, text)
				gotB++
			default:
				return "", fmt.Errorf("bad line %q", l)
			}
			i++
		}
		if gotA != al || gotB != bl {
			return "", fmt.Errorf("hunk counts %d,%d, header says %d,%d", gotA, gotB, al, bl)
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, ""), nil
}

// lcs is the length of a longest common subsequence of lines: a minimal
// diff has exactly len(a)+len(b)-2*lcs changed lines.
func lcs(a, b []string) int {
	dp := make([]int, len(b)+1)
	for i := range a {
		prev := 0
		for j := range b {
			cur := dp[j+1]
			if a[i] == b[j] {
				dp[j+1] = prev + 1
			} else {
				dp[j+1] = max(dp[j+1], dp[j])
			}
			prev = cur
		}
	}
	return dp[len(b)]
}

func lines(s string) []string {
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

func randomText(r *rand.Rand, n int) string {
	var sb strings.Builder
	for range n {
		sb.WriteString(string(rune('a' + r.IntN(4))))
		if r.IntN(10) > 0 {
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

func TestUnifiedDiffAppliesAndIsMinimal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		a, b := randomText(r, r.IntN(30)), randomText(r, r.IntN(30))
		d := udiff.Unified("a", "b", a, b)
		got, err := applyUnifiedDiff(a, d)
		if err != nil || got != b {
			t.Fatalf("case %d: applying\n%s\nto %q: %q, %v; want %q", i, d, a, got, err, b)
		}
		if (d == "") != (a == b) {
			t.Fatalf("case %d: diff %q for %q and %q", i, d, a, b)
		}
		if d == "" {
			continue
		}
		changed := 0
		for _, l := range strings.Split(d, "\n")[2:] {
			if strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-") {
				changed++
			}
		}
		if want := len(lines(a)) + len(lines(b)) - 2*lcs(lines(a), lines(b)); changed != want {
			t.Fatalf("case %d: %d changed lines, minimal is %d:\n%s", i, changed, want, d)
		}
	}
}

func TestUnifiedDiffLargeFallback(t *testing.T) {
	// More differences than the edit-distance bound: still a correct diff.
	var a, b strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&a, "old %d\n", i)
		fmt.Fprintf(&b, "new %d\n", i)
	}
	d := udiff.Unified("a", "b", "head\n"+a.String()+"tail\n", "head\n"+b.String()+"tail\n")
	got, err := applyUnifiedDiff("head\n"+a.String()+"tail\n", d)
	if err != nil || got != "head\n"+b.String()+"tail\n" {
		t.Fatalf("fallback diff does not apply: %v", err)
	}
}
