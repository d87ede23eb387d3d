package idebridge

import (
	"strings"
	"testing"
)

func TestExtensionListed(t *testing.T) {
	tests := []struct {
		out  string
		want bool
	}{
		{"anthropic.claude-code\n", true},
		{"golang.go\r\nanthropic.claude-code\r\n", true},
		{"Anthropic.Claude-Code@2.0.1", true},
		{"  anthropic.claude-code  \n", true},
		{"anthropic.claude-code-nightly\n", false},
		{"xanthropic.claude-code\n", false},
		{"", false},
		{"@anthropic.claude-code", false},
	}
	for _, tt := range tests {
		if got := extensionListed(tt.out, ExtensionID); got != tt.want {
			t.Errorf("extensionListed(%q) = %v", tt.out, got)
		}
	}
}

// FuzzExtensionListed checks the reading of `code --list-extensions`
// against a plain model: some line, trimmed and cut at its first "@"
// (after the first character), equals the id without regard to case.
func FuzzExtensionListed(f *testing.F) {
	f.Fuzz(func(t *testing.T, output, id string) {
		if strings.TrimSpace(id) != id || id == "" || strings.ContainsAny(id, "@\n") {
			return
		}
		want := false
		for _, line := range strings.Split(output, "\n") {
			line = strings.TrimSpace(line)
			if at := strings.Index(line, "@"); at > 0 {
				line = line[:at]
			}
			if strings.EqualFold(line, id) {
				want = true
			}
		}
		if got := extensionListed(output, id); got != want {
			t.Fatalf("extensionListed(%q, %q) = %v", output, id, got)
		}
	})
}
