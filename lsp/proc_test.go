package lsp

import (
	"strings"
	"testing"
)

func TestTailKeepsTheEnd(t *testing.T) {
	tl := newTail(16)
	tl.Write([]byte("first line\n"))
	if got := tl.String(); got != "first line" {
		t.Errorf("short tail %q", got)
	}
	tl.Write([]byte("second\nthird line\n"))
	if got := tl.String(); got != "...third line" {
		t.Errorf("cut tail %q, want it to start at a line", got)
	}
	tl.Write([]byte(strings.Repeat("x", 40)))
	if got := tl.String(); got != "..."+strings.Repeat("x", 16) {
		t.Errorf("oversized write %q", got)
	}
}
