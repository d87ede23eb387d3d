package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/mcp"
)

// posArgs address a place in a file as models name one reliably.
type posArgs struct {
	File       string `json:"file"`
	Line       int    `json:"line"`
	Column     int    `json:"column"`
	Symbol     string `json:"symbol"`
	Occurrence int    `json:"occurrence"`
}

// posProps are the schema properties of posArgs.
var posProps = []prop{
	{"file", typed("string", "The file: a path relative to the project directory, or absolute.")},
	{"line", `{"type":"integer","minimum":1,"description":"1-based line of the symbol."}`},
	{"column", `{"type":"integer","minimum":1,"description":"1-based column of the symbol on the line, in characters. Give column or symbol."}`},
	{"symbol", typed("string", "The symbol's text as it appears on the line, instead of a column (for a qualified name such as fmt.Println, the last part is meant).")},
	{"occurrence", `{"type":"integer","minimum":1,"description":"Which occurrence of symbol on the line, 1-based; needed only when it occurs more than once."}`},
}

// paging is the paging rule, for the descriptions of the tools that page.
const paging = " A long answer comes in pages: at most limit entries (default 100) from offset (default 0), with the exact total and the offset of the next page."

// addressing is the addressing rule, for the tools' descriptions.
const addressing = " Address the symbol by file, 1-based line, and either a 1-based column or its text on that line (symbol, with occurrence when it appears more than once)."

// pos checks the address and returns it as the library's Pos.
func (a *posArgs) pos(p project, tool string) (lsp.Pos, *mcp.ToolResult) {
	switch {
	case a.File == "":
		return lsp.Pos{}, errorf("%s needs file, the path of the file the symbol is in.", tool)
	case a.Line < 1:
		return lsp.Pos{}, errorf("%s needs line, the symbol's 1-based line.", tool)
	case a.Column < 0:
		return lsp.Pos{}, errorf("column is 1-based: 1 or more.")
	case a.Column > 0 && a.Symbol != "":
		return lsp.Pos{}, errorf("Give column or symbol, not both.")
	case a.Column == 0 && a.Symbol == "":
		return lsp.Pos{}, errorf("%s needs column (1-based) or symbol (the symbol's text on line %d).", tool, a.Line)
	case a.Occurrence < 0 || a.Occurrence > 0 && a.Symbol == "":
		return lsp.Pos{}, errorf("occurrence is 1-based and goes with symbol.")
	}
	path, bad := p.confine(a.File)
	if bad != nil {
		return lsp.Pos{}, bad
	}
	return lsp.Pos{Path: path, Line: a.Line, Column: a.Column, Symbol: a.Symbol, Occurrence: a.Occurrence}, nil
}

// navigator runs the navigation tools on the manager's servers.
type navigator struct {
	m    *lsp.Manager
	p    project
	link *ideLink
}

// answer renders a navigation result for the model and for programs:
// locations outside the roots lose their source line in both.
func (n *navigator) answer(res lsp.NavResult, direction string) *mcp.ToolResult {
	return n.answerPage(res, direction, "")
}

// answerPage is answer for a result of a tool that pages (tool names it):
// the page is listed whole, and the text says how to ask for the rest.
func (n *navigator) answerPage(res lsp.NavResult, direction, tool string) *mcp.ToolResult {
	c := &converter{f: n.p.filter()}
	c.scrub(res)
	opts := &lsp.NavRenderOptions{ProjectDir: n.p.dir}
	if tool != "" {
		opts.MaxLocations = -1 // the page is the bound
	}
	text := res.Render(opts)
	if c.scrubbed > 0 {
		text = strings.TrimSuffix(text, "\n") + "\n(Files outside the project are listed without their source lines.)\n"
	}
	if p, ok := lsp.PageOf(res); tool != "" && ok && p.Rest() > 0 {
		text = strings.TrimSuffix(text, "\n") + fmt.Sprintf("\n(%d more: call %s again with offset %d for the next ones.)\n", p.Rest(), tool, p.Offset+p.Returned)
	}
	out := mcp.TextResult(text)
	return withStructured(out, c.navStructured(res, direction))
}

// pageArgs page a list of locations or symbols.
type pageArgs struct {
	Offset int  `json:"offset"`
	Limit  *int `json:"limit"`
}

// maxLimit bounds a page: an answer of more entries is paged.
const maxLimit = 1000

// pageProps are the schema properties of pageArgs.
var pageProps = []prop{
	{"offset", `{"type":"integer","minimum":0,"default":0,"description":"0-based index of the first entry to list: to see more of a long answer, call again with the offset the answer names."}`},
	{"limit", fmt.Sprintf(`{"type":"integer","minimum":1,"maximum":%d,"default":%d,"description":"How many entries to list at most (default %d). The answer always says the exact total."}`, maxLimit, lsp.DefaultMaxLocations, lsp.DefaultMaxLocations)},
}

// page checks the paging arguments and returns them as offset and limit.
func (a *pageArgs) page() (offset, limit int, bad *mcp.ToolResult) {
	limit = lsp.DefaultMaxLocations
	if a.Limit != nil {
		limit = *a.Limit
	}
	switch {
	case a.Offset < 0:
		return 0, 0, errorf("offset is 0-based: 0 or more, not %d.", a.Offset)
	case limit < 1 || limit > maxLimit:
		return 0, 0, errorf("limit is 1 to %d, not %d; to see more, page with offset.", maxLimit, limit)
	}
	return a.Offset, limit, nil
}

// withPage is props with the paging properties added.
func withPage(props []prop, more ...prop) []prop {
	out := append(props[:len(props):len(props)], more...)
	return append(out, pageProps...)
}

// failed turns a navigation error into a sentence a model can act on.
func (n *navigator) failed(tool string, err error) *mcp.ToolResult {
	var pe *lsp.PosError
	var ne *lsp.NoServerError
	switch {
	case errors.As(err, &pe):
		return mcp.ErrorResult(relPosError(n.p, pe))
	case errors.As(err, &ne):
		res := errorf("No language server serves %s (%s files), so %s cannot answer for it. %s", clip(n.p.rel(ne.Path)), extOf(ne.Path), tool, serversSentence(n.m))
		res.StructuredContent = failure(statusUnknown, "no language server serves "+extOf(ne.Path)+" files")
		return res
	case errors.Is(err, lsp.ErrUnsupported):
		return errorf("%v.", err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return errorf("%s ended before the language server answered (%v).", tool, err)
	case serverDown(err):
		res := errorf("%s failed: %v", tool, err)
		res.StructuredContent = failure(statusServerDown, clip(err.Error()))
		return res
	}
	return errorf("%s failed: %v", tool, err)
}

// serversSentence says which language servers this server has, for which
// extensions, or that it has none and how one is configured: the model
// reads it in the tool result (it never sees the server's log).
func serversSentence(m *lsp.Manager) string {
	sts := m.Servers()
	if len(sts) == 0 {
		return "No language server is configured for this project: the user can install a Claude Code LSP plugin for the language, or give the server a .lsp.json configuration (idebridge mcp --config FILE)."
	}
	parts := make([]string, len(sts))
	for i, st := range sts {
		parts[i] = fmt.Sprintf("%s (%s)", st.Name, strings.Join(st.Extensions, " "))
	}
	return "The language servers here: " + strings.Join(parts, ", ") + "; the user can add one for other files with a Claude Code LSP plugin or a .lsp.json configuration (idebridge mcp --config FILE)."
}

// relPosError is a PosError's message with the path relative to the
// project and the occurrence named as this server's argument (the command
// line says #N).
func relPosError(p project, pe *lsp.PosError) string {
	e := *pe
	e.Pos.Path = p.rel(pe.Pos.Path)
	e.Pos.Occurrence = 0
	msg := e.Error()
	if n := len(pe.Columns); n > 1 {
		msg = strings.Replace(msg, fmt.Sprintf("say which with #1 … #%d, or give a column", n),
			fmt.Sprintf("say which with occurrence (1 to %d), or give column instead of symbol", n), 1)
	}
	if pe.Pos.Occurrence > 0 {
		msg = strings.Replace(msg, e.Pos.String(), fmt.Sprintf("%s (occurrence %d)", e.Pos, pe.Pos.Occurrence), 1)
	}
	return msg
}

// navDesc and friends describe the navigation tools.
func navTool[A any](name, title, description, input, output string, run func(ctx context.Context, a *A) *mcp.ToolResult) ideserver.Tool {
	return defineTool(toolSpec{name: name, title: title, description: description, input: input, output: output, readOnly: true}, run)
}

func navTools(n *navigator) []ideserver.Tool {
	locOut := outputSchema(locationsSchema)
	// locs is a tool whose answer is a list of locations, paged.
	locs := func(name, title, desc string, op lsp.NavOp) ideserver.Tool {
		return navTool(name, title, desc+paging+addressing, objectSchema(withPage(posProps), "file", "line"), locOut,
			func(ctx context.Context, a *struct {
				posArgs
				pageArgs
			}) *mcp.ToolResult {
				pos, bad := a.pos(n.p, name)
				if bad != nil {
					return bad
				}
				offset, limit, bad := a.page()
				if bad != nil {
					return bad
				}
				res, err := n.m.Navigate(ctx, lsp.NavRequest{Op: op, At: pos, Offset: offset, Limit: limit})
				if err != nil {
					return n.failed(name, err)
				}
				return n.answerPage(res, "", name)
			})
	}
	at := func(name, title, desc string, op lsp.NavOp, output string) ideserver.Tool {
		return navTool(name, title, desc+addressing, objectSchema(posProps, "file", "line"), output,
			func(ctx context.Context, a *posArgs) *mcp.ToolResult {
				pos, bad := a.pos(n.p, name)
				if bad != nil {
					return bad
				}
				res, err := n.m.Navigate(ctx, lsp.NavRequest{Op: op, At: pos})
				if err != nil {
					return n.failed(name, err)
				}
				return n.answer(res, "")
			})
	}
	return []ideserver.Tool{
		locs("definition", "Go to definition", "Where the symbol at a place in a file is defined: each location as path:line:column with its source line (a location outside the project is listed without it).", lsp.OpDefinition),
		locs("declaration", "Go to declaration", "Where the symbol at a place in a file is declared (for languages that tell declarations from definitions, such as C and C++; elsewhere the definition).", lsp.OpDeclaration),
		locs("type_definition", "Go to type definition", "Where the type of the symbol at a place in a file is defined (the type of a variable, field or expression).", lsp.OpTypeDefinition),
		locs("implementation", "Find implementations", "The implementations of the interface, abstract method or type at a place in a file (or the interfaces a type implements, where the server says so).", lsp.OpImplementation),
		navTool("references", "Find references",
			"Every reference to the symbol at a place in a file, across the project, grouped by file with each source line, the declaration included unless include_declaration is false."+paging+addressing,
			objectSchema(withPage(posProps,
				prop{"include_declaration", `{"type":"boolean","default":true,"description":"List the declaration itself too (default true, as idebridge lsp refs and editors' Find All References do)."}`}), "file", "line"),
			locOut,
			func(ctx context.Context, a *struct {
				posArgs
				pageArgs
				IncludeDeclaration *bool `json:"include_declaration"`
			}) *mcp.ToolResult {
				pos, bad := a.pos(n.p, "references")
				if bad != nil {
					return bad
				}
				offset, limit, bad := a.page()
				if bad != nil {
					return bad
				}
				res, err := n.m.Navigate(ctx, lsp.NavRequest{Op: lsp.OpReferences, At: pos, Offset: offset, Limit: limit,
					IncludeDeclaration: a.IncludeDeclaration == nil || *a.IncludeDeclaration})
				if err != nil {
					return n.failed("references", err)
				}
				return n.answerPage(res, "", "references")
			}),
		at("hover", "Hover", "What the language server shows when hovering over the symbol at a place in a file: its signature or type and its documentation, as Markdown.", lsp.OpHover, outputSchema(hoverSchema)),
		navTool("document_symbols", "Document symbols",
			"The symbols declared in a file (types, functions, methods, fields, ...), nested as in the source, each with its 1-based line.",
			objectSchema([]prop{{"file", typed("string", "The file: a path relative to the project directory, or absolute inside it.")}}, "file"),
			outputSchema(symbolsSchema, symbolDef),
			func(ctx context.Context, a *struct {
				File string `json:"file"`
			}) *mcp.ToolResult {
				if a.File == "" {
					return errorf("document_symbols needs file, the path of the file.")
				}
				path, bad := n.p.confine(a.File)
				if bad != nil {
					return bad
				}
				res, err := n.m.DocumentSymbols(ctx, path)
				if err != nil {
					return n.failed("document_symbols", err)
				}
				return n.answer(res, "")
			}),
		navTool("workspace_symbols", "Workspace symbols",
			"Find symbols by name across the project (the server's fuzzy match, best first), each with its location. file picks the language server: any file of the language to search."+paging,
			objectSchema(withPage([]prop{
				{"query", typed("string", "The name, or part of it, to search for.")},
				{"file", typed("string", "A file whose language server to ask (relative to the project, or absolute inside it); needed when the project has servers for several languages.")},
			}), "query"),
			outputSchema(symbolsSchema, symbolDef),
			func(ctx context.Context, a *struct {
				Query string `json:"query"`
				File  string `json:"file"`
				pageArgs
			}) *mcp.ToolResult {
				if strings.TrimSpace(a.Query) == "" {
					return errorf("workspace_symbols needs query, the name to search for.")
				}
				offset, limit, bad := a.page()
				if bad != nil {
					return bad
				}
				path := ""
				if a.File != "" {
					var bad *mcp.ToolResult
					if path, bad = n.p.confine(a.File); bad != nil {
						return bad
					}
				}
				req := lsp.NavRequest{Op: lsp.OpWorkspaceSymbols, Query: a.Query, At: lsp.Pos{Path: path}, Offset: offset, Limit: limit}
				res, err := n.m.Navigate(ctx, req)
				if path == "" && errors.Is(err, lsp.ErrNoServer) && n.startServers(ctx) {
					res, err = n.m.Navigate(ctx, req)
				}
				if err != nil {
					return n.failed("workspace_symbols", err)
				}
				return n.answerPage(res, "", "workspace_symbols")
			}),
		navTool("call_hierarchy", "Call hierarchy",
			"The callers (direction incoming) or the callees (direction outgoing) of the function or method at a place in a file, each with where the calls are."+paging+addressing,
			objectSchema(withPage(posProps,
				prop{"direction", `{"type":"string","enum":["incoming","outgoing"],"default":"incoming","description":"incoming: who calls it; outgoing: what it calls."}`}), "file", "line"),
			outputSchema(callsSchema, callItemDef),
			func(ctx context.Context, a *struct {
				posArgs
				pageArgs
				Direction string `json:"direction"`
			}) *mcp.ToolResult {
				op, dir := lsp.OpIncomingCalls, "incoming"
				switch a.Direction {
				case "", "incoming":
				case "outgoing":
					op, dir = lsp.OpOutgoingCalls, "outgoing"
				default:
					return errorf("direction is incoming or outgoing, not %q.", clip(a.Direction))
				}
				pos, bad := a.pos(n.p, "call_hierarchy")
				if bad != nil {
					return bad
				}
				offset, limit, bad := a.page()
				if bad != nil {
					return bad
				}
				res, err := n.m.Navigate(ctx, lsp.NavRequest{Op: op, At: pos, Offset: offset, Limit: limit})
				if err != nil {
					return n.failed("call_hierarchy", err)
				}
				return n.answerPage(res, dir, "call_hierarchy")
			}),
		navTool("type_hierarchy", "Type hierarchy",
			"The direct supertypes (direction supertypes: the classes it extends, the interfaces it implements) or subtypes (direction subtypes: the classes that extend it, the types that implement the interface) of the type at a place in a file, each with its location. Not every language server offers it."+paging+addressing,
			objectSchema(withPage(posProps,
				prop{"direction", `{"type":"string","enum":["supertypes","subtypes"],"description":"supertypes: what the type extends or implements; subtypes: what extends or implements it."}`}), "file", "line", "direction"),
			outputSchema(typesSchema, typeItemDef),
			func(ctx context.Context, a *struct {
				posArgs
				pageArgs
				Direction string `json:"direction"`
			}) *mcp.ToolResult {
				var op lsp.NavOp
				switch a.Direction {
				case "supertypes":
					op = lsp.OpSupertypes
				case "subtypes":
					op = lsp.OpSubtypes
				case "":
					return errorf("type_hierarchy needs direction: supertypes or subtypes.")
				default:
					return errorf("direction is supertypes or subtypes, not %q.", clip(a.Direction))
				}
				pos, bad := a.pos(n.p, "type_hierarchy")
				if bad != nil {
					return bad
				}
				offset, limit, bad := a.page()
				if bad != nil {
					return bad
				}
				res, err := n.m.Navigate(ctx, lsp.NavRequest{Op: op, At: pos, Offset: offset, Limit: limit})
				if err != nil {
					return n.failed("type_hierarchy", err)
				}
				return n.answerPage(res, a.Direction, "type_hierarchy")
			}),
		defineTool(toolSpec{name: "rename", title: "Rename symbol",
			description: "Rename the symbol at a place in a file everywhere the language server knows it is used, and show the change as a unified diff with what it changes in the diagnostics (introduced and resolved, in the changed files and the files that depend on them), checked before anything is written. With the user's IDE connected, each changed file opens in its diff viewer, and the rename is written only if the user accepts every file (all or nothing; a file they edited in the diff is written as they left it). Without an IDE nothing is written unless apply is true; then all files or none are written." + addressing,
			input: objectSchema(append(posProps[:len(posProps):len(posProps)],
				prop{"new_name", typed("string", "The new name.")},
				prop{"apply", `{"type":"boolean","description":"false: only show the diff. true: write the change, through the IDE's review when one is connected, else directly (atomically, refusing a file that changed since). Default: review in the IDE when connected, else only show the diff."}`}),
				"file", "line", "new_name"),
			output:      outputSchema(renameSchema, checkDef, verifiedFileDef, diagnosticDef),
			destructive: true, user: true},
			func(ctx context.Context, a *renameArgs) *mcp.ToolResult {
				return n.rename(ctx, a)
			}),
	}
}

type renameArgs struct {
	posArgs
	NewName string `json:"new_name"`
	Apply   *bool  `json:"apply"`
}

func (n *navigator) rename(ctx context.Context, a *renameArgs) *mcp.ToolResult {
	pos, bad := a.pos(n.p, "rename")
	if bad != nil {
		return bad
	}
	if strings.TrimSpace(a.NewName) == "" {
		return errorf("rename needs new_name, the symbol's new name.")
	}
	// The server's part is bounded; the user's review that follows is not.
	rctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	prop, err := n.m.Rename(rctx, pos, a.NewName)
	if err != nil {
		return n.failed("rename", err)
	}
	c := &converter{f: n.p.filter()}
	out := c.rename(prop)
	opts := &lsp.NavRenderOptions{ProjectDir: n.p.dir}
	proposal := prop.Render(opts)
	if len(prop.Files) == 0 {
		return withStructured(mcp.TextResult(proposal), out)
	}
	// The proposal is staged in the servers and checked before anything
	// is written: its answer says what it breaks or fixes, here and in
	// the files that depend on the renamed symbol.
	e := &editTool{m: n.m, p: n.p, link: n.link}
	es := n.m.NewEditSet()
	defer es.Discard(context.WithoutCancel(ctx))
	if err := es.Stage(rctx, prop.Edits()); err != nil {
		return n.failed("rename", err)
	}
	check, err := es.Check(rctx)
	if err != nil {
		return n.failed("rename", err)
	}
	out.Check = e.summary(check)
	checked := check.Render(n.p.dir)
	if a.Apply != nil && !*a.Apply {
		return withStructured(textf("%s\n%s", proposal, checked), out)
	}
	link, why := n.link.get(ctx)
	if link == nil && a.Apply == nil {
		return withStructured(textf("%s\n%s\nNot applied: no IDE is connected to review it (%s). Call rename again with apply true to write it, or edit the files yourself.", proposal, checked, strings.TrimSuffix(why, ".")), out)
	}
	// The proposal is answered once, with what became of it: its "Nothing
	// is written yet" is true only of a proposal not applied.
	head, diff, _ := strings.Cut(proposal, "\n")
	head = strings.TrimSuffix(head, " Nothing is written yet.")
	out.Applied, out.Via = true, "written directly (no IDE connected)"
	if link != nil {
		out.Via = "reviewed in " + link.name()
	}
	// Written all or none, through the edit pipeline: within the
	// manager's roots (lsp.ManagerOptions.Roots, which New sets to
	// n.p.roots), each file still as the rename found it, none with
	// unsaved changes in the IDE; with the IDE, every file reviewed first.
	w := e.write(ctx, es, link, true)
	applied := &lsp.RenameApplied{Files: make([]lsp.FileApplied, 0, len(prop.Files))}
	if w.applied == nil {
		var re *lsp.ReviewRefusedError
		if !errors.As(w.err, &re) {
			msg := strings.ReplaceAll(w.err.Error(), n.p.dir+"/", "")
			res := errorf("%s Applying it failed: %s; nothing was written.\n%s", head, msg, diff)
			out.Status, out.Reason = statusUnknown, clip(msg)
			return withStructured(res, out)
		}
		for _, f := range prop.Files {
			fa := lsp.FileApplied{Path: f.Path, Status: lsp.ApplySkipped}
			if f.Path == re.Path {
				fa.Status = renameStatus(w, re)
				if re.Err != nil {
					fa.Error = re.Err.Error()
				}
			} else {
				fa.Error = "not written: " + n.p.rel(re.Path) + " was not accepted, and a rename is written whole or not at all"
			}
			applied.Files = append(applied.Files, fa)
		}
		n.outcomes(out, applied)
		what := "rejected"
		if re.Err != nil {
			what = "not accepted (" + strings.ReplaceAll(re.Err.Error(), n.p.dir+"/", "") + ")"
		}
		out.Status, out.Reason = statusUnknown, clip(fmt.Sprintf("%s was %s in review; nothing was written", n.p.rel(re.Path), what))
		return withStructured(textf("%s Not applied: the edit of %s was %s in %s, so nothing was written (a rename is written whole or not at all).\n%s\n%s%s",
			head, n.p.rel(re.Path), what, link.name(), checked, applied.Render(opts), diff), out)
	}
	for _, f := range prop.Files {
		applied.Files = append(applied.Files, lsp.FileApplied{Path: f.Path, Status: lsp.ApplyWritten})
		applied.Written++
	}
	n.outcomes(out, applied)
	out.Written = applied.Written
	for _, p := range w.applied.Modified {
		out.Modified = append(out.Modified, n.p.rel(p))
	}
	if w.err != nil {
		out.Status, out.Reason = statusUnknown, clip(w.err.Error())
		return withStructured(textf("%s Applied, %s:\n%s%v\n%s", head, out.Via, applied.Render(opts), w.err, diff), out)
	}
	out.Check = e.summary(w.applied.Check)
	note := ""
	if len(out.Modified) > 0 {
		note = "The user changed " + strings.Join(out.Modified, ", ") + " in the review: that text was written and checked; read it again before editing it further.\n"
	}
	return withStructured(textf("%s Applied, %s:\n%s%s%s\n%s", head, out.Via, applied.Render(opts), note, w.applied.Check.Render(n.p.dir), w.applied.Check.Diff), out)
}

// outcomes records what became of each file in out.
func (n *navigator) outcomes(out *renameResult, applied *lsp.RenameApplied) {
	for i, f := range applied.Files {
		if i < len(out.Files) && out.Files[i].Path == f.Path {
			out.Files[i].Outcome, out.Files[i].Error = string(f.Status), f.Error
		}
	}
}

// renameStatus is the status of the file whose review stopped a rename.
func renameStatus(w *written, re *lsp.ReviewRefusedError) lsp.ApplyStatus {
	switch o := w.outcome(re.Path); {
	case re.Err == nil || o == "rejected":
		return lsp.ApplyRejected
	case o == "cancelled", errors.Is(re.Err, context.Canceled), errors.Is(re.Err, context.DeadlineExceeded):
		return lsp.ApplyCancelled
	}
	return lsp.ApplyFailed
}

// ReviewStatus is what one file's review in the IDE (an
// idebridge.Reviewer.ProposeEdit's result and error, under ctx) means for
// a rename: the answer of an lsp.ProposeFunc that reviews in the IDE.
func ReviewStatus(ctx context.Context, res *idebridge.EditResult, err error) (lsp.ApplyStatus, error) {
	switch {
	case errors.Is(err, idebridge.ErrConflict):
		return lsp.ApplyConflict, err
	case err != nil && ctx.Err() != nil:
		return lsp.ApplyCancelled, err
	case err != nil:
		return lsp.ApplyFailed, err
	case res.Cancelled:
		return lsp.ApplyCancelled, nil
	case res.Written:
		return lsp.ApplyWritten, nil
	case res.Status == idebridge.EditRejected:
		return lsp.ApplyRejected, nil
	}
	return lsp.ApplyRejected, fmt.Errorf("the IDE did not accept the edit (it answered %q)", res.IDEAnswer)
}

// maxWalk bounds the entries startServers looks at.
const maxWalk = 20000

// startServers starts the server of each language the project has a file
// of (the first found, walking the project without hidden directories,
// node_modules and vendor), so that a workspace query without a file has
// servers to ask. It reports whether any started.
func (n *navigator) startServers(ctx context.Context) bool {
	want := map[string]bool{}
	for _, st := range n.m.Servers() {
		want[st.Name] = true
	}
	started, seen := false, 0
	_ = filepath.WalkDir(n.p.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil || len(want) == 0 || seen > maxWalk {
			return filepath.SkipAll
		}
		seen++
		if d.IsDir() {
			if name := d.Name(); path != n.p.dir && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		name, err := n.m.ServerFor(path)
		if err != nil || !want[name] {
			return nil
		}
		delete(want, name)
		if n.m.Open(ctx, path) == nil {
			started = true
		}
		return nil
	})
	return started
}
