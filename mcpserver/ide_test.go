package mcpserver

import (
	"strings"
	"testing"
)

// textAnchor finds texts that select exactly the lines asked for in an
// IDE that selects from the first match of startText to the end of the
// next match of endText.
func TestTextAnchor(t *testing.T) {
	lines := []string{"}", "func a() {", "}", "", "func b() {", "\treturn", "}", "}"}
	text := strings.Join(lines, "\n")
	for _, tc := range []struct {
		first, last int
		ok          bool
	}{{1, 2, true}, {4, 6, true}, {2, 2, false}, {5, 5, true}, {0, 0, true}, {3, 3, false}, {7, 7, false}} {
		start, end, ok := textAnchor(lines, tc.first, tc.last)
		if ok != tc.ok {
			t.Errorf("lines %d-%d: ok %v, want %v (%q, %q)", tc.first, tc.last, ok, tc.ok, start, end)
			continue
		}
		if !ok {
			continue
		}
		// What such an IDE would select.
		i := strings.Index(text, start)
		j := i + len(start)
		if end != "" {
			j += strings.Index(text[j:], end) + len(end)
		}
		want := strings.Join(lines[tc.first:tc.last+1], "\n")
		if text[i:j] != want {
			t.Errorf("lines %d-%d: anchors %q, %q select %q, want %q", tc.first, tc.last, start, end, text[i:j], want)
		}
	}
}
