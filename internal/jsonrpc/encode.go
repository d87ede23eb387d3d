package jsonrpc

import (
	"strconv"
	"unicode/utf8"
)

// The encoders below append JSON to a caller's buffer so that a hot path can
// build a message in a pooled buffer without reflection.

// AppendString appends s as a JSON string literal. Invalid UTF-8 is replaced
// by U+FFFD, as encoding/json does; '<', '>' and '&' are not escaped.
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but break JavaScript parsers
		// that some IDE extensions may use; escape them like encoding/json.
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendRequestHead appends the opening of a request,
// {"jsonrpc":"2.0","id":<id>,"method":<method>, leaving the caller to append
// `,"params":...}` or `}`.
func AppendRequestHead(dst []byte, id int64, method string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"method":`...)
	return AppendString(dst, method)
}

// AppendNotificationHead appends the opening of a notification,
// {"jsonrpc":"2.0","method":<method>, leaving the caller to append
// `,"params":...}` or `}`.
func AppendNotificationHead(dst []byte, method string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	return AppendString(dst, method)
}

// AppendResult appends a complete success response with the given raw id
// (as received) and raw result.
func AppendResult(dst []byte, id, result []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendError appends a complete error response with the given raw id.
func AppendError(dst []byte, id []byte, code int64, message string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, code, 10)
	dst = append(dst, `,"message":`...)
	dst = AppendString(dst, message)
	return append(dst, '}', '}')
}

// ParseIntID returns the integer value of a raw id: a JSON integer, or a JSON
// string holding only an integer (some servers echo ids as strings). It
// reports false for anything else.
func ParseIntID(raw []byte) (int64, bool) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		raw = raw[1 : len(raw)-1]
	}
	if len(raw) == 0 || len(raw) > 20 {
		return 0, false
	}
	var n int64
	neg := false
	i := 0
	if raw[0] == '-' {
		neg = true
		i = 1
		if len(raw) == 1 {
			return 0, false
		}
	}
	for ; i < len(raw); i++ {
		c := raw[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (1<<63-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	if neg {
		n = -n
	}
	return n, true
}
