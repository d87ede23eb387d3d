package ideserver

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/idebridge/idebridge/internal/jsonrpc"
)

// maxString bounds a string of a client's message that no legitimate
// message makes long: a member name anywhere, and every string outside a
// tool call's arguments (the method, the id, the tool's name, _meta...).
// A longer one in a line read by ServeStream, or a Streamable HTTP body,
// is never held whole: the pass over the message (lineScanner) keeps its
// start and size, and the message is refused naming it.
const maxString = 64 << 10

// maxScanFrames bounds the open containers whose members lineScanner
// tells apart; deeper ones are only counted.
const maxScanFrames = 16

// overlong records a string a client sent that was longer than it may be
// where it stood, and was dropped from the line while it was read.
type overlong struct {
	// where names the place: "params.name", "params.arguments.file"; for
	// a member name, the object's place ("params.arguments").
	where string
	// key: the string is a member name.
	key bool
	// inArgs: the string is inside a tool call's arguments; arg is then
	// the argument's name when the string is its value and it broke the
	// argument's maxLength (limit is then that maxLength, in characters).
	inArgs bool
	arg    string
	start  string // its start, decoded and clipped
	size   int64  // its length in bytes, between the quotes
	limit  int    // the bound it broke
}

// String says what was sent and what the bound is, in a bounded text.
func (o overlong) String() string {
	quoted := strconv.Quote(o.start) + "... (" + strconv.FormatInt(o.size, 10) + " bytes)"
	switch {
	case o.key:
		return "a member name in " + o.where + " is " + quoted + ": longer than the " + strconv.Itoa(o.limit) + " bytes a member name may have"
	case o.arg != "":
		return "the argument " + o.arg + " is " + quoted + ": longer than the " + strconv.Itoa(o.limit) + " characters the input schema allows"
	}
	return o.where + " is " + quoted + ": longer than the " + strconv.Itoa(o.limit) + " bytes a string may have there"
}

// scanFrame is one open container of the line.
type scanFrame struct {
	object    bool
	expectKey bool   // an object waiting for a member name
	key       string // the current member's name (clipped, "" when long)
}

// lineScanner makes one pass over a line too long for the read buffer, as
// its pieces arrive, and keeps all of it but the contents of strings
// longer than they may be where they stand (see maxString; a direct
// argument of a tool call may be bounded by its input schema's maxLength,
// through argLimit). Such a string is replaced by "…" (so that a method
// stays a method) and recorded; every other byte is kept as it came, so a
// line without one comes out unchanged, whatever it holds (invalid JSON
// included). What it holds beyond the bytes kept is bounded by the
// longest bound, never by the line.
type lineScanner struct {
	// bound replaces maxString when positive (for tests).
	bound int
	// argLimit returns the bound, in characters, of the string value of
	// tool's argument arg ("" when the call's name is not read yet), or 0
	// when only the message size bounds it.
	argLimit func(tool, arg string) int

	// want, when positive, is how many bytes the input is said to have
	// (an HTTP body's declared length): once more than a block is kept,
	// the kept bytes go in dst, of that capacity, and need no joining.
	want   int64
	dst    []byte
	blocks [][]byte // else the kept bytes, in blocks of scanBlock
	size   int      // bytes kept

	depth    int // open containers
	frames   []scanFrame
	inString bool
	escaped  bool

	// The string being read, when it is bounded (strLimit > 0): its raw
	// bytes (from the opening quote) until it ends or outgrows the bound.
	strLimit int
	str      []byte
	strSize  int64 // its raw bytes so far, quotes included
	strKey   bool
	elided   bool
	strBound int // strLimit as said in the record
	strWhere string
	strArg   string
	strArgs  bool

	tool string // params.name, once read
	over []overlong
}

// scanBlock is the size of the blocks the kept bytes are gathered in.
const scanBlock = 64 << 10

func (s *lineScanner) keep(b []byte) {
	if s.dst == nil && s.want > 0 && s.size+len(b) > scanBlock {
		s.dst = make([]byte, 0, max(s.want, int64(s.size+len(b))))
		for _, bl := range s.blocks {
			s.dst = append(s.dst, bl...)
		}
		s.blocks = nil
	}
	s.size += len(b)
	if s.dst != nil && s.blocks == nil && len(s.dst)+len(b) <= cap(s.dst) {
		s.dst = append(s.dst, b...)
		return
	}
	for len(b) > 0 {
		if n := len(s.blocks); n == 0 || len(s.blocks[n-1]) == cap(s.blocks[n-1]) {
			s.blocks = append(s.blocks, make([]byte, 0, scanBlock))
		}
		last := &s.blocks[len(s.blocks)-1]
		k := min(len(b), cap(*last)-len(*last))
		*last = append(*last, b[:k]...)
		b = b[k:]
	}
}

// line returns the kept bytes in one slice of their size, and lets the
// blocks go. A line that ends inside a string keeps what was read of it.
func (s *lineScanner) line() []byte {
	if s.inString && s.strLimit > 0 {
		if s.elided {
			s.keep([]byte(`"`))
		} else {
			s.keep(s.str)
		}
	}
	if s.dst != nil && s.blocks == nil {
		out := s.dst
		s.dst = nil
		return out
	}
	out := make([]byte, 0, s.size)
	out = append(out, s.dst...) // more than said came after it
	for i, b := range s.blocks {
		out = append(out, b...)
		s.blocks[i] = nil
	}
	s.blocks, s.dst = nil, nil
	return out
}

// write scans the next piece of the line.
func (s *lineScanner) write(p []byte) {
	from := 0 // p[from:i] is to be kept
	for i := 0; i < len(p); i++ {
		if s.inString {
			// Skip to the next quote or backslash.
			j := i
			if !s.escaped {
				for j < len(p) && p[j] != '"' && p[j] != '\\' {
					j++
				}
			}
			if s.strLimit > 0 {
				s.strBytes(p[i:min(j+1, len(p))])
				from = min(j+1, len(p))
			}
			if j == len(p) {
				s.flush(p, from)
				return
			}
			i = j
			switch {
			case s.escaped:
				s.escaped = false
			case p[j] == '\\':
				s.escaped = true
			default: // the closing quote
				s.inString = false
				s.endString()
			}
			continue
		}
		switch c := p[i]; c {
		case '"':
			s.keep(p[from:i])
			from = i
			s.startString()
			if s.strLimit > 0 {
				s.strBytes(p[i : i+1])
				from = i + 1
			}
		case '{', '[':
			if s.depth < maxScanFrames {
				s.frames = append(s.frames, scanFrame{object: c == '{', expectKey: c == '{'})
			}
			s.depth++
		case '}', ']':
			if s.depth > 0 {
				if s.depth <= maxScanFrames {
					s.frames = s.frames[:len(s.frames)-1]
				}
				s.depth--
			}
		case ',':
			if f := s.top(); f != nil && f.object {
				f.expectKey = true
			}
		}
	}
	s.flush(p, from)
}

func (s *lineScanner) flush(p []byte, from int) {
	if !s.inString || s.strLimit == 0 {
		s.keep(p[from:])
	}
}

// top returns the innermost container, when it is told apart.
func (s *lineScanner) top() *scanFrame {
	if s.depth == 0 || s.depth > maxScanFrames {
		return nil
	}
	return &s.frames[len(s.frames)-1]
}

// startString decides the bound of the string that starts.
func (s *lineScanner) startString() {
	s.inString, s.escaped = true, false
	s.str, s.strSize, s.elided = s.str[:0], 0, false
	s.strKey, s.strArg = false, ""
	f := s.top()
	if f != nil && f.object && f.expectKey {
		s.strKey = true
		f.expectKey = false
	}
	s.strArgs = s.depth >= 3 && s.frames[0].object && s.frames[0].key == "params" && s.frames[1].object && s.frames[1].key == "arguments"
	lim := maxString
	if s.bound > 0 {
		lim = s.bound
	}
	s.strLimit, s.strBound = lim, lim
	switch {
	case s.strKey:
		s.strWhere = s.path(s.depth - 1)
	case s.strArgs:
		s.strLimit = 0
		if s.depth == 3 && f != nil && f.object && f.key != "" && s.argLimit != nil {
			if n := s.argLimit(s.tool, f.key); n > 0 {
				// A character takes at most 12 bytes of JSON (a pair of
				// \u escapes): a longer string breaks maxLength for sure;
				// one in between is the tool's to refuse.
				s.strLimit, s.strBound, s.strArg = 12*n, n, f.key
				s.strWhere = "params.arguments." + f.key
			}
		}
	default:
		s.strWhere = s.path(min(s.depth, maxScanFrames))
	}
	if s.strWhere == "" {
		s.strWhere = "the message"
	}
}

// path names the place of the first n containers' current members
// ("params.name").
func (s *lineScanner) path(n int) string {
	var b strings.Builder
	for i := 0; i < n && i < len(s.frames); i++ {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		switch f := s.frames[i]; {
		case !f.object:
			b.WriteString("[]")
		case f.key == "":
			b.WriteString("…")
		default:
			b.WriteString(f.key)
		}
	}
	return b.String()
}

// strBytes takes the next raw bytes of a bounded string.
func (s *lineScanner) strBytes(b []byte) {
	s.strSize += int64(len(b))
	if s.elided {
		s.over[len(s.over)-1].size = s.strSize - 1 // the closing quote counted out at the end
		return
	}
	s.str = append(s.str, b...)
	if s.strSize-2 > int64(s.strLimit) { // more than the bound, even without the closing quote
		s.elided = true
		s.over = append(s.over, overlong{where: s.strWhere, key: s.strKey, inArgs: s.strArgs, arg: s.strArg,
			start: quotedStart(s.str[1:]), size: s.strSize - 1, limit: s.strBound})
		if cap(s.str) > 2*maxString {
			s.str = nil
		}
	}
}

// endString ends the string read.
func (s *lineScanner) endString() {
	if s.strLimit == 0 {
		return
	}
	if s.elided {
		s.over[len(s.over)-1].size = s.strSize - 2
		s.keep([]byte(`"…"`))
	} else {
		s.keep(s.str)
	}
	f := s.top()
	if s.strKey && f != nil {
		f.key = ""
		if !s.elided && len(s.str) <= 258 {
			if k, ok := jsonrpc.UnquoteString(s.str); ok {
				f.key = k
			}
		}
		return
	}
	if !s.elided && s.depth == 2 && s.frames[0].key == "params" && f != nil && f.object && f.key == "name" {
		if name, ok := jsonrpc.UnquoteString(s.str); ok {
			s.tool = name
		}
	}
}

// quotedStart decodes the start of raw, the bytes after a string's opening
// quote, to at most maxQuoted bytes.
func quotedStart(raw []byte) string {
	n := min(len(raw), maxQuoted)
	for cut := n; cut >= 0 && cut > n-8; cut-- {
		lit := make([]byte, 0, cut+2)
		lit = append(append(append(lit, '"'), raw[:cut]...), '"')
		if s, ok := jsonrpc.UnquoteString(lit); ok {
			for len(s) > 0 && !utf8.ValidString(s) {
				s = s[:len(s)-1]
			}
			return s
		}
	}
	return "?"
}
