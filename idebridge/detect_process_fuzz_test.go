package idebridge

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParsePS checks that the processes parsePS reads from any text, written
// back in ps's own format, read the same; and that it never returns a
// negative pid or an empty name.
func FuzzParsePS(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		procs, err := parsePS(text)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, p := range procs {
			if p.PID < 0 || p.PPID < 0 || p.Name == "" || strings.TrimSpace(p.Name) != p.Name {
				t.Fatalf("parsePS(%q) returned %+v", text, p)
			}
			fmt.Fprintf(&b, "%5d %5d %s\n", p.PID, p.PPID, p.Name)
		}
		again, err := parsePS(b.String())
		if err != nil {
			t.Fatalf("parsePS of its own output %q: %v", b.String(), err)
		}
		if diff := cmp.Diff(procs, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

// FuzzParseTasklist checks the same round trip through tasklist's CSV.
func FuzzParseTasklist(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		procs, err := parseTasklist(text)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		for _, p := range procs {
			if p.PID < 0 || p.Name == "" || strings.TrimSpace(p.Name) != p.Name {
				t.Fatalf("parseTasklist(%q) returned %+v", text, p)
			}
			if strings.Contains(p.Name, "\r") {
				return // CSV readers turn CR LF inside a quoted field into LF
			}
			w.Write([]string{p.Name, strconv.Itoa(p.PID), "Console", "1", "1 K"})
		}
		w.Flush()
		again, err := parseTasklist(buf.String())
		if err != nil {
			t.Fatalf("parseTasklist of its own output %q: %v", buf.String(), err)
		}
		if diff := cmp.Diff(procs, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s\ncsv %q", diff, buf.String())
		}
	})
}
