//go:build linux

package lsp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

// TestApplyRenameUnwritableFile (issue 19, row 3): the second file of a
// rename cannot be replaced (immutable); the first, already replaced, is
// put back: both files are as they were, and the error names the file
// that could not be written.
func TestApplyRenameUnwritableFile(t *testing.T) {
	spec := navSpecs()[0]
	dir := navFixture(t, spec.fixture)
	m := navManager(t, spec.config(t, dir), dir, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := m.Rename(ctx, pos(t, dir, "shapes.go:5:Area"), "Size")
	if err != nil {
		t.Fatal(err)
	}
	use := filepath.Join(dir, "use.go")
	if len(p.Files) != 2 || p.Files[1].Path != use {
		t.Fatalf("rename files: %+v", p.Files)
	}
	setImmutable(t, use, true)
	t.Cleanup(func() { setImmutable(t, use, false) })
	before := snapshot(t, dir)
	res, err := m.ApplyRename(ctx, p, nil)
	if err == nil || res != nil || !errors.Is(err, syscall.EPERM) || !strings.Contains(err.Error(), "writing "+use) ||
		!strings.Contains(err.Error(), "the one already replaced was put back") {
		t.Fatalf("apply with an immutable file: %+v, %v", res, err)
	}
	t.Log(err)
	sameTree(t, dir, before)
}
