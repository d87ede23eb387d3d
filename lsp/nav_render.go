package lsp

import (
	"fmt"
	"path/filepath"
	"strings"
)

// symbolKinds are the names of LSP's symbol kinds, from 1.
var symbolKinds = [...]string{"file", "module", "namespace", "package", "class", "method", "property",
	"field", "constructor", "enum", "interface", "function", "variable", "constant", "string", "number",
	"boolean", "array", "object", "key", "null", "enum member", "struct", "event", "operator", "type parameter"}

// String returns the kind's name in lower case ("method", "enum member"),
// or "kind N" for a number LSP does not define.
func (k SymbolKind) String() string {
	if k >= 1 && int(k) <= len(symbolKinds) {
		return symbolKinds[k-1]
	}
	return fmt.Sprintf("kind %d", int(k))
}

// relInside returns path relative to dir when it lies inside it.
func relInside(dir, path string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// renderer holds the options of one Render.
type renderer struct {
	dir string
	max int // < 0: no cap
	b   strings.Builder
}

func newRenderer(opts *NavRenderOptions) *renderer {
	r := &renderer{max: DefaultMaxLocations}
	if opts != nil {
		r.dir = opts.ProjectDir
		if opts.MaxLocations != 0 {
			r.max = opts.MaxLocations
		}
	}
	return r
}

func (r *renderer) path(l *Location) string {
	switch {
	case l.Path == "":
		return l.URI
	case r.dir != "":
		if rel, ok := relInside(r.dir, l.Path); ok {
			return rel
		}
	}
	return filepath.ToSlash(l.Path)
}

// place writes path:line:col (path alone when the line is not known).
func (r *renderer) place(l *Location) string {
	if l.Line <= 0 {
		return r.path(l)
	}
	return fmt.Sprintf("%s:%d:%d", r.path(l), l.Line, l.Column)
}

// subject names the place asked about: `Area` (use.go:7:22).
func (r *renderer) subject(a *Answer) string {
	if a.At == nil {
		return ""
	}
	name := ""
	if a.At.EndColumn > a.At.Column {
		runes := []rune(a.At.Text)
		if a.At.Column-1 < len(runes) && a.At.EndColumn-1 <= len(runes) {
			name = string(runes[a.At.Column-1 : a.At.EndColumn-1])
		}
	}
	if name == "" {
		return r.place(a.At)
	}
	return fmt.Sprintf("%s (%s)", name, r.place(a.At))
}

// incompleteNote is the line that says an answer may be incomplete.
func incompleteNote(a *Answer) string {
	return fmt.Sprintf("Note: the answer may be incomplete: %s.", strings.TrimSuffix(a.Reason, "."))
}

// emptyIncomplete is what an empty answer from a loading server says: never
// that there is nothing.
func emptyIncomplete(a *Answer, what string) string {
	return fmt.Sprintf("No %s came back, but %s: that does not mean there are none; ask again in a moment.",
		what, strings.TrimSuffix(a.Reason, "."))
}

// sourceLine is a location's source line for a listing.
func sourceLine(l *Location) string {
	return shorten(strings.TrimSpace(l.Text), 200)
}

// locationLines writes locs, `path:line:col: source`, a blank line between
// files, capped.
func (r *renderer) locationLines(locs []Location, indent string) {
	shown := len(locs)
	if r.max >= 0 && shown > r.max {
		shown = r.max
	}
	prev := ""
	for i := range locs[:shown] {
		l := &locs[i]
		p := r.path(l)
		if i > 0 && p != prev && indent == "" {
			r.b.WriteByte('\n')
		}
		prev = p
		r.b.WriteString(indent + r.place(l))
		if s := sourceLine(l); s != "" {
			r.b.WriteString(": " + s)
		}
		r.b.WriteByte('\n')
	}
	r.more(locs[shown:])
}

// more writes "… N more in M files" for the locations left out.
func (r *renderer) more(rest []Location) {
	if len(rest) == 0 {
		return
	}
	files := map[string]bool{}
	for i := range rest {
		files[r.path(&rest[i])] = true
	}
	fmt.Fprintf(&r.b, "… %d more in %d file%s\n", len(rest), len(files), plural(len(files)))
}

func countFiles(locs []Location) int {
	files := map[string]bool{}
	for _, l := range locs {
		files[l.Path+"\x00"+l.URI] = true
	}
	return len(files)
}

var locationTitles = map[NavOp][2]string{
	OpDefinition:     {"Definition of", "definitions"},
	OpDeclaration:    {"Declaration of", "declarations"},
	OpTypeDefinition: {"Type definition of", "type definitions"},
	OpImplementation: {"Implementations of", "implementations"},
	OpReferences:     {"References to", "references"},
}

// Render writes the locations for a model: a header line, then one line
// per location, `path:line:col: source line`, grouped by file (a blank
// line between files), at most NavRenderOptions.MaxLocations of them.
func (res *Locations) Render(opts *NavRenderOptions) string {
	r := newRenderer(opts)
	t, ok := locationTitles[res.Op]
	if !ok {
		t = [2]string{string(res.Op) + " of", "locations"}
	}
	subj := r.subject(&res.Answer)
	total := res.total()
	if len(res.Locations) == 0 {
		if total > 0 {
			return pastEnd(res.Server, total, t[1]+" for "+subj, res.Offset)
		}
		if res.Incomplete {
			return emptyIncomplete(&res.Answer, t[1]+" for "+subj) + "\n"
		}
		return fmt.Sprintf("%s found no %s for %s.\n", res.Server, t[1], subj)
	}
	n, files := len(res.Locations), countFiles(res.Locations)
	if n < total {
		fmt.Fprintf(&r.b, "%s %s, from %s: %d; showing %s (%d in %d file%s)\n", t[0], subj, res.Server, total,
			showing(res.Offset, n, total), n, files, plural(files))
	} else {
		fmt.Fprintf(&r.b, "%s %s, from %s: %d in %d file%s\n", t[0], subj, res.Server, n, files, plural(files))
	}
	if res.Incomplete {
		r.b.WriteString(incompleteNote(&res.Answer) + "\n")
	}
	r.b.WriteByte('\n')
	r.locationLines(res.Locations, "")
	return r.b.String()
}

// pastEnd is what an empty page past the end of a whole answer of total
// entries says.
func pastEnd(server string, total int, what string, offset int) string {
	return fmt.Sprintf("%s found %d %s; there are none from offset %d on (offsets run from 0 to %d).\n",
		server, total, what, offset, total-1)
}

// showing says which entries of a page are shown: "101-112 of 112",
// 1-based.
func showing(offset, n, total int) string {
	if n == 1 {
		return fmt.Sprintf("%d of %d", offset+1, total)
	}
	return fmt.Sprintf("%d-%d of %d", offset+1, offset+n, total)
}

// Render writes the hover text for a model: a header line, then the
// Markdown.
func (res *Hover) Render(opts *NavRenderOptions) string {
	r := newRenderer(opts)
	subj := r.subject(&res.Answer)
	if strings.TrimSpace(res.Markdown) == "" {
		if res.Incomplete {
			return emptyIncomplete(&res.Answer, "hover information for "+subj) + "\n"
		}
		return fmt.Sprintf("%s has no hover information for %s.\n", res.Server, subj)
	}
	fmt.Fprintf(&r.b, "Hover for %s, from %s:\n", subj, res.Server)
	if res.Incomplete {
		r.b.WriteString(incompleteNote(&res.Answer) + "\n")
	}
	r.b.WriteString("\n" + strings.TrimSpace(res.Markdown) + "\n")
	return r.b.String()
}

func countSymbols(s []Symbol) int {
	n := len(s)
	for i := range s {
		n += countSymbols(s[i].Children)
	}
	return n
}

// Render writes the symbols for a model. Document symbols: one line per
// symbol, `kind name detail  path:line:col`, children indented under their
// parent. Workspace symbols: `path:line:col: kind name (container)`, in
// the server's order.
func (res *Symbols) Render(opts *NavRenderOptions) string {
	r := newRenderer(opts)
	total := countSymbols(res.Symbols)
	whole := res.total()
	var what string
	if res.Op == OpWorkspaceSymbols {
		what = fmt.Sprintf("workspace symbols matching %q", res.Query)
	} else {
		what = "symbols in " + r.path(&Location{Path: res.Path})
	}
	if total == 0 {
		if whole > 0 {
			return pastEnd(res.Server, whole, what, res.Offset)
		}
		if res.Incomplete {
			return emptyIncomplete(&res.Answer, what) + "\n"
		}
		return fmt.Sprintf("%s found no %s.\n", res.Server, what)
	}
	if n := len(res.Symbols); n < whole {
		fmt.Fprintf(&r.b, "%s%s, from %s: %d; showing %s\n", strings.ToUpper(what[:1]), what[1:], res.Server, whole, showing(res.Offset, n, whole))
	} else {
		fmt.Fprintf(&r.b, "%s%s, from %s: %d\n", strings.ToUpper(what[:1]), what[1:], res.Server, total)
	}
	if res.Incomplete {
		r.b.WriteString(incompleteNote(&res.Answer) + "\n")
	}
	r.b.WriteByte('\n')
	shown := 0
	var walk func(s []Symbol, depth int)
	walk = func(s []Symbol, depth int) {
		for i := range s {
			if r.max >= 0 && shown >= r.max {
				return
			}
			shown++
			sym := &s[i]
			if res.Op == OpWorkspaceSymbols {
				fmt.Fprintf(&r.b, "%s: %s %s", r.place(&sym.Location), sym.Kind, sym.Name)
				if sym.Container != "" {
					fmt.Fprintf(&r.b, " (in %s)", sym.Container)
				}
			} else {
				fmt.Fprintf(&r.b, "%s%s %s", strings.Repeat("  ", depth), sym.Kind, sym.Name)
				if d := strings.Join(strings.Fields(sym.Detail), " "); d != "" {
					r.b.WriteString(" " + shorten(d, 80))
				}
				r.b.WriteString("  " + r.place(&sym.Location))
			}
			r.b.WriteByte('\n')
			walk(sym.Children, depth+1)
		}
	}
	walk(res.Symbols, 0)
	if shown < total {
		fmt.Fprintf(&r.b, "… %d more\n", total-shown)
	}
	return r.b.String()
}

// Render writes the call hierarchy for a model: the items, then each
// call's item with its call sites indented under it.
func (res *CallHierarchy) Render(opts *NavRenderOptions) string {
	r := newRenderer(opts)
	subj := r.subject(&res.Answer)
	if len(res.Items) == 0 {
		if res.Incomplete {
			return emptyIncomplete(&res.Answer, "call hierarchy item for "+subj) + "\n"
		}
		return fmt.Sprintf("%s found no function or method to follow calls of at %s.\n", res.Server, subj)
	}
	item := func(it *CallItem) string {
		s := fmt.Sprintf("%s %s", it.Kind, it.Name)
		if d := strings.Join(strings.Fields(it.Detail), " "); d != "" {
			s += " " + shorten(d, 80)
		}
		return s + "  " + r.place(&it.Location)
	}
	var title, what string
	switch res.Op {
	case OpIncomingCalls:
		title, what = "Calls to", "callers"
	case OpOutgoingCalls:
		title, what = "Calls from", "callees"
	default:
		fmt.Fprintf(&r.b, "Call hierarchy at %s, from %s:\n", subj, res.Server)
		if res.Incomplete {
			r.b.WriteString(incompleteNote(&res.Answer) + "\n")
		}
		for i := range res.Items {
			r.b.WriteString(item(&res.Items[i]) + "\n")
		}
		return r.b.String()
	}
	names := make([]string, len(res.Items))
	for i := range res.Items {
		names[i] = res.Items[i].Name
	}
	on := fmt.Sprintf("%s (%s)", strings.Join(names, ", "), r.place(&res.Items[0].Location))
	total := totalOf(res.Total, res.Offset, len(res.Calls))
	if len(res.Calls) == 0 {
		if total > 0 {
			return pastEnd(res.Server, total, what+" of "+on, res.Offset)
		}
		if res.Incomplete {
			return emptyIncomplete(&res.Answer, what+" of "+on) + "\n"
		}
		return fmt.Sprintf("%s found no %s of %s.\n", res.Server, what, on)
	}
	fmt.Fprintf(&r.b, "%s %s, from %s: %d %s", title, on, res.Server, total, strings.TrimSuffix(what, "s")+plural(total))
	if n := len(res.Calls); n < total {
		fmt.Fprintf(&r.b, "; showing %s", showing(res.Offset, n, total))
	}
	r.b.WriteByte('\n')
	if res.Incomplete {
		r.b.WriteString(incompleteNote(&res.Answer) + "\n")
	}
	r.b.WriteByte('\n')
	shown := 0
	for i := range res.Calls {
		c := &res.Calls[i]
		if r.max >= 0 && shown >= r.max {
			fmt.Fprintf(&r.b, "… %d more %s\n", len(res.Calls)-i, what)
			break
		}
		shown++
		r.b.WriteString(item(&c.Item) + "\n")
		r.locationLines(c.Sites, "  ")
	}
	return r.b.String()
}

// Render writes the proposal for a model: a header line saying that
// nothing was written, then the unified diff.
func (res *RenameProposal) Render(opts *NavRenderOptions) string {
	r := newRenderer(opts)
	subj := r.subject(&res.Answer)
	if len(res.Files) == 0 {
		return fmt.Sprintf("Renaming %s to %s changes nothing (from %s).\n", subj, res.NewName, res.Server)
	}
	edits := 0
	for _, f := range res.Files {
		edits += f.Edits
	}
	fmt.Fprintf(&r.b, "Rename of %s to %s, from %s: %d edit%s in %d file%s. Nothing is written yet.\n",
		subj, res.NewName, res.Server, edits, plural(edits), len(res.Files), plural(len(res.Files)))
	if res.Incomplete {
		r.b.WriteString(incompleteNote(&res.Answer) + " Files the server has not loaded may be missing from the rename.\n")
	}
	r.b.WriteString("\n" + res.Diff)
	return r.b.String()
}

var applyWords = map[ApplyStatus]string{
	ApplyWritten:   "written",
	ApplyRejected:  "rejected by the user; unchanged",
	ApplyCancelled: "cancelled; unchanged",
	ApplyConflict:  "not written: it changed on disk since the rename was computed",
	ApplyFailed:    "not written",
	ApplySkipped:   "not proposed (the review was cancelled); unchanged",
}

// Render writes the outcome of each file for a model.
func (res *RenameApplied) Render(opts *NavRenderOptions) string {
	r := newRenderer(opts)
	fmt.Fprintf(&r.b, "Rename: %d of %d file%s written.\n", res.Written, len(res.Files), plural(len(res.Files)))
	for i := range res.Files {
		f := &res.Files[i]
		w, ok := applyWords[f.Status]
		if !ok {
			w = string(f.Status)
		}
		fmt.Fprintf(&r.b, "%s: %s", r.path(&Location{Path: f.Path}), w)
		if f.Error != "" && f.Status != ApplyConflict {
			fmt.Fprintf(&r.b, " (%s)", f.Error)
		}
		r.b.WriteByte('\n')
	}
	return r.b.String()
}
