//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// setImmutable sets or clears a file's immutable attribute (chattr +i):
// a file even root cannot replace. The test fails, never skips, where the
// process may not (no CAP_LINUX_IMMUTABLE) or the file system has no such
// attribute: a skip would let the all-or-nothing promise go unchecked.
func setImmutable(t *testing.T, p string, on bool) {
	t.Helper()
	const getFlags, setFlags, immutable = 0x80086601, 0x40086602, 0x10
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var flags int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), getFlags, uintptr(unsafe.Pointer(&flags))); e != 0 {
		t.Fatalf("no file attributes here (%v): this test needs a file system with the immutable attribute (ext4, xfs, btrfs) under its temporary directory", e)
	}
	if on {
		flags |= immutable
	} else {
		flags &^= immutable
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), setFlags, uintptr(unsafe.Pointer(&flags))); e != 0 {
		t.Fatalf("cannot set the immutable attribute (%v): this test needs root (CAP_LINUX_IMMUTABLE), as CI has", e)
	}
}

// TestLSPRenameApplyUnwritableFile (issue 19, row 3) runs the built
// `idebridge lsp rename --apply` where the second file of the rename
// cannot be replaced (immutable): the first, already replaced, is put
// back, the command fails naming the file, and both files are as before.
func TestLSPRenameApplyUnwritableFile(t *testing.T) {
	dir := navModule(t)
	use := filepath.Join(dir, "use.go")
	setImmutable(t, use, true)
	t.Cleanup(func() { setImmutable(t, use, false) })
	before := readAll(t, dir)
	env := navEnv(t, "CLAUDE_CONFIG_DIR="+t.TempDir())
	code, out, errOut := runBuilt(t, dir, env, "lsp", "rename", "shapes.go:5:Area", "Size", "--apply", "--no-ide", "--no-plugins")
	if code != exitFailure || !strings.Contains(errOut, "writing "+use+": replacing it:") ||
		!strings.Contains(errOut, "none of the 2 files was written (the one already replaced was put back)") {
		t.Errorf("rename with an immutable file: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	unchanged(t, dir, before)
}
