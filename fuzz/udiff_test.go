package fuzz

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/idebridge/idebridge/idebridge/ideserver"
)

// FuzzUnifiedDiff checks the diff `ide serve --diff prompt` shows: applying
// it to the old text with an independent patcher gives exactly the new
// text, every hunk's counts match its header, and the diff is empty exactly
// when the texts are equal.
func FuzzUnifiedDiff(f *testing.F) {
	f.Fuzz(func(t *testing.T, oldText, newText string) {
		d := ideserver.UnifiedDiff("a/f", "b/f", oldText, newText)
		if (d == "") != (oldText == newText) {
			t.Fatalf("diff %q for %q -> %q", d, oldText, newText)
		}
		got, err := applyUnifiedDiff(oldText, d)
		if err != nil {
			t.Fatalf("diff does not apply: %v\n%s", err, d)
		}
		if got != newText {
			t.Fatalf("patched %q, want %q\ndiff:\n%s", got, newText, d)
		}
	})
}

// applyUnifiedDiff is patch(1) for one file, strict: every context and
// deleted line must match old, hunks must be in order, and counts must
// agree with the headers.
func applyUnifiedDiff(old, diff string) (string, error) {
	if diff == "" {
		return old, nil
	}
	src := splitAfterLines(old)
	lines := splitAfterLines(diff)
	if len(lines) < 3 || lines[0] != "--- a/f\n" || lines[1] != "+++ b/f\n" {
		return "", fmt.Errorf("bad header")
	}
	var out []string
	pos := 0
	for i := 2; i < len(lines); {
		as, al, bs, bl, err := parseHunkHeader(lines[i])
		if err != nil {
			return "", err
		}
		first := as - 1
		if al == 0 {
			first = as // an empty old range names the line before it
		}
		if first < pos || first > len(src) {
			return "", fmt.Errorf("hunk %q out of order", lines[i])
		}
		out = append(out, src[pos:first]...)
		if wantStart := bs - 1; bl == 0 {
			wantStart = bs
			if len(out) != wantStart {
				return "", fmt.Errorf("hunk %q: new text has %d lines before it", lines[i], len(out))
			}
		} else if len(out) != wantStart {
			return "", fmt.Errorf("hunk %q: new text has %d lines before it", lines[i], len(out))
		}
		pos = first
		i++
		var gotA, gotB int
		for i < len(lines) && !strings.HasPrefix(lines[i], "@@ ") {
			l := lines[i]
			if len(l) < 2 || !strings.HasSuffix(l, "\n") {
				return "", fmt.Errorf("bad line %q", l)
			}
			text := l[1:]
			if i+1 < len(lines) && lines[i+1] == "\\ No newline at end of file\n" {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(src) || src[pos] != text {
					return "", fmt.Errorf("line %d: %q does not match %q", pos+1, l, src[min(pos, len(src)-1)])
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
			return "", fmt.Errorf("hunk has %d,%d lines, header says %d,%d", gotA, gotB, al, bl)
		}
	}
	return strings.Join(append(out, src[pos:]...), ""), nil
}

func splitAfterLines(s string) []string {
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

// parseHunkHeader reads "@@ -a[,n] +b[,m] @@\n".
func parseHunkHeader(h string) (as, al, bs, bl int, err error) {
	f := strings.Fields(h)
	if len(f) != 4 || f[0] != "@@" || f[3] != "@@" || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, 0, 0, 0, fmt.Errorf("bad hunk header %q", h)
	}
	rng := func(s string) (int, int, error) {
		start, n, ok := strings.Cut(s[1:], ",")
		a, err := strconv.Atoi(start)
		if err != nil {
			return 0, 0, err
		}
		c := 1
		if ok {
			if c, err = strconv.Atoi(n); err != nil {
				return 0, 0, err
			}
		}
		return a, c, nil
	}
	if as, al, err = rng(f[1]); err != nil {
		return
	}
	bs, bl, err = rng(f[2])
	return
}
