package lsp

import (
	"fmt"
	"sort"
	"strings"

	"github.com/idebridge/idebridge/diag"
)

// EditCheck is what staged edits change in the diagnostics: the result
// of EditSet.Check, and of the check after EditSet.Apply.
type EditCheck struct {
	// Files are the files checked: the edited files in the order first
	// staged, then the files that reference the symbols the edits touch,
	// then the other files of the edited files' directories. Every
	// checked file is listed, changed or not.
	Files []FileCheck `json:"files"`
	// Introduced and Resolved count the diagnostics over all files.
	Introduced int `json:"introduced"`
	Resolved   int `json:"resolved"`
	// Unchecked counts the dependents left out by MaxCheckedFiles.
	Unchecked int `json:"unchecked"`
	// Status is the least trustworthy status of the files (see Status):
	// StatusComplete only when every file's diagnostics were known, before
	// and after.
	Status Status `json:"status"`
	// Diff is the unified diff of the edits.
	Diff string `json:"diff"`
}

// FileCheck is what staged edits change in one file's diagnostics.
type FileCheck struct {
	// Path is the file's absolute path.
	Path string `json:"path"`
	// Edited is true for a file the edits change, false for a dependent.
	Edited bool `json:"edited"`
	// Server is the server that serves the file; "" when none does (the
	// file then has no diagnostics).
	Server string `json:"server,omitempty"`
	// Introduced are the diagnostics the edits bring (positions in the
	// edited text); Resolved those they remove (positions in the text
	// on disk). A diagnostic is the same before and after when its
	// severity, source, code, message, and the text of its line and its
	// place in it agree.
	Introduced []diag.Diagnostic `json:"introduced"`
	Resolved   []diag.Diagnostic `json:"resolved"`
	// Status is the less trustworthy of the two settles, before and after
	// (see Status); Reason its detail.
	Status Status `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// statusRank orders statuses from most to least trustworthy.
func statusRank(s Status) int {
	switch s {
	case StatusComplete:
		return 0
	case StatusPartial:
		return 1
	case StatusUnknown, "":
		return 2
	}
	return 3
}

func worstStatus(files []FileCheck) Status {
	st := StatusComplete
	for _, f := range files {
		if f.Server == "" {
			continue
		}
		if statusRank(f.Status) > statusRank(st) {
			st = f.Status
		}
	}
	return st
}

// compareSets computes the delta of one file from its two settles.
func compareSets(path string, edited bool, before, after fileSet) FileCheck {
	fc := FileCheck{Path: path, Edited: edited, Server: after.server,
		Introduced: []diag.Diagnostic{}, Resolved: []diag.Diagnostic{}}
	if fc.Server == "" {
		fc.Server = before.server
	}
	if fc.Server == "" && after.err == nil && before.err == nil {
		fc.Reason = "no language server serves it"
		return fc
	}
	fc.Status, fc.Reason = settleStatus(after)
	if st, r := settleStatus(before); statusRank(st) > statusRank(fc.Status) {
		fc.Status, fc.Reason = st, "before the edits: "+r
	}
	for _, fs := range []*fileSet{&before, &after} {
		if fs.total > len(fs.diags) && statusRank(fc.Status) < statusRank(StatusPartial) {
			fc.Status = StatusPartial
			fc.Reason = fmt.Sprintf("%d diagnostics, the %d most severe compared", fs.total, len(fs.diags))
		}
	}
	bidx, aidx := newLineIndex(before.text), newLineIndex(after.text)
	count := map[string]int{}
	for i := range before.diags {
		count[diagKey(bidx, &before.diags[i])]++
	}
	for _, d := range after.diags {
		k := diagKey(aidx, &d)
		if count[k] > 0 {
			count[k]--
			continue
		}
		fc.Introduced = append(fc.Introduced, d)
	}
	count = map[string]int{}
	for i := range after.diags {
		count[diagKey(aidx, &after.diags[i])]++
	}
	for _, d := range before.diags {
		k := diagKey(bidx, &d)
		if count[k] > 0 {
			count[k]--
			continue
		}
		fc.Resolved = append(fc.Resolved, d)
	}
	sortDiags(fc.Introduced)
	sortDiags(fc.Resolved)
	return fc
}

// sortDiags puts the most severe first, then by position.
func sortDiags(ds []diag.Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		sa, sb := a.Severity, b.Severity
		if sa == 0 {
			sa = diag.SeverityError
		}
		if sb == 0 {
			sb = diag.SeverityError
		}
		if sa != sb {
			return sa < sb
		}
		if a.Range.Start.Line != b.Range.Start.Line {
			return a.Range.Start.Line < b.Range.Start.Line
		}
		return a.Range.Start.Character < b.Range.Start.Character
	})
}

// settleStatus is the status and reason of one settle.
func settleStatus(fs fileSet) (Status, string) {
	if fs.err != nil {
		st := statusOfErr(fs.err)
		if st == "" {
			st = StatusUnknown
		}
		return st, fs.err.Error()
	}
	st := fs.res.Status
	if st == "" {
		st = StatusUnknown
	}
	return st, fs.res.Reason
}

// diagKey identifies a diagnostic across an edit: what it says, and the
// text of its line with its place there, not its line number (lines move
// when others are inserted above).
func diagKey(idx *lineIndex, d *diag.Diagnostic) string {
	line := ""
	if s, ok := idx.line(d.Range.Start.Line); ok {
		line = s
	}
	trimmed := strings.TrimLeft(line, " \t")
	indent := len([]rune(line)) - len([]rune(trimmed))
	width := -1
	if d.Range.End.Line == d.Range.Start.Line {
		width = d.Range.End.Character - d.Range.Start.Character
	}
	return fmt.Sprintf("%d\x00%s\x00%s\x00%s\x00%s\x00%d\x00%d", d.Severity, d.Source, d.Code, d.Message,
		strings.TrimRight(trimmed, " \t"), d.Range.Start.Character-indent, width)
}

// maxRenderedPerFile bounds the diagnostics Render shows of one file.
const maxRenderedPerFile = 10

// Render writes the check for a person or a model: each file with a
// change, its introduced (+) and resolved (-) diagnostics with their
// places (the most severe first, at most 10 a file, the rest counted),
// then a line on what was checked and how far it can be trusted. Paths
// inside projectDir are relative to it.
func (c *EditCheck) Render(projectDir string) string {
	var b strings.Builder
	incomplete := 0
	for _, f := range c.Files {
		if f.Server != "" && f.Status != StatusComplete {
			incomplete++
		}
		if len(f.Introduced) == 0 && len(f.Resolved) == 0 && (f.Server == "" || f.Status == StatusComplete) {
			continue
		}
		name := displayPath(projectDir, f.Path)
		var what []string
		if n := len(f.Introduced); n > 0 {
			what = append(what, fmt.Sprintf("%d introduced", n))
		}
		if n := len(f.Resolved); n > 0 {
			what = append(what, fmt.Sprintf("%d resolved", n))
		}
		if f.Status != StatusComplete {
			what = append(what, fmt.Sprintf("%s: %s", f.Status, f.Reason))
		}
		fmt.Fprintf(&b, "%s: %s\n", name, strings.Join(what, "; "))
		shown := 0
		for _, d := range f.Introduced[:min(len(f.Introduced), maxRenderedPerFile)] {
			writeDiag(&b, "+", &d)
			shown++
		}
		for _, d := range f.Resolved[:min(len(f.Resolved), maxRenderedPerFile-shown)] {
			writeDiag(&b, "-", &d)
			shown++
		}
		if rest := len(f.Introduced) + len(f.Resolved) - shown; rest > 0 {
			fmt.Fprintf(&b, "  … %d more\n", rest)
		}
	}
	edited := 0
	for _, f := range c.Files {
		if f.Edited {
			edited++
		}
	}
	switch {
	case c.Introduced != 0 || c.Resolved != 0:
	case incomplete == 0:
		b.WriteString("no diagnostics introduced or resolved\n")
	default:
		// Not "no diagnostics introduced": the servers' answers are not
		// all known complete (see the files' lines above).
		b.WriteString("nothing introduced or resolved in the diagnostics received so far\n")
	}
	fmt.Fprintf(&b, "checked %d files (%d edited, %d dependents)", len(c.Files), edited, len(c.Files)-edited)
	if c.Unchecked > 0 {
		fmt.Fprintf(&b, "; %d more dependents not checked", c.Unchecked)
	}
	if incomplete > 0 {
		fmt.Fprintf(&b, "; %d of them with diagnostics not known complete (%s)", incomplete, c.Status)
	} else {
		fmt.Fprintf(&b, "; status %s", c.Status)
	}
	b.WriteString("\n")
	return b.String()
}

func writeDiag(b *strings.Builder, sign string, d *diag.Diagnostic) {
	src := ""
	if d.Source != "" {
		src = " (" + d.Source + ")"
	}
	msg := strings.Join(strings.Fields(d.Message), " ")
	fmt.Fprintf(b, "  %s %d:%d %s: %s%s\n", sign, d.Range.Start.Line+1, d.Range.Start.Character+1, severityWord(d.Severity), msg, src)
}

func severityWord(s diag.Severity) string {
	switch s {
	case diag.SeverityError:
		return "error"
	case diag.SeverityWarning:
		return "warning"
	case diag.SeverityInformation:
		return "info"
	case diag.SeverityHint:
		return "hint"
	}
	return "diagnostic"
}
