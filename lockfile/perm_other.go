//go:build !unix

package lockfile

import (
	"io/fs"
)

// checkPermissions does nothing where Unix owners and modes do not exist
// (Windows protects user profiles with ACLs).
func checkPermissions(string, fs.FileInfo, int, bool) *PermissionError { return nil }
