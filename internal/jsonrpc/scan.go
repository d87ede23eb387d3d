package jsonrpc

import (
	"bytes"
	"encoding/json"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// A single-pass decoder for the message envelope. encoding/json reads a
// message twice (a validity scan, then the decode) and once more for every
// RawMessage member; the client decodes every message an IDE sends, so Decode
// first tries this scanner, which validates exactly as encoding/json does and
// copies the raw members once. Anything unusual (escaped or case-folded
// keys, a duplicated member, a member of an unexpected type, invalid JSON)
// goes to DecodeStd, so that both agree on every input (FuzzJSONRPCDecode
// checks it).

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(d []byte, i int) int {
	for i < len(d) && isSpace(d[i]) {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at d[i], or -1 when
// it is not valid JSON.
func skipValue(d []byte, i, depth int) int {
	if i >= len(d) {
		return -1
	}
	switch c := d[i]; {
	case c == '{':
		if depth >= maxDepth {
			return -1
		}
		i = skipSpace(d, i+1)
		if i < len(d) && d[i] == '}' {
			return i + 1
		}
		for {
			if i >= len(d) || d[i] != '"' {
				return -1
			}
			if i = skipString(d, i); i < 0 {
				return -1
			}
			i = skipSpace(d, i)
			if i >= len(d) || d[i] != ':' {
				return -1
			}
			if i = skipValue(d, skipSpace(d, i+1), depth+1); i < 0 {
				return -1
			}
			i = skipSpace(d, i)
			if i >= len(d) {
				return -1
			}
			if d[i] == '}' {
				return i + 1
			}
			if d[i] != ',' {
				return -1
			}
			i = skipSpace(d, i+1)
		}
	case c == '[':
		if depth >= maxDepth {
			return -1
		}
		i = skipSpace(d, i+1)
		if i < len(d) && d[i] == ']' {
			return i + 1
		}
		for {
			if i = skipValue(d, i, depth+1); i < 0 {
				return -1
			}
			i = skipSpace(d, i)
			if i >= len(d) {
				return -1
			}
			if d[i] == ']' {
				return i + 1
			}
			if d[i] != ',' {
				return -1
			}
			i = skipSpace(d, i+1)
		}
	case c == '"':
		return skipString(d, i)
	case c == 't':
		return skipLiteral(d, i, "true")
	case c == 'f':
		return skipLiteral(d, i, "false")
	case c == 'n':
		return skipLiteral(d, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(d, i)
	}
	return -1
}

func skipLiteral(d []byte, i int, lit string) int {
	if len(d)-i < len(lit) || string(d[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// skipString returns the end of the string literal at d[i] (a '"').
func skipString(d []byte, i int) int {
	i++
	for i < len(d) {
		c := d[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		switch {
		case c == '"':
			return i + 1
		case c == '\\':
			if i+1 >= len(d) {
				return -1
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(d) {
					return -1
				}
				for _, h := range d[i+2 : i+6] {
					if !isHex(h) {
						return -1
					}
				}
				i += 6
			default:
				return -1
			}
		case c < 0x20:
			return -1
		default:
			i++
		}
	}
	return -1
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func skipNumber(d []byte, i int) int {
	if d[i] == '-' {
		i++
	}
	if i >= len(d) {
		return -1
	}
	switch {
	case d[i] == '0':
		i++
	case d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		return -1
	}
	if i < len(d) && d[i] == '.' {
		i++
		start := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == start {
			return -1
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		start := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == start {
			return -1
		}
	}
	return i
}

// The envelope members, as bits.
const (
	memJSONRPC = 1 << iota
	memID
	memMethod
	memParams
	memResult
	memError
)

var memberNames = [...]struct {
	name string
	bit  int
}{
	{"jsonrpc", memJSONRPC}, {"id", memID}, {"method", memMethod},
	{"params", memParams}, {"result", memResult}, {"error", memError},
}

// decodeFast decodes data when it is an ordinary message; ok is false when
// DecodeStd must decide.
func decodeFast(data []byte) (m *Message, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	var (
		seen                    int
		spans                   [6][2]int // value spans by member index
		jsonrpcLit, methodLit   []byte
		errorRaw                []byte
		rawTotal                int
		idIdx, paramsIdx, resIx = 1, 3, 4
	)
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		i++
	} else {
		for {
			if i >= len(data) || data[i] != '"' {
				return nil, false
			}
			kEnd := skipString(data, i)
			if kEnd < 0 {
				return nil, false
			}
			key := data[i+1 : kEnd-1]
			i = skipSpace(data, kEnd)
			if i >= len(data) || data[i] != ':' {
				return nil, false
			}
			vStart := skipSpace(data, i+1)
			vEnd := skipValue(data, vStart, 1)
			if vEnd < 0 {
				return nil, false
			}
			member := -1
			for n, mn := range memberNames {
				if string(key) == mn.name {
					member = n
					break
				}
			}
			if member < 0 {
				// An unknown member is skipped, unless encoding/json would
				// match it to a field by folding case or escapes.
				if bytes.IndexByte(key, '\\') >= 0 || !isASCII(key) {
					return nil, false
				}
				for _, mn := range memberNames {
					if bytes.EqualFold(key, []byte(mn.name)) {
						return nil, false
					}
				}
			} else {
				bit := memberNames[member].bit
				if seen&bit != 0 {
					return nil, false // duplicated member: let encoding/json merge
				}
				seen |= bit
				v := data[vStart:vEnd]
				switch member {
				case 0: // jsonrpc
					if v[0] != '"' && v[0] != 'n' {
						return nil, false
					}
					jsonrpcLit = v
				case 2: // method
					if v[0] != '"' && v[0] != 'n' {
						return nil, false
					}
					methodLit = v
				case 5: // error
					if v[0] != '{' && v[0] != 'n' {
						return nil, false
					}
					errorRaw = v
				default:
					spans[member] = [2]int{vStart, vEnd}
					rawTotal += vEnd - vStart
				}
			}
			i = skipSpace(data, vEnd)
			if i >= len(data) {
				return nil, false
			}
			if data[i] == '}' {
				i++
				break
			}
			if data[i] != ',' {
				return nil, false
			}
			i = skipSpace(data, i+1)
		}
	}
	if skipSpace(data, i) != len(data) {
		return nil, false
	}

	m = &Message{}
	var ok1, ok2 bool
	if m.JSONRPC, ok1 = decodeString(jsonrpcLit); !ok1 {
		return nil, false
	}
	if m.Method, ok2 = decodeString(methodLit); !ok2 {
		return nil, false
	}
	if rawTotal > 0 {
		buf := make([]byte, 0, rawTotal)
		for _, n := range [...]int{idIdx, paramsIdx, resIx} {
			s := spans[n]
			if s[1] == 0 {
				continue
			}
			start := len(buf)
			buf = append(buf, data[s[0]:s[1]]...)
			raw := json.RawMessage(buf[start:len(buf):len(buf)])
			switch n {
			case idIdx:
				m.ID = raw
			case paramsIdx:
				m.Params = raw
			case resIx:
				m.Result = raw
			}
		}
	}
	if errorRaw != nil && errorRaw[0] == '{' {
		var e Error
		if json.Unmarshal(errorRaw, &e) != nil {
			return nil, false
		}
		m.Error = &e
	}
	return m, true
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// decodeString decodes a JSON string literal (or null, or nothing, as "").
func decodeString(lit []byte) (string, bool) {
	if len(lit) == 0 || lit[0] == 'n' {
		return "", true
	}
	return UnquoteValid(lit), true // validated by the scan
}

// Valid reports whether data is one valid JSON value (with only whitespace
// around it), exactly as json.Valid does, in one pass.
func Valid(data []byte) bool {
	end := skipValue(data, skipSpace(data, 0), 0)
	return end >= 0 && skipSpace(data, end) == len(data)
}

// ScanObject calls fn for each member of the JSON object data, in order,
// with the key as it appears between its quotes (escapes undecoded) and the
// raw value. It reports false when data is not one valid JSON object (with
// only whitespace around it), or when fn returns false. The validation is
// exactly encoding/json's, done in the same single pass: fn may see members
// of an input that turns out to be invalid after them (ScanObject then
// reports false).
func ScanObject(data []byte, fn func(key, value []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		kEnd := skipString(data, i)
		if kEnd < 0 {
			return false
		}
		colon := skipSpace(data, kEnd)
		if colon >= len(data) || data[colon] != ':' {
			return false
		}
		vStart := skipSpace(data, colon+1)
		vEnd := skipValue(data, vStart, 1)
		if vEnd < 0 {
			return false
		}
		if !fn(data[i+1:kEnd-1], data[vStart:vEnd]) {
			return false
		}
		i = skipSpace(data, vEnd)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case '}':
			return skipSpace(data, i+1) == len(data)
		case ',':
			i = skipSpace(data, i+1)
		default:
			return false
		}
	}
}

// EachMember is ScanObject for data already known to be a valid JSON
// object (a value a validating scan returned): it does not validate again.
func EachMember(data []byte, fn func(key, value []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return true
	}
	for i < len(data) {
		kEnd := skipString(data, i)
		if kEnd < 0 {
			return false
		}
		key := data[i+1 : kEnd-1]
		vStart := skipSpace(data, skipSpace(data, kEnd)+1)
		vEnd := skipValue(data, vStart, 1)
		if vEnd < 0 {
			return false
		}
		if !fn(key, data[vStart:vEnd]) {
			return false
		}
		i = skipSpace(data, vEnd)
		if i >= len(data) || data[i] == '}' {
			return true
		}
		i = skipSpace(data, i+1)
	}
	return false
}

// ScanArray calls fn for each element of the JSON array data. It reports
// false when data is not one valid JSON array, or when fn returns false.
func ScanArray(data []byte, fn func(elem []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' || !Valid(data) {
		return false
	}
	return EachElement(data, fn)
}

// EachElement is ScanArray for data already known to be a valid JSON
// array: it does not validate again.
func EachElement(data []byte, fn func(elem []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return true
	}
	for i < len(data) {
		vEnd := skipValue(data, i, 1)
		if vEnd < 0 {
			return false
		}
		if !fn(data[i:vEnd]) {
			return false
		}
		i = skipSpace(data, vEnd)
		if i >= len(data) || data[i] == ']' {
			return true
		}
		i = skipSpace(data, i+1)
	}
	return false
}

// UnquoteString decodes a JSON string literal (quotes included) exactly as
// encoding/json does: escapes, surrogate pairs, and U+FFFD for invalid
// UTF-8 and lone surrogates. It reports false for anything that is not a
// valid string literal.
func UnquoteString(lit []byte) (string, bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' || skipString(lit, 0) != len(lit) {
		return "", false
	}
	return UnquoteValid(lit), true
}

// UnquoteValid is UnquoteString for a literal already known to be valid (a
// value a validating scan returned): it does not validate again.
func UnquoteValid(lit []byte) string {
	s := lit[1 : len(lit)-1]
	r := 0
	for r < len(s) {
		c := s[r]
		if c == '\\' {
			break
		}
		if c < utf8.RuneSelf {
			r++
			continue
		}
		rr, size := utf8.DecodeRune(s[r:])
		if rr == utf8.RuneError && size == 1 {
			break
		}
		r += size
	}
	if r == len(s) {
		return string(s)
	}
	b := make([]byte, r, len(s)+utf8.UTFMax)
	copy(b, s[:r])
	for r < len(s) {
		c := s[r]
		switch {
		case c == '\\':
			r++
			switch s[r] {
			case '"', '\\', '/':
				b = append(b, s[r])
				r++
			case 'b':
				b = append(b, '\b')
				r++
			case 'f':
				b = append(b, '\f')
				r++
			case 'n':
				b = append(b, '\n')
				r++
			case 'r':
				b = append(b, '\r')
				r++
			case 't':
				b = append(b, '\t')
				r++
			case 'u':
				rr := getu4(s[r+1:])
				r += 5
				if utf16.IsSurrogate(rr) {
					if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, getu4(s[r+2:])); dec != unicode.ReplacementChar {
							r += 6
							b = utf8.AppendRune(b, dec)
							break
						}
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = utf8.AppendRune(b, rr)
		}
	}
	return string(b)
}

// getu4 decodes four hex digits (already validated by skipString).
func getu4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
