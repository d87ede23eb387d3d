package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxLinkDepth bounds the symbolic links followed while resolving a path,
// as the kernel's own limit does.
const maxLinkDepth = 40

// RealPath resolves every symbolic link in the clean absolute path p, also
// for a path that does not exist yet (a new file): the part that exists is
// resolved and the rest appended, and a dangling link is followed to where
// it points. It is the resolution behind every confinement of paths to a
// project's roots (the headless IDE's, the MCP server's).
func RealPath(p string) (string, error) { return realPath(p, 0) }

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

// Within reports whether the clean absolute path p is root or lies below
// it (a folder never contains a sibling that shares its prefix).
func Within(root, p string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}
