package mcpserver

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/mcp"
)

// Every tool answers, beside the text block the model reads, a
// structuredContent object that its outputSchema describes, for clients
// that run code over results. Every one of them has a status:
//
//   - "complete": the answer is whole (the server had finished loading;
//     every file's diagnostics were known current);
//   - "partial": the answer holds entries but may miss some (the server
//     was still loading the workspace; a file's diagnostics were not known
//     current, or some files could not be checked);
//   - "unknown": nothing can be said: an empty answer from a server still
//     loading, or a call that failed before any server answered (reason
//     says why);
//   - "server-down": the language server failed or its connection closed.
//
// and, unless complete, a reason. Lines and columns are 1-based, columns
// in characters, ends exclusive; paths are absolute, and "outside" marks a
// location outside the project's roots (listed, its text not shown).

// The statuses of structured results.
// They are the lsp package's words (lsp.Status), so that one answer reads
// the same through the library, the command line, the ABI and MCP.
const (
	statusComplete   = string(lsp.StatusComplete)
	statusPartial    = string(lsp.StatusPartial)
	statusUnknown    = string(lsp.StatusUnknown)
	statusServerDown = string(lsp.StatusServerDown)
)

// answer is the part of every structured result that says how it was
// answered.
type answer struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	Server string `json:"server,omitempty"`
	// At is the place asked about, resolved to a column.
	At *location `json:"at,omitempty"`
}

// location is a place in a file.
type location struct {
	Path      string `json:"path"`
	URI       string `json:"uri,omitempty"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"endLine,omitempty"`
	EndColumn int    `json:"endColumn,omitempty"`
	Text      string `json:"text,omitempty"`
	Outside   bool   `json:"outside,omitempty"`
}

// The schemas of the structured results, as JSON Schema (draft 2020-12)
// fragments. A schema's other properties are optional, so that an isError
// result ({status, reason}) fits it too.
const (
	statusProps = `"status":{"type":"string","enum":["complete","partial","unknown","server-down"],"description":"complete: the whole answer; partial: entries may be missing; unknown: nothing can be said (see reason); server-down: the language server failed."},` +
		`"reason":{"type":"string","description":"Why the answer is not complete, or what failed."}`
	answerProps = statusProps + `,"server":{"type":"string","description":"The language server that answered."},"at":{"$ref":"#/$defs/location"}`
	locationDef = `"location":{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Absolute path."},` +
		`"uri":{"type":"string","description":"The document's URI, for one that is not a file."},` +
		`"line":{"type":"integer","minimum":1},"column":{"type":"integer","minimum":1,"description":"1-based, in characters."},` +
		`"endLine":{"type":"integer","minimum":1},"endColumn":{"type":"integer","minimum":1,"description":"Exclusive."},` +
		`"text":{"type":"string","description":"The source line, for a file inside the project."},` +
		`"outside":{"type":"boolean","description":"The file lies outside the project's roots; its text is not shown."}},` +
		`"required":["path","line","column"],"additionalProperties":false}`
)

// outputSchema writes an object schema of the given properties, with
// status required and the location definition available.
func outputSchema(props string, defs ...string) string {
	d := append([]string{locationDef}, defs...)
	return `{"type":"object","properties":{` + props + `},"required":["status"],"$defs":{` + strings.Join(d, ",") + `}}`
}

// withStructured sets res's structured content to v.
func withStructured(res *mcp.ToolResult, v any) *mcp.ToolResult {
	b, err := json.Marshal(v)
	if err == nil {
		res.StructuredContent = b
	}
	return res
}

// failure is the structured content of an isError result.
func failure(status, reason string) json.RawMessage {
	b, _ := json.Marshal(answer{Status: status, Reason: reason})
	return b
}

// statusOf derives a navigation answer's status from what the lsp package
// says: an answer from a server still loading is partial, or unknown when
// it is empty.
func statusOf(a *lsp.Answer, empty bool) (string, string) {
	switch {
	case a.Status == lsp.StatusPartial && empty:
		// An empty answer from a server at work says nothing.
		return statusUnknown, a.Reason
	case a.Status != "":
		return string(a.Status), a.Reason
	case !a.Incomplete:
		return statusComplete, ""
	case empty:
		return statusUnknown, a.Reason
	}
	return statusPartial, a.Reason
}

// serverDown reports whether err means the language server is down.
func serverDown(err error) bool {
	return errors.Is(err, lsp.ErrServerFailed) || errors.Is(err, lsp.ErrConnClosed)
}

// converter turns the lsp package's results into structured ones, marking
// (and scrubbing) what lies outside the roots.
type converter struct {
	f *resultFilter
	// scrubbed counts the source lines scrub left out.
	scrubbed int
}

func (c *converter) loc(l *lsp.Location) location {
	out := location{Path: l.Path, Line: l.Line, Column: l.Column, EndLine: l.EndLine, EndColumn: l.EndColumn, Text: l.Text}
	if l.Path == "" {
		out.URI = l.URI
	}
	if !c.f.inside(l.Path) {
		out.Outside, out.Text = true, ""
	}
	return out
}

func (c *converter) answer(a *lsp.Answer, empty bool) answer {
	st, why := statusOf(a, empty)
	out := answer{Status: st, Reason: why, Server: a.Server}
	if a.At != nil {
		at := c.loc(a.At)
		out.At = &at
	}
	return out
}

// scrub blanks the source lines of every location of res outside the
// roots, so that the text rendering shows none either.
func (c *converter) scrub(res lsp.NavResult) {
	fix := func(l *lsp.Location) {
		if l != nil && l.Text != "" && !c.f.inside(l.Path) {
			l.Text = ""
			c.scrubbed++
		}
	}
	fix(res.Info().At)
	switch r := res.(type) {
	case *lsp.Locations:
		for i := range r.Locations {
			fix(&r.Locations[i])
		}
	case *lsp.Hover:
		fix(r.Range)
	case *lsp.Symbols:
		var walk func([]lsp.Symbol)
		walk = func(ss []lsp.Symbol) {
			for i := range ss {
				fix(&ss[i].Location)
				walk(ss[i].Children)
			}
		}
		walk(r.Symbols)
	case *lsp.CallHierarchy:
		for i := range r.Items {
			fix(&r.Items[i].Location)
		}
		for i := range r.Calls {
			fix(&r.Calls[i].Item.Location)
			for j := range r.Calls[i].Sites {
				fix(&r.Calls[i].Sites[j])
			}
		}
	case *lsp.TypeHierarchy:
		for i := range r.Items {
			fix(&r.Items[i].Location)
		}
		for i := range r.Types {
			fix(&r.Types[i].Location)
		}
	}
}

// maxStructured bounds the entries of a structured result, as the text's
// listing is bounded; total counts them all.
const maxStructured = lsp.DefaultMaxLocations

type locationsResult struct {
	answer
	Locations []location `json:"locations"`
	Total     int        `json:"total"`
	Offset    int        `json:"offset"`
	Returned  int        `json:"returned"`
}

// pageSchema are the properties of a paged list.
const pageSchema = `,"total":{"type":"integer","minimum":0,"description":"How many entries the whole answer has: exact, whatever the page."},` +
	`"offset":{"type":"integer","minimum":0,"description":"The 0-based index of the first entry listed, in the whole answer."},` +
	`"returned":{"type":"integer","minimum":0,"description":"How many entries are listed; when offset + returned < total, call again with offset + returned for the next ones."}`

const locationsSchema = answerProps + `,"locations":{"type":"array","items":{"$ref":"#/$defs/location"}}` + pageSchema

type hoverResult struct {
	answer
	Markdown string    `json:"markdown"`
	Range    *location `json:"range,omitempty"`
}

const hoverSchema = answerProps + `,"markdown":{"type":"string","description":"The hover text, as Markdown; empty when the server had nothing to say."},"range":{"$ref":"#/$defs/location"}`

type symbol struct {
	Name      string   `json:"name"`
	Kind      string   `json:"kind"`
	Detail    string   `json:"detail,omitempty"`
	Container string   `json:"container,omitempty"`
	Location  location `json:"location"`
	EndLine   int      `json:"endLine,omitempty"`
	Children  []symbol `json:"children,omitempty"`
}

const symbolDef = `"symbol":{"type":"object","properties":{"name":{"type":"string"},"kind":{"type":"string","description":"LSP's symbol kind, in words (function, method, struct, ...)."},` +
	`"detail":{"type":"string"},"container":{"type":"string"},"location":{"$ref":"#/$defs/location"},"endLine":{"type":"integer","minimum":1},` +
	`"children":{"type":"array","items":{"$ref":"#/$defs/symbol"}}},"required":["name","kind","location"],"additionalProperties":false}`

type symbolsResult struct {
	answer
	Path    string   `json:"path,omitempty"`
	Query   string   `json:"query,omitempty"`
	Symbols []symbol `json:"symbols"`
	Total   int      `json:"total"`
	// Offset and Returned page workspace symbols.
	Offset   *int `json:"offset,omitempty"`
	Returned *int `json:"returned,omitempty"`
}

const symbolsSchema = answerProps + `,"path":{"type":"string"},"query":{"type":"string"},"symbols":{"type":"array","items":{"$ref":"#/$defs/symbol"}},` +
	`"total":{"type":"integer","minimum":0,"description":"Document symbols: how many symbols there are, nested ones included (at most 100 are listed). Workspace symbols: how many matches the whole answer has, exact, whatever the page."},` +
	`"offset":{"type":"integer","minimum":0,"description":"Workspace symbols: the 0-based index of the first match listed."},` +
	`"returned":{"type":"integer","minimum":0,"description":"Workspace symbols: how many matches are listed; when offset + returned < total, call again with offset + returned for the next ones."}`

type callItem struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	Detail   string   `json:"detail,omitempty"`
	Location location `json:"location"`
}

type call struct {
	Item  callItem   `json:"item"`
	Sites []location `json:"sites"`
}

const callItemDef = `"item":{"type":"object","properties":{"name":{"type":"string"},"kind":{"type":"string"},"detail":{"type":"string"},"location":{"$ref":"#/$defs/location"}},"required":["name","kind","location"],"additionalProperties":false}`

type callsResult struct {
	answer
	Direction string     `json:"direction,omitempty"`
	Items     []callItem `json:"items"`
	Calls     []call     `json:"calls"`
	Total     int        `json:"total"`
	Offset    int        `json:"offset"`
	Returned  int        `json:"returned"`
}

const callsSchema = answerProps + `,"direction":{"type":"string","enum":["incoming","outgoing"]},"items":{"type":"array","items":{"$ref":"#/$defs/item"}},` +
	`"calls":{"type":"array","items":{"type":"object","properties":{"item":{"$ref":"#/$defs/item"},"sites":{"type":"array","items":{"$ref":"#/$defs/location"}}},"required":["item","sites"],"additionalProperties":false}}` +
	pageSchema

// pageTotal is the total of a result with the given Total, Offset and
// number of entries: Total, or, for a result made without one, as many as
// it holds.
func pageTotal(total, offset, n int) int {
	if total > 0 || n == 0 {
		return total
	}
	return offset + n
}

// locations converts a result of locations: every location of it (the
// tools page it, so that it is bounded).
func (c *converter) locations(r *lsp.Locations) *locationsResult {
	total := pageTotal(r.Total, r.Offset, len(r.Locations))
	// A page past the end of an answer is empty; the answer is not.
	out := &locationsResult{answer: c.answer(&r.Answer, total == 0), Locations: []location{},
		Total: total, Offset: r.Offset, Returned: len(r.Locations)}
	for i := range r.Locations {
		out.Locations = append(out.Locations, c.loc(&r.Locations[i]))
	}
	return out
}

func (c *converter) hover(r *lsp.Hover) *hoverResult {
	out := &hoverResult{answer: c.answer(&r.Answer, r.Markdown == ""), Markdown: r.Markdown}
	if r.Range != nil {
		l := c.loc(r.Range)
		out.Range = &l
	}
	return out
}

func (c *converter) symbols(r *lsp.Symbols) *symbolsResult {
	out := &symbolsResult{answer: c.answer(&r.Answer, len(r.Symbols) == 0 && r.Total == 0), Path: r.Path, Query: r.Query, Symbols: []symbol{}}
	budget := maxStructured
	if r.Op == lsp.OpWorkspaceSymbols {
		budget = len(r.Symbols) // paged by the tool
	}
	var conv func([]lsp.Symbol) []symbol
	conv = func(ss []lsp.Symbol) []symbol {
		var list []symbol
		for i := range ss {
			out.Total++
			if budget == 0 {
				conv(ss[i].Children) // counted only
				continue
			}
			budget--
			s := &ss[i]
			list = append(list, symbol{Name: s.Name, Kind: s.Kind.String(), Detail: s.Detail, Container: s.Container,
				Location: c.loc(&s.Location), EndLine: s.EndLine, Children: conv(s.Children)})
		}
		return list
	}
	if l := conv(r.Symbols); l != nil {
		out.Symbols = l
	}
	if r.Op == lsp.OpWorkspaceSymbols {
		off, n := r.Offset, len(out.Symbols)
		out.Offset, out.Returned, out.Total = &off, &n, pageTotal(r.Total, off, len(r.Symbols))
	}
	return out
}

func (c *converter) item(it *lsp.CallItem) callItem {
	return callItem{Name: it.Name, Kind: it.Kind.String(), Detail: it.Detail, Location: c.loc(&it.Location)}
}

// calls converts a call hierarchy: every call of it (the tool pages it,
// so that it is bounded).
func (c *converter) calls(r *lsp.CallHierarchy, direction string) *callsResult {
	total := pageTotal(r.Total, r.Offset, len(r.Calls))
	out := &callsResult{answer: c.answer(&r.Answer, total == 0), Direction: direction, Items: []callItem{}, Calls: []call{},
		Total: total, Offset: r.Offset, Returned: len(r.Calls)}
	for i := range r.Items {
		out.Items = append(out.Items, c.item(&r.Items[i]))
	}
	for i := range r.Calls {
		cl := call{Item: c.item(&r.Calls[i].Item), Sites: []location{}}
		for j := range r.Calls[i].Sites {
			cl.Sites = append(cl.Sites, c.loc(&r.Calls[i].Sites[j]))
		}
		out.Calls = append(out.Calls, cl)
	}
	return out
}

type typesResult struct {
	answer
	Direction string     `json:"direction,omitempty"`
	Items     []callItem `json:"items"`
	Types     []callItem `json:"types"`
	Total     int        `json:"total"`
	Offset    int        `json:"offset"`
	Returned  int        `json:"returned"`
}

// typeItemDef is a type of a type hierarchy; it has a call item's shape.
const typeItemDef = `"type":{"type":"object","properties":{"name":{"type":"string"},"kind":{"type":"string","description":"LSP's symbol kind, in words (class, interface, struct, ...)."},"detail":{"type":"string"},"location":{"$ref":"#/$defs/location"}},"required":["name","kind","location"],"additionalProperties":false}`

const typesSchema = answerProps + `,"direction":{"type":"string","enum":["supertypes","subtypes"]},` +
	`"items":{"type":"array","items":{"$ref":"#/$defs/type"},"description":"The type at the place asked about (usually one)."},` +
	`"types":{"type":"array","items":{"$ref":"#/$defs/type"},"description":"Its direct supertypes or subtypes, sorted by path and position."}` +
	pageSchema

// types converts a type hierarchy: every type of it (the tool pages it,
// so that it is bounded).
func (c *converter) types(r *lsp.TypeHierarchy, direction string) *typesResult {
	total := pageTotal(r.Total, r.Offset, len(r.Types))
	out := &typesResult{answer: c.answer(&r.Answer, total == 0), Direction: direction, Items: []callItem{}, Types: []callItem{},
		Total: total, Offset: r.Offset, Returned: len(r.Types)}
	conv := func(it *lsp.TypeItem) callItem {
		return callItem{Name: it.Name, Kind: it.Kind.String(), Detail: it.Detail, Location: c.loc(&it.Location)}
	}
	for i := range r.Items {
		out.Items = append(out.Items, conv(&r.Items[i]))
	}
	for i := range r.Types {
		out.Types = append(out.Types, conv(&r.Types[i]))
	}
	return out
}

// navStructured converts any navigation result.
func (c *converter) navStructured(res lsp.NavResult, direction string) any {
	switch r := res.(type) {
	case *lsp.Locations:
		return c.locations(r)
	case *lsp.Hover:
		return c.hover(r)
	case *lsp.Symbols:
		return c.symbols(r)
	case *lsp.CallHierarchy:
		return c.calls(r, direction)
	case *lsp.TypeHierarchy:
		return c.types(r, direction)
	}
	a := c.answer(res.Info(), false)
	return &a
}

type renameFile struct {
	Path  string `json:"path"`
	Edits int    `json:"edits"`
	Diff  string `json:"diff"`
	// Outcome is what became of the file when the rename was applied.
	Outcome string `json:"outcome,omitempty"`
	Error   string `json:"error,omitempty"`
}

type renameResult struct {
	answer
	NewName string       `json:"newName,omitempty"`
	Files   []renameFile `json:"files"`
	// Applied says whether writing was attempted, Via how, Written how
	// many files were written.
	Applied bool   `json:"applied"`
	Via     string `json:"via,omitempty"`
	Written int    `json:"written"`
	// Check is what the rename changes in the diagnostics: of the text
	// written, once written; else of the proposal, staged.
	Check *checkSummary `json:"check,omitempty"`
	// Modified are the files the user changed in the IDE's diff.
	Modified []string `json:"modified,omitempty"`
}

const renameSchema = answerProps + `,"newName":{"type":"string"},` +
	`"files":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string"},"edits":{"type":"integer","minimum":0},"diff":{"type":"string","description":"Unified diff of the file."},` +
	`"outcome":{"type":"string","enum":["written","rejected","cancelled","conflict","failed","skipped"]},"error":{"type":"string"}},"required":["path","edits","diff"],"additionalProperties":false}},` +
	`"applied":{"type":"boolean","description":"Whether writing the rename was attempted."},"via":{"type":"string","description":"How it was written: directly, or reviewed in the IDE."},"written":{"type":"integer","minimum":0},` +
	`"check":{"$ref":"#/$defs/editCheck"},"modified":{"type":"array","items":{"type":"string"},"description":"Files the user changed in the IDE's diff before accepting: their text was written, and checked."}`

func (c *converter) rename(p *lsp.RenameProposal) *renameResult {
	out := &renameResult{answer: c.answer(&p.Answer, len(p.Files) == 0), NewName: p.NewName, Files: []renameFile{}}
	for _, f := range p.Files {
		out.Files = append(out.Files, renameFile{Path: f.Path, Edits: f.Edits, Diff: f.Diff})
	}
	return out
}
