package idebridge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/idebridge/idebridge/internal/fileuri"
	"github.com/idebridge/idebridge/mcp"

	"github.com/idebridge/idebridge/diag"
)

// DiagnosticsSnapshot is the IDE's diagnostics for one file taken before
// an edit, with the file's text at that moment. After the edit,
// NewDiagnostics fetches them again and keeps what the edit introduced.
//
// The usual sequence around an edit:
//
//	snap, err := idebridge.SnapshotDiagnostics(ctx, client, path)
//	// ... propose or write the edit ...
//	news, err := snap.NewDiagnostics(ctx, client)
//	prompt += news.Render(&diag.RenderOptions{ProjectDir: dir}) // "" when nothing is new
//
// Render's ProjectDir shows the paths of files inside dir relative to it,
// as the bindings' project_dir and projectDir do; without it they are
// absolute.
type DiagnosticsSnapshot struct {
	// Path is the file's absolute path; URI its file:// URI.
	Path, URI string
	// Text is the file's content when the snapshot was taken ("" for a
	// file that did not exist).
	Text string
	// Diagnostics are the IDE's diagnostics for the file, including those
	// reported under the URIs of its diff views, without duplicates.
	Diagnostics []diag.Diagnostic
	// Taken is when the snapshot was taken.
	Taken time.Time
}

// SnapshotDiagnostics asks the IDE for path's diagnostics (getDiagnostics
// {uri}) and reads the file's text, before an edit. A file the IDE has
// not open (Neovim's -32001 "File not open") has no diagnostics yet; any
// other failure is returned.
func SnapshotDiagnostics(ctx context.Context, c *Client, path string) (*DiagnosticsSnapshot, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("snapshotting diagnostics of %s: %w", path, err)
	}
	s := &DiagnosticsSnapshot{Path: abs, URI: fileuri.FromPath(abs), Taken: time.Now()}
	if s.Text, _, err = readText(abs); err != nil {
		return nil, fmt.Errorf("snapshotting diagnostics of %s: %w", abs, err)
	}
	if s.Diagnostics, err = fileDiagnostics(ctx, c, abs, false); err != nil {
		return nil, fmt.Errorf("snapshotting diagnostics of %s: %w", abs, err)
	}
	return s, nil
}

// NewDiagnostics are the diagnostics an edit introduced into one file.
type NewDiagnostics struct {
	// Path is the file's absolute path; URI its file:// URI.
	Path, URI string
	// Diagnostics are the new ones, most severe first, then by position.
	Diagnostics []diag.Diagnostic
	// Moved counts diagnostics that were there before the edit and only
	// moved because lines were inserted or deleted above them; they are
	// not in Diagnostics.
	Moved int
}

// NewDiagnostics fetches the file's diagnostics again, after the edit,
// and returns those that were not in the snapshot. The file is read again
// to line up the two: a diagnostic the snapshot had on a line the edit
// kept, found at that line's new place with the same message, severity,
// source, code and columns, is not new. Diagnostics under the URIs of the
// file's diff views (file:///f.go-<tab> (proposed), _claude_fs_right:...)
// count as the file's. The IDE is asked getDiagnostics {uri}, then
// getDiagnostics {} to see those diff views (a failure of the second is
// ignored).
func (s *DiagnosticsSnapshot) NewDiagnostics(ctx context.Context, c *Client) (*NewDiagnostics, error) {
	after, err := fileDiagnostics(ctx, c, s.Path, true)
	if err != nil {
		return nil, fmt.Errorf("fetching diagnostics of %s after the edit: %w", s.Path, err)
	}
	text, _, err := readText(s.Path)
	if err != nil {
		return nil, fmt.Errorf("fetching diagnostics of %s after the edit: %w", s.Path, err)
	}
	news, moved := diffDiagnostics(s.Diagnostics, after, newLineMap(s.Text, text))
	return &NewDiagnostics{Path: s.Path, URI: s.URI, Diagnostics: news, Moved: moved}, nil
}

// fileDiagnostics returns path's diagnostics, merged from every URI that
// denotes the file, without duplicates. With all, getDiagnostics {} is
// asked too, for diff views.
func fileDiagnostics(ctx context.Context, c *Client, abs string, all bool) ([]diag.Diagnostic, error) {
	if c == nil {
		return nil, errors.New("no IDE connected")
	}
	files, err := c.GetDiagnostics(ctx, abs)
	if isFileNotOpen(err) {
		files, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	if all {
		more, err := c.GetDiagnostics(ctx, "")
		if err != nil {
			c.cfg.Logger.Debug("getDiagnostics {} after an edit failed; using getDiagnostics {uri} alone", "path", abs, "err", err)
		}
		files = append(files, more...)
	}
	var out []diag.Diagnostic
	seen := map[diagKey]bool{}
	for _, f := range files {
		if !sameFile(f, abs) {
			continue
		}
		for _, d := range f.Diagnostics {
			k := keyOf(d, d.Range)
			if !seen[k] {
				seen[k] = true
				out = append(out, d)
			}
		}
	}
	return out, nil
}

// isFileNotOpen reports the Neovim answer for a file it has not open.
func isFileNotOpen(err error) bool {
	var te *mcp.ToolError
	return errors.As(err, &te) && te.Code == mcp.CodeFileNotOpen
}

// diagKey identifies a diagnostic for comparison across an edit.
type diagKey struct {
	message, source, code string
	severity              diag.Severity
	rng                   diag.Range
}

func keyOf(d diag.Diagnostic, r diag.Range) diagKey {
	return diagKey{strings.TrimSpace(d.Message), d.Source, d.Code, d.Severity, r}
}

// diffDiagnostics returns the diagnostics of after that are not in before
// once before's lines are mapped through lm, sorted, and how many of
// after were found in before at another line.
func diffDiagnostics(before, after []diag.Diagnostic, lm *lineMap) (news []diag.Diagnostic, moved int) {
	// old holds where each diagnostic of before is expected after the
	// edit, true when that is not where it was (it moved). A diagnostic on
	// a line the edit kept is expected only at the line's new place; one
	// on a line the edit changed or deleted stays expected where it was,
	// so that an edit of a line that leaves its error in place does not
	// report the error again.
	old := map[diagKey]bool{}
	for _, d := range before {
		r := d.Range
		start, ok1 := lm.Map(r.Start.Line)
		end, ok2 := lm.Map(r.End.Line)
		if ok1 && ok2 {
			r.Start.Line, r.End.Line = start, end
		}
		k := keyOf(d, r)
		if wasMoved, seen := old[k]; !seen || wasMoved {
			old[k] = r != d.Range
		}
	}
	for _, d := range after {
		isMoved, known := old[keyOf(d, d.Range)]
		switch {
		case !known:
			news = append(news, d)
		case isMoved:
			moved++
		}
	}
	slices.SortStableFunc(news, func(a, b diag.Diagnostic) int {
		return cmp.Or(
			cmp.Compare(a.Severity.Rank(), b.Severity.Rank()),
			cmp.Compare(a.Range.Start.Line, b.Range.Start.Line),
			cmp.Compare(a.Range.Start.Character, b.Range.Start.Character),
			strings.Compare(a.Message, b.Message),
		)
	})
	return news, moved
}

// diffViewSchemes are the URI schemes under which VS Code family IDEs
// report diagnostics of a diff view's sides; the rest of the URI is the
// file's path.
var diffViewSchemes = []string{"_claude_fs_right:", "_claude_fs_left:"}

// diffViewSuffixes end the buffer names of diff views in the Neovim plugin
// ("/p/main.go-<tab> (proposed)").
var diffViewSuffixes = []string{" (proposed)", " (original)", " (new)", " (old)"}

// sameFile reports whether diagnostics reported under f belong to the file
// abs: its own URI or path, or one of its diff views.
func sameFile(f diag.FileDiagnostics, abs string) bool {
	p := f.Path
	if p == "" {
		p = uriPath(f.URI)
	}
	if p == "" {
		return false
	}
	if p == abs {
		return true
	}
	for _, suf := range diffViewSuffixes {
		if base, ok := strings.CutSuffix(p, suf); ok {
			return base == abs || strings.HasPrefix(base, abs+"-")
		}
	}
	return false
}

// uriPath returns the path a diagnostics URI denotes: a file URI's path,
// or the path after a diff-view scheme; "" for anything else.
func uriPath(u string) string {
	if p, ok := fileuri.ToPath(u); ok {
		return p
	}
	for _, scheme := range diffViewSchemes {
		if rest, ok := strings.CutPrefix(u, scheme); ok {
			rest = strings.TrimPrefix(rest, "//")
			if unescaped, err := url.PathUnescape(rest); err == nil {
				rest = unescaped
			}
			if q := strings.IndexAny(rest, "?#"); q >= 0 {
				rest = rest[:q]
			}
			return rest
		}
	}
	if strings.HasPrefix(u, "/") {
		return u
	}
	return ""
}

// Render returns the block the model gets: <new-diagnostics>, one line per
// diagnostic (1-based line and column, code and source when known),
// </new-diagnostics>; "" when nothing is new. It is the same format the
// LSP path renders (diag.Attachment.Render), so a model sees one format whichever path
// found a diagnostic. The block never exceeds MaxChars: diagnostics that
// do not fit are left out whole and the line "… N more not shown" says
// how many. opts.ProjectDir makes the paths of files inside it relative
// (nil opts: absolute paths, the default tag and budget).
func (n *NewDiagnostics) Render(opts *diag.RenderOptions) string {
	if n == nil || len(n.Diagnostics) == 0 {
		return ""
	}
	att := &diag.Attachment{Servers: []string{}, Files: []diag.FileDiagnostics{{URI: n.URI, Path: n.Path, Diagnostics: n.Diagnostics}}}
	return att.Render(opts)
}

// TrySnapshotDiagnostics is SnapshotDiagnostics for callers that treat the
// IDE as optional, as Claude Code does: when c is nil or the IDE
// fails, it returns nil (logged at debug level on c's logger), which
// TryNewDiagnosticsText accepts.
func TrySnapshotDiagnostics(ctx context.Context, c *Client, path string) *DiagnosticsSnapshot {
	if c == nil {
		return nil
	}
	s, err := SnapshotDiagnostics(ctx, c, path)
	if err != nil {
		c.cfg.Logger.Debug("IDE unavailable for diagnostics; skipping", "path", path, "err", err)
		return nil
	}
	return s
}

// TryNewDiagnosticsText is NewDiagnostics then Render for callers that
// treat the IDE as optional: it returns "" when nothing is new, when s or
// c is nil, or when the IDE fails (logged at debug level on c's logger).
func (s *DiagnosticsSnapshot) TryNewDiagnosticsText(ctx context.Context, c *Client, opts *diag.RenderOptions) string {
	if s == nil || c == nil {
		return ""
	}
	n, err := s.NewDiagnostics(ctx, c)
	if err != nil {
		c.cfg.Logger.Debug("IDE unavailable for diagnostics; skipping", "path", s.Path, "err", err)
		return ""
	}
	return n.Render(opts)
}
