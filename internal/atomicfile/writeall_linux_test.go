//go:build linux

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// setImmutable sets or clears a file's immutable attribute (chattr +i),
// which makes renaming over it fail even for root. The test fails, never
// skips, where the process may not (no CAP_LINUX_IMMUTABLE) or the file
// system has no such attribute.
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

// TestWriteAllRollsBack: the second of three files cannot be replaced (it
// is immutable); the first, already moved into place, is put back: every
// file is byte-identical to before, the first is the very same file
// (inode), and nothing staged is left.
func TestWriteAllRollsBack(t *testing.T) {
	dir := t.TempDir()
	base := files(t, dir, map[string]string{"1.go": "one\n", "2.go": "two\n", "3.go": "three\n"})
	setImmutable(t, filepath.Join(dir, "2.go"), true)
	t.Cleanup(func() { setImmutable(t, filepath.Join(dir, "2.go"), false) })
	before, err := os.Stat(filepath.Join(dir, "1.go"))
	if err != nil {
		t.Fatal(err)
	}
	var changes []Change
	for _, n := range []string{"1.go", "2.go", "3.go"} {
		changes = append(changes, Change{Path: filepath.Join(dir, n), Data: []byte("new " + n), Base: base[n]})
	}
	err = WriteAll(changes, &Options{Roots: []string{dir}})
	var we *WriteError
	if !errors.As(err, &we) || we.Path != filepath.Join(dir, "2.go") || we.Restored != 1 || len(we.Unrestored) != 0 ||
		!errors.Is(err, syscall.EPERM) || !strings.Contains(err.Error(), "none of the 3 files was written") {
		t.Fatalf("WriteAll over an immutable file: %v", err)
	}
	t.Log(err)
	wantText(t, filepath.Join(dir, "1.go"), "one\n")
	wantText(t, filepath.Join(dir, "2.go"), "two\n")
	wantText(t, filepath.Join(dir, "3.go"), "three\n")
	after, err := os.Stat(filepath.Join(dir, "1.go"))
	if err != nil || !os.SameFile(before, after) || after.Mode() != before.Mode() {
		t.Errorf("1.go was not put back as it was: %v → %v (%v)", before, after, err)
	}
	noStaged(t, dir)
}

// TestWriteAllStagingFails: the new text of the second file cannot be
// staged (its directory is immutable: nothing can be created in it, even
// by root). No file is replaced, the first file's staged text is
// removed, and the error names the second file.
func TestWriteAllStagingFails(t *testing.T) {
	dir := t.TempDir()
	base := files(t, dir, map[string]string{"a/1.go": "one\n", "b/2.go": "two\n"})
	setImmutable(t, filepath.Join(dir, "b"), true)
	t.Cleanup(func() { setImmutable(t, filepath.Join(dir, "b"), false) })
	err := WriteAll([]Change{
		{Path: filepath.Join(dir, "a/1.go"), Data: []byte("ONE\n"), Base: base["a/1.go"]},
		{Path: filepath.Join(dir, "b/2.go"), Data: []byte("TWO\n"), Base: base["b/2.go"]},
	}, nil)
	var we *WriteError
	if !errors.As(err, &we) || we.Path != filepath.Join(dir, "b/2.go") || we.Restored != 0 || !strings.Contains(err.Error(), "staging its new text") {
		t.Fatalf("WriteAll with an immutable directory: %v", err)
	}
	t.Log(err)
	wantText(t, filepath.Join(dir, "a/1.go"), "one\n")
	wantText(t, filepath.Join(dir, "b/2.go"), "two\n")
	noStaged(t, dir)
}
