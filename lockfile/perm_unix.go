//go:build unix

package lockfile

import (
	"io/fs"
	"syscall"
)

// checkPermissions returns why path (described by info) could have been
// written by someone other than uid, or nil. Directories may also belong to
// root (an administrator's CLAUDE_CONFIG_DIR); lockfiles may not.
func checkPermissions(path string, info fs.FileInfo, uid int, isDir bool) *PermissionError {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	owner := int(st.Uid)
	p := &PermissionError{Path: path, Lockfile: path, Mode: info.Mode(), Owner: owner, Want: uid}
	switch {
	case info.Mode().Perm()&0o022 != 0:
		p.Problem = ProblemWritable
	case owner != uid && !(isDir && owner == 0):
		p.Problem = ProblemOtherOwner
	default:
		return nil
	}
	return p
}
