package ideserver

import (
	"strconv"
	"unicode/utf8"
)

// maxQuoted bounds how much of a client's input an error text quotes: a
// name or id of megabytes is shown by its start and its size, so that an
// answer never grows with the input.
const maxQuoted = 200

// clip returns s whole when it is at most n bytes, else its first n bytes
// (cut on a rune boundary) followed by the total size.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "... (" + strconv.Itoa(len(s)) + " bytes)"
}
