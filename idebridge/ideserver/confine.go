package ideserver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/idebridge/idebridge/internal/fileuri"
	"github.com/idebridge/idebridge/mcp"
)

// maxLinkDepth bounds the symbolic links followed while resolving a path,
// as the kernel's own limit does.
const maxLinkDepth = 40

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
	real, err := realPath(p, 0)
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

// realPath resolves every symbolic link in the clean absolute path p, also
// for a path that does not exist yet (a new file): the part that exists is
// resolved and the rest appended, and a dangling link is followed to where
// it points.
func realPath(p string, depth int) (string, error) {
	if depth > maxLinkDepth {
		return "", fmt.Errorf("%s: too many levels of symbolic links", p)
	}
	r, err := filepath.EvalSymlinks(p)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p, nil
	}
	if info, err := os.Lstat(p); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(parent, target)
		}
		return realPath(filepath.Clean(target), depth+1)
	}
	rp, err := realPath(parent, depth)
	if err != nil {
		return "", err
	}
	return filepath.Join(rp, filepath.Base(p)), nil
}

// within reports whether the clean absolute path p is root or lies below
// it (a folder never contains a sibling that shares its prefix).
func within(root, p string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}
