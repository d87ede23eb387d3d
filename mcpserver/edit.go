package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/mcp"
)

// maxEdits bounds the edits of one preview_edit or apply_edit call.
const maxEdits = 100

// editArgs are the arguments of preview_edit and apply_edit: each edit as
// the library decodes and checks it for every surface (lsp.EditItem).
type editArgs struct {
	Edits []lsp.EditItem `json:"edits"`
}

const editItemSchema = `{"type":"object","properties":{` +
	`"file":{"type":"string","description":"The file: a path relative to the project directory, or absolute inside it."},` +
	`"old_string":{"type":"string","description":"Text that occurs exactly once in the file (as the edits before this one leave it), replaced by new_string."},` +
	`"new_string":{"type":"string","description":"What replaces old_string."},` +
	`"new_text":{"type":"string","description":"The file's whole new text, instead of old_string and new_string."},` +
	`"symbol":{"type":"string","description":"A symbol of the file by name path (Square.Area, main; add [2] for the second of several), for a symbol-level edit with body or action."},` +
	`"body":{"type":"string","description":"The symbol's new body (what goes between its braces, or its indented block)."},` +
	`"action":{"type":"string","enum":["body","replace","insert_before","insert_after","delete"],"description":"What to do to symbol with text: body replaces its body, replace its whole declaration, insert_before and insert_after add text beside it, delete removes it (refused while it is still referenced, unless force)."},` +
	`"text":{"type":"string","description":"The text for action."},` +
	`"force":{"type":"boolean","description":"Delete the symbol even though it is still referenced."},` +
	`"format":{"type":"boolean","description":"true: format the file (as the edits before this one leave it) with its language server; alone, with file."},` +
	`"fix":{"type":"string","description":"The title of a code action at line (as the fixes tool lists them, or a part of it that names one): a quick fix, organize imports, a refactoring."},` +
	`"line":{"type":"integer","minimum":1,"description":"The 1-based line of fix."}},` +
	`"required":["file"],"additionalProperties":false}`

// editsInput is the input schema of preview_edit and apply_edit.
var editsInput = objectSchema([]prop{{"edits", `{"type":"array","minItems":1,"maxItems":100,"items":` + editItemSchema +
	`,"description":"The edits, applied in order; several edits of one file apply one after the other. Each is {file, old_string, new_string}, {file, new_text}, {file, symbol, body}, {file, symbol, action, text}, {file, format: true} or {file, line, fix}."}`}}, "edits")

// The schema of preview_edit's and apply_edit's structured results.
const (
	verifiedSchema = statusProps + `,"diff":{"type":"string","description":"The unified diff of the edits."},` +
		`"introduced":{"type":"integer","minimum":0},"resolved":{"type":"integer","minimum":0},` +
		`"unchecked":{"type":"integer","minimum":0,"description":"Dependent files left out of the check by its bound."},` +
		`"applied":{"type":"boolean"},"written":{"type":"array","items":{"type":"string"}},` +
		`"files":{"type":"array","items":{"$ref":"#/$defs/verifiedFile"}}`
	verifiedFileDef = `"verifiedFile":{"type":"object","properties":{"path":{"type":"string"},"edited":{"type":"boolean","description":"false: a file that depends on the edited ones."},` +
		`"server":{"type":"string"},"status":{"type":"string","enum":["complete","partial","unknown","server-down"]},"reason":{"type":"string"},` +
		`"introduced":{"type":"array","items":{"$ref":"#/$defs/diagnostic"}},"resolved":{"type":"array","items":{"$ref":"#/$defs/diagnostic"}},` +
		`"more":{"type":"integer","minimum":1,"description":"Diagnostics introduced or resolved beyond the 50 listed, the most severe first."}},` +
		`"required":["path","edited","introduced","resolved"],"additionalProperties":false}`
	fixesSchema = statusProps + `,"server":{"type":"string"},"path":{"type":"string"},"line":{"type":"integer","minimum":1},` +
		`"actions":{"type":"array","items":{"type":"object","properties":{"title":{"type":"string"},"kind":{"type":"string"},"preferred":{"type":"boolean"},` +
		`"fixes":{"type":"array","items":{"type":"string"},"description":"The messages of the diagnostics it fixes."},"disabled":{"type":"string","description":"Why it cannot be applied here."}},` +
		`"required":["title"],"additionalProperties":false}}`
	symbolSourceSchema = statusProps + `,"path":{"type":"string"},"symbol":{"type":"string"},"line":{"type":"integer","minimum":1},"endLine":{"type":"integer","minimum":1},"text":{"type":"string"}`
)

type verifiedResult struct {
	Status     string         `json:"status"`
	Reason     string         `json:"reason,omitempty"`
	Diff       string         `json:"diff"`
	Introduced int            `json:"introduced"`
	Resolved   int            `json:"resolved"`
	Unchecked  int            `json:"unchecked"`
	Applied    bool           `json:"applied"`
	Written    []string       `json:"written"`
	Files      []verifiedFile `json:"files"`
}

type verifiedFile struct {
	Path       string       `json:"path"`
	Edited     bool         `json:"edited"`
	Server     string       `json:"server,omitempty"`
	Status     string       `json:"status,omitempty"`
	Reason     string       `json:"reason,omitempty"`
	Introduced []diagnostic `json:"introduced"`
	Resolved   []diagnostic `json:"resolved"`
	More       int          `json:"more,omitempty"`
}

// maxListedPerFile bounds the diagnostics of one file in the structured
// result, introduced first.
const maxListedPerFile = 50

// editTool runs the edit tools.
type editTool struct {
	m    *lsp.Manager
	p    project
	link *ideLink
}

func editTools(e *editTool) []ideserver.Tool {
	return []ideserver.Tool{
		defineTool(toolSpec{name: "preview_edit", title: "Preview edits",
			description: "Check edits before writing them: the edits go to the language servers as unsaved text (nothing is written), and the answer is their unified diff and what they change in the diagnostics, introduced (+) and resolved (-), in the edited files and in the files that depend on them (those that use the symbols the edits touch, and the rest of their directories). Several edits are judged together: stage a breaking change with its fixes to see that nothing is left broken. Then call apply_edit with the same edits.",
			input:       editsInput, output: outputSchema(verifiedSchema, verifiedFileDef, diagnosticDef), readOnly: true},
			func(ctx context.Context, a *editArgs) *mcp.ToolResult { return e.run(ctx, a, false) }),
		defineTool(toolSpec{name: "apply_edit", title: "Apply edits",
			description: "Write edits, all of them or none: each file must still be as it was on disk when the call began, and, when the user's IDE is connected, must have no unsaved changes there. The answer is the diff written and what it changed in the diagnostics of the edited files and their dependents. Takes the edits preview_edit takes.",
			input:       editsInput, output: outputSchema(verifiedSchema, verifiedFileDef, diagnosticDef), destructive: true},
			func(ctx context.Context, a *editArgs) *mcp.ToolResult { return e.run(ctx, a, true) }),
		defineTool(toolSpec{name: "fixes", title: "Fixes and code actions",
			description: "The code actions the language server offers for a line of a file, as the file is on disk: quick fixes for the diagnostics on the line (a missing import, ...), organize imports, refactorings. Stage one in preview_edit or apply_edit as {file, line, fix: its title}.",
			input: objectSchema([]prop{
				{"file", typed("string", "The file: a path relative to the project directory, or absolute inside it.")},
				{"line", `{"type":"integer","minimum":1,"description":"The 1-based line."}`},
			}, "file", "line"),
			output: outputSchema(fixesSchema), readOnly: true},
			func(ctx context.Context, a *struct {
				File string `json:"file"`
				Line int    `json:"line"`
			}) *mcp.ToolResult {
				return e.fixes(ctx, a.File, a.Line)
			}),
		defineTool(toolSpec{name: "symbol_source", title: "Symbol source",
			description: "The current text of a symbol's declaration in a file, by name path (Square.Area, main; add [2] for the second of several), found through the language server's document symbols, with its 1-based first and last lines.",
			input: objectSchema([]prop{
				{"file", typed("string", "The file: a path relative to the project directory, or absolute inside it.")},
				{"symbol", typed("string", "The symbol's name path: Type.Method, a function's name, ...")},
			}, "file", "symbol"),
			output: outputSchema(symbolSourceSchema), readOnly: true},
			func(ctx context.Context, a *struct {
				File   string `json:"file"`
				Symbol string `json:"symbol"`
			}) *mcp.ToolResult {
				return e.symbolSource(ctx, a.File, a.Symbol)
			}),
	}
}

// edits checks and converts the tool's edits, confining their files.
func (e *editTool) edits(tool string, a *editArgs) ([]lsp.Edit, *mcp.ToolResult) {
	if len(a.Edits) == 0 {
		return nil, errorf("%s needs edits, a list of at least one edit.", tool)
	}
	if len(a.Edits) > maxEdits {
		return nil, errorf("%s takes at most %d edits; this call has %d.", tool, maxEdits, len(a.Edits))
	}
	out := make([]lsp.Edit, 0, len(a.Edits))
	for i, it := range a.Edits {
		ed, err := it.Edit()
		if err != nil {
			return nil, errorf("Edit %d: %v.", i+1, err)
		}
		path, bad := e.p.confine(ed.File)
		if bad != nil {
			return nil, bad
		}
		ed.File = path
		out = append(out, ed)
	}
	return out, nil
}

// run stages the edits, checks them and, for apply_edit, writes them; the
// edits are discarded from the servers whatever happens.
func (e *editTool) run(ctx context.Context, a *editArgs, apply bool) *mcp.ToolResult {
	tool := "preview_edit"
	if apply {
		tool = "apply_edit"
	}
	edits, bad := e.edits(tool, a)
	if bad != nil {
		return bad
	}
	es := e.m.NewEditSet()
	defer es.Discard(context.WithoutCancel(ctx))
	if err := es.Stage(ctx, edits); err != nil {
		return e.failed(tool, err, "")
	}
	var check *lsp.EditCheck
	out := &verifiedResult{Written: []string{}, Files: []verifiedFile{}}
	if !apply {
		c, err := es.Check(ctx)
		if err != nil {
			return e.failed(tool, err, es.Diff())
		}
		check = c
	} else {
		diff := es.Diff()
		applied, err := es.Apply(ctx, &lsp.ApplyOptions{BeforeWrite: e.notDirty})
		if applied == nil {
			return e.failed(tool, err, diff)
		}
		out.Applied = true
		for _, p := range applied.Written {
			out.Written = append(out.Written, e.p.rel(p))
		}
		if err != nil {
			out.Diff, out.Status, out.Reason = diff, statusUnknown, clip(err.Error())
			return withStructured(textf("Written: %s. %v\n%s", strings.Join(out.Written, ", "), err, diff), out)
		}
		check = applied.Check
	}
	out.Diff, out.Introduced, out.Resolved, out.Unchecked = check.Diff, check.Introduced, check.Resolved, check.Unchecked
	out.Status = string(check.Status)
	var partial []string
	for _, f := range check.Files {
		ef := verifiedFile{Path: f.Path, Edited: f.Edited, Server: f.Server, Status: string(f.Status), Reason: clip(f.Reason),
			Introduced: []diagnostic{}, Resolved: []diagnostic{}}
		for _, d := range f.Introduced[:min(len(f.Introduced), maxListedPerFile)] {
			ef.Introduced = append(ef.Introduced, structuredDiagnostic(d))
		}
		for _, d := range f.Resolved[:min(len(f.Resolved), maxListedPerFile-len(ef.Introduced))] {
			ef.Resolved = append(ef.Resolved, structuredDiagnostic(d))
		}
		ef.More = len(f.Introduced) + len(f.Resolved) - len(ef.Introduced) - len(ef.Resolved)
		if f.Server != "" && f.Status != lsp.StatusComplete {
			partial = append(partial, e.p.rel(f.Path)+": "+f.Reason)
		}
		out.Files = append(out.Files, ef)
	}
	if len(partial) > 0 {
		out.Reason = clip(strings.Join(partial, "; "))
	}
	head := "Preview (nothing written):"
	if apply {
		head = "Written: " + strings.Join(out.Written, ", ") + "."
	}
	return withStructured(textf("%s\n%s\n%s", head, check.Render(e.p.dir), check.Diff), out)
}

// failed answers an edit that could not be staged, checked or written.
func (e *editTool) failed(tool string, err error, diff string) *mcp.ToolResult {
	msg := strings.ReplaceAll(err.Error(), e.p.dir+"/", "")
	var ne *lsp.NoServerError
	var res *mcp.ToolResult
	switch {
	case errors.As(err, &ne):
		res = errorf("%s: %s", tool, msg)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		res = errorf("%s ended before the language servers answered (%v); nothing was written.", tool, err)
	default:
		res = errorf("%s: %s; nothing was written.", tool, msg)
	}
	if diff != "" {
		res.Content[0].Text += "\n" + diff
	}
	status := statusUnknown
	if serverDown(err) {
		status = statusServerDown
	}
	res.StructuredContent = failure(status, clip(msg))
	return res
}

// notDirty refuses a write under unsaved changes in the user's IDE, when
// one is connected and offers checkDocumentDirty.
func (e *editTool) notDirty(ctx context.Context, paths []string) error {
	c, _ := e.link.get(ctx)
	if c == nil {
		return nil
	}
	tools, err := c.client.Tools(ctx)
	if err != nil {
		return fmt.Errorf("asking %s which files have unsaved changes: %w", c.name(), err)
	}
	if !slices.ContainsFunc(tools, func(t mcp.Tool) bool { return t.Name == mcp.ToolCheckDocumentDirty }) {
		return nil
	}
	var dirty []string
	for _, p := range paths {
		st, err := c.client.CheckDocumentDirty(ctx, p)
		var te *mcp.ToolError
		switch {
		case errors.As(err, &te):
			continue // not open in the IDE: nothing unsaved
		case err != nil:
			return fmt.Errorf("asking %s whether %s has unsaved changes: %w", c.name(), e.p.rel(p), err)
		case st.IsDirty:
			dirty = append(dirty, e.p.rel(p))
		}
	}
	if len(dirty) > 0 {
		return fmt.Errorf("%s has unsaved changes in %s; save or revert them there first", strings.Join(dirty, ", "), c.name())
	}
	return nil
}

func (e *editTool) symbolSource(ctx context.Context, file, symbol string) *mcp.ToolResult {
	if file == "" || strings.TrimSpace(symbol) == "" {
		return errorf("symbol_source needs file and symbol, the symbol's name path (Type.Method, a function's name).")
	}
	path, bad := e.p.confine(file)
	if bad != nil {
		return bad
	}
	src, err := e.m.SymbolSource(ctx, path, symbol)
	if err != nil {
		n := &navigator{m: e.m, p: e.p, link: e.link}
		return n.failed("symbol_source", err)
	}
	res := textf("%s:%d-%d %s\n%s\n", e.p.rel(src.Path), src.Line, src.EndLine, src.Symbol, src.Text)
	return withStructured(res, struct {
		Status string `json:"status"`
		*lsp.SymbolSource
	}{statusComplete, src})
}

func (e *editTool) fixes(ctx context.Context, file string, line int) *mcp.ToolResult {
	if file == "" || line < 1 {
		return errorf("fixes needs file and line, the 1-based line.")
	}
	path, bad := e.p.confine(file)
	if bad != nil {
		return bad
	}
	acts, err := e.m.CodeActions(ctx, path, line)
	if err != nil {
		n := &navigator{m: e.m, p: e.p, link: e.link}
		return n.failed("fixes", err)
	}
	var b strings.Builder
	if len(acts.Actions) == 0 {
		fmt.Fprintf(&b, "%s offers no code action at %s:%d.\n", acts.Server, e.p.rel(acts.Path), line)
	} else {
		fmt.Fprintf(&b, "Code actions at %s:%d, from %s (stage one as {file, line, fix: title}):\n", e.p.rel(acts.Path), line, acts.Server)
	}
	for _, a := range acts.Actions {
		fmt.Fprintf(&b, "- %s", a.Title)
		if a.Kind != "" {
			fmt.Fprintf(&b, " [%s]", a.Kind)
		}
		if a.Preferred {
			b.WriteString(" (preferred)")
		}
		if len(a.Fixes) > 0 {
			fmt.Fprintf(&b, ": fixes %s", strings.Join(a.Fixes, "; "))
		}
		if a.Disabled != "" {
			fmt.Fprintf(&b, " (not applicable: %s)", a.Disabled)
		}
		b.WriteString("\n")
	}
	status, reason := statusOf(&acts.Answer, len(acts.Actions) == 0)
	return withStructured(mcp.TextResult(b.String()), struct {
		Status  string           `json:"status"`
		Reason  string           `json:"reason,omitempty"`
		Server  string           `json:"server,omitempty"`
		Path    string           `json:"path"`
		Line    int              `json:"line"`
		Actions []lsp.CodeAction `json:"actions"`
	}{status, reason, acts.Server, acts.Path, line, acts.Actions})
}
