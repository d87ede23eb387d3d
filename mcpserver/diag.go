package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/mcp"
)

// The limits of the diagnostics tool's block, those of the registry's turn
// loop: a model reads the most severe problems first, and never a flood.
const (
	mcpDiagPerFile = 10
	mcpDiagTotal   = 30
	mcpDiagFiles   = 50
)

type diagArgs struct {
	Files []string `json:"files"`
}

func diagnosticsTool(d *ideserver.Diagnostics, p project) ideserver.Tool {
	return defineTool(toolSpec{name: "diagnostics", title: "Diagnostics",
		description: "Errors and warnings the project's language servers report for files, as the files are on disk now (write your edits first). Waits until each file's server has finished with its current text and says how that was known; a file whose server did not finish in time is marked as possibly incomplete. Shows at most 10 diagnostics per file and 30 in all, the most severe first, with 1-based line:column positions.",
		input: objectSchema([]prop{
			{"files", `{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":50,"description":"The files to check: paths relative to the project directory, or absolute inside it."}`},
		}, "files"),
		output:   outputSchema(diagSchema, diagFileDef, diagnosticDef),
		readOnly: true},
		func(ctx context.Context, a *diagArgs) *mcp.ToolResult {
			return runDiagnostics(ctx, d, p, a)
		})
}

func runDiagnostics(ctx context.Context, d *ideserver.Diagnostics, p project, a *diagArgs) *mcp.ToolResult {
	switch {
	case len(a.Files) == 0:
		return errorf("diagnostics needs files, a list of the paths of the files to check.")
	case len(a.Files) > mcpDiagFiles:
		return errorf("diagnostics checks at most %d files at once; %d were given.", mcpDiagFiles, len(a.Files))
	}
	paths := make([]string, 0, len(a.Files))
	seen := map[string]bool{}
	var refused []string
	for _, f := range a.Files {
		if f == "" {
			return errorf("files holds an empty path.")
		}
		abs, bad := p.confine(f)
		if bad != nil {
			refused = append(refused, bad.Text())
			continue
		}
		if !seen[abs] {
			seen[abs] = true
			paths = append(paths, abs)
		}
	}
	var reps []ideserver.FileReport
	if len(paths) > 0 {
		var err error
		if reps, err = d.Check(ctx, paths); err != nil {
			return errorf("Checking the files ended early: %v.", err)
		}
	}
	text, checked := renderReports(p, reps)
	if slices.ContainsFunc(reps, func(r ideserver.FileReport) bool {
		return errors.Is(r.Err, lsp.ErrNoServer) || r.Err == nil && r.Server == ""
	}) {
		text += "\n" + serversSentence(d.Manager())
	}
	for _, r := range refused {
		text = strings.TrimPrefix(text+"\n"+r, "\n")
	}
	st := diagStructured(p, reps, refused)
	if !checked {
		res := mcp.ErrorResult(text)
		st.Status, st.Reason = statusUnknown, "no file could be checked"
		return withStructured(res, st)
	}
	return withStructured(mcp.TextResult(text), st)
}

type diagResult struct {
	Status string     `json:"status"`
	Reason string     `json:"reason,omitempty"`
	Files  []diagFile `json:"files"`
}

type diagFile struct {
	Path string `json:"path"`
	// Status is the file's: complete (known current), partial (the
	// server did not finish in time: what it had), unknown (not checked:
	// Error says why), server-down.
	Status      string       `json:"status"`
	Server      string       `json:"server,omitempty"`
	How         string       `json:"how,omitempty"`
	Error       string       `json:"error,omitempty"`
	Diagnostics []diagnostic `json:"diagnostics"`
	// Total counts the file's diagnostics; at most 10 are listed.
	Total int `json:"total"`
}

type diagnostic struct {
	Severity string    `json:"severity"`
	Message  string    `json:"message"`
	Source   string    `json:"source,omitempty"`
	Code     string    `json:"code,omitempty"`
	Range    diagRange `json:"range"`
}

type diagRange struct {
	Start diagPos `json:"start"`
	End   diagPos `json:"end"`
}

type diagPos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

const (
	diagSchema    = statusProps + `,"files":{"type":"array","items":{"$ref":"#/$defs/file"}}`
	diagFileDef   = `"file":{"type":"object","properties":{"path":{"type":"string"},` + `"status":{"type":"string","enum":["complete","partial","unknown","server-down"]},"server":{"type":"string"},"how":{"type":"string","description":"How the diagnostics were known current."},"error":{"type":"string","description":"Why the file was not checked."},"diagnostics":{"type":"array","items":{"$ref":"#/$defs/diagnostic"}},"total":{"type":"integer","minimum":0}},"required":["path","status","diagnostics","total"],"additionalProperties":false}`
	diagPosSchema = `{"type":"object","properties":{"line":{"type":"integer","minimum":1},"column":{"type":"integer","minimum":1}},"required":["line","column"],"additionalProperties":false}`
	diagnosticDef = `"diagnostic":{"type":"object","properties":{"severity":{"type":"string","enum":["Error","Warning","Information","Hint"]},"message":{"type":"string"},"source":{"type":"string"},"code":{"type":"string"},` +
		`"range":{"type":"object","properties":{"start":` + diagPosSchema + `,"end":` + diagPosSchema + `},"required":["start","end"],"additionalProperties":false}},"required":["severity","message","range"],"additionalProperties":false}`
)

// structuredDiagnostic converts one diagnostic, its positions 1-based.
func structuredDiagnostic(d diag.Diagnostic) diagnostic {
	sev := d.Severity
	if sev < diag.SeverityError || sev > diag.SeverityHint {
		sev = diag.SeverityError
	}
	return diagnostic{Severity: sev.String(), Message: d.Message, Source: d.Source, Code: d.Code, Range: diagRange{
		Start: diagPos{d.Range.Start.Line + 1, d.Range.Start.Character + 1},
		End:   diagPos{d.Range.End.Line + 1, d.Range.End.Character + 1},
	}}
}

// diagStructured is the structured result of the diagnostics tool: every
// file's status, the whole complete only when every file is.
func diagStructured(p project, reps []ideserver.FileReport, refused []string) *diagResult {
	out := &diagResult{Status: statusComplete, Files: []diagFile{}}
	var partial []string
	for _, r := range reps {
		f := diagFile{Path: r.Path, Server: r.Server, Diagnostics: []diagnostic{}, Total: max(r.Total, len(r.Diagnostics))}
		switch {
		case r.Err != nil:
			f.Status, f.Error = statusUnknown, clip(errorText(r.Err))
			if serverDown(r.Err) {
				f.Status = statusServerDown
			}
		case r.Server == "":
			f.Status, f.Error = statusUnknown, "no language server serves "+extOf(r.Path)+" files"
		default:
			f.Status, f.How = statusComplete, howKnown(r.Settle)
			switch {
			case r.Settle.Status != "":
				// The lsp package's own word: a fresh set may still be
				// partial (a stalled progress that was not waited for).
				f.Status = string(r.Settle.Status)
			case !r.Settle.Freshness.Fresh():
				f.Status = statusPartial
			}
		}
		for _, dg := range r.Diagnostics[:min(len(r.Diagnostics), mcpDiagPerFile)] {
			f.Diagnostics = append(f.Diagnostics, structuredDiagnostic(dg))
		}
		if f.Status != statusComplete {
			partial = append(partial, p.rel(r.Path)+": "+cmpOr(f.Error, f.How))
		}
		out.Files = append(out.Files, f)
	}
	partial = append(partial, refused...)
	if len(partial) > 0 {
		out.Status, out.Reason = statusPartial, clip(strings.Join(partial, "; "))
	}
	return out
}

// renderReports writes the diagnostics block (bounded as the registry
// bounds it) and one line per file saying how its diagnostics were known,
// or why it could not be checked; checked is false when no file could be.
func renderReports(p project, reps []ideserver.FileReport) (text string, checked bool) {
	type item struct {
		file int
		d    diag.Diagnostic
	}
	var items []item
	cut := 0
	// clean: no diagnostics, and that known to be current; unknown: none
	// received, but not known to be current (never "No diagnostics").
	var notes, done, clean, unknown, failed []string
	for i, r := range reps {
		file := p.rel(r.Path)
		switch {
		case errors.Is(r.Err, fs.ErrNotExist):
			failed = append(failed, fmt.Sprintf("%s does not exist.", file))
			continue
		case errors.Is(r.Err, lsp.ErrNoServer) || r.Err == nil && r.Server == "":
			failed = append(failed, fmt.Sprintf("No language server serves %s (%s files).", file, extOf(r.Path)))
			continue
		case r.Err != nil:
			failed = append(failed, fmt.Sprintf("%s could not be checked: %s.", file, strings.TrimSuffix(errorText(r.Err), ".")))
			continue
		}
		how := howKnown(r.Settle)
		done = append(done, fmt.Sprintf("%s (%s, %s)", file, r.Server, how))
		if !r.Settle.Freshness.Fresh() {
			notes = append(notes, fmt.Sprintf("%s: %s; its diagnostics may be incomplete or stale.", file, how))
		}
		if len(r.Diagnostics) == 0 {
			if r.Settle.Freshness.Fresh() {
				clean = append(clean, file)
			} else {
				unknown = append(unknown, file)
			}
		}
		// r.Total counts what the headless IDE did not keep (it keeps the
		// most severe MaxDiagnosticsPerFile), so the cut is the true count.
		kept := min(len(r.Diagnostics), mcpDiagPerFile)
		cut += max(r.Total, len(r.Diagnostics)) - kept
		for _, dg := range r.Diagnostics[:kept] {
			items = append(items, item{i, dg})
		}
	}
	// The most severe first across files, ties to the earlier file.
	slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(a.d.Severity, b.d.Severity) })
	if len(items) > mcpDiagTotal {
		cut += len(items) - mcpDiagTotal
		items = items[:mcpDiagTotal]
	}
	att := &diag.Attachment{Cut: cut, Notes: notes}
	byFile := map[int]int{}
	slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(a.file, b.file) })
	for _, it := range items {
		k, ok := byFile[it.file]
		if !ok {
			k = len(att.Files)
			byFile[it.file] = k
			att.Files = append(att.Files, diag.FileDiagnostics{Path: reps[it.file].Path, URI: "file://" + filepath.ToSlash(reps[it.file].Path)})
		}
		att.Files[k].Diagnostics = append(att.Files[k].Diagnostics, it.d)
	}
	var b strings.Builder
	empty := func() {
		if len(clean) > 0 {
			fmt.Fprintf(&b, "No diagnostics in %s.\n", strings.Join(clean, ", "))
		}
		if len(unknown) > 0 {
			fmt.Fprintf(&b, "No diagnostics received for %s, and that is not known to be current.\n", strings.Join(unknown, ", "))
		}
	}
	if len(att.Files) > 0 || cut > 0 {
		b.WriteString(att.Render(&diag.RenderOptions{ProjectDir: p.dir}))
		b.WriteByte('\n')
		empty()
	} else if len(done) > 0 {
		empty()
		for _, n := range notes {
			b.WriteString(n + "\n")
		}
	}
	if len(done) > 0 {
		fmt.Fprintf(&b, "Checked: %s.\n", strings.Join(done, "; "))
	}
	for _, f := range failed {
		b.WriteString(f + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n"), len(done) > 0
}

// howKnown says how a file's diagnostics were known to be current.
func howKnown(r lsp.SettleResult) string {
	if r.Reason != "" {
		return r.Reason
	}
	switch r.Freshness {
	case lsp.FreshPublished:
		return fmt.Sprintf("published for version %d", r.Version)
	case lsp.FreshProgressEnded:
		return fmt.Sprintf("its work on version %d ended", r.Version)
	case lsp.FreshQuiet:
		return "quiet after its last publish"
	case lsp.FreshTimedOut:
		return fmt.Sprintf("no report within %v", r.Elapsed.Round(100_000_000))
	}
	return r.Freshness.String()
}

func extOf(path string) string {
	if e := filepath.Ext(path); e != "" {
		return e
	}
	return filepath.Base(path)
}

// errorText is an error's text for a model: a JSON-RPC error's data (what
// it says about the file), or the error's own text.
func errorText(err error) string {
	var e *mcp.Error
	if errors.As(err, &e) {
		var data string
		if json.Unmarshal(e.Data, &data) == nil && data != "" {
			return data
		}
		return e.Message
	}
	return err.Error()
}
