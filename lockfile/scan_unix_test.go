//go:build unix

package lockfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO under a lockfile name must be reported, not opened (which would
// block until someone writes to it).
func TestScanFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "3001.lock"), 0o600); err != nil {
		t.Fatal(err)
	}
	results := Scan([]string{dir}, nil)
	var pe *ParseError
	if len(results) != 1 || !errors.As(results[0].Err, &pe) || results[0].Port != 3001 {
		t.Errorf("Scan = %+v, want a parse error for the FIFO", results)
	}
}

func TestScanPermissions(t *testing.T) {
	now := time.Now()

	t.Run("file writable by others", func(t *testing.T) {
		dir := t.TempDir()
		path := writeAt(t, dir, &Lockfile{Port: 2001, PID: 1}, now)
		if err := os.Chmod(path, 0o666); err != nil {
			t.Fatal(err)
		}
		pe := onePermissionError(t, Scan([]string{dir}, nil))
		if pe.Path != path || pe.Lockfile != path || pe.Problem != ProblemWritable {
			t.Errorf("PermissionError %+v", pe)
		}
		if msg := pe.Error(); !strings.Contains(msg, "chmod go-w "+path) {
			t.Errorf("message %q does not say how to fix it", msg)
		}
		if r := Scan([]string{dir}, &ScanOptions{AllowInsecure: true}); len(r) != 1 || r[0].Err != nil {
			t.Errorf("with AllowInsecure: %+v", r)
		}
	})

	t.Run("file writable by group", func(t *testing.T) {
		dir := t.TempDir()
		path := writeAt(t, dir, &Lockfile{Port: 2002, PID: 1}, now)
		if err := os.Chmod(path, 0o620); err != nil {
			t.Fatal(err)
		}
		if pe := onePermissionError(t, Scan([]string{dir}, nil)); pe.Problem != ProblemWritable {
			t.Errorf("PermissionError %+v", pe)
		}
	})

	t.Run("readable by others is fine", func(t *testing.T) {
		dir := t.TempDir()
		path := writeAt(t, dir, &Lockfile{Port: 2003, PID: 1}, now)
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if r := Scan([]string{dir}, nil); len(r) != 1 || r[0].Err != nil {
			t.Errorf("Scan = %+v", r)
		}
	})

	t.Run("directory writable by others", func(t *testing.T) {
		dir := t.TempDir()
		p1 := writeAt(t, dir, &Lockfile{Port: 2004, PID: 1}, now)
		p2 := writeAt(t, dir, &Lockfile{Port: 2005, PID: 1}, now.Add(time.Second))
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		results := Scan([]string{dir}, nil)
		if len(results) != 2 {
			t.Fatalf("Scan = %+v, want both lockfiles refused", results)
		}
		for i, want := range []string{p2, p1} {
			var pe *PermissionError
			if !errors.As(results[i].Err, &pe) || pe.Path != dir || pe.Lockfile != want || results[i].Path != want {
				t.Errorf("result %d: %+v (err %v)", i, results[i], results[i].Err)
			}
		}
		if !strings.Contains(results[0].Err.Error(), "lockfile directory "+dir) {
			t.Errorf("message %q does not blame the directory", results[0].Err)
		}
		// The Windows side under WSL has made-up modes: not judged.
		r := Scan([]string{dir}, &ScanOptions{ForeignDirs: []string{dir}})
		if len(r) != 2 || r[0].Err != nil || r[1].Err != nil {
			t.Errorf("with ForeignDirs: %+v", r)
		}
	})

	t.Run("owned by another user", func(t *testing.T) {
		dir := t.TempDir()
		path := writeAt(t, dir, &Lockfile{Port: 2006, PID: 1}, now)
		other := os.Getuid() + 1
		pe := onePermissionError(t, Scan([]string{dir}, &ScanOptions{UID: &other}))
		// As root the directory (owned by root) is acceptable and the file
		// is blamed; otherwise the directory already is.
		if pe.Problem != ProblemOtherOwner || pe.Lockfile != path || pe.Owner != os.Getuid() || pe.Want != other {
			t.Errorf("PermissionError %+v", pe)
		}
		if !strings.Contains(pe.Error(), "must be owned by uid") {
			t.Errorf("message %q", pe.Error())
		}
		self := os.Getuid()
		if r := Scan([]string{dir}, &ScanOptions{UID: &self}); len(r) != 1 || r[0].Err != nil {
			t.Errorf("owned by self: %+v", r)
		}
	})
}
