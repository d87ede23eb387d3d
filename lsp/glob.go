package lsp

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// LSP glob patterns (the globPattern of a FileSystemWatcher):
//
//	*       zero or more characters within a path segment
//	?       one character within a path segment
//	**      any number of whole path segments, including none
//	{a,b}   either alternative (alternatives may hold globs, and nest)
//	[a-z]   one character of a range within a segment; [!a-z] negates
//
// A pattern matches a path given with forward slashes. An unclosed "[" or
// "{" is taken literally, as editors do.

// maxGlobAlternatives bounds the patterns a glob expands to ({a,b}{c,d}
// is four), so that a hostile pattern costs bounded memory.
const maxGlobAlternatives = 256

// maxGlobLen bounds a pattern's length in bytes.
const maxGlobLen = 4096

var errGlobTooComplex = errors.New("glob pattern too complex")

// glob is a compiled pattern: one segment list per brace alternative.
type glob struct {
	alts [][]globSeg
}

// globSeg is one path segment of a pattern; doubleStar matches any
// number of segments.
type globSeg struct {
	doubleStar bool
	toks       []globTok
}

type globTokKind uint8

const (
	tokLit globTokKind = iota
	tokStar
	tokAny // ?
	tokClass
)

type globTok struct {
	kind   globTokKind
	r      rune        // tokLit
	negate bool        // tokClass
	ranges []runeRange // tokClass
}

type runeRange struct{ lo, hi rune }

// compileGlob compiles an LSP glob pattern.
func compileGlob(pattern string) (*glob, error) {
	if len(pattern) > maxGlobLen {
		return nil, errGlobTooComplex
	}
	alts, err := expandBraces(pattern, 0)
	if err != nil {
		return nil, err
	}
	g := &glob{}
	for _, a := range alts {
		var segs []globSeg
		for _, part := range strings.Split(a, "/") {
			if part == "**" {
				// Consecutive ** are one.
				if n := len(segs); n > 0 && segs[n-1].doubleStar {
					continue
				}
				segs = append(segs, globSeg{doubleStar: true})
				continue
			}
			segs = append(segs, globSeg{toks: parseSegment(part)})
		}
		g.alts = append(g.alts, segs)
	}
	return g, nil
}

// expandBraces expands the first top-level brace group of s, and then the
// rest, into brace-free patterns.
func expandBraces(s string, depth int) ([]string, error) {
	if depth > 16 {
		return nil, errGlobTooComplex
	}
	open := -1
	for i := 0; i < len(s); i++ {
		if s[i] == '[' {
			if j := classEnd(s, i); j > 0 {
				i = j
				continue
			}
		}
		if s[i] == '{' {
			open = i
			break
		}
	}
	if open < 0 {
		return []string{s}, nil
	}
	// Find the matching close and the top-level commas.
	level, close := 0, -1
	commas := []int{}
	for i := open; i < len(s) && close < 0; i++ {
		switch s[i] {
		case '[':
			if j := classEnd(s, i); j > 0 {
				i = j
			}
		case '{':
			level++
		case '}':
			level--
			if level == 0 {
				close = i
			}
		case ',':
			if level == 1 {
				commas = append(commas, i)
			}
		}
	}
	if close < 0 {
		// Unclosed: the brace is a literal character; expand the rest.
		rest, err := expandBraces(s[open+1:], depth)
		if err != nil {
			return nil, err
		}
		out := make([]string, len(rest))
		for i, r := range rest {
			out[i] = s[:open+1] + r
		}
		return out, nil
	}
	var choices []string
	start := open + 1
	for _, c := range append(commas, close) {
		inner, err := expandBraces(s[start:c], depth+1)
		if err != nil {
			return nil, err
		}
		choices = append(choices, inner...)
		start = c + 1
	}
	tails, err := expandBraces(s[close+1:], depth)
	if err != nil {
		return nil, err
	}
	if len(choices)*len(tails) > maxGlobAlternatives {
		return nil, errGlobTooComplex
	}
	out := make([]string, 0, len(choices)*len(tails))
	for _, c := range choices {
		for _, t := range tails {
			out = append(out, s[:open]+c+t)
		}
	}
	return out, nil
}

// classEnd returns the index of the "]" closing the class that opens at
// s[i] == '[', or -1 when it does not close within the segment.
func classEnd(s string, i int) int {
	j := i + 1
	if j < len(s) && s[j] == '!' {
		j++
	}
	if j < len(s) && s[j] == ']' {
		j++ // a leading ] is a member
	}
	for ; j < len(s); j++ {
		switch s[j] {
		case ']':
			return j
		case '/':
			return -1
		}
	}
	return -1
}

// parseSegment parses one brace-free, slash-free segment.
func parseSegment(s string) []globTok {
	var toks []globTok
	for i := 0; i < len(s); {
		switch s[i] {
		case '*':
			if n := len(toks); n == 0 || toks[n-1].kind != tokStar {
				toks = append(toks, globTok{kind: tokStar})
			}
			i++
			continue
		case '?':
			toks = append(toks, globTok{kind: tokAny})
			i++
			continue
		case '[':
			if j := classEnd(s, i); j > 0 {
				toks = append(toks, parseClass(s[i:j+1]))
				i = j + 1
				continue
			}
		}
		r, size := decodeRune(s[i:])
		toks = append(toks, globTok{kind: tokLit, r: r})
		i += size
	}
	return toks
}

// parseClass parses "[...]" (closed).
func parseClass(s string) globTok {
	t := globTok{kind: tokClass}
	body := s[1 : len(s)-1]
	if strings.HasPrefix(body, "!") {
		t.negate = true
		body = body[1:]
	}
	rs := runes(body)
	for i := 0; i < len(rs); i++ {
		if i+2 < len(rs) && rs[i+1] == '-' {
			lo, hi := rs[i], rs[i+2]
			if lo > hi {
				lo, hi = hi, lo
			}
			t.ranges = append(t.ranges, runeRange{lo, hi})
			i += 2
			continue
		}
		t.ranges = append(t.ranges, runeRange{rs[i], rs[i]})
	}
	return t
}

// match reports whether path (forward slashes) matches the pattern.
func (g *glob) match(path string) bool {
	segs := strings.Split(path, "/")
	for _, a := range g.alts {
		if matchSegs(a, segs) {
			return true
		}
	}
	return false
}

// matchSegs matches pattern segments against path segments. A ** tries
// each number of segments it could take; memoizing the failures keeps it
// polynomial.
func matchSegs(pat []globSeg, path []string) bool {
	var failed map[[2]int]bool
	var rec func(pi, si int) bool
	rec = func(pi, si int) bool {
		for pi < len(pat) {
			p := pat[pi]
			if p.doubleStar {
				if pi == len(pat)-1 {
					return true // the rest, whatever it is
				}
				key := [2]int{pi, si}
				if failed[key] {
					return false
				}
				for k := si; k <= len(path); k++ {
					if rec(pi+1, k) {
						return true
					}
				}
				if failed == nil {
					failed = map[[2]int]bool{}
				}
				failed[key] = true
				return false
			}
			if si >= len(path) || !matchSegment(p.toks, path[si]) {
				return false
			}
			pi++
			si++
		}
		return si == len(path)
	}
	return rec(0, 0)
}

// matchSegment matches one segment with *, ? and classes: the classic
// single-star backtracking, linear in practice.
func matchSegment(toks []globTok, s string) bool {
	rs := runes(s)
	ti, ri := 0, 0
	starT, starR := -1, 0
	for ri < len(rs) {
		if ti < len(toks) {
			t := toks[ti]
			switch t.kind {
			case tokStar:
				starT, starR = ti, ri
				ti++
				continue
			case tokAny:
				ti++
				ri++
				continue
			case tokLit:
				if t.r == rs[ri] {
					ti++
					ri++
					continue
				}
			case tokClass:
				if t.classMatch(rs[ri]) {
					ti++
					ri++
					continue
				}
			}
		}
		if starT < 0 {
			return false
		}
		starR++
		ti, ri = starT+1, starR
	}
	for ti < len(toks) && toks[ti].kind == tokStar {
		ti++
	}
	return ti == len(toks)
}

func (t *globTok) classMatch(r rune) bool {
	in := false
	for _, rr := range t.ranges {
		if r >= rr.lo && r <= rr.hi {
			in = true
			break
		}
	}
	return in != t.negate
}

// decodeRune decodes the first character of s. A byte that is not valid
// UTF-8 (file names on Unix may hold any byte) becomes a value of its own
// beyond Unicode, so that two different invalid bytes never match each
// other as U+FFFD would.
func decodeRune(s string) (rune, int) {
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size <= 1 && len(s) > 0 {
		return utf8.MaxRune + 1 + rune(s[0]), 1
	}
	return r, size
}

// runes splits s into characters as decodeRune does.
func runes(s string) []rune {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		r, size := decodeRune(s[i:])
		out = append(out, r)
		i += size
	}
	return out
}
