package diag

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/idebridge/idebridge/internal/jsonrpc"
)

// The decoder below reads publish params in one encoding/json pass into
// typed structs whose leaves parse their own literals, which is several
// times faster than walking json.RawMessage values level by level. It
// decides what is accepted. When it fails, the level-by-level decoder in
// diagnostic_wire.go runs on the same input only to say precisely what was
// wrong and where.

type fastParams struct {
	URI         *string     `json:"uri"`
	Version     *int        `json:"version"`
	Diagnostics *[]fastDiag `json:"diagnostics"`
}

type fastDiag struct {
	Range              fastRange   `json:"range"`
	Severity           Severity    `json:"severity"`
	Code               fastCode    `json:"code"`
	CodeDescription    fastHref    `json:"codeDescription"`
	Source             fastSource  `json:"source"`
	Message            fastMessage `json:"message"`
	Tags               fastTags    `json:"tags"`
	RelatedInformation fastRelated `json:"relatedInformation"`
}

// A range or position is present when all its integers are: no pointers,
// no allocations.
type fastRange struct {
	Start fastPos `json:"start"`
	End   fastPos `json:"end"`
}

type fastPos struct {
	Line      fastInt `json:"line"`
	Character fastInt `json:"character"`
}

// fastInt is a JSON integer; set is false when absent or null.
type fastInt struct {
	v   int
	set bool
}

func (n *fastInt) UnmarshalJSON(b []byte) error {
	*n = fastInt{}
	if isNull(b) {
		return nil
	}
	v, ok := parseInt(b)
	if !ok {
		return errFastShape
	}
	*n = fastInt{v: v, set: true}
	return nil
}

var errFastShape = errors.New("shape")

// unquote decodes a JSON string literal, without a second pass over plain
// text (no escapes, valid UTF-8). The literal was validated by the
// enclosing Unmarshal.
func unquote(b []byte) (string, error) {
	if len(b) >= 2 && b[0] == '"' {
		inner := b[1 : len(b)-1]
		if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			return string(inner), nil
		}
		var s string
		err := json.Unmarshal(b, &s)
		return s, err
	}
	return "", errFastShape
}

// fastCode is a code: a number (kept as its text), a string or null.
type fastCode string

func (c *fastCode) UnmarshalJSON(b []byte) error {
	switch jsonrpc.Kind(b) {
	case "null":
		*c = ""
	case "number":
		*c = fastCode(b)
	case "string":
		s, err := unquote(b)
		if err != nil {
			return err
		}
		*c = fastCode(s)
	default:
		return errFastShape
	}
	return nil
}

// fastSource is a string or null.
type fastSource string

func (f *fastSource) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		*f = ""
		return nil
	}
	s, err := unquote(b)
	*f = fastSource(s)
	return err
}

// fastMessage is a string or MarkupContent; set tells it was present.
type fastMessage struct {
	s   string
	set bool
}

func (m *fastMessage) UnmarshalJSON(b []byte) error {
	s, err := decodeMessage(b)
	if err != nil {
		return err
	}
	m.s, m.set = s, true
	return nil
}

// The decorations never fail: malformed ones are ignored.

type fastHref string

func (h *fastHref) UnmarshalJSON(b []byte) error {
	*h = ""
	switch jsonrpc.Kind(b) {
	case "string":
		s, _ := unquote(b)
		*h = fastHref(s)
	case "object":
		var cd struct {
			Href string `json:"href"`
		}
		if json.Unmarshal(b, &cd) == nil {
			*h = fastHref(cd.Href)
		}
	}
	return nil
}

type fastTags []int

func (t *fastTags) UnmarshalJSON(b []byte) error {
	*t = nil
	var tags []int
	if jsonrpc.Kind(b) == "array" && json.Unmarshal(b, &tags) == nil && len(tags) > 0 {
		*t = tags
	}
	return nil
}

type fastRelated []RelatedInformation

func (r *fastRelated) UnmarshalJSON(b []byte) error {
	*r = nil
	var items []json.RawMessage
	if jsonrpc.Kind(b) == "array" && json.Unmarshal(b, &items) == nil {
		for _, it := range items {
			if ri, ok := decodeRelated(it); ok {
				*r = append(*r, ri)
			}
		}
	}
	return nil
}

// convert checks what the typed pass cannot (presence, signs) and builds
// the Diagnostic.
func (f *fastDiag) convert() (Diagnostic, bool) {
	if !f.Message.set {
		return Diagnostic{}, false
	}
	start, ok1 := f.Range.Start.position()
	end, ok2 := f.Range.End.position()
	if !ok1 || !ok2 {
		return Diagnostic{}, false
	}
	d := Diagnostic{
		Range:              Range{Start: start, End: end},
		Severity:           f.Severity,
		Code:               string(f.Code),
		CodeDescription:    string(f.CodeDescription),
		Source:             string(f.Source),
		Message:            f.Message.s,
		Tags:               f.Tags,
		RelatedInformation: f.RelatedInformation,
	}
	return d, true
}

func (p *fastPos) position() (Position, bool) {
	if !p.Line.set || !p.Character.set || p.Line.v < 0 || p.Character.v < 0 {
		return Position{}, false
	}
	return Position{Line: p.Line.v, Character: p.Character.v}, true
}

// DecodePublishParams decodes publishDiagnostics params as
// PublishParams.UnmarshalJSON does, without encoding/json's validation pass
// in front of it (the bytes are scanned once).
func DecodePublishParams(b []byte) (PublishParams, error) {
	if p, ok := decodePublishParamsFast(b); ok {
		return p, nil
	}
	_, err := decodePublishParamsSlow(b)
	if err == nil {
		// The two decoders differ only on inputs that repeat a key, where
		// the typed pass merges objects and the slow one keeps the last.
		err = shapeErr("", "repeated or conflicting keys")
	}
	return PublishParams{}, err
}

func decodePublishParamsFast(b []byte) (PublishParams, bool) {
	if jsonrpc.Kind(bytes.TrimSpace(b)) != "object" {
		return PublishParams{}, false
	}
	var f fastParams
	if json.Unmarshal(b, &f) != nil || f.URI == nil || f.Diagnostics == nil {
		return PublishParams{}, false
	}
	p := PublishParams{URI: *f.URI, Version: f.Version, Diagnostics: make([]Diagnostic, len(*f.Diagnostics))}
	for i := range *f.Diagnostics {
		d, ok := (*f.Diagnostics)[i].convert()
		if !ok {
			return PublishParams{}, false
		}
		p.Diagnostics[i] = d
	}
	return p, true
}

func decodeDiagnostic(b []byte) (Diagnostic, error) {
	if jsonrpc.Kind(bytes.TrimSpace(b)) == "object" {
		var f fastDiag
		if json.Unmarshal(b, &f) == nil {
			if d, ok := f.convert(); ok {
				return d, nil
			}
		}
	}
	_, err := decodeDiagnosticSlow(b)
	if err == nil {
		err = shapeErr("", "repeated or conflicting keys")
	}
	return Diagnostic{}, err
}
