package lsp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// symNode is one symbol of a document, with byte offsets in its text.
type symNode struct {
	path     string // name path, names normalized, joined with "."
	kind     SymbolKind
	start    int // the declaration's range
	end      int
	selLine  int // the name's start, as the server sent it
	selChar  int
	children []*symNode
}

// fileSymbols are a document's symbols as its server reported them for
// one text.
type fileSymbols struct {
	path  string
	text  string
	idx   *lineIndex
	enc   string
	roots []*symNode
}

// symbols sends text to path's server (as the staged text) and asks it for
// the document's symbols.
func (s *EditSet) symbols(ctx context.Context, path, text string) (*fileSymbols, error) {
	if err := s.touch(ctx, path, &text); err != nil {
		return nil, err
	}
	t, err := s.m.navOpen(ctx, path)
	if err != nil {
		return nil, err
	}
	if t.idx.text != text {
		return nil, fmt.Errorf("the server's text of %s is not the staged text (changed by another caller); try again", s.m.display(path))
	}
	return s.m.symbolTree(ctx, t)
}

// symbolTree asks t's server for the symbols of t's document.
func (m *Manager) symbolTree(ctx context.Context, t *navTarget) (*fileSymbols, error) {
	var list []lspSymbol
	if _, err := m.request(ctx, t, OpDocumentSymbols, "textDocument/documentSymbol",
		map[string]any{"textDocument": map[string]string{"uri": t.uri}}, &list); err != nil {
		return nil, err
	}
	fs := &fileSymbols{path: t.abs, text: t.idx.text, idx: t.idx, enc: t.enc}
	var walk func(prefix string, l []lspSymbol) []*symNode
	walk = func(prefix string, l []lspSymbol) []*symNode {
		var out []*symNode
		for i := range l {
			sym := &l[i]
			r, sel := sym.Range, sym.SelectionRange
			name := normalizeSymbolName(sym.Name)
			if sym.Location != nil && sym.Location.Range != nil { // SymbolInformation
				r = sym.Location.Range
				if sym.ContainerName != "" && prefix == "" {
					name = normalizeSymbolName(sym.ContainerName) + "." + name
				}
			}
			if r == nil {
				continue
			}
			if sel == nil {
				sel = r
			}
			n := &symNode{path: name, kind: sym.Kind, start: t.idx.offset(r.Start.Line, r.Start.Character, t.enc),
				end: t.idx.offset(r.End.Line, r.End.Character, t.enc), selLine: sel.Start.Line, selChar: sel.Start.Character}
			if prefix != "" {
				n.path = prefix + "." + name
			}
			n.children = walk(n.path, sym.Children)
			out = append(out, n)
		}
		return out
	}
	fs.roots = walk("", list)
	return fs, nil
}

// normalizeSymbolName makes a server's symbol name a name path part: Go
// methods, which gopls names "(*Square).Area", become "Square.Area".
func normalizeSymbolName(n string) string {
	return strings.NewReplacer("(", "", ")", "", "*", "", " ", "").Replace(n)
}

// all returns every symbol in document order.
func (fs *fileSymbols) all() []*symNode {
	var out []*symNode
	var walk func([]*symNode)
	walk = func(l []*symNode) {
		for _, n := range l {
			out = append(out, n)
			walk(n.children)
		}
	}
	walk(fs.roots)
	return out
}

// The symbol kinds whose children are local to them (parameters and
// variables of a function): nothing outside refers to those.
const (
	kindMethod      SymbolKind = 6
	kindConstructor SymbolKind = 9
	kindFunction    SymbolKind = 12
)

// touching returns the symbols whose declarations the byte span [start,
// end) changes (an empty span: the symbols containing it), the most
// specific first: a function or method the span touches (not its locals);
// a type or class only where the span is not all inside one of its
// members; and the members it touches.
func (fs *fileSymbols) touching(start, end int) []*symNode {
	var out []*symNode
	hit := func(n *symNode) bool {
		if start == end {
			return n.start <= start && start <= n.end
		}
		return n.start < end && start < n.end
	}
	holds := func(n *symNode) bool { return n.start <= start && end <= n.end }
	var walk func([]*symNode) []*symNode
	walk = func(l []*symNode) []*symNode {
		var got []*symNode
		for _, n := range l {
			if !hit(n) {
				continue
			}
			if n.kind == kindFunction || n.kind == kindMethod || n.kind == kindConstructor || len(n.children) == 0 {
				got = append(got, n)
				continue
			}
			inside := false
			for _, c := range n.children {
				inside = inside || holds(c)
			}
			got = append(got, walk(n.children)...)
			if !inside {
				got = append(got, n)
			}
		}
		return got
	}
	out = walk(fs.roots)
	return out
}

// pos is the place of n's name, for a request about it.
func (fs *fileSymbols) pos(n *symNode) Pos {
	return Pos{Path: fs.path, Line: n.selLine + 1, Column: fs.idx.toRunes(n.selLine, n.selChar, fs.enc) + 1}
}

// find resolves a name path, with an optional "[N]" picking the Nth of
// several matches.
func (fs *fileSymbols) find(name string) (*symNode, error) {
	want, pick := strings.TrimSpace(name), 0
	if i := strings.LastIndex(want, "["); i > 0 && strings.HasSuffix(want, "]") {
		n, err := strconv.Atoi(want[i+1 : len(want)-1])
		if err != nil || n < 1 {
			return nil, fmt.Errorf("symbol %q: the index in brackets must be a number from 1", name)
		}
		want, pick = want[:i], n
	}
	norm := normalizeSymbolName(want)
	var matches []*symNode
	all := fs.all()
	for _, n := range all {
		if n.path == norm {
			matches = append(matches, n)
		}
	}
	if len(matches) == 0 {
		// A last part alone, when it names one symbol.
		for _, n := range all {
			if strings.HasSuffix(n.path, "."+norm) {
				matches = append(matches, n)
			}
		}
	}
	line := func(n *symNode) int { return strings.Count(fs.text[:n.start], "\n") + 1 }
	switch {
	case len(matches) == 0:
		names := make([]string, 0, len(all))
		for _, n := range all[:min(len(all), 30)] {
			names = append(names, n.path)
		}
		more := ""
		if len(all) > 30 {
			more = ", …"
		}
		return nil, fmt.Errorf("no symbol %q in the file; its symbols: %s%s", want, strings.Join(names, ", "), more)
	case pick > len(matches):
		return nil, fmt.Errorf("symbol %q: there are %d, not %d", want, len(matches), pick)
	case pick > 0:
		return matches[pick-1], nil
	case len(matches) > 1:
		where := make([]string, 0, len(matches))
		for _, n := range matches {
			where = append(where, fmt.Sprintf("%s at line %d", n.path, line(n)))
		}
		return nil, fmt.Errorf("symbol %q names %d symbols (%s); add [N] to pick one", want, len(matches), strings.Join(where, ", "))
	}
	return matches[0], nil
}

// symbolEdit applies a symbol-level edit to fs.text.
func (s *EditSet) symbolEdit(ctx context.Context, fs *fileSymbols, e Edit) (string, error) {
	act := e.Action
	text := e.Text
	if e.Body != nil {
		if act != "" && act != SymbolBody {
			return "", fmt.Errorf("body is given with action %q; body goes with the body action, text with the others", act)
		}
		act, text = SymbolBody, *e.Body
	}
	n, err := fs.find(e.Symbol)
	if err != nil {
		return "", err
	}
	src := fs.text
	lineStart := strings.LastIndexByte(src[:n.start], '\n') + 1
	indent := leadingSpace(src[lineStart:])
	lineEnd := len(src)
	if i := strings.IndexByte(src[n.end:], '\n'); i >= 0 {
		lineEnd = n.end + i + 1
	}
	switch act {
	case SymbolBody:
		return replaceBody(src, n, lineStart, indent, text)
	case SymbolReplace:
		return src[:n.start] + strings.TrimRight(indentAs(text, "", true), "\n") + src[n.end:], nil
	case SymbolInsertBefore:
		return src[:lineStart] + endLine(indentAs(text, indent, false)) + "\n" + src[lineStart:], nil
	case SymbolInsertAfter:
		return src[:n.end] + "\n\n" + strings.TrimRight(indentAs(text, indent, true), "\n") + src[n.end:], nil
	case SymbolDelete:
		if err := s.unreferenced(ctx, fs, n, e.Force); err != nil {
			return "", err
		}
		end := lineEnd
		// One blank line after it goes too, so that no double blank stays.
		if strings.HasPrefix(src[end:], "\n") && (lineStart == 0 || strings.HasSuffix(src[:lineStart], "\n\n")) {
			end++
		}
		return src[:lineStart] + src[end:], nil
	case "":
		return "", errors.New("a symbol edit needs body, or an action (body, replace, insert_before, insert_after, delete) with text")
	}
	return "", fmt.Errorf("unknown action %q (body, replace, insert_before, insert_after, delete)", act)
}

// unreferenced refuses to delete n while the server finds references to
// it outside its own declaration.
func (s *EditSet) unreferenced(ctx context.Context, fs *fileSymbols, n *symNode, force bool) error {
	if force {
		return nil
	}
	locs, err := s.m.References(ctx, fs.pos(n), false)
	if err != nil {
		return fmt.Errorf("cannot tell whether %s is still used (%w); force the delete to do it anyway", n.path, err)
	}
	var left []string
	for _, l := range locs.Locations {
		if l.Path == fs.path {
			off := fs.idx.offset(l.Line-1, fs.idx.fromRunes(l.Line-1, l.Column-1, fs.enc), fs.enc)
			if n.start <= off && off < n.end {
				continue // inside the declaration itself
			}
		}
		left = append(left, fmt.Sprintf("%s:%d", displayPath(s.m.opts.ProjectDir, l.Path), l.Line))
	}
	if len(left) == 0 {
		return nil
	}
	shown := left[:min(len(left), 10)]
	more := ""
	if len(left) > 10 {
		more = fmt.Sprintf(" and %d more", len(left)-10)
	}
	return fmt.Errorf("%s still has %d reference%s (%s%s); change those first, or force the delete", n.path, len(left), plural(len(left)), strings.Join(shown, ", "), more)
}

// replaceBody replaces the body of n: between the braces that end the
// declaration, or, without them, the indented block after the colon that
// ends its header (Python).
func replaceBody(src string, n *symNode, lineStart int, indent, body string) (string, error) {
	decl := strings.TrimRight(src[n.start:n.end], " \t\r\n")
	if strings.HasSuffix(decl, "}") {
		closeAt := n.start + len(decl) - 1
		depth := 0
		openAt := -1
		for i := closeAt; i >= n.start; i-- {
			switch src[i] {
			case '}':
				depth++
			case '{':
				depth--
			}
			if depth == 0 {
				openAt = i
				break
			}
		}
		if openAt < 0 {
			return "", errors.New("the symbol's declaration has no body in braces")
		}
		unit := bodyIndent(src[openAt+1:closeAt], indent)
		b := strings.Trim(indentAs(body, indent+unit, false), "\n")
		if strings.TrimSpace(b) == "" {
			return src[:openAt+1] + "\n" + indent + src[closeAt:], nil
		}
		return src[:openAt+1] + "\n" + b + "\n" + indent + src[closeAt:], nil
	}
	// The header ends at the first line ending in ':' after the name.
	sel := lineStart
	for {
		i := strings.IndexByte(src[sel:n.end], '\n')
		if i < 0 {
			return "", errors.New("the symbol's declaration has no body (no braces, and no line ending in ':')")
		}
		line := strings.TrimRight(src[sel:sel+i], " \t\r")
		sel += i + 1
		if strings.HasSuffix(line, ":") {
			break
		}
	}
	end := n.end
	unit := bodyIndent(src[sel:end], indent)
	b := strings.TrimRight(indentAs(body, indent+unit, false), "\n")
	rest := src[end:]
	if !strings.HasPrefix(rest, "\n") && rest != "" && !strings.HasSuffix(src[:end], "\n") {
		b += "\n"
	}
	if strings.HasSuffix(src[sel:end], "\n") {
		b += "\n"
	}
	return src[:sel] + b + rest, nil
}

// bodyIndent is the indentation a body's lines have beyond outer: from
// its first non-blank line, else a tab (four spaces when outer uses
// spaces).
func bodyIndent(body, outer string) string {
	for _, l := range strings.Split(body, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		in := leadingSpace(l)
		if strings.HasPrefix(in, outer) && len(in) > len(outer) {
			return in[len(outer):]
		}
		break
	}
	if strings.Contains(outer, " ") {
		return "    "
	}
	return "\t"
}

// indentAs prefixes the lines of text with indent, unless its lines
// already carry indentation (the least indented non-blank line has
// some); skipFirst leaves the first line alone (it continues a line).
func indentAs(text, indent string, skipFirst bool) string {
	lines := strings.Split(text, "\n")
	least := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "" || (skipFirst && i == 0) {
			continue
		}
		if n := len(leadingSpace(l)); least < 0 || n < least {
			least = n
		}
	}
	if least > 0 || indent == "" {
		return text
	}
	for i, l := range lines {
		if strings.TrimSpace(l) == "" || (skipFirst && i == 0) {
			continue
		}
		lines[i] = indent + l
	}
	return strings.Join(lines, "\n")
}

func leadingSpace(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

func endLine(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// SymbolSource is a symbol's current text, the result of
// Manager.SymbolSource.
type SymbolSource struct {
	// Path is the file's absolute path.
	Path string `json:"path"`
	// Symbol is the symbol's name path as found ("Square.Area").
	Symbol string `json:"symbol"`
	// Line and EndLine are the declaration's first and last lines,
	// 1-based.
	Line    int `json:"line"`
	EndLine int `json:"endLine"`
	// Text is the declaration's text, from the start of its first line
	// (its indentation included) to the end of its range.
	Text string `json:"text"`
}

// SymbolSource returns the current text of the symbol at a name path in
// the file at path ("Square.Area", "main"; "[N]" after the path picks the
// Nth of several), found through the server's document symbols, as the
// file is on disk (or staged, while an EditSet has it).
func (m *Manager) SymbolSource(ctx context.Context, path, name string) (*SymbolSource, error) {
	if strings.TrimSpace(name) == "" {
		return nil, errors.New("symbol source: no symbol given")
	}
	t, err := m.navOpen(ctx, path)
	if err != nil {
		return nil, err
	}
	fs, err := m.symbolTree(ctx, t)
	if err != nil {
		return nil, err
	}
	n, err := fs.find(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", displayPath(m.opts.ProjectDir, t.abs), err)
	}
	lineStart := strings.LastIndexByte(fs.text[:n.start], '\n') + 1
	return &SymbolSource{Path: t.abs, Symbol: n.path,
		Line:    strings.Count(fs.text[:n.start], "\n") + 1,
		EndLine: strings.Count(fs.text[:n.end], "\n") + 1,
		Text:    fs.text[lineStart:n.end]}, nil
}
