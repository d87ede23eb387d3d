//go:build unix

package warm

import (
	"fmt"
	"os"
	"syscall"
)

func checkDir(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("warm: runtime directory: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%w: %s is not a directory (a link is refused too)", ErrUnsafeDir, dir)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%w: %s: no owner known", ErrUnsafeDir, dir)
	}
	if uid := os.Getuid(); int(sys.Uid) != uid {
		return fmt.Errorf("%w: %s is owned by uid %d, not by this user (uid %d); remove it or set %s", ErrUnsafeDir, dir, sys.Uid, uid, EnvDir)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%w: %s has mode %04o, which lets other users in; want 0700 (chmod 700 it, or set %s to a directory of your own)", ErrUnsafeDir, dir, perm, EnvDir)
	}
	return nil
}

// ownedByMe reports whether a file is this process's user's.
func ownedByMe(st os.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Getuid()
}
