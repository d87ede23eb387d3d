package diag

import (
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Defaults of RenderOptions.
const (
	DefaultTag      = "new-diagnostics"
	DefaultMaxChars = 4000
)

// RenderOptions configures Attachment.Render. A nil *RenderOptions means
// the defaults.
type RenderOptions struct {
	// ProjectDir, when set, makes the paths of files inside it relative.
	ProjectDir string
	// Tag names the element wrapping the block. Default DefaultTag
	// ("new-diagnostics").
	Tag string
	// MaxChars caps the whole block, tags included, in characters (Unicode
	// code points). 0 means DefaultMaxChars (4,000, the IDE path's
	// budget); a negative value means no cap.
	MaxChars int
}

const renderIntro = "The following new diagnostic issues were detected:\n"

// Render returns the model-facing text of a: a block wrapped in
// <new-diagnostics>…</new-diagnostics> (see RenderOptions.Tag), one
// section per file, one line per diagnostic:
//
//	<new-diagnostics>
//	The following new diagnostic issues were detected:
//
//	main.go:
//	  ✘ [Line 3:5] undefined: x [UndeclaredName] (compiler)
//	  ⚠ [Line 9:2] unusedVariable declared and not used [unusedvariable] (gopls)
//	… 4 more not shown
//	</new-diagnostics>
//
// Lines and columns are 1-based. The code follows in brackets and the
// source in parentheses when present; the continuation lines of a
// multi-line message are indented by four spaces. A closing tag inside the
// text is escaped as <\/tag> so that it cannot end the block early.
//
// The block never exceeds MaxChars: diagnostics that do not fit are left
// out whole (never cut mid-line), the next ones that fit still shown, and
// the line "… N more not shown" counts them together with a.Cut. Notes
// follow, one line each. Render returns "" when a is nil or holds nothing
// to show, or when not even the tags fit the budget.
func (a *Attachment) Render(opts *RenderOptions) string {
	if a == nil {
		return ""
	}
	var o RenderOptions
	if opts != nil {
		o = *opts
	}
	if o.Tag == "" {
		o.Tag = DefaultTag
	}
	if o.MaxChars == 0 {
		o.MaxChars = DefaultMaxChars
	}
	closing := "</" + o.Tag + ">"
	escape := strings.NewReplacer(closing, `<\/`+o.Tag+">")

	type item struct {
		head  string // the header of the item's file
		first bool   // the first item of its file
		line  string
	}
	var items []item
	for _, f := range a.Files {
		head := "\n" + escape.Replace(displayPath(f, o.ProjectDir)) + ":\n"
		for i := range f.Diagnostics {
			items = append(items, item{head: head, first: i == 0, line: renderDiagnostic(&f.Diagnostics[i], escape)})
		}
	}
	var notes []string
	for _, n := range a.Notes {
		notes = append(notes, escape.Replace(strings.TrimRight(n, "\n"))+"\n")
	}
	if len(items) == 0 && len(notes) == 0 && a.Cut == 0 {
		return ""
	}

	open := "<" + o.Tag + ">\n"
	intro := ""
	if len(items) > 0 {
		intro = renderIntro
	}
	more := func(n int) string {
		if n <= 0 {
			return ""
		}
		return "… " + strconv.Itoa(n) + " more not shown\n"
	}
	length := utf8.RuneCountInString

	// Which items fit: all when there is no cap or everything fits.
	fixed := length(open) + length(intro) + length(closing)
	for _, n := range notes {
		fixed += length(n)
	}
	show := make([]bool, len(items))
	total := fixed + length(more(a.Cut))
	for i := range items {
		show[i] = true
		total += length(items[i].line)
		if items[i].first {
			total += length(items[i].head)
		}
	}
	if o.MaxChars > 0 && total > o.MaxChars {
		// Reserve the frame and the longest count line the block can
		// need, then spend what is left on the notes (they qualify
		// everything else), then on diagnostics in order, skipping any
		// that do not fit.
		budget := o.MaxChars - length(open) - length(renderIntro) - length(closing) - length(more(len(items)+a.Cut))
		if budget < 0 {
			budget = o.MaxChars - length(open) - length(closing) - length(more(len(items)+a.Cut))
			if budget < 0 {
				return ""
			}
			budget = -1 // room for the frame and the count only
		}
		kept := notes[:0]
		for _, n := range notes {
			if l := length(n); l <= budget {
				kept = append(kept, n)
				budget -= l
			}
		}
		notes = kept
		headShown := false
		for i := range items {
			if items[i].first {
				headShown = false
			}
			cost := length(items[i].line)
			if !headShown {
				cost += length(items[i].head)
			}
			if cost > budget {
				show[i] = false
				continue
			}
			budget -= cost
			headShown = true
		}
	}

	var b strings.Builder
	b.WriteString(open)
	hidden := a.Cut
	headShown, anyShown := false, false
	for i := range items {
		if items[i].first {
			headShown = false
		}
		if !show[i] {
			hidden++
			continue
		}
		if !anyShown {
			b.WriteString(renderIntro)
			anyShown = true
		}
		if !headShown {
			b.WriteString(items[i].head)
			headShown = true
		}
		b.WriteString(items[i].line)
	}
	b.WriteString(more(hidden))
	for _, n := range notes {
		b.WriteString(n)
	}
	b.WriteString(closing)
	return b.String()
}

// renderDiagnostic returns one diagnostic's line, newline included.
func renderDiagnostic(d *Diagnostic, escape *strings.Replacer) string {
	var b strings.Builder
	b.WriteString("  ")
	b.WriteString(d.Severity.Mark())
	b.WriteString(" [Line ")
	b.WriteString(strconv.Itoa(d.Range.Start.Line + 1))
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(d.Range.Start.Character + 1))
	b.WriteString("] ")
	msg := strings.ReplaceAll(strings.ReplaceAll(d.Message, "\r\n", "\n"), "\r", "\n")
	msg = strings.ReplaceAll(strings.TrimSpace(msg), "\n", "\n    ")
	b.WriteString(escape.Replace(msg))
	if d.Code != "" {
		b.WriteString(" [")
		b.WriteString(escape.Replace(d.Code))
		b.WriteByte(']')
	}
	if d.Source != "" {
		b.WriteString(" (")
		b.WriteString(escape.Replace(d.Source))
		b.WriteByte(')')
	}
	return strings.TrimRight(b.String(), " ") + "\n"
}

// displayPath is f's path relative to projectDir when inside it, else its
// path, else its URI.
func displayPath(f FileDiagnostics, projectDir string) string {
	if f.Path == "" {
		return f.URI
	}
	if projectDir != "" {
		rel, err := filepath.Rel(filepath.Clean(projectDir), filepath.Clean(f.Path))
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return rel
		}
	}
	return f.Path
}
