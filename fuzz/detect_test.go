package fuzz

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idebridge/idebridge/idebridge"
)

// FuzzParsePS checks that the processes ParsePS reads from any text, written
// back in ps's own format, read the same; and that it never returns a
// negative pid or an empty name.
func FuzzParsePS(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		procs, err := idebridge.ParsePS(text)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, p := range procs {
			if p.PID < 0 || p.PPID < 0 || p.Name == "" || strings.TrimSpace(p.Name) != p.Name {
				t.Fatalf("ParsePS(%q) returned %+v", text, p)
			}
			fmt.Fprintf(&b, "%5d %5d %s\n", p.PID, p.PPID, p.Name)
		}
		again, err := idebridge.ParsePS(b.String())
		if err != nil {
			t.Fatalf("ParsePS of its own output %q: %v", b.String(), err)
		}
		if diff := cmp.Diff(procs, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

// FuzzParseTasklist checks the same round trip through tasklist's CSV.
func FuzzParseTasklist(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		procs, err := idebridge.ParseTasklist(text)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		for _, p := range procs {
			if p.PID < 0 || p.Name == "" || strings.TrimSpace(p.Name) != p.Name {
				t.Fatalf("ParseTasklist(%q) returned %+v", text, p)
			}
			if strings.Contains(p.Name, "\r") {
				return // CSV readers turn CR LF inside a quoted field into LF
			}
			w.Write([]string{p.Name, strconv.Itoa(p.PID), "Console", "1", "1 K"})
		}
		w.Flush()
		again, err := idebridge.ParseTasklist(buf.String())
		if err != nil {
			t.Fatalf("ParseTasklist of its own output %q: %v", buf.String(), err)
		}
		if diff := cmp.Diff(procs, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s\ncsv %q", diff, buf.String())
		}
	})
}
