package lsp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/idebridge/idebridge/internal/atomicfile"
)

// Navigation runs on the manager's servers, as diagnostics do: the file's
// server is started when needed, the file is opened in it (or brought up
// to date with the disk), and the answer's positions are converted from
// the server's position encoding to characters. Every operation takes a
// Pos, which names a line and either a column or the text of a symbol on
// it, and returns a typed result that also renders itself for a model
// (NavResult.Render).
//
// An answer from a server that had not finished loading the workspace says
// so (Answer.Incomplete, and a note in the rendered text); an empty answer
// from such a server is never rendered as "no references".

// Pos names a place in a file the way a model can name it reliably: a
// 1-based line and either a 1-based column counted in characters (Unicode
// code points, not bytes or UTF-16 units) or the text of a symbol on that
// line. ParsePos reads the command line's FILE:LINE[:COL|:SYMBOL[#N]].
//
// With Symbol, the place is the symbol's occurrence on the line: matches
// that stand as whole words count first (so "x" does not match inside
// "max"), plain substrings only when there is no whole-word match. A
// qualified symbol ("fmt.Println", "std::vector", "obj.method") names its
// last part: the place is the start of "Println". When the symbol occurs
// more than once on the line, Occurrence (1-based) says which; 0 is
// accepted only when it occurs once. A symbol that is not on the line, or
// an occurrence out of range, is a *PosError that shows the line.
type Pos struct {
	// Path is the file; a relative path is relative to the working
	// directory.
	Path string `json:"path"`
	// Line is 1-based. Operations on a whole file (DocumentSymbols)
	// ignore it.
	Line int `json:"line"`
	// Column is 1-based, in characters; 0 when Symbol is given.
	Column int `json:"column,omitempty"`
	// Symbol is the text of a symbol on the line, used when Column is 0.
	Symbol string `json:"symbol,omitempty"`
	// Occurrence picks one of several occurrences of Symbol on the line,
	// 1-based.
	Occurrence int `json:"occurrence,omitempty"`
}

// String writes p in the command line's form: FILE:LINE, FILE:LINE:COL or
// FILE:LINE:SYMBOL, with #N for an occurrence.
func (p Pos) String() string {
	switch {
	case p.Column > 0:
		return fmt.Sprintf("%s:%d:%d", p.Path, p.Line, p.Column)
	case p.Symbol != "" && p.Occurrence > 0:
		return fmt.Sprintf("%s:%d:%s#%d", p.Path, p.Line, p.Symbol, p.Occurrence)
	case p.Symbol != "":
		return fmt.Sprintf("%s:%d:%s", p.Path, p.Line, p.Symbol)
	case p.Line > 0:
		return fmt.Sprintf("%s:%d", p.Path, p.Line)
	}
	return p.Path
}

// ErrBadPos is matched (errors.Is) by every *PosError.
var ErrBadPos = errors.New("no such place in the file")

// PosError is a Pos that names no place in its file: a line the file does
// not have, a column past the end of the line, a symbol that is not on the
// line, or an ambiguous or out-of-range occurrence. Its message shows the
// line, and the occurrences when there are several, so that a model can
// correct the address at once.
type PosError struct {
	Pos Pos
	// Problem says what is wrong, in a sentence.
	Problem string
	// Text is the line's text ("" when the file has no such line).
	Text string
	// Columns are the 1-based columns of the symbol's occurrences on the
	// line, when it has some.
	Columns []int
}

func (e *PosError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", e.Pos, e.Problem)
	if e.Pos.Line > 0 && (e.Text != "" || len(e.Columns) > 0) {
		fmt.Fprintf(&b, "\n%6d | %s", e.Pos.Line, e.Text)
		if len(e.Columns) > 0 {
			b.WriteString("\n       | ")
			b.WriteString(caretLine(e.Text, e.Columns))
		}
	}
	return b.String()
}

// Is makes every PosError match ErrBadPos.
func (e *PosError) Is(target error) bool { return target == ErrBadPos }

// ErrUnsupported is matched (errors.Is) by the error of an operation the
// file's server does not offer (pyright has no implementation, for one).
var ErrUnsupported = errors.New("the language server does not offer this operation")

// NavOp names a navigation operation; its values are the operation names
// of NavRequest and of the results' JSON.
type NavOp string

// The navigation operations.
const (
	OpDefinition           NavOp = "definition"
	OpDeclaration          NavOp = "declaration"
	OpTypeDefinition       NavOp = "typeDefinition"
	OpImplementation       NavOp = "implementation"
	OpReferences           NavOp = "references"
	OpHover                NavOp = "hover"
	OpDocumentSymbols      NavOp = "documentSymbols"
	OpWorkspaceSymbols     NavOp = "workspaceSymbols"
	OpPrepareCallHierarchy NavOp = "prepareCallHierarchy"
	OpIncomingCalls        NavOp = "incomingCalls"
	OpOutgoingCalls        NavOp = "outgoingCalls"
	OpRename               NavOp = "rename"
	OpPrepareTypeHierarchy NavOp = "prepareTypeHierarchy"
	OpSupertypes           NavOp = "supertypes"
	OpSubtypes             NavOp = "subtypes"
)

// NavOps lists every operation, in the order of the constants.
func NavOps() []NavOp {
	return []NavOp{OpDefinition, OpDeclaration, OpTypeDefinition, OpImplementation, OpReferences, OpHover,
		OpDocumentSymbols, OpWorkspaceSymbols, OpPrepareCallHierarchy, OpIncomingCalls, OpOutgoingCalls, OpRename,
		OpPrepareTypeHierarchy, OpSupertypes, OpSubtypes}
}

// Location is a place in a file that a server answered with. Lines and
// columns are 1-based, columns in characters; the end is exclusive.
type Location struct {
	// Path is the file's absolute path; "" for a URI that is not a file.
	Path string `json:"path"`
	// URI is the document's URI as the server named it.
	URI       string `json:"uri"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"endLine"`
	EndColumn int    `json:"endColumn"`
	// Text is the source line at Line, without its line break (cut at
	// 1,000 characters): from the text the server has when the file is
	// open in it, else from the disk; "" when it cannot be read (or the
	// answer names more than 1,000 files, whose columns then stay in the
	// server's units).
	Text string `json:"text"`
}

// Answer is what every navigation result says about how it was answered.
type Answer struct {
	// Op is the operation.
	Op NavOp `json:"op"`
	// Server is the name of the server that answered.
	Server string `json:"server"`
	// At is the place asked about, resolved to a column (its symbol's
	// range is not known: EndColumn is Column plus the symbol's length
	// when a Symbol was given, else Column); nil for workspace symbols and
	// document symbols.
	At *Location `json:"at,omitempty"`
	// Incomplete is true when the server had not finished loading the
	// workspace when it answered (a work-done progress was active, or the
	// server is one known to answer before its first load ends): the
	// result may be missing entries.
	Incomplete bool `json:"incomplete,omitempty"`
	// Reason says why the answer may be incomplete, in a sentence.
	Reason string `json:"reason,omitempty"`
	// Status is StatusPartial when Incomplete, else StatusComplete (see
	// Status); a server that fails gives an error instead of an answer.
	Status Status `json:"status"`
}

// Info returns a itself; it makes every result a NavResult.
func (a *Answer) Info() *Answer { return a }

// NavResult is the result of any navigation operation: *Locations,
// *Hover, *Symbols, *CallHierarchy, *TypeHierarchy or *RenameProposal.
type NavResult interface {
	// Info says which operation and server answered, and whether the
	// answer may be incomplete.
	Info() *Answer
	// Render writes the result for a model (see NavRenderOptions).
	Render(opts *NavRenderOptions) string
}

// Defaults of NavRenderOptions.
const (
	DefaultMaxLocations = 100
)

// NavRenderOptions configure the rendering of navigation results. A nil
// *NavRenderOptions, and every zero field, means the default.
type NavRenderOptions struct {
	// ProjectDir makes the paths of files inside it relative; outside it
	// (the standard library, say) paths stay absolute. Default: paths
	// stay absolute.
	ProjectDir string
	// MaxLocations caps the locations, symbols or calls shown; the rest
	// are counted ("… 57 more in 12 files"). Default 100; negative means
	// no cap.
	MaxLocations int
}

// Locations is the result of Definition, Declaration, TypeDefinition,
// Implementation and References: every location the server answered, or
// a page of them (see Page), with the exact count of them all.
type Locations struct {
	Answer
	// Locations are sorted by path, then position, without duplicates:
	// the whole answer, or the page of it that starts at Offset.
	Locations []Location `json:"locations"`
	// Total is how many locations the whole answer has, exact even when
	// Locations holds a page of them.
	Total int `json:"total"`
	// Offset is the 0-based index in the whole answer of Locations[0]: 0
	// unless this is a page that starts further on.
	Offset int `json:"offset,omitempty"`
}

// Hover is the result of Hover.
type Hover struct {
	Answer
	// Markdown is the hover text as Markdown: MarkupContent as it came
	// (plain text as it came), MarkedStrings joined with code blocks for
	// their languages. "" when the server had nothing to say.
	Markdown string `json:"markdown"`
	// Range is the range the hover applies to, when the server gave one.
	Range *Location `json:"range,omitempty"`
}

// SymbolKind is an LSP SymbolKind (1 file … 26 type parameter).
type SymbolKind int

// Symbol is a symbol a server reported: a declaration in a document
// (DocumentSymbols, hierarchical) or a match of a workspace query.
type Symbol struct {
	Name string     `json:"name"`
	Kind SymbolKind `json:"kind"`
	// Detail is the server's detail, such as a signature; may be "".
	Detail string `json:"detail,omitempty"`
	// Container names the enclosing symbol, for workspace symbols (and
	// flat document symbols); may be "".
	Container string `json:"container,omitempty"`
	// Location is the symbol's name (its selection range) when the server
	// gave one, else its whole range.
	Location Location `json:"location"`
	// EndLine is the last line of the symbol's whole range (the end of a
	// function's body), 1-based; 0 when not known.
	EndLine int `json:"endLine,omitempty"`
	// Children are the symbols declared inside this one, in document
	// order.
	Children []Symbol `json:"children,omitempty"`
}

// Symbols is the result of DocumentSymbols and WorkspaceSymbols.
type Symbols struct {
	Answer
	// Path is the document, for DocumentSymbols.
	Path string `json:"path,omitempty"`
	// Query is the query, for WorkspaceSymbols.
	Query string `json:"query,omitempty"`
	// Symbols are the document's top-level symbols in document order, or
	// the workspace matches in the server's order (its ranking): all of
	// them, or the page of them that starts at Offset (see Page).
	Symbols []Symbol `json:"symbols"`
	// Total is how many top-level symbols (workspace matches) the whole
	// answer has, exact even when Symbols holds a page of them. A server
	// may cap its own answer to a workspace query (gopls sends at most
	// 100): Total counts what it sent.
	Total int `json:"total"`
	// Offset is the 0-based index in the whole answer of Symbols[0]: 0
	// unless this is a page that starts further on.
	Offset int `json:"offset,omitempty"`
}

// CallItem is an item of a call hierarchy: a function, method or
// constructor.
type CallItem struct {
	Name   string     `json:"name"`
	Kind   SymbolKind `json:"kind"`
	Detail string     `json:"detail,omitempty"`
	// Location is the item's name (its selection range).
	Location Location `json:"location"`
	// raw is the item as the server sent it, for incoming and outgoing
	// calls.
	raw []byte
}

// Call is one edge of a call hierarchy.
type Call struct {
	// Item is the caller (incoming calls) or the callee (outgoing calls).
	Item CallItem `json:"item"`
	// Sites are where the calls are: in the caller for incoming calls, in
	// the item asked about for outgoing calls. Sorted.
	Sites []Location `json:"sites"`
}

// CallHierarchy is the result of PrepareCallHierarchy, IncomingCalls and
// OutgoingCalls.
type CallHierarchy struct {
	Answer
	// Items are what the position names (usually one).
	Items []CallItem `json:"items"`
	// Calls are the incoming or outgoing calls of the items, sorted by
	// the item's path and position; nil for PrepareCallHierarchy. All of
	// them, or the page of them that starts at Offset (see Page).
	Calls []Call `json:"calls,omitempty"`
	// Total is how many calls the whole answer has, exact even when Calls
	// holds a page of them.
	Total int `json:"total"`
	// Offset is the 0-based index in the whole answer of Calls[0]: 0
	// unless this is a page that starts further on.
	Offset int `json:"offset,omitempty"`
}

// FileState is the state of a file when an edit of it was computed (see
// FileEdit.Base): the same type as idebridge.FileState, so that a
// rename's file edits can go to idebridge.Reviewer.ProposeEdit as they
// are.
type FileState = atomicfile.State

// EditConflictError reports a file edit not written because the file
// changed on disk since the edit was computed; it matches ErrEditConflict.
// It is the same type as idebridge.ConflictError.
type EditConflictError = atomicfile.ConflictError

// ErrEditConflict is matched (errors.Is) by every *EditConflictError; it
// is the same error as idebridge.ErrConflict.
var ErrEditConflict = atomicfile.ErrConflict

// ErrOutsideRoots is matched (errors.Is) by the error of an ApplyRename
// refused because some of its files lie outside ManagerOptions.Roots.
var ErrOutsideRoots = atomicfile.ErrOutside

// FileEdit is a rename's proposed change of one file.
type FileEdit struct {
	// Path is the file's absolute path.
	Path string `json:"path"`
	// Edits counts the server's text edits in the file.
	Edits int `json:"edits"`
	// OldText is the file's text the edits were applied to; NewText the
	// result.
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
	// Diff is the unified diff from OldText to NewText, its header naming
	// the path relative to the project.
	Diff string `json:"diff"`
	// Base is the file's state on disk when the edit was computed; the
	// edit is written only while the file still has this content.
	Base *FileState `json:"base"`
}

// RenameProposal is the result of Rename: the server's WorkspaceEdit as
// proposed file texts. Nothing is written until ApplyRename.
type RenameProposal struct {
	Answer
	// NewName is the new name.
	NewName string `json:"newName"`
	// Files are sorted by path.
	Files []FileEdit `json:"files"`
	// Diff is the unified diff of every file, in the order of Files.
	Diff string `json:"diff"`
}

// ApplyStatus is what became of one file of a rename.
type ApplyStatus string

// The outcomes of one file of ApplyRename.
const (
	// ApplyWritten: the file was written (the user may have changed the
	// proposal in the IDE's diff view first).
	ApplyWritten ApplyStatus = "written"
	// ApplyRejected: the user declined this file; it is untouched.
	ApplyRejected ApplyStatus = "rejected"
	// ApplyCancelled: the review was cancelled (the user's ESC, or ctx);
	// the file is untouched and no later file is proposed.
	ApplyCancelled ApplyStatus = "cancelled"
	// ApplyConflict: the file changed on disk since the rename was
	// computed; it is untouched.
	ApplyConflict ApplyStatus = "conflict"
	// ApplyFailed: proposing or writing the file failed; it is untouched.
	ApplyFailed ApplyStatus = "failed"
	// ApplySkipped: not proposed, because an earlier file was cancelled.
	ApplySkipped ApplyStatus = "skipped"
)

// ProposeFunc shows one file's edit to the user and writes it when they
// accept, as idebridge.Reviewer.ProposeEdit does (pass edit.Base as the
// request's Base so that a file changed meanwhile is not overwritten). It
// returns what became of the file; an error is reported with the file's
// outcome and does not stop the other files (except with ApplyCancelled).
type ProposeFunc func(ctx context.Context, edit *FileEdit) (ApplyStatus, error)

// FileApplied is the outcome of one file of ApplyRename.
type FileApplied struct {
	Path   string      `json:"path"`
	Status ApplyStatus `json:"status"`
	// Error says why, for ApplyConflict and ApplyFailed.
	Error string `json:"error,omitempty"`
}

// RenameApplied is the result of ApplyRename.
type RenameApplied struct {
	// Files are in the order of the proposal's files.
	Files []FileApplied `json:"files"`
	// Written counts the files written.
	Written int `json:"written"`
}

// NavRequest is any navigation operation as data, for callers that
// dispatch by name (an MCP tool, the C ABI): see Manager.Navigate.
type NavRequest struct {
	Op NavOp `json:"op"`
	// At is the place (every operation but WorkspaceSymbols; only its Path
	// for DocumentSymbols).
	At Pos `json:"at"`
	// Query is the query of WorkspaceSymbols; At.Path, when given, picks
	// the server.
	Query string `json:"query,omitempty"`
	// IncludeDeclaration makes References include the declaration.
	IncludeDeclaration bool `json:"includeDeclaration,omitempty"`
	// NewName is the new name for Rename.
	NewName string `json:"newName,omitempty"`
	// Offset and Limit page a result that is a list: of locations
	// (Locations.Page), symbols (Symbols.Page), calls
	// (CallHierarchy.Page) or types (TypeHierarchy.Page): at most Limit
	// entries from the 0-based Offset on; Limit 0 means all of them from
	// Offset on. The result's total stays the whole answer's. Hover and
	// Rename ignore them.
	Offset int `json:"offset,omitempty"`
	Limit  int `json:"limit,omitempty"`
}

// ProjectDir returns the manager's project directory
// (ManagerOptions.ProjectDir, made absolute): the directory the renderings
// of navigation results are relative to.
func (m *Manager) ProjectDir() string { return m.opts.ProjectDir }

// pageBounds returns the part [lo, hi) of a list of n entries whose first
// is entry first of the whole answer that the page of at most limit
// entries from offset holds (limit <= 0: every one from offset); a
// negative offset counts as 0.
func pageBounds(first, n, offset, limit int) (lo, hi int) {
	lo = min(max(offset-first, 0), n)
	hi = n
	if limit > 0 && limit < hi-lo {
		hi = lo + limit
	}
	return lo, hi
}

// Page returns the page of res that holds at most limit locations from
// the 0-based offset on (limit <= 0: all of them from offset on), with
// Total still the whole answer's: Locations[i] of the page is entry
// Offset+i of the whole answer. An offset past the end gives an empty
// page. res is not changed; a page of a page holds what both hold.
// PageOf says where the next page starts.
func (res *Locations) Page(offset, limit int) *Locations {
	out := *res
	out.Total = res.total()
	lo, hi := pageBounds(res.Offset, len(res.Locations), offset, limit)
	out.Locations = res.Locations[lo:hi:hi]
	out.Offset = max(offset, res.Offset)
	return &out
}

// total is Total, or the number of locations of a result made without it.
func (res *Locations) total() int { return totalOf(res.Total, res.Offset, len(res.Locations)) }

// totalOf is a result's total, given its Total, Offset and number of
// entries: Total, or for a result made without it, as many as it holds.
func totalOf(total, offset, n int) int {
	if total > 0 || n == 0 {
		return total
	}
	return offset + n
}

// Page returns the page of res that holds at most limit top-level
// symbols from the 0-based offset on (limit <= 0: all of them from offset
// on), with Total still the whole answer's, as Locations.Page does. res
// is not changed.
func (res *Symbols) Page(offset, limit int) *Symbols {
	out := *res
	out.Total = res.total()
	lo, hi := pageBounds(res.Offset, len(res.Symbols), offset, limit)
	out.Symbols = res.Symbols[lo:hi:hi]
	out.Offset = max(offset, res.Offset)
	return &out
}

func (res *Symbols) total() int { return totalOf(res.Total, res.Offset, len(res.Symbols)) }

// Page returns the page of res that holds at most limit calls from the
// 0-based offset on (limit <= 0: all of them from offset on), with Total
// still the whole answer's, as Locations.Page does. res is not changed.
func (res *CallHierarchy) Page(offset, limit int) *CallHierarchy {
	out := *res
	out.Total = totalOf(res.Total, res.Offset, len(res.Calls))
	lo, hi := pageBounds(res.Offset, len(res.Calls), offset, limit)
	if res.Calls != nil {
		out.Calls = res.Calls[lo:hi:hi]
	}
	out.Offset = max(offset, res.Offset)
	return &out
}

// PageInfo says which part of its whole answer a result that is a list
// holds: Returned entries from the 0-based Offset on, of Total.
type PageInfo struct {
	Offset, Returned, Total int
}

// Rest returns how many entries of the whole answer come after the page;
// the next page starts at Offset+Returned.
func (p PageInfo) Rest() int { return max(p.Total-p.Offset-p.Returned, 0) }

// PageOf returns which part of its whole answer res holds, for a result
// that is a list (locations, symbols, calls, types); ok is false for the
// others (hover, a rename, a call or type hierarchy's prepare).
func PageOf(res NavResult) (p PageInfo, ok bool) {
	switch r := res.(type) {
	case *Locations:
		return PageInfo{r.Offset, len(r.Locations), r.total()}, true
	case *Symbols:
		return PageInfo{r.Offset, len(r.Symbols), r.total()}, true
	case *CallHierarchy:
		if r.Calls != nil {
			return PageInfo{r.Offset, len(r.Calls), totalOf(r.Total, r.Offset, len(r.Calls))}, true
		}
	case *TypeHierarchy:
		if r.Types != nil {
			return PageInfo{r.Offset, len(r.Types), totalOf(r.Total, r.Offset, len(r.Types))}, true
		}
	}
	return PageInfo{}, false
}
