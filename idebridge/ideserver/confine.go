package ideserver

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/idebridge/idebridge/internal/fileuri"
	"github.com/idebridge/idebridge/internal/safefile"
	"github.com/idebridge/idebridge/mcp"
)

// resolvePath turns a tool's path argument (absolute, a file:// URI, or
// relative to the first workspace folder) into a clean absolute path.
//
// Unless Options.Unconfined is set, the path must lie inside a workspace
// folder once symbolic links are resolved (those of the path, and of the
// folders themselves): "/etc/shadow", "../x", "file:///w/%2e%2e/x" and a
// link from inside the workspace to a file outside are refused with
// -32602. A file URI naming another host is refused in any case: the
// headless IDE only serves this machine's files. The path returned is the
// one asked for, cleaned, not the link's target.
func (s *Server) resolvePath(p string) (string, error) {
	if p == "" {
		return "", invalidParams("filePath is required")
	}
	if len(p) >= 5 && strings.EqualFold(p[:5], "file:") {
		path, ok := fileuri.ToPath(p)
		if !ok {
			return "", invalidParams("bad file URI %q", p)
		}
		if host := fileuri.Host(p); host != "" {
			return "", invalidParams("file URI %q names the host %q: only files on this machine are served", p, host)
		}
		p = path
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.cfg.folders[0], p)
	}
	p = filepath.Clean(p)
	if s.cfg.Unconfined {
		return p, nil
	}
	real, err := realPath(p)
	if err != nil {
		return "", &mcp.Error{Code: mcp.CodeInvalidParams, Message: "Invalid params", Data: mustJSON(fmt.Sprintf("resolving %s: %v", p, unwrapPathError(err)))}
	}
	if s.insideFolders(real) {
		return p, nil
	}
	where := p
	if real != p {
		where = p + " (which resolves to " + real + ")"
	}
	return "", &mcp.Error{Code: mcp.CodeInvalidParams, Message: "Path outside the workspace", Data: mustJSON(fmt.Sprintf(
		"%s is outside the workspace folders (%s); this IDE serves only files inside them", where, strings.Join(s.cfg.folders, ", ")))}
}

// insideFolders reports whether the resolved path real lies inside a
// workspace folder (the folders' own links resolved).
func (s *Server) insideFolders(real string) bool {
	for _, root := range s.cfg.realFolders {
		if within(root, real) {
			return true
		}
	}
	return false
}

// realPath and within are internal/safefile's: one resolution and one
// containment rule for every confined path of the library.
func realPath(p string) (string, error) { return safefile.RealPath(p) }

func within(root, p string) bool { return safefile.Within(root, p) }
