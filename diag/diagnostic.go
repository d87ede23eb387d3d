package diag

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Severity is an LSP DiagnosticSeverity, 1 (error) to 4 (hint); a smaller
// number is more severe. The zero value means "not given": LSP leaves its
// meaning to the client, and everything in this module reads it as
// SeverityError, as LSP clients do (String, Mark, Rank).
type Severity int

// The LSP severities.
const (
	SeverityError       Severity = 1
	SeverityWarning     Severity = 2
	SeverityInformation Severity = 3
	SeverityHint        Severity = 4
)

// String returns the LSP name: "Error" (also for zero), "Warning",
// "Information" or "Hint"; other values print as "Severity(N)".
func (s Severity) String() string {
	switch s {
	case 0, SeverityError:
		return "Error"
	case SeverityWarning:
		return "Warning"
	case SeverityInformation:
		return "Information"
	case SeverityHint:
		return "Hint"
	}
	return "Severity(" + strconv.Itoa(int(s)) + ")"
}

// Valid reports whether s is one of the four LSP severities.
func (s Severity) Valid() bool { return s >= SeverityError && s <= SeverityHint }

// Rank orders severities for sorting, most severe first: 1 to 4 for the
// LSP severities (zero ranks as an error) and 5 for anything else.
func (s Severity) Rank() int {
	switch {
	case s == 0:
		return int(SeverityError)
	case s.Valid():
		return int(s)
	}
	return 5
}

// Mark returns the sign the model-facing block puts in front of a
// diagnostic: ✘ error (also zero), ⚠ warning, ℹ information, ★ hint, •
// anything else.
func (s Severity) Mark() string {
	switch s {
	case 0, SeverityError:
		return "✘"
	case SeverityWarning:
		return "⚠"
	case SeverityInformation:
		return "ℹ"
	case SeverityHint:
		return "★"
	}
	return "•"
}

// ParseSeverity parses every spelling deployed IDEs and servers send: the
// names "Error", "Warning" (or "Warn"), "Information" (or "Info",
// "Informational") and "Hint" in any letter case and with surrounding
// space, or the LSP numbers "1" to "4".
func ParseSeverity(s string) (Severity, error) {
	t := strings.TrimSpace(s)
	switch {
	case strings.EqualFold(t, "error"), t == "1":
		return SeverityError, nil
	case strings.EqualFold(t, "warning"), strings.EqualFold(t, "warn"), t == "2":
		return SeverityWarning, nil
	case strings.EqualFold(t, "information"), strings.EqualFold(t, "info"), strings.EqualFold(t, "informational"), t == "3":
		return SeverityInformation, nil
	case strings.EqualFold(t, "hint"), t == "4":
		return SeverityHint, nil
	}
	return 0, fmt.Errorf("unknown severity %q", s)
}

// UnmarshalJSON accepts an LSP number (1 to 4), one of the names accepted by
// ParseSeverity, or null (which leaves 0, "not given").
func (s *Severity) UnmarshalJSON(b []byte) error {
	v, err := decodeSeverity(b)
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Position is a zero-based LSP position. Character counts in whatever unit
// the producer used; the manager converts server columns before
// registering.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is an LSP range, End exclusive.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Location is an LSP location: a document and a range in it.
type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

// RelatedInformation is an LSP DiagnosticRelatedInformation.
type RelatedInformation struct {
	Location Location `json:"location"`
	Message  string   `json:"message"`
}

// Diagnostic tags (LSP DiagnosticTag).
const (
	TagUnnecessary = 1
	TagDeprecated  = 2
)

// Diagnostic is one LSP diagnostic as the registry keeps it.
//
// Its JSON form is LSP's, with two simplifications on output: Code is
// always a string and CodeDescription is the href string. On input (see
// UnmarshalJSON) the LSP wire forms are accepted.
type Diagnostic struct {
	Range    Range    `json:"range"`
	Severity Severity `json:"severity"`
	// Code is the diagnostic code as text: a numeric code 2304 on the wire
	// is "2304" here.
	Code string `json:"code,omitempty"`
	// CodeDescription is the href of LSP's codeDescription, if any.
	CodeDescription    string               `json:"codeDescription,omitempty"`
	Source             string               `json:"source,omitempty"`
	Message            string               `json:"message"`
	Tags               []int                `json:"tags,omitempty"`
	RelatedInformation []RelatedInformation `json:"relatedInformation,omitempty"`
}

// UnmarshalJSON decodes an LSP Diagnostic and checks its shape: the value
// must be an object with a range (start and end positions of non-negative
// integers) and a message (a string, or MarkupContent with a string value).
// severity may be a number, a name (see ParseSeverity) or absent; code a
// number, a string or absent; source a string or absent; codeDescription an
// object with href, or a string. tags and relatedInformation are kept when
// well formed and ignored otherwise: they decorate a diagnostic but do not
// identify it. A shape problem is a *ShapeError.
func (d *Diagnostic) UnmarshalJSON(b []byte) error {
	v, err := decodeDiagnostic(b)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// PublishParams is the params object of textDocument/publishDiagnostics.
type PublishParams struct {
	URI string `json:"uri"`
	// Version is the document version the diagnostics were computed for;
	// nil when the server did not say.
	Version     *int         `json:"version,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// UnmarshalJSON decodes publishDiagnostics params and checks their shape:
// an object whose uri is a string, whose version, if present and not null,
// is an integer, and whose diagnostics is an array of diagnostics as
// Diagnostic.UnmarshalJSON accepts them. A shape problem is a *ShapeError.
func (p *PublishParams) UnmarshalJSON(b []byte) error {
	v, err := DecodePublishParams(b)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

var (
	_ json.Unmarshaler = (*Severity)(nil)
	_ json.Unmarshaler = (*Diagnostic)(nil)
	_ json.Unmarshaler = (*PublishParams)(nil)
)
