package lsp

import (
	"fmt"
	"testing"
)

// The Manager's note log, which Drainers read, is bounded, and a reader
// gets each note once, oldest first, and those after its last look only.
func TestNoteLog(t *testing.T) {
	var l noteLog
	var got []string
	seq := l.since(0, func(k, n string) { got = append(got, n) })
	if seq != 0 || got != nil {
		t.Fatalf("empty log: %d %v", seq, got)
	}
	for i := range 3 {
		l.add(fmt.Sprint("k", i), fmt.Sprint("n", i))
	}
	seq = l.since(1, func(k, n string) { got = append(got, k+"="+n) })
	if seq != 3 || fmt.Sprint(got) != "[k1=n1 k2=n2]" {
		t.Errorf("since 1: %d %v", seq, got)
	}
	for i := range 3 * maxLoggedNotes {
		l.add("k", fmt.Sprint(i))
	}
	if len(l.ring) != maxLoggedNotes {
		t.Errorf("%d notes kept, want at most %d", len(l.ring), maxLoggedNotes)
	}
	got = nil
	l.since(0, func(k, n string) { got = append(got, n) })
	if len(got) != maxLoggedNotes || got[0] != fmt.Sprint(2*maxLoggedNotes) || got[len(got)-1] != fmt.Sprint(3*maxLoggedNotes-1) {
		t.Errorf("after wrapping: %d notes, %s to %s", len(got), got[0], got[len(got)-1])
	}
}
