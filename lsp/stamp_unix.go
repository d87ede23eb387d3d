//go:build unix

package lsp

import (
	"os"
	"syscall"
)

// inode returns the file's inode number: a file replaced by a rename
// (editors' atomic save) gets a new one even when its size and time agree.
func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
