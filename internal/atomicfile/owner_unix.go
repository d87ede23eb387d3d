//go:build unix

package atomicfile

import (
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives f the owner and group of the file it replaces, when they
// differ and the process may change them (root editing a user's file);
// otherwise it does nothing.
func keepOwner(f *os.File, old fs.FileInfo) {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	if st.Uid == uint32(os.Getuid()) && st.Gid == uint32(os.Getgid()) {
		return
	}
	_ = f.Chown(int(st.Uid), int(st.Gid))
}
