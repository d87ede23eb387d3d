package mcpserver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/idebridge/idebridge/internal/fileuri"
	"github.com/idebridge/idebridge/internal/safefile"
	"github.com/idebridge/idebridge/mcp"
)

// The one confinement rule of every tool: a path a client names (absolute,
// relative to the project directory, or a file:// URI) is served only when
// it lies inside one of the project's roots once every symbolic link is
// resolved (internal/safefile's RealPath and Within, the rule of the
// headless IDE's confined paths), and, for a file that exists, the file
// opened is checked on its descriptor: a regular file, still the file the
// path resolves to inside the roots (a link swapped in between the check
// and the open is caught). "/etc/passwd", "../x/secret.go" and a link
// inside the project to a file outside are refused with a sentence naming
// the path, before any language server or IDE sees it.
//
// Results may point outside the roots: a definition in the standard
// library or the module cache. Such a location is listed (path, line,
// column: what the language server said), but no text of the file is
// shown: its source line is left out of the text and of the structured
// result. So nothing outside the roots reaches the model but what the
// language server itself answers (a hover's documentation, a symbol's
// name), and a project cannot make the tools print lines of files the
// user never gave it (a replace directive to ../secrets, a link to ~).

// project resolves, confines and displays the paths of tool calls.
type project struct {
	dir string
	// roots are the absolute roots, dir first; realRoots the same with
	// their links resolved.
	roots, realRoots []string
}

func newProject(dir string, roots []string) (project, error) {
	p := project{dir: dir, roots: roots}
	for _, r := range roots {
		real, err := safefile.RealPath(filepath.Clean(r))
		if err != nil {
			return project{}, fmt.Errorf("mcpserver: root %s: %w", r, err)
		}
		p.realRoots = append(p.realRoots, real)
	}
	return p, nil
}

// maxQuoted bounds how much of a client's path an answer quotes.
const maxQuoted = 300

// clip quotes at most maxQuoted bytes of s, saying how long it was.
func clip(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	cut := maxQuoted
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut-- // not inside a UTF-8 sequence
	}
	return fmt.Sprintf("%s… (%d bytes in all)", s[:cut], len(s))
}

// abs turns a path argument into a clean absolute path, without checking
// it: absolute, a file:// URI, or relative to the project directory.
func (p project) abs(path string) string {
	if len(path) >= 5 && strings.EqualFold(path[:5], "file:") {
		if q, ok := fileuri.ToPath(path); ok && fileuri.Host(path) == "" {
			path = q
		}
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.dir, path)
	}
	return filepath.Clean(path)
}

// insideReal reports whether the resolved path real lies in a root.
func (p project) insideReal(real string) bool {
	for _, r := range p.realRoots {
		if safefile.Within(r, real) {
			return true
		}
	}
	return false
}

// confine resolves a path argument and applies the rule above. It returns
// the clean absolute path asked for (not a link's target), or an isError
// result saying why the path is refused. A path that does not exist is
// confined by where it would be, and returned (the tool says it does not
// exist, or creates it).
func (p project) confine(arg string) (string, *mcp.ToolResult) {
	if len(arg) >= 5 && strings.EqualFold(arg[:5], "file:") {
		if _, ok := fileuri.ToPath(arg); !ok {
			return "", errorf("%s is not a file URI this server can read; give a path inside the project.", clip(arg))
		}
		if host := fileuri.Host(arg); host != "" {
			return "", errorf("%s names the host %s: only files on this machine, inside the project, are served.", clip(arg), clip(host))
		}
	}
	path := p.abs(arg)
	if strings.ContainsRune(path, 0) {
		return "", errorf("%s holds a NUL character, which no file name does.", clip(arg))
	}
	real, err := safefile.RealPath(path)
	if err != nil {
		return "", errorf("Cannot resolve %s: %v.", clip(p.rel(path)), clipErr(err))
	}
	if !p.insideReal(real) {
		return "", p.outside(path, real)
	}
	f, _, err := safefile.Open(path, p.openCheck())
	var oe *outsideError
	switch {
	case err == nil:
		f.Close()
	case errors.Is(err, fs.ErrNotExist):
	case errors.As(err, &oe):
		return "", p.outside(path, oe.real)
	case errors.Is(err, safefile.ErrNotRegular):
		var info fs.FileInfo
		if info, _ = os.Stat(path); info != nil && info.IsDir() {
			return "", errorf("%s is a directory; give a file.", clip(p.rel(path)))
		}
		return "", errorf("%s is not a regular file (%v); the tools read only regular files.", clip(p.rel(path)), clipErr(err))
	default:
		return "", errorf("Cannot open %s: %v.", clip(p.rel(path)), clipErr(err))
	}
	return path, nil
}

// openCheck is the check of a file opened under the roots, on its
// descriptor: the path still resolves inside a root, to the file opened
// (a link swapped in between the resolution and the open is caught).
func (p project) openCheck() *safefile.Options {
	return &safefile.Options{Check: func(name string, opened fs.FileInfo) error {
		now, err := safefile.RealPath(name)
		if err != nil {
			return err
		}
		if !p.insideReal(now) {
			return &outsideError{real: now}
		}
		st, err := os.Stat(now)
		if err != nil {
			return err
		}
		if !os.SameFile(st, opened) {
			return errors.New("another file took its place while it was opened")
		}
		return nil
	}}
}

// maxRead bounds the files the tools read themselves (ide_open_file,
// propose_edit's replacement).
const maxRead = 32 << 20

// read reads a confined file (see confine) as the tools read it: regular,
// at most maxRead bytes, checked on its descriptor.
func (p project) read(path string) ([]byte, error) {
	b, _, err := safefile.ReadFile(path, maxRead, p.openCheck())
	return b, err
}

type outsideError struct{ real string }

func (e *outsideError) Error() string { return "it resolves to " + e.real + ", outside the project" }

// outside is the answer for a path outside the roots.
func (p project) outside(path, real string) *mcp.ToolResult {
	where := clip(path)
	if real != path {
		where += " (which resolves to " + clip(real) + ")"
	}
	return errorf("%s is outside the project (%s); the tools read and change only files inside it.", where, strings.Join(p.roots, ", "))
}

// clipErr is an error's text, the path it quotes clipped.
func clipErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return clip(err.Error())
}

// resultFilter says, for the paths of one result, which lie inside the
// roots; each path is resolved once.
type resultFilter struct {
	p    project
	seen map[string]bool
}

func (p project) filter() *resultFilter { return &resultFilter{p: p, seen: map[string]bool{}} }

// inside reports whether path, from a language server's answer, lies in a
// root (a path that cannot be resolved does not).
func (f *resultFilter) inside(path string) bool {
	if path == "" {
		return false
	}
	in, ok := f.seen[path]
	if !ok {
		// Resolved, not compared as text: a link inside a root may point
		// out, and a path outside may be a root's real name.
		real, err := safefile.RealPath(filepath.Clean(path))
		in = err == nil && f.p.insideReal(real)
		f.seen[path] = in
	}
	return in
}
