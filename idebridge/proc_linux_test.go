package idebridge

import "testing"

func TestParseProcStatPPID(t *testing.T) {
	tests := []struct {
		stat string
		want int
		ok   bool
	}{
		{"1234 (bash) S 1000 1234 1234 34816 ...", 1000, true},
		{"1234 (my (odd) prog) R 42 1 1", 42, true},
		{"1234 (a) b) S 7 1 1", 7, true},
		{"1 (systemd) S 0 1 1", 0, true},
		{"1234 bash S 1000", 0, false},
		{"1234 (bash) S", 0, false},
		{"1234 (bash) S x", 0, false},
	}
	for _, tt := range tests {
		got, err := parseProcStatPPID([]byte(tt.stat))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseProcStatPPID(%q) = %d, %v", tt.stat, got, err)
		}
	}
}
