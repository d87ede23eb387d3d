package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/idebridge/idebridge/idebridge"
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
	// Review (apply_edit): false writes directly even with an IDE
	// connected; default true.
	Review *bool `json:"review"`
	// SaveUnsaved (apply_edit): ask the IDE to save the edited files'
	// unsaved changes first, instead of refusing.
	SaveUnsaved bool `json:"save_unsaved"`
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

// applyInput is the input schema of apply_edit: preview_edit's, with how
// to write.
var applyInput = objectSchema([]prop{{"edits", `{"type":"array","minItems":1,"maxItems":100,"items":` + editItemSchema +
	`,"description":"The edits, applied in order; several edits of one file apply one after the other. Each is {file, old_string, new_string}, {file, new_text}, {file, symbol, body}, {file, symbol, action, text}, {file, format: true} or {file, line, fix}."}`},
	{"review", `{"type":"boolean","description":"With the user's IDE connected: true (the default) shows every file in its diff viewer first and writes only if the user accepts them all, what they accepted (perhaps edited); false writes directly. Without an IDE the edits are written directly."}`},
	{"save_unsaved", `{"type":"boolean","description":"true: ask the IDE to save the edited files' unsaved changes before the edits are made (they then apply to the saved text), instead of refusing to write under unsaved changes."}`},
}, "edits")

// The schema of preview_edit's and apply_edit's structured results.
const (
	verifiedSchema = statusProps + `,"diff":{"type":"string","description":"The unified diff of the edits."},` +
		`"introduced":{"type":"integer","minimum":0},"resolved":{"type":"integer","minimum":0},` +
		`"unchecked":{"type":"integer","minimum":0,"description":"Dependent files left out of the check by its bound."},` +
		`"applied":{"type":"boolean"},"written":{"type":"array","items":{"type":"string"}},` +
		`"files":{"type":"array","items":{"$ref":"#/$defs/verifiedFile"}},` + writeProps
	// writeProps are the properties of a write through the pipeline.
	writeProps = `"via":{"type":"string","description":"How the edits were written: reviewed in the IDE, or directly."},` +
		`"modified":{"type":"array","items":{"type":"string"},"description":"Files the user changed in the IDE's diff before accepting: their text was written, and checked."},` +
		`"saved":{"type":"array","items":{"type":"string"},"description":"Files whose unsaved changes the IDE saved first (save_unsaved)."},` +
		`"refused":{"type":"string","description":"The file whose review stopped the write: nothing was written."},` +
		`"outcome":{"type":"string","enum":["rejected","cancelled","not_accepted","failed"],"description":"What became of the refused file's review."}`
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
	Via        string         `json:"via,omitempty"`
	Modified   []string       `json:"modified,omitempty"`
	Saved      []string       `json:"saved,omitempty"`
	Refused    string         `json:"refused,omitempty"`
	Outcome    string         `json:"outcome,omitempty"`
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
			description: "Write edits, all of them or none: each file must still be as it was on disk when the call began, and, when the user's IDE is connected, must have no unsaved changes there (or save_unsaved asks the IDE to save them first). With the IDE connected, every file is first shown in its diff viewer, and nothing is written unless the user accepts them all; what they accepted, perhaps after editing it, is what is written (review false writes directly). The answer is the diff written and what it changed in the diagnostics of the edited files and their dependents. Takes the edits preview_edit takes.",
			input:       applyInput, output: outputSchema(verifiedSchema, verifiedFileDef, diagnosticDef), destructive: true, user: true},
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
	// The servers' part is bounded; the user's review (apply_edit) is
	// not: the tool waits for the user, as long as they take.
	sctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var ide *ideConn
	var saved []string
	if apply {
		ide, _ = e.link.get(sctx)
		if ide != nil && a.SaveUnsaved {
			files := make([]string, 0, len(edits))
			for _, ed := range edits {
				if !slices.Contains(files, ed.File) {
					files = append(files, ed.File)
				}
			}
			var err error
			if saved, err = ide.client.SaveUnsaved(sctx, files); err != nil {
				return e.failed(tool, fmt.Errorf("saving the unsaved changes in %s first: %w", ide.name(), err), "")
			}
		}
	}
	es := e.m.NewEditSet()
	defer es.Discard(context.WithoutCancel(ctx))
	if err := es.Stage(sctx, edits); err != nil {
		return e.failed(tool, err, "")
	}
	out := &verifiedResult{Written: []string{}, Files: []verifiedFile{}}
	for _, p := range saved {
		out.Saved = append(out.Saved, e.p.rel(p))
	}
	if !apply {
		c, err := es.Check(sctx)
		if err != nil {
			return e.failed(tool, err, es.Diff())
		}
		e.fill(out, c)
		return withStructured(textf("Preview (nothing written):\n%s\n%s", c.Render(e.p.dir), c.Diff), out)
	}
	diff := es.Diff()
	w := e.write(ctx, es, ide, a.Review == nil || *a.Review)
	out.Via = w.via
	if w.applied == nil {
		return e.refused(tool, w, diff, out)
	}
	out.Applied = true
	for _, p := range w.applied.Written {
		out.Written = append(out.Written, e.p.rel(p))
	}
	for _, p := range w.applied.Modified {
		out.Modified = append(out.Modified, e.p.rel(p))
	}
	head := "Written: " + strings.Join(out.Written, ", ") + ". (" + w.via + ")"
	if len(out.Modified) > 0 {
		head += " The user changed " + strings.Join(out.Modified, ", ") + " in the review: that text was written and checked; read it again before editing it further."
	}
	if len(out.Saved) > 0 {
		head = "Saved the unsaved changes of " + strings.Join(out.Saved, ", ") + " in the IDE first. " + head
	}
	if w.err != nil {
		out.Diff, out.Status, out.Reason = diff, statusUnknown, clip(w.err.Error())
		return withStructured(textf("%s %v\n%s", head, w.err, diff), out)
	}
	check := w.applied.Check
	e.fill(out, check)
	return withStructured(textf("%s\n%s\n%s", head, check.Render(e.p.dir), check.Diff), out)
}

// fill sets out's check fields from c.
func (e *editTool) fill(out *verifiedResult, c *lsp.EditCheck) {
	sum := e.summary(c)
	out.Diff, out.Introduced, out.Resolved, out.Unchecked = c.Diff, c.Introduced, c.Resolved, c.Unchecked
	out.Status, out.Reason, out.Files = sum.Status, sum.Reason, sum.Files
}

// checkSummary is a check as rename and propose_edit answer it.
type checkSummary struct {
	Status     string         `json:"status"`
	Reason     string         `json:"reason,omitempty"`
	Introduced int            `json:"introduced"`
	Resolved   int            `json:"resolved"`
	Unchecked  int            `json:"unchecked"`
	Files      []verifiedFile `json:"files"`
}

// checkDef is the schema of a checkSummary.
const checkDef = `"editCheck":{"type":"object","description":"What the edit changes in the diagnostics of the edited files and of the files that depend on them: of the text written, once written; else of the proposal.","properties":{` + statusProps +
	`,"introduced":{"type":"integer","minimum":0},"resolved":{"type":"integer","minimum":0},` +
	`"unchecked":{"type":"integer","minimum":0,"description":"Dependent files left out of the check by its bound."},` +
	`"files":{"type":"array","items":{"$ref":"#/$defs/verifiedFile"}}},"required":["status","introduced","resolved","files"],"additionalProperties":false}`

// summary is c as rename and propose_edit answer it.
func (e *editTool) summary(c *lsp.EditCheck) *checkSummary {
	out := &checkSummary{Status: string(c.Status), Introduced: c.Introduced, Resolved: c.Resolved, Unchecked: c.Unchecked, Files: verifiedFiles(c)}
	var partial []string
	for _, f := range c.Files {
		if f.Server != "" && f.Status != lsp.StatusComplete {
			partial = append(partial, e.p.rel(f.Path)+": "+f.Reason)
		}
	}
	if len(partial) > 0 {
		out.Reason = clip(strings.Join(partial, "; "))
	}
	return out
}

// verifiedFiles are c's files as the structured results list them.
func verifiedFiles(c *lsp.EditCheck) []verifiedFile {
	out := []verifiedFile{}
	for _, f := range c.Files {
		ef := verifiedFile{Path: f.Path, Edited: f.Edited, Server: f.Server, Status: string(f.Status), Reason: clip(f.Reason),
			Introduced: []diagnostic{}, Resolved: []diagnostic{}}
		for _, d := range f.Introduced[:min(len(f.Introduced), maxListedPerFile)] {
			ef.Introduced = append(ef.Introduced, structuredDiagnostic(d))
		}
		for _, d := range f.Resolved[:min(len(f.Resolved), maxListedPerFile-len(ef.Introduced))] {
			ef.Resolved = append(ef.Resolved, structuredDiagnostic(d))
		}
		ef.More = len(f.Introduced) + len(f.Resolved) - len(ef.Introduced) - len(ef.Resolved)
		out = append(out, ef)
	}
	return out
}

// written is what became of writing a staged set (editTool.write).
type written struct {
	// applied is nil when nothing was written; err says why (with
	// applied, the check afterwards failed).
	applied *lsp.EditApplied
	err     error
	via     string
	ide     *ideConn
	// reviews: what the IDE answered for each file reviewed.
	reviews map[string]*idebridge.EditResult
}

// outcome is what the user did with path's review: accepted, tab_closed,
// rejected, cancelled, not_accepted, or failed (no answer).
func (w *written) outcome(path string) string {
	if res := w.reviews[path]; res != nil {
		return editOutcomeWord(res)
	}
	return "failed"
}

// write writes es, every file or none: reviewed in ide's diff viewer when
// ide is connected and review is set, else directly; never under unsaved
// changes in ide.
func (e *editTool) write(ctx context.Context, es *lsp.EditSet, ide *ideConn, review bool) *written {
	w := &written{via: "directly, no IDE connected", ide: ide, reviews: map[string]*idebridge.EditResult{}}
	opts := &lsp.ApplyOptions{BeforeWrite: func(ctx context.Context, paths []string) error { return e.notDirty(ctx, ide, paths) }}
	switch {
	case ide != nil && review:
		w.via = "reviewed in " + ide.name()
		opts.Review = ideReview(ide, w.reviews)
	case ide != nil:
		w.via = "directly, without review in " + ide.name()
	}
	w.applied, w.err = es.Apply(ctx, opts)
	return w
}

// ideReview is the lsp review hook that shows each file in c's diff
// viewer, recording the IDE's answers in reviews.
func ideReview(c *ideConn, reviews map[string]*idebridge.EditResult) func(ctx context.Context, path, proposed string) (string, bool, error) {
	review := c.reviewer.ReviewFunc(func(res *idebridge.EditResult) { reviews[res.Path] = res })
	return func(ctx context.Context, path, proposed string) (string, bool, error) {
		final, ok, err := review(ctx, path, proposed)
		switch {
		case errors.Is(err, idebridge.ErrConnectionLost) || errors.Is(err, idebridge.ErrClosed):
			return "", false, fmt.Errorf("the connection to %s was lost during the review (%w)", c.name(), err)
		case err != nil && ctx.Err() != nil && reviews[path] == nil:
			return "", false, fmt.Errorf("the review ended before the user decided (%w)", ctx.Err())
		}
		return final, ok, err
	}
}

// refused answers a write that wrote nothing.
func (e *editTool) refused(tool string, w *written, diff string, out *verifiedResult) *mcp.ToolResult {
	var re *lsp.ReviewRefusedError
	if !errors.As(w.err, &re) {
		return e.failed(tool, w.err, diff)
	}
	file := e.p.rel(re.Path)
	out.Status, out.Diff, out.Refused = statusUnknown, diff, file
	out.Outcome = w.outcome(re.Path)
	switch {
	case errors.Is(re.Err, context.Canceled), errors.Is(re.Err, context.DeadlineExceeded):
		out.Outcome = "cancelled"
	case out.Outcome == "accepted", out.Outcome == "tab_closed":
		out.Outcome = "failed"
	}
	var msg string
	switch {
	case re.Err == nil:
		out.Outcome = "rejected"
		msg = fmt.Sprintf("The user rejected the edit of %s in %s", file, w.ide.name())
	default:
		msg = fmt.Sprintf("The review of %s in %s did not accept it: %s", file, w.ide.name(), strings.ReplaceAll(re.Err.Error(), e.p.dir+"/", ""))
	}
	if re.Reviewed > 0 {
		msg += fmt.Sprintf(" (after accepting %d other file(s))", re.Reviewed)
	}
	msg += "; nothing was written, since edits are written all or none. Ask the user what they want instead of proposing the same edits again."
	out.Reason = clip(msg)
	res := withStructured(mcp.TextResult(msg+"\n"+diff), out)
	res.IsError = true
	return res
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

// notDirty refuses a write under unsaved changes in the user's IDE c
// (nil: none connected), when it offers checkDocumentDirty.
func (e *editTool) notDirty(ctx context.Context, c *ideConn, paths []string) error {
	if c == nil {
		return nil
	}
	dirty, _, err := c.client.UnsavedFiles(ctx, paths)
	if err != nil {
		return fmt.Errorf("asking %s which files have unsaved changes: %w", c.name(), err)
	}
	if len(dirty) > 0 {
		rel := make([]string, len(dirty))
		for i, p := range dirty {
			rel[i] = e.p.rel(p)
		}
		return fmt.Errorf("%s has unsaved changes in %s; save or revert them there first (or ask for save_unsaved)", strings.Join(rel, ", "), c.name())
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
