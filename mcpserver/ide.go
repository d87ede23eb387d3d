package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/mcp"
)

// ideConnectTimeout bounds one connection attempt to a discovered IDE
// (dial and MCP handshake) when a tool call looks for the IDE.
const ideConnectTimeout = 10 * time.Second

// ideLink is the user's IDE as `idebridge mcp` sees it: found by
// discovery when a tool needs it (Claude Code's rules: the lockfile's
// workspace holds the project, the IDE is alive, and exactly one is
// usable), kept while its connection lives, and looked for again after it
// is lost, so an IDE that starts later or restarts is found at the next
// call. Its absence is never an error of the server: the IDE tools answer
// why there is none.
type ideLink struct {
	project string
	env     []string
	version string
	log     *slog.Logger
	// off, when set, is why the IDE is never looked for.
	off string

	mu   sync.Mutex // one look at a time; guards the fields below
	cur  *ideConn
	why  string // why there is no IDE, from the last look
	lost string // what became of the last IDE, until a new one is found
}

// ideConn is one connection to the IDE.
type ideConn struct {
	client   *idebridge.Client
	cand     idebridge.Candidate
	reviewer *idebridge.Reviewer
}

// name describes the IDE for people and models.
func (c *ideConn) name() string {
	name := c.cand.IDEName
	if name == "" {
		name = "IDE"
	}
	return fmt.Sprintf("%s on port %d", name, c.cand.Port)
}

func newIDELink(project string, environ []string, noIDE bool, noIDEReason, version string, log *slog.Logger) *ideLink {
	l := &ideLink{project: project, env: environ, version: version, log: log}
	if noIDE {
		l.off = noIDEReason
	} else if ok, why := idebridge.ShouldAutoConnect(&idebridge.AutoConnectOptions{Requested: true}, environ); !ok {
		l.off = why
	}
	return l
}

// get returns the connected IDE, connecting first when there is none, or
// nil and why there is none.
func (l *ideLink) get(ctx context.Context) (*ideConn, string) {
	if l.off != "" {
		return nil, "auto-connect is off: " + l.off
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.cur; c != nil {
		if c.client.Err() == nil {
			return c, ""
		}
		l.lost = fmt.Sprintf("the connection to %s was lost (%v)", c.name(), c.client.Err())
		l.log.Info("lost the IDE; looking for it again at the next call", "ide", c.name(), "err", c.client.Err())
		c.client.Close()
		l.cur = nil
	}
	l.look(ctx)
	if l.cur != nil {
		return l.cur, ""
	}
	if l.lost != "" {
		return nil, l.lost + ", and no IDE is usable now: " + l.why
	}
	return nil, l.why
}

// look runs discovery once and connects when exactly one IDE is usable.
func (l *ideLink) look(ctx context.Context) {
	opts := &idebridge.AutoConnectOptions{
		Discover: &idebridge.DiscoverOptions{Cwd: l.project, Env: l.env, Logger: l.log},
		Wait:     -1, // one look: the call is waiting
	}
	cand, _, err := idebridge.WaitForIDE(ctx, opts)
	if err != nil {
		l.why = err.Error()
		var ne *idebridge.NoIDEError
		if errors.As(err, &ne) {
			l.why += "; start the IDE in this project with the Claude Code extension (or `idebridge ide serve` for a headless one)"
		}
		return
	}
	cctx, cancel := context.WithTimeout(ctx, ideConnectTimeout)
	defer cancel()
	client, err := idebridge.Connect(cctx, *cand, &idebridge.ClientOptions{
		ClientName:    "idebridge-mcp",
		ClientVersion: l.version,
		Logger:        l.log,
		// The tools ask the IDE; its notifications (selection_changed
		// while the user clicks around) would only pile up.
		NotificationBuffer: -1,
	})
	if err != nil {
		l.why = fmt.Sprintf("%s on port %d was found but connecting to it failed: %v", cand.IDEName, cand.Port, err)
		return
	}
	l.cur = &ideConn{client: client, cand: *cand, reviewer: idebridge.NewReviewer(client, &idebridge.ReviewerOptions{Logger: l.log})}
	l.lost, l.why = "", ""
	l.log.Info("connected to the IDE", "ide", l.cur.name(), "transport", cand.Transport, "workspace", strings.Join(cand.WorkspaceFolders, ", "))
}

// describe is the first log line's words for the IDE, from a first look.
func (l *ideLink) describe(ctx context.Context) string {
	c, why := l.get(ctx)
	if c == nil {
		return "none (" + why + ")"
	}
	return fmt.Sprintf("%s (%s, workspace %s)", c.name(), c.cand.Transport, strings.Join(c.cand.WorkspaceFolders, ", "))
}

func (l *ideLink) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur != nil {
		l.cur.client.Close()
		l.cur = nil
	}
}

// noIDE is the answer of an IDE tool when there is no IDE.
func noIDE(why string) *mcp.ToolResult {
	return errorf("No IDE connected: %s.", strings.TrimSuffix(why, "."))
}

// ideFailed is the answer when the IDE failed a call.
func ideFailed(c *ideConn, what string, err error) *mcp.ToolResult {
	if errors.Is(err, idebridge.ErrConnectionLost) || errors.Is(err, idebridge.ErrClosed) {
		return errorf("The connection to %s was lost while %s; call again to look for the IDE anew.", c.name(), what)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return errorf("%s did not answer in time while %s.", c.name(), what)
	}
	return errorf("%s failed while %s: %v", c.name(), what, err)
}

// ideTools are the tools backed by the user's IDE.
func ideTools(l *ideLink, p project, m *lsp.Manager) []ideserver.Tool {
	return []ideserver.Tool{
		defineTool(toolSpec{name: "ide_selection", title: "IDE selection", readOnly: true, output: outputSchema(selectionSchema),
			input: objectSchema(nil), description: "The user's current selection in their IDE (VS Code, a JetBrains IDE, ... with the Claude Code extension): the file, the 1-based line:column range and the selected text, or the cursor when nothing is selected. When no editor is active, the most recent selection. Without a connected IDE the answer says why."},
			func(ctx context.Context, _ *struct{}) *mcp.ToolResult {
				c, why := l.get(ctx)
				if c == nil {
					return noIDE(why)
				}
				sel, err := c.client.GetCurrentSelection(ctx)
				var te *mcp.ToolError
				if errors.As(err, &te) {
					sel, err = c.client.GetLatestSelection(ctx)
					if errors.As(err, &te) {
						return withStructured(textf("%s reports no selection: no editor is active (%s).", c.name(), te.Message), &selectionResult{Status: statusComplete, IDE: c.name()})
					}
				}
				if err != nil {
					return ideFailed(c, "reading the selection", err)
				}
				return withStructured(mcp.TextResult(renderSelection(p, sel)), structuredSelection(c, sel))
			}),
		defineTool(toolSpec{name: "ide_open_editors", title: "IDE open editors", readOnly: true, output: outputSchema(editorsSchema), input: objectSchema(nil),
			description: "The files open in the user's IDE, the active one first, with unsaved changes marked. Without a connected IDE the answer says why."},
			func(ctx context.Context, _ *struct{}) *mcp.ToolResult {
				c, why := l.get(ctx)
				if c == nil {
					return noIDE(why)
				}
				eds, err := c.client.GetOpenEditors(ctx)
				if err != nil {
					return ideFailed(c, "listing the open editors", err)
				}
				text := renderEditors(p, c, eds)
				out := &editorsResult{Status: statusComplete, IDE: c.name(), Editors: []editor{}}
				for _, e := range eds {
					out.Editors = append(out.Editors, editor{Path: e.Path, URI: e.URI, Active: e.IsActive, Dirty: e.IsDirty})
				}
				return withStructured(mcp.TextResult(text), out)
			}),
		defineTool(toolSpec{name: "ide_open_file", title: "Open in IDE", idempotent: true, output: outputSchema(openFileSchema),
			description: "Open a file in the user's IDE and show it to them, optionally at a 1-based line (the line is selected), or with lines line to end_line selected. Without a connected IDE the answer says why.",
			input: objectSchema([]prop{
				{"file", typed("string", "The file: a path relative to the project directory, or absolute inside it.")},
				{"line", `{"type":"integer","minimum":1,"description":"1-based line to show and select."}`},
				{"end_line", `{"type":"integer","minimum":1,"description":"1-based last line of the selection (with line)."}`},
			}, "file")},
			func(ctx context.Context, a *openFileToolArgs) *mcp.ToolResult {
				return openFileTool(ctx, l, p, a)
			}),
		defineTool(toolSpec{name: "ide_diagnostics", title: "IDE diagnostics", readOnly: true, output: outputSchema(ideDiagSchema, diagnosticDef),
			description: "The diagnostics (errors, warnings) the user's IDE itself shows for a file: its own language services and linters, as the IDE has them now. For the project's language servers use diagnostics instead. Without a connected IDE the answer says why.",
			input: objectSchema([]prop{
				{"file", typed("string", "The file: a path relative to the project directory, or absolute inside it.")},
			}, "file")},
			func(ctx context.Context, a *struct {
				File string `json:"file"`
			}) *mcp.ToolResult {
				if a.File == "" {
					return errorf("ide_diagnostics needs file, the path of the file whose diagnostics to get.")
				}
				path, bad := p.confine(a.File)
				if bad != nil {
					return bad
				}
				c, why := l.get(ctx)
				if c == nil {
					return noIDE(why)
				}
				files, err := c.client.GetDiagnostics(ctx, path)
				var te *mcp.ToolError
				if errors.As(err, &te) && te.Code == mcp.CodeFileNotOpen {
					return withStructured(textf("%s has no diagnostics for %s: the file is not open there (open it with ide_open_file first, or use diagnostics for the language servers' view).", c.name(), p.rel(path)),
						&ideDiagResult{Status: statusUnknown, Reason: "the file is not open in the IDE", Path: path, IDE: c.name(), Diagnostics: []diagnostic{}})
				}
				if err != nil {
					return ideFailed(c, "getting the diagnostics of "+p.rel(path), err)
				}
				st := &ideDiagResult{Status: statusComplete, Path: path, IDE: c.name(), Diagnostics: []diagnostic{}}
				for _, f := range files {
					for _, dg := range f.Diagnostics {
						st.Diagnostics = append(st.Diagnostics, structuredDiagnostic(dg))
					}
				}
				att := &diag.Attachment{Files: files}
				if out := att.Render(&diag.RenderOptions{ProjectDir: p.dir}); out != "" {
					return withStructured(textf("%s\n(as %s shows them)", out, c.name()), st)
				}
				return withStructured(textf("%s shows no diagnostics for %s.", c.name(), p.rel(path)), st)
			}),
		defineTool(toolSpec{name: "propose_edit", title: "Propose an edit", destructive: true, user: true, output: outputSchema(editSchema, checkDef, verifiedFileDef, diagnosticDef),
			description: "Propose a change to a file to the user: it is first checked by the language servers (nothing written), then opens in their IDE's diff viewer, where they accept it (perhaps after editing it) or reject it. Waits for their decision, writes exactly what they accepted, and says what happened and what the change does to the diagnostics of the file and of the files that depend on it (of the text written, when written). A file with unsaved changes in the IDE is refused. Give either content, the whole new text of the file (a file that does not exist yet is created), or old_string and new_string, an exact replacement of text that occurs once in the file. Needs a connected IDE; without one the answer says why.",
			input: objectSchema([]prop{
				{"file", typed("string", "The file to change: a path relative to the project directory, or absolute inside it.")},
				{"content", typed("string", "The whole proposed text of the file. Leave out when giving old_string and new_string.")},
				{"old_string", typed("string", "Text to replace; it must occur exactly once in the file.")},
				{"new_string", typed("string", "The text that replaces old_string.")},
			}, "file")},
			func(ctx context.Context, a *proposeArgs) *mcp.ToolResult {
				return proposeEdit(ctx, &editTool{m: m, p: p, link: l}, a)
			}),
	}
}

type openFileToolArgs struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	EndLine int    `json:"end_line"`
}

func openFileTool(ctx context.Context, l *ideLink, p project, a *openFileToolArgs) *mcp.ToolResult {
	switch {
	case a.File == "":
		return errorf("ide_open_file needs file, the path of the file to open.")
	case a.Line < 0, a.EndLine < 0:
		return errorf("Lines are 1-based: line and end_line must be 1 or more.")
	case a.EndLine > 0 && a.Line == 0:
		return errorf("end_line needs line, the first line of the selection.")
	case a.EndLine > 0 && a.EndLine < a.Line:
		return errorf("end_line (%d) is before line (%d).", a.EndLine, a.Line)
	}
	path, bad := p.confine(a.File)
	if bad != nil {
		return bad
	}
	text, err := p.read(path)
	if err != nil {
		return errorf("Cannot open %s: %v.", clip(p.rel(path)), unwrapPath(err))
	}
	lines := splitLines(string(text))
	if a.Line > len(lines) {
		return errorf("%s has %d lines; there is no line %d.", p.rel(path), len(lines), a.Line)
	}
	end := max(a.EndLine, a.Line)
	if end > len(lines) {
		return errorf("%s has %d lines; there is no line %d.", p.rel(path), len(lines), end)
	}
	c, why := l.get(ctx)
	if c == nil {
		return noIDE(why)
	}
	args := idebridge.OpenFileArgs{FilePath: path}
	note := ""
	if a.Line > 0 {
		if ideTakesLines(ctx, c) {
			// The Neovim plugin (and idebridge's headless IDE) select by
			// line; the others only by text.
			_, err := c.client.CallTool(ctx, mcp.ToolOpenFile, map[string]any{
				"filePath": path, "startLine": a.Line, "endLine": end, "preview": false, "makeFrontmost": true,
			})
			if err != nil {
				return ideFailed(c, "opening "+p.rel(path), err)
			}
			return withStructured(textf("Opened %s in %s with %s selected.", p.rel(path), c.name(), lineSpan(a.Line, end)),
				&openFileResult{Status: statusComplete, Path: path, IDE: c.name(), Line: a.Line, EndLine: end, Selected: true})
		}
		start, stop, ok := textAnchor(lines, a.Line-1, end-1)
		if ok {
			args.StartText, args.EndText = start, stop
		} else {
			note = fmt.Sprintf(" It could not select %s: the text there is not unique in the file, which is how this IDE selects.", lineSpan(a.Line, end))
		}
	}
	if _, err := c.client.OpenFile(ctx, args); err != nil {
		return ideFailed(c, "opening "+p.rel(path), err)
	}
	out := &openFileResult{Status: statusComplete, Path: path, IDE: c.name()}
	if a.Line > 0 && note == "" {
		out.Line, out.EndLine, out.Selected = a.Line, end, true
		return withStructured(textf("Opened %s in %s with %s selected.", p.rel(path), c.name(), lineSpan(a.Line, end)), out)
	}
	if note != "" {
		out.Status, out.Reason = statusPartial, "the lines could not be selected: their text is not unique in the file"
	}
	return withStructured(textf("Opened %s in %s.%s", p.rel(path), c.name(), note), out)
}

func lineSpan(first, last int) string {
	if first == last {
		return fmt.Sprintf("line %d", first)
	}
	return fmt.Sprintf("lines %d-%d", first, last)
}

// ideTakesLines reports whether the IDE's openFile takes startLine.
func ideTakesLines(ctx context.Context, c *ideConn) bool {
	tools, err := c.client.Tools(ctx)
	if err != nil {
		return false
	}
	i := slices.IndexFunc(tools, func(t mcp.Tool) bool { return t.Name == mcp.ToolOpenFile })
	return i >= 0 && strings.Contains(string(tools[i].InputSchema), `"startLine"`)
}

// splitLines splits text into lines without their endings; a final line
// ending does not start another line.
func splitLines(text string) []string {
	text = strings.TrimSuffix(text, "\n")
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// textAnchor finds the startText and endText that select lines first to
// last (0-based) in an IDE that selects from the first match of startText
// to the end of the next match of endText: startText is the text from the
// start of line first, long enough that its first match in the file is
// there; endText the end of line last, long enough that its first match
// after startText ends there. ok is false when no such texts exist.
func textAnchor(lines []string, first, last int) (startText, endText string, ok bool) {
	text := strings.Join(lines, "\n")
	offset := func(line int) int {
		n := 0
		for _, l := range lines[:line] {
			n += len(l) + 1
		}
		return n
	}
	begin, end := offset(first), offset(last)+len(lines[last])
	for n := 1; begin+n <= len(text); n++ {
		s := text[begin : begin+n]
		if strings.TrimSpace(s) == "" {
			continue
		}
		if strings.Index(text, s) == begin {
			startText = s
			break
		}
	}
	if startText == "" {
		return "", "", false
	}
	after := begin + len(startText)
	if after >= end {
		return startText, "", after == end
	}
	for n := 1; n <= end-after; n++ {
		s := text[end-n : end]
		if strings.TrimSpace(s) == "" {
			continue
		}
		if i := strings.Index(text[after:], s); i >= 0 && after+i+len(s) == end {
			return startText, s, true
		}
	}
	return "", "", false
}

func renderSelection(p project, sel *idebridge.Selection) string {
	if sel.Selection == nil || sel.FilePath == "" {
		return "No editor is active in the IDE."
	}
	start, end := sel.Selection.Start, sel.Selection.End
	file := p.rel(sel.FilePath)
	if sel.Selection.IsEmpty || sel.Text == "" {
		return fmt.Sprintf("The cursor is at %s:%d:%d; nothing is selected.", file, start.Line+1, start.Character+1)
	}
	return fmt.Sprintf("Selected in %s, %d:%d to %d:%d (1-based line:column):\n%s", file, start.Line+1, start.Character+1, end.Line+1, end.Character+1, fence(sel.Text))
}

// fence wraps text in a Markdown code fence longer than any run of
// backquotes inside it.
func fence(text string) string {
	ticks := "```"
	for strings.Contains(text, ticks) {
		ticks += "`"
	}
	return ticks + "\n" + strings.TrimSuffix(text, "\n") + "\n" + ticks
}

func renderEditors(p project, c *ideConn, eds []idebridge.OpenEditor) string {
	if len(eds) == 0 {
		return fmt.Sprintf("No files are open in %s.", c.name())
	}
	slices.SortStableFunc(eds, func(a, b idebridge.OpenEditor) int {
		switch {
		case a.IsActive == b.IsActive:
			return 0
		case a.IsActive:
			return -1
		}
		return 1
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%d files open in %s:\n", len(eds), c.name())
	for _, e := range eds {
		name := e.Path
		if name == "" {
			name = e.URI
		} else {
			name = p.rel(name)
		}
		var marks []string
		if e.IsActive {
			marks = append(marks, "active")
		}
		if e.IsDirty {
			marks = append(marks, "unsaved changes")
		}
		b.WriteString("- " + name)
		if len(marks) > 0 {
			b.WriteString(" (" + strings.Join(marks, ", ") + ")")
		}
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

type proposeArgs struct {
	File      string  `json:"file"`
	Content   *string `json:"content"`
	OldString *string `json:"old_string"`
	NewString *string `json:"new_string"`
}

func proposeEdit(ctx context.Context, e *editTool, a *proposeArgs) *mcp.ToolResult {
	p := e.p
	if a.File == "" {
		return errorf("propose_edit needs file, the path of the file to change.")
	}
	path, bad := p.confine(a.File)
	if bad != nil {
		return bad
	}
	base, err := idebridge.StatFile(path)
	if err != nil {
		return errorf("Cannot read %s: %v.", p.rel(path), unwrapPath(err))
	}
	var text string
	edit := lsp.Edit{File: path}
	switch {
	case a.Content != nil && (a.OldString != nil || a.NewString != nil):
		return errorf("Give either content or old_string and new_string, not both.")
	case a.Content != nil:
		text = *a.Content
		edit.NewText = &text
	case a.OldString != nil && a.NewString != nil:
		if !base.Exists {
			return errorf("%s does not exist; give content to create it.", p.rel(path))
		}
		old, err := p.read(path)
		if err != nil {
			return errorf("Cannot read %s: %v.", p.rel(path), unwrapPath(err))
		}
		if base, err = idebridge.StatFile(path); err != nil {
			return errorf("Cannot read %s: %v.", p.rel(path), unwrapPath(err))
		}
		switch n := strings.Count(string(old), *a.OldString); {
		case *a.OldString == "":
			return errorf("old_string is empty; give the text to replace, or content for the whole file.")
		case n == 0:
			return errorf("old_string does not occur in %s; read the file and give text that is in it exactly.", p.rel(path))
		case n > 1:
			return errorf("old_string occurs %d times in %s; include more of the surrounding text so that it occurs once.", n, p.rel(path))
		}
		text = strings.Replace(string(old), *a.OldString, *a.NewString, 1)
		// Staged as the replacement, so that it applies to the text the
		// edit set reads.
		edit.OldString, edit.NewString = *a.OldString, *a.NewString
	default:
		return errorf("propose_edit needs content (the whole new text), or old_string and new_string.")
	}
	c, why := e.link.get(ctx)
	if c == nil {
		return errorf("No IDE connected: %s. propose_edit shows the change in the IDE's diff viewer, so it needs one; write the file with your own tools instead.", strings.TrimSuffix(why, "."))
	}
	if !base.Exists {
		// A new file: nothing to check it against; the review writes it.
		res, err := c.reviewer.ProposeEdit(ctx, idebridge.EditRequest{Path: path, NewText: text, Base: base})
		return editOutcome(p, c, path, res, err)
	}
	// Staged and checked (bounded), then reviewed (as long as the user
	// takes), then written with what the user accepted.
	es := e.m.NewEditSet()
	defer es.Discard(context.WithoutCancel(ctx))
	sctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := es.Stage(sctx, []lsp.Edit{edit}); err != nil {
		return errorf("Checking the edit of %s failed: %s; the file is unchanged.", p.rel(path), strings.ReplaceAll(err.Error(), p.dir+"/", ""))
	}
	check, err := es.Check(sctx)
	if err != nil {
		return errorf("Checking the edit of %s failed: %s; the file is unchanged.", p.rel(path), strings.ReplaceAll(err.Error(), p.dir+"/", ""))
	}
	w := e.write(ctx, es, c, true)
	res := w.reviews[path]
	if w.applied == nil {
		var re *lsp.ReviewRefusedError
		switch {
		case errors.As(w.err, &re) && res != nil:
			// The user's answer.
		case errors.Is(w.err, lsp.ErrEditConflict):
			return editOutcome(p, c, path, nil, w.err)
		case errors.As(w.err, &re):
			return editOutcome(p, c, path, nil, re.Err)
		default:
			return errorf("Proposing the edit of %s failed: %s; the file is unchanged.", p.rel(path), strings.ReplaceAll(w.err.Error(), p.dir+"/", ""))
		}
		out := editResultOf(c, path, res)
		out.Check = e.summary(check)
		return withStructured(textf("%s\nThe change, not written, would have done:\n%s", outcomeSentence(p.rel(path), res), check.Render(p.dir)), out)
	}
	if res == nil {
		// Written without an answer recorded under this path (it cannot
		// be, as the review is of this file): say what is known.
		text, _ := p.read(path)
		res = &idebridge.EditResult{Path: path, Status: idebridge.EditAccepted, ViaIDE: true, Text: string(text), Bytes: len(text)}
	}
	res.Written = true
	out := editResultOf(c, path, res)
	if w.err != nil {
		out.Status, out.Reason = statusUnknown, clip(w.err.Error())
		return withStructured(textf("%s\n%v", outcomeSentence(p.rel(path), res), w.err), out)
	}
	out.Check = e.summary(w.applied.Check)
	return withStructured(textf("%s\n%s", outcomeSentence(p.rel(path), res), w.applied.Check.Render(p.dir)), out)
}

// editResultOf is the structured result of one reviewed edit.
func editResultOf(c *ideConn, path string, res *idebridge.EditResult) *editResult {
	return &editResult{Status: statusComplete, Path: path, IDE: c.name(), Outcome: editOutcomeWord(res), Written: res.Written, Bytes: res.Bytes, UserModified: res.UserModified}
}

// editOutcome says what became of one proposed edit.
func editOutcome(p project, c *ideConn, path string, res *idebridge.EditResult, err error) *mcp.ToolResult {
	file := p.rel(path)
	var ce *idebridge.ConflictError
	switch {
	case errors.As(err, &ce):
		return errorf("%s changed on disk while the edit was under review, so nothing was written; read it again and propose the edit anew.", file)
	case errors.Is(err, idebridge.ErrConnectionLost):
		return errorf("The connection to %s was lost while the edit of %s was under review; the file is unchanged.", c.name(), file)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errorf("The review of %s ended before the user decided; the file is unchanged.", file)
	case err != nil:
		return errorf("Proposing the edit of %s failed: %v; the file is unchanged.", file, err)
	}
	return withStructured(mcp.TextResult(outcomeSentence(file, res)), editResultOf(c, path, res))
}

// editOutcomeWord names what the user did with an edit.
func editOutcomeWord(res *idebridge.EditResult) string {
	switch {
	case res.Cancelled:
		return "cancelled"
	case res.Status == idebridge.EditAccepted:
		return "accepted"
	case res.Status == idebridge.EditTabClosed:
		return "tab_closed"
	case res.Status == idebridge.EditRejected:
		return "rejected"
	}
	return "not_accepted"
}

// The structured results of the IDE tools.
type selectionResult struct {
	Status string     `json:"status"`
	Reason string     `json:"reason,omitempty"`
	IDE    string     `json:"ide,omitempty"`
	Path   string     `json:"path,omitempty"`
	Range  *diagRange `json:"range,omitempty"`
	Text   string     `json:"text,omitempty"`
	Empty  bool       `json:"empty,omitempty"`
}

const selectionSchema = statusProps + `,"ide":{"type":"string"},"path":{"type":"string"},` +
	`"range":{"type":"object","properties":{"start":` + diagPosSchema + `,"end":` + diagPosSchema + `},"required":["start","end"],"additionalProperties":false},` +
	`"text":{"type":"string","description":"The selected text."},"empty":{"type":"boolean","description":"Nothing is selected: range is the cursor."}`

func structuredSelection(c *ideConn, sel *idebridge.Selection) *selectionResult {
	out := &selectionResult{Status: statusComplete, IDE: c.name()}
	if sel.Selection == nil || sel.FilePath == "" {
		return out
	}
	st, en := sel.Selection.Start, sel.Selection.End
	out.Path, out.Text = sel.FilePath, sel.Text
	out.Range = &diagRange{Start: diagPos{st.Line + 1, st.Character + 1}, End: diagPos{en.Line + 1, en.Character + 1}}
	out.Empty = sel.Selection.IsEmpty || sel.Text == ""
	return out
}

type editor struct {
	Path   string `json:"path,omitempty"`
	URI    string `json:"uri,omitempty"`
	Active bool   `json:"active"`
	Dirty  bool   `json:"dirty"`
}

type editorsResult struct {
	Status  string   `json:"status"`
	Reason  string   `json:"reason,omitempty"`
	IDE     string   `json:"ide,omitempty"`
	Editors []editor `json:"editors"`
}

const editorsSchema = statusProps + `,"ide":{"type":"string"},"editors":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string"},"uri":{"type":"string"},"active":{"type":"boolean"},"dirty":{"type":"boolean","description":"Unsaved changes."}},"required":["active","dirty"],"additionalProperties":false}}`

type openFileResult struct {
	Status   string `json:"status"`
	Reason   string `json:"reason,omitempty"`
	IDE      string `json:"ide,omitempty"`
	Path     string `json:"path"`
	Line     int    `json:"line,omitempty"`
	EndLine  int    `json:"endLine,omitempty"`
	Selected bool   `json:"selected"`
}

const openFileSchema = statusProps + `,"ide":{"type":"string"},"path":{"type":"string"},"line":{"type":"integer","minimum":1},"endLine":{"type":"integer","minimum":1},"selected":{"type":"boolean","description":"Lines line to endLine are selected."}`

type ideDiagResult struct {
	Status      string       `json:"status"`
	Reason      string       `json:"reason,omitempty"`
	IDE         string       `json:"ide,omitempty"`
	Path        string       `json:"path"`
	Diagnostics []diagnostic `json:"diagnostics"`
}

const ideDiagSchema = statusProps + `,"ide":{"type":"string"},"path":{"type":"string"},"diagnostics":{"type":"array","items":{"$ref":"#/$defs/diagnostic"}}`

type editResult struct {
	Status       string `json:"status"`
	Reason       string `json:"reason,omitempty"`
	IDE          string `json:"ide,omitempty"`
	Path         string `json:"path"`
	Outcome      string `json:"outcome"`
	Written      bool   `json:"written"`
	Bytes        int    `json:"bytes,omitempty"`
	UserModified bool   `json:"userModified,omitempty"`
	// Check is what the edit changes in the diagnostics: of the text
	// written, once written; else of the proposal.
	Check *checkSummary `json:"check,omitempty"`
}

const editSchema = statusProps + `,"ide":{"type":"string"},"path":{"type":"string"},` +
	`"outcome":{"type":"string","enum":["accepted","tab_closed","rejected","cancelled","not_accepted"]},"written":{"type":"boolean"},"bytes":{"type":"integer","minimum":0},"userModified":{"type":"boolean","description":"The user changed the proposal before accepting it."},"check":{"$ref":"#/$defs/editCheck"}`

// outcomeSentence says in one sentence what the user did with an edit.
func outcomeSentence(file string, res *idebridge.EditResult) string {
	switch {
	case res.Cancelled:
		return fmt.Sprintf("The review of %s was cancelled (the diff tabs were closed); the file is unchanged.", file)
	case res.Status == idebridge.EditAccepted && res.UserModified:
		return fmt.Sprintf("The user accepted the edit of %s after changing it; the file now holds their version (%d bytes): read it again before editing it further.", file, res.Bytes)
	case res.Status == idebridge.EditAccepted:
		return fmt.Sprintf("The user accepted the edit of %s; it is written (%d bytes).", file, res.Bytes)
	case res.Status == idebridge.EditTabClosed:
		return fmt.Sprintf("The user closed the diff tab of %s, which accepts the edit as proposed; it is written (%d bytes).", file, res.Bytes)
	case res.Status == idebridge.EditRejected:
		return fmt.Sprintf("The user rejected the edit of %s; the file is unchanged. Ask them what they want instead of proposing it again.", file)
	}
	return fmt.Sprintf("The IDE did not accept the edit of %s (it answered %q); the file is unchanged.", file, res.IDEAnswer)
}
