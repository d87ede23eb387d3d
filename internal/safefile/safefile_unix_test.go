//go:build unix

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{fifo: "a FIFO", zero: "a character device", dir: "a directory"} {
		// A FIFO without a writer would block a plain open forever; a
		// device would be read without end.
		f, _, err := Open(path, nil)
		if f != nil {
			f.Close()
		}
		var pe *fs.PathError
		if !errors.Is(err, ErrNotRegular) || !errors.As(err, &pe) || pe.Path != path || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%s) = %v, want ErrNotRegular naming %s", path, err, want)
		}
		if _, _, err := ReadFile(path, 10, nil); !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadFile(%s) = %v, want ErrNotRegular", path, err)
		}
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(path, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, info, err := ReadFile(path, 10, nil); err != nil || string(b) != "0123456789" || info.Size() != 10 {
		t.Errorf("ReadFile at the limit = %q, %v", b, err)
	}
	if _, _, err := ReadFile(path, 9, nil); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "over 9 bytes") {
		t.Errorf("ReadFile over the limit = %v, want ErrTooLarge", err)
	}
	if _, _, err := ReadFile(filepath.Join(dir, "missing"), 9, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing) = %v", err)
	}

	// A file that claims size 0 (as /proc files do) is still bounded.
	if b, _, err := ReadFile("/proc/self/status", 1<<20, nil); err == nil && len(b) == 0 {
		t.Error("ReadFile(/proc/self/status) read nothing")
	}
	if _, err := os.Stat("/proc/self/status"); err == nil {
		if _, _, err := ReadFile("/proc/self/status", 8, nil); !errors.Is(err, ErrTooLarge) {
			t.Errorf("ReadFile(/proc/self/status, 8) = %v, want ErrTooLarge", err)
		}
	}

	link := filepath.Join(dir, "link")
	if err := os.Symlink("a.txt", link); err != nil {
		t.Fatal(err)
	}
	if b, _, err := ReadFile(link, 10, nil); err != nil || string(b) != "0123456789" {
		t.Errorf("ReadFile(link) = %q, %v", b, err)
	}
	if _, _, err := ReadFile(link, 10, &Options{NoFollow: true}); err == nil {
		t.Error("ReadFile(link, NoFollow) followed the link")
	}
}

// Options.Check sees the opened file's FileInfo; its error is returned as
// is (the file closed), and ReadFile reads nothing then.
func TestCheck(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	refuse := errors.New("refused by the check")
	var seen fs.FileInfo
	opts := &Options{Check: func(path string, info fs.FileInfo) error {
		if path != p {
			t.Errorf("Check got path %q", path)
		}
		seen = info
		return refuse
	}}
	if f, _, err := Open(p, opts); err != refuse || f != nil {
		t.Errorf("Open with a refusing Check = %v, %v", f, err)
	}
	if seen == nil || seen.Size() != 5 || !seen.Mode().IsRegular() {
		t.Errorf("Check saw %v", seen)
	}
	if b, _, err := ReadFile(p, 100, opts); err != refuse || b != nil {
		t.Errorf("ReadFile with a refusing Check = %q, %v", b, err)
	}
	ok := &Options{Check: func(string, fs.FileInfo) error { return nil }}
	if b, _, err := ReadFile(p, 100, ok); err != nil || string(b) != "hello" {
		t.Errorf("ReadFile with an accepting Check = %q, %v", b, err)
	}
}
