//go:build !unix

package lockfile

import (
	"io/fs"
	"os"
)

// openNonBlocking opens path for reading. Windows has no FIFOs under file
// names and no controlling terminal to acquire.
func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }

// checkPermissions does nothing where Unix owners and modes do not exist
// (Windows protects user profiles with ACLs).
func checkPermissions(string, fs.FileInfo, int, bool) *PermissionError { return nil }
