//go:build !unix

package safefile

import (
	"errors"
	"io/fs"
	"os"
)

// openFile opens path for reading. Windows has no FIFOs under file names
// and no controlling terminal to acquire; NoFollow is honoured by checking
// the name first, which leaves a window a swap can use.
func openFile(path string, noFollow bool) (*os.File, error) {
	if noFollow {
		if info, err := os.Lstat(path); err == nil && info.Mode()&fs.ModeSymlink != 0 {
			return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("is a symbolic link")}
		}
	}
	return os.Open(path)
}
