package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/internal/fileuri"
)

// OpCodeActions names code actions in answers and errors.
const OpCodeActions NavOp = "codeActions"

// CodeAction is a change a server offers at a place: a quick fix for a
// diagnostic there, a refactoring, or a source action (organize imports).
// Its Title names it in an Edit's Fix.
type CodeAction struct {
	Title string `json:"title"`
	// Kind is the server's kind ("quickfix", "refactor.extract",
	// "source.organizeImports", ...); may be "".
	Kind string `json:"kind,omitempty"`
	// Preferred marks the fix the server recommends.
	Preferred bool `json:"preferred,omitempty"`
	// Fixes are the messages of the diagnostics it fixes.
	Fixes []string `json:"fixes,omitempty"`
	// Disabled says why the server offers it but cannot apply it here.
	Disabled string `json:"disabled,omitempty"`
}

// CodeActions is the result of Manager.CodeActions.
type CodeActions struct {
	Answer
	// Path is the file; Line the 1-based line asked about.
	Path string `json:"path"`
	Line int    `json:"line"`
	// Actions are in the server's order.
	Actions []CodeAction `json:"actions"`
}

// rawAction is a CodeAction or a Command as a server sends it.
type rawAction struct {
	Title       string            `json:"title"`
	Kind        string            `json:"kind"`
	IsPreferred bool              `json:"isPreferred"`
	Diagnostics []json.RawMessage `json:"diagnostics"`
	Disabled    *struct {
		Reason string `json:"reason"`
	} `json:"disabled"`
	Edit    *lspWorkspaceEdit `json:"edit"`
	Command json.RawMessage   `json:"command"`
	Data    json.RawMessage   `json:"data"`
	raw     json.RawMessage
}

// isCommand reports whether a is a bare Command (its command a string).
func (a *rawAction) isCommand() bool {
	c := bytes.TrimSpace(a.Command)
	return len(c) > 0 && c[0] == '"'
}

// CodeActions returns the code actions the server of path offers for its
// 1-based line, as the file is on disk (or staged, while an EditSet has
// it): the quick fixes of the diagnostics on the line, refactorings and
// source actions. Stage one with an Edit's Fix (its title) and Line.
func (m *Manager) CodeActions(ctx context.Context, path string, line int) (*CodeActions, error) {
	t, err := m.navOpen(ctx, path)
	if err != nil {
		return nil, err
	}
	list, a, err := m.codeActions(ctx, t, line)
	if err != nil {
		return nil, err
	}
	out := &CodeActions{Answer: a, Path: t.abs, Line: line, Actions: []CodeAction{}}
	for i := range list {
		ra := &list[i]
		ca := CodeAction{Title: ra.Title, Kind: ra.Kind, Preferred: ra.IsPreferred}
		if ra.Disabled != nil {
			ca.Disabled = ra.Disabled.Reason
		}
		for _, d := range ra.Diagnostics {
			var dd struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(d, &dd) == nil {
				ca.Fixes = append(ca.Fixes, dd.Message)
			}
		}
		out.Actions = append(out.Actions, ca)
	}
	return out, nil
}

// codeActions asks t's server for the code actions of a 1-based line,
// with the diagnostics on it as the context: it first waits for the
// document's diagnostics (Settle), since servers offer the quick fixes of
// the diagnostics a client names.
func (m *Manager) codeActions(ctx context.Context, t *navTarget, line int) ([]rawAction, Answer, error) {
	if line < 1 || line > t.idx.lines() {
		return nil, Answer{}, fmt.Errorf("%s has no line %d (it has %d)", displayPath(m.opts.ProjectDir, t.abs), line, t.idx.lines())
	}
	if _, err := m.Settle(ctx, t.abs); err != nil && ctx.Err() != nil {
		return nil, Answer{}, err
	}
	l := line - 1
	text, _ := t.idx.line(l)
	end := lspPos{Line: l, Character: t.idx.fromRunes(l, len([]rune(text)), t.enc)}
	ctxDiags := []map[string]any{}
	ds, _, _ := m.currentSet(t.abs)
	for _, d := range ds {
		if d.Range.Start.Line > l || d.Range.End.Line < l {
			continue
		}
		ctxDiags = append(ctxDiags, m.wireDiagnostic(t, d))
	}
	params := map[string]any{
		"textDocument": map[string]string{"uri": t.uri},
		"range":        lspRange{Start: lspPos{Line: l}, End: end},
		"context":      map[string]any{"diagnostics": ctxDiags, "triggerKind": 1},
	}
	var raws []json.RawMessage
	a, err := m.request(ctx, t, OpCodeActions, "textDocument/codeAction", params, &raws)
	if err != nil {
		return nil, a, err
	}
	out := make([]rawAction, 0, len(raws))
	for _, r := range raws {
		var ra rawAction
		if err := json.Unmarshal(r, &ra); err != nil {
			return nil, a, fmt.Errorf("code actions from %s: decoding: %w", a.Server, err)
		}
		ra.raw = r
		out = append(out, ra)
	}
	return out, a, nil
}

// wireDiagnostic is d, whose columns count characters, in t's server's
// units, for a code action's context.
func (m *Manager) wireDiagnostic(t *navTarget, d diag.Diagnostic) map[string]any {
	conv := func(p diag.Position) lspPos {
		return lspPos{Line: p.Line, Character: t.idx.fromRunes(p.Line, p.Character, t.enc)}
	}
	w := map[string]any{
		"range":    lspRange{Start: conv(d.Range.Start), End: conv(d.Range.End)},
		"severity": d.Severity,
		"message":  d.Message,
	}
	if d.Source != "" {
		w["source"] = d.Source
	}
	if d.Code != "" {
		w["code"] = d.Code
	}
	return w
}

// fix applies the code action titled title at the 1-based line of path,
// whose staged text is text, and returns the new text.
func (s *EditSet) fix(ctx context.Context, path, text string, line int, title string) (string, error) {
	if err := s.touch(ctx, path, &text); err != nil {
		return "", err
	}
	t, err := s.m.navOpen(ctx, path)
	if err != nil {
		return "", err
	}
	if t.idx.text != text {
		return "", fmt.Errorf("the server's text of %s is not the staged text (changed by another caller); try again", s.m.display(path))
	}
	list, a, err := s.m.codeActions(ctx, t, line)
	if err != nil {
		return "", err
	}
	ra, err := pickAction(list, title, line)
	if err != nil {
		return "", err
	}
	if ra.Disabled != nil {
		return "", fmt.Errorf("%s offers %q here but cannot apply it: %s", a.Server, ra.Title, ra.Disabled.Reason)
	}
	if ra.isCommand() {
		return "", fmt.Errorf("%q is a command %s runs itself, which this client does not do", ra.Title, a.Server)
	}
	if ra.Edit == nil && len(ra.Data) > 0 {
		var resolved rawAction
		if _, err := s.m.request(ctx, t, OpCodeActions, "codeAction/resolve", rawParams(ra.raw), &resolved); err != nil {
			return "", fmt.Errorf("resolving %q: %w", ra.Title, err)
		}
		if resolved.Edit != nil {
			ra.Edit = resolved.Edit
		}
		if len(resolved.Command) > 0 {
			ra.Command = resolved.Command
		}
	}
	if ra.Edit == nil {
		if len(ra.Command) > 0 {
			return "", fmt.Errorf("%q runs a command of %s's instead of giving an edit, which this client does not do", ra.Title, a.Server)
		}
		return "", fmt.Errorf("%s gave no edit for %q", a.Server, ra.Title)
	}
	if len(ra.Command) > 0 && string(bytes.TrimSpace(ra.Command)) != "null" {
		return "", fmt.Errorf("%q also runs a command of %s's after its edit, which this client does not do", ra.Title, a.Server)
	}
	edits, err := workspaceEdits(ra.Edit)
	if err != nil {
		return "", fmt.Errorf("%q from %s: %w", ra.Title, a.Server, err)
	}
	var others []string
	for u := range edits {
		if u != fileuri.Canonical(t.uri) {
			others = append(others, uriDisplay(u))
		}
	}
	if len(others) > 0 {
		sort.Strings(others)
		return "", fmt.Errorf("%q also changes %s; fixes that change other files are not staged yet", ra.Title, strings.Join(others, ", "))
	}
	// The client claims no snippet support (workspaceEdit.snippetEditSupport):
	// every edit is plain text.
	out, err := applyEdits(text, edits[fileuri.Canonical(t.uri)], t.enc)
	if err != nil {
		return "", fmt.Errorf("%q from %s: %w", ra.Title, a.Server, err)
	}
	return out, nil
}

// rawParams passes a raw JSON value as a request's params.
func rawParams(raw json.RawMessage) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

// pickAction finds the action titled title: exactly, else the one whose
// title contains it (case folded).
func pickAction(list []rawAction, title string, line int) (*rawAction, error) {
	for i := range list {
		if list[i].Title == title {
			return &list[i], nil
		}
	}
	var hits []*rawAction
	low := strings.ToLower(strings.TrimSpace(title))
	for i := range list {
		if low != "" && strings.Contains(strings.ToLower(list[i].Title), low) {
			hits = append(hits, &list[i])
		}
	}
	if len(hits) == 1 {
		return hits[0], nil
	}
	titles := make([]string, 0, len(list))
	for _, a := range list {
		titles = append(titles, fmt.Sprintf("%q", a.Title))
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("no code action at line %d", line)
	}
	if len(hits) > 1 {
		return nil, fmt.Errorf("%q names %d code actions at line %d: %s", title, len(hits), line, strings.Join(titles, ", "))
	}
	return nil, fmt.Errorf("no code action %q at line %d; there are %s", title, line, strings.Join(titles, ", "))
}

// errNoFixLine is the error of a Fix edit without a line.
var errNoFixLine = errors.New("a fix needs line, the 1-based line the code action is for")
