package diag

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/idebridge/idebridge/internal/jsonrpc"
)

// ErrBadShape is matched (errors.Is) by every *ShapeError: publish params
// or a diagnostic that do not have the shape LSP prescribes.
var ErrBadShape = errors.New("malformed diagnostics")

// ShapeError says what was wrong with publishDiagnostics params or a
// diagnostic, and where.
type ShapeError struct {
	// Path locates the problem, e.g. "diagnostics[3].range.start.line";
	// empty for the value as a whole.
	Path string
	// Problem says what was wrong, e.g. "missing" or "not a string".
	Problem string
}

func (e *ShapeError) Error() string {
	if e.Path == "" {
		return "malformed diagnostics: " + e.Problem
	}
	return "malformed diagnostics: " + e.Path + ": " + e.Problem
}

// Is makes errors.Is(err, ErrBadShape) true for every ShapeError.
func (e *ShapeError) Is(target error) bool { return target == ErrBadShape }

func shapeErr(path, problem string) error { return &ShapeError{Path: path, Problem: problem} }

// prefixShape puts prefix in front of the path of a *ShapeError.
func prefixShape(prefix string, err error) error {
	var se *ShapeError
	if errors.As(err, &se) {
		p := prefix
		if se.Path != "" {
			if strings.HasPrefix(se.Path, "[") {
				p += se.Path
			} else {
				p += "." + se.Path
			}
		}
		return &ShapeError{Path: p, Problem: se.Problem}
	}
	return err
}

func isNull(b []byte) bool { return len(b) == 0 || bytes.Equal(b, []byte("null")) }

type wireParams struct {
	URI         json.RawMessage `json:"uri"`
	Version     json.RawMessage `json:"version"`
	Diagnostics json.RawMessage `json:"diagnostics"`
}

// decodePublishParamsSlow decodes level by level through json.RawMessage:
// slower than decodePublishParams, but it knows where a problem is.
func decodePublishParamsSlow(b []byte) (PublishParams, error) {
	b = bytes.TrimSpace(b)
	if k := jsonrpc.Kind(b); k != "object" {
		return PublishParams{}, shapeErr("", "params are "+jsonrpc.WithArticle(k)+", not an object")
	}
	var w wireParams
	if err := json.Unmarshal(b, &w); err != nil {
		return PublishParams{}, shapeErr("", "invalid JSON: "+err.Error())
	}
	var p PublishParams
	if k := jsonrpc.Kind(w.URI); k != "string" {
		return PublishParams{}, shapeErr("uri", kindProblem(k, "a string"))
	}
	if err := json.Unmarshal(w.URI, &p.URI); err != nil {
		return PublishParams{}, shapeErr("uri", "invalid string")
	}
	if !isNull(w.Version) {
		v, ok := parseInt(w.Version)
		if !ok {
			return PublishParams{}, shapeErr("version", kindProblem(jsonrpc.Kind(w.Version), "an integer"))
		}
		p.Version = &v
	}
	if k := jsonrpc.Kind(w.Diagnostics); k != "array" {
		return PublishParams{}, shapeErr("diagnostics", kindProblem(k, "an array"))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(w.Diagnostics, &items); err != nil {
		return PublishParams{}, shapeErr("diagnostics", "invalid array")
	}
	p.Diagnostics = make([]Diagnostic, len(items))
	for i, it := range items {
		d, err := decodeDiagnosticSlow(it)
		if err != nil {
			return PublishParams{}, prefixShape("diagnostics["+strconv.Itoa(i)+"]", err)
		}
		p.Diagnostics[i] = d
	}
	return p, nil
}

type wireDiagnostic struct {
	Range              json.RawMessage `json:"range"`
	Severity           json.RawMessage `json:"severity"`
	Code               json.RawMessage `json:"code"`
	CodeDescription    json.RawMessage `json:"codeDescription"`
	Source             json.RawMessage `json:"source"`
	Message            json.RawMessage `json:"message"`
	Tags               json.RawMessage `json:"tags"`
	RelatedInformation json.RawMessage `json:"relatedInformation"`
}

func decodeDiagnosticSlow(b []byte) (Diagnostic, error) {
	b = bytes.TrimSpace(b)
	if k := jsonrpc.Kind(b); k != "object" {
		return Diagnostic{}, shapeErr("", kindProblem(k, "an object"))
	}
	var w wireDiagnostic
	if err := json.Unmarshal(b, &w); err != nil {
		return Diagnostic{}, shapeErr("", "invalid JSON: "+err.Error())
	}
	var d Diagnostic
	var err error
	if d.Range, err = decodeRange(w.Range); err != nil {
		return Diagnostic{}, prefixShape("range", err)
	}
	if d.Message, err = decodeMessage(w.Message); err != nil {
		return Diagnostic{}, prefixShape("message", err)
	}
	if d.Severity, err = decodeSeverity(w.Severity); err != nil {
		return Diagnostic{}, prefixShape("severity", err)
	}
	switch k := jsonrpc.Kind(w.Code); k {
	case "missing", "null":
	case "string":
		if json.Unmarshal(w.Code, &d.Code) != nil {
			return Diagnostic{}, shapeErr("code", "invalid string")
		}
	case "number":
		d.Code = string(w.Code)
	default:
		return Diagnostic{}, shapeErr("code", kindProblem(k, "a number or a string"))
	}
	switch k := jsonrpc.Kind(w.Source); k {
	case "missing", "null":
	case "string":
		if json.Unmarshal(w.Source, &d.Source) != nil {
			return Diagnostic{}, shapeErr("source", "invalid string")
		}
	default:
		return Diagnostic{}, shapeErr("source", kindProblem(k, "a string"))
	}
	// Decorations: kept when well formed, ignored otherwise.
	switch jsonrpc.Kind(w.CodeDescription) {
	case "string":
		_ = json.Unmarshal(w.CodeDescription, &d.CodeDescription)
	case "object":
		var cd struct {
			Href string `json:"href"`
		}
		if json.Unmarshal(w.CodeDescription, &cd) == nil {
			d.CodeDescription = cd.Href
		}
	}
	if jsonrpc.Kind(w.Tags) == "array" {
		var tags []int
		if json.Unmarshal(w.Tags, &tags) == nil && len(tags) > 0 {
			d.Tags = tags
		}
	}
	if jsonrpc.Kind(w.RelatedInformation) == "array" {
		var items []json.RawMessage
		if json.Unmarshal(w.RelatedInformation, &items) == nil {
			for _, it := range items {
				if ri, ok := decodeRelated(it); ok {
					d.RelatedInformation = append(d.RelatedInformation, ri)
				}
			}
		}
	}
	return d, nil
}

func decodeRelated(b []byte) (RelatedInformation, bool) {
	var w struct {
		Location struct {
			URI   json.RawMessage `json:"uri"`
			Range json.RawMessage `json:"range"`
		} `json:"location"`
		Message json.RawMessage `json:"message"`
	}
	if jsonrpc.Kind(b) != "object" || json.Unmarshal(b, &w) != nil {
		return RelatedInformation{}, false
	}
	var ri RelatedInformation
	if jsonrpc.Kind(w.Location.URI) != "string" || json.Unmarshal(w.Location.URI, &ri.Location.URI) != nil {
		return RelatedInformation{}, false
	}
	r, err := decodeRange(w.Location.Range)
	if err != nil {
		return RelatedInformation{}, false
	}
	ri.Location.Range = r
	if ri.Message, err = decodeMessage(w.Message); err != nil {
		return RelatedInformation{}, false
	}
	return ri, true
}

func decodeRange(b []byte) (Range, error) {
	if k := jsonrpc.Kind(b); k != "object" {
		return Range{}, shapeErr("", kindProblem(k, "an object"))
	}
	var w struct {
		Start json.RawMessage `json:"start"`
		End   json.RawMessage `json:"end"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return Range{}, shapeErr("", "invalid object")
	}
	var r Range
	var err error
	if r.Start, err = decodePosition(w.Start); err != nil {
		return Range{}, prefixShape("start", err)
	}
	if r.End, err = decodePosition(w.End); err != nil {
		return Range{}, prefixShape("end", err)
	}
	return r, nil
}

func decodePosition(b []byte) (Position, error) {
	if k := jsonrpc.Kind(b); k != "object" {
		return Position{}, shapeErr("", kindProblem(k, "an object"))
	}
	var w struct {
		Line      json.RawMessage `json:"line"`
		Character json.RawMessage `json:"character"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return Position{}, shapeErr("", "invalid object")
	}
	var p Position
	var ok bool
	if p.Line, ok = parseInt(w.Line); !ok || p.Line < 0 {
		return Position{}, shapeErr("line", kindProblem(jsonrpc.Kind(w.Line), "a non-negative integer"))
	}
	if p.Character, ok = parseInt(w.Character); !ok || p.Character < 0 {
		return Position{}, shapeErr("character", kindProblem(jsonrpc.Kind(w.Character), "a non-negative integer"))
	}
	return p, nil
}

// decodeMessage accepts a string or LSP MarkupContent ({kind, value}).
func decodeMessage(b []byte) (string, error) {
	switch k := jsonrpc.Kind(b); k {
	case "string":
		var s string
		if json.Unmarshal(b, &s) != nil {
			return "", shapeErr("", "invalid string")
		}
		return s, nil
	case "object":
		var mc struct {
			Value json.RawMessage `json:"value"`
		}
		if json.Unmarshal(b, &mc) != nil || jsonrpc.Kind(mc.Value) != "string" {
			return "", shapeErr("", "an object without a string value, not a string or MarkupContent")
		}
		var s string
		if json.Unmarshal(mc.Value, &s) != nil {
			return "", shapeErr("value", "invalid string")
		}
		return s, nil
	default:
		return "", shapeErr("", kindProblem(k, "a string"))
	}
}

func decodeSeverity(b []byte) (Severity, error) {
	switch k := jsonrpc.Kind(b); k {
	case "missing", "null":
		return 0, nil
	case "number":
		n, ok := parseInt(b)
		if !ok || n < 0 || n > int(SeverityHint) {
			return 0, shapeErr("", "number "+string(b)+" is not a severity (1 to 4)")
		}
		return Severity(n), nil
	case "string":
		var s string
		if json.Unmarshal(b, &s) != nil {
			return 0, shapeErr("", "invalid string")
		}
		v, err := ParseSeverity(s)
		if err != nil {
			return 0, shapeErr("", err.Error())
		}
		return v, nil
	default:
		return 0, shapeErr("", kindProblem(k, "a number or a severity name"))
	}
}

// parseInt accepts a JSON integer literal that fits an int.
func parseInt(b []byte) (int, bool) {
	if jsonrpc.Kind(b) != "number" {
		return 0, false
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || int64(int(n)) != n {
		return 0, false
	}
	return int(n), true
}

func kindProblem(kind, want string) string {
	if kind == "missing" {
		return "missing"
	}
	return jsonrpc.WithArticle(kind) + ", not " + want
}
