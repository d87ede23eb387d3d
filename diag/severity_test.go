package diag

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSeverityJSON(t *testing.T) {
	for in, want := range map[string]Severity{`1`: 1, `2`: 2, `3`: 3, `4`: 4, `0`: 0, `null`: 0,
		`"Error"`: 1, `"error"`: 1, `"Warning"`: 2, `"Info"`: 3, `"Information"`: 3, `"Hint"`: 4, `"2"`: 2} {
		var s Severity
		if err := json.Unmarshal([]byte(in), &s); err != nil || s != want {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", in, s, err, want)
		}
	}
	for _, in := range []string{`5`, `-1`, `1.5`, `"Fatal"`, `true`, `{}`, `[]`} {
		var s Severity
		if err := json.Unmarshal([]byte(in), &s); err == nil {
			t.Errorf("Unmarshal(%s) = %v, want an error", in, s)
		}
	}
	b, _ := json.Marshal(SeverityWarning)
	if string(b) != "2" {
		t.Errorf("Marshal(SeverityWarning) = %s, want 2", b)
	}
	names := []string{SeverityError.String(), SeverityWarning.String(), SeverityInformation.String(), SeverityHint.String(), Severity(9).String()}
	if d := cmp.Diff([]string{"Error", "Warning", "Information", "Hint", "Severity(9)"}, names); d != "" {
		t.Error(d)
	}
}

func TestParseSeverityEverySpelling(t *testing.T) {
	for in, want := range map[string]Severity{
		"Error": SeverityError, "ERROR": SeverityError, " error ": SeverityError, "1": SeverityError,
		"Warning": SeverityWarning, "warn": SeverityWarning, "2": SeverityWarning,
		"Info": SeverityInformation, "Information": SeverityInformation, "informational": SeverityInformation, "3": SeverityInformation,
		"Hint": SeverityHint, "HINT": SeverityHint, "4": SeverityHint,
	} {
		if got, err := ParseSeverity(in); err != nil || got != want {
			t.Errorf("ParseSeverity(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "5", "fatal", "err"} {
		if got, err := ParseSeverity(in); err == nil {
			t.Errorf("ParseSeverity(%q) = %v, want an error", in, got)
		}
	}
	if Severity(0).Rank() != SeverityError.Rank() || Severity(9).Rank() <= SeverityHint.Rank() {
		t.Error("Rank: zero must rank as an error and an unknown value after hints")
	}
}
