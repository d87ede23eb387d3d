//go:build unix

package atomicfile

import (
	"io/fs"
	"strconv"
	"syscall"
)

// fileID names the file info describes among all files of the machine:
// its device and inode, as "dev:ino" (a string, so that a JSON reader
// with 53-bit numbers keeps it whole). "" when the platform gives none.
func fileID(info fs.FileInfo) string {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return strconv.FormatUint(uint64(st.Dev), 16) + ":" + strconv.FormatUint(uint64(st.Ino), 16)
}

// readFlags open a file to check without blocking on a FIFO or taking a
// controlling terminal.
const readFlags = syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
