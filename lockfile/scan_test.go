package lockfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeAt writes a lockfile and sets its modification time.
func writeAt(t *testing.T, dir string, lf *Lockfile, mtime time.Time) string {
	t.Helper()
	path, err := Write(dir, lf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeRaw writes raw bytes under a name with mode 0600.
func writeRaw(t *testing.T, dir, name, data string, mtime time.Time) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestScanNewestFirstAcrossDirs(t *testing.T) {
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	d1 := filepath.Join(t.TempDir(), "ide")
	d2 := filepath.Join(t.TempDir(), "ide")
	old := writeAt(t, d1, &Lockfile{Port: 1001, PID: 1, IDEName: "old"}, base)
	newest := writeAt(t, d2, &Lockfile{Port: 1002, PID: 2, IDEName: "newest"}, base.Add(2*time.Minute))
	mid := writeRaw(t, d1, "1003.lock", "/legacy/folder\n", base.Add(time.Minute))
	bad := writeRaw(t, d2, "1004.lock", "{not json", base.Add(-time.Minute))
	// Not lockfiles: ignored.
	writeRaw(t, d1, "notes.txt", "x", base)
	writeRaw(t, d1, "1005.lock.tmp", "{}", base)
	writeRaw(t, d1, ".tmp-1006-123", "{}", base)
	if err := os.Mkdir(filepath.Join(d1, "1007.lock"), 0o700); err != nil {
		t.Fatal(err)
	}

	missing := filepath.Join(t.TempDir(), "does", "not", "exist")
	results := Scan([]string{d1, missing, d2, d1 + "/"}, nil)

	var paths []string
	for _, r := range results {
		paths = append(paths, r.Path)
	}
	if diff := cmp.Diff([]string{newest, mid, old, bad}, paths); diff != "" {
		t.Fatalf("Scan order (-want +got):\n%s", diff)
	}
	for _, r := range results[:3] {
		if r.Err != nil || r.Lockfile == nil {
			t.Errorf("%s: Err %v, Lockfile %v", r.Path, r.Err, r.Lockfile)
			continue
		}
		if r.Lockfile.Path != r.Path || !r.Lockfile.ModTime.Equal(r.ModTime) || r.Lockfile.Port != r.Port {
			t.Errorf("%s: lockfile %+v does not agree with result %+v", r.Path, r.Lockfile, r)
		}
	}
	if !results[1].Lockfile.Legacy || results[1].Lockfile.WorkspaceFolders[0] != "/legacy/folder" {
		t.Errorf("legacy lockfile read as %+v", results[1].Lockfile)
	}
	last := results[3]
	var pe *ParseError
	if !errors.As(last.Err, &pe) || last.Lockfile != nil || last.Port != 1004 || last.Dir != d2 || !last.ModTime.Equal(base.Add(-time.Minute)) {
		t.Errorf("malformed lockfile: %+v", last)
	}
	if !strings.Contains(last.Err.Error(), bad) {
		t.Errorf("parse error %q does not name the file", last.Err)
	}
}

func TestScanEmpty(t *testing.T) {
	if got := Scan(nil, nil); len(got) != 0 {
		t.Errorf("Scan(nil) = %v", got)
	}
	if got := Scan([]string{t.TempDir()}, nil); len(got) != 0 {
		t.Errorf("Scan(empty dir) = %v", got)
	}
}

func TestScanUnreadableDirectory(t *testing.T) {
	notDir := writeRaw(t, t.TempDir(), "plain", "", time.Now())
	results := Scan([]string{notDir}, nil)
	if len(results) != 1 {
		t.Fatalf("Scan = %+v, want one directory error", results)
	}
	var de *DirError
	if !errors.As(results[0].Err, &de) || de.Dir != notDir || results[0].Port != 0 {
		t.Errorf("result %+v, want a *DirError for %s", results[0], notDir)
	}
}

func TestScanNegativeUIDRejected(t *testing.T) {
	dir := t.TempDir()
	writeAt(t, dir, &Lockfile{Port: 1, PID: 1, Transport: TransportWS}, time.Now())
	uid := -1
	results := Scan([]string{dir, dir}, &ScanOptions{UID: &uid})
	var de *DirError
	if len(results) != 1 || !errors.As(results[0].Err, &de) || de.Dir != dir || !strings.Contains(de.Error(), "UID is negative") {
		t.Fatalf("Scan with UID -1 = %+v, want one *DirError naming the option", results)
	}
	if results[0].Lockfile != nil {
		t.Errorf("a lockfile was read with a rejected option: %+v", results[0].Lockfile)
	}
}

func TestScanTooLarge(t *testing.T) {
	dir := t.TempDir()
	writeRaw(t, dir, "1.lock", `{"x":"`+strings.Repeat("a", MaxSize)+`"}`, time.Now())
	results := Scan([]string{dir}, nil)
	var pe *ParseError
	if len(results) != 1 || !errors.As(results[0].Err, &pe) || !strings.Contains(pe.Error(), "larger than") {
		t.Errorf("Scan = %+v, want a too-large parse error", results)
	}
}

func onePermissionError(t *testing.T, results []ScanResult) *PermissionError {
	t.Helper()
	if len(results) != 1 {
		t.Fatalf("Scan = %+v, want one result", results)
	}
	var pe *PermissionError
	if !errors.As(results[0].Err, &pe) {
		t.Fatalf("Err = %v, want a *PermissionError", results[0].Err)
	}
	if results[0].Lockfile != nil {
		t.Errorf("a refused lockfile was parsed: %+v", results[0].Lockfile)
	}
	return pe
}
