//go:build unix

package lockfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// A lockfile swapped for a FIFO between a check and the open must not leave
// Scan blocked in open(2): swappers replace lockfiles with a FIFO and back
// in a tight loop while scans run, and every scan must come back. Before
// the scan opened each file once without blocking, about one scan in a
// hundred hung here forever.
func TestScanFIFOSwapRace(t *testing.T) {
	dir := t.TempDir()
	const files = 16
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The FIFO keeps its own name throughout, so that a reader stuck in
	// open(2) can be released by opening it for writing.
	regular := writeRaw(t, dir, "regular", `{"workspaceFolders":["/w"],"pid":1,"transport":"ws"}`, time.Now())
	for i := range files {
		if err := os.Link(regular, filepath.Join(dir, fmt.Sprintf("%d.lock", 4000+i))); err != nil {
			t.Fatal(err)
		}
	}

	stop := make(chan struct{})
	var swappers sync.WaitGroup
	for s := range 2 {
		swappers.Add(1)
		go func() {
			defer swappers.Done()
			tmp := filepath.Join(dir, fmt.Sprintf(".swap%d", s))
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				src := regular
				if n%2 == 0 {
					src = fifo
				}
				lock := filepath.Join(dir, fmt.Sprintf("%d.lock", 4000+(n/2+s)%files))
				os.Remove(tmp)
				if os.Link(src, tmp) == nil {
					os.Rename(tmp, lock)
				}
			}
		}()
	}

	// Scan for a while; a scan that makes no progress for stuckAfter is
	// stuck in open(2) and would stay there.
	const (
		scanFor    = 3 * time.Second
		stuckAfter = 5 * time.Second
	)
	progress := make(chan int, 1)
	scanned := make(chan struct{})
	defer func() {
		// Stop the swappers, release a stuck scan (it then reads an
		// empty file) and wait for it, so that nothing outlives the test.
		close(stop)
		swappers.Wait()
		for {
			select {
			case <-scanned:
				return
			case <-time.After(10 * time.Millisecond):
				releaseFIFOReaders(fifo)
			}
		}
	}()
	go func() {
		defer close(scanned)
		defer close(progress)
		end := time.Now().Add(scanFor)
		for n := 1; time.Now().Before(end); n++ {
			results := Scan([]string{dir}, nil)
			select {
			case <-stop:
				return // released after the test failed
			default:
			}
			for _, r := range results {
				if r.Err != nil && !isNotRegular(r.Err) {
					t.Errorf("scan %d: %s: unexpected error %v", n, r.Path, r.Err)
				}
			}
			select {
			case progress <- n:
			default:
			}
		}
	}()
	scans := 0
	for {
		select {
		case n, ok := <-progress:
			if !ok {
				t.Logf("%d scans came back", scans)
				return
			}
			scans = n
		case <-time.After(stuckAfter):
			t.Fatalf("a scan is stuck (after %d scans came back): a lockfile swapped for a FIFO blocked open(2)", scans)
		}
	}
}

// isNotRegular reports whether err is Scan's complaint about a FIFO.
func isNotRegular(err error) bool {
	var pe *ParseError
	return errors.As(err, &pe) && strings.Contains(pe.Error(), "not a regular file")
}

// releaseFIFOReaders opens fifo for writing, which lets a reader blocked in
// open(2) go on (it then reads end of file). Without a reader the open
// fails at once (ENXIO).
func releaseFIFOReaders(fifo string) {
	if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

// Read applies Scan's checks to one lockfile: what was opened must be a
// regular file, the name a lockfile name, and the file and its directory
// safe, unless the checks are off.
func TestReadChecks(t *testing.T) {
	now := time.Now()
	dir := t.TempDir()
	good := writeAt(t, dir, &Lockfile{Port: 5001, PID: 7, Transport: TransportWS, WorkspaceFolders: []string{"/w"}}, now)
	if lf, err := Read(good, nil); err != nil || lf.PID != 7 || lf.Port != 5001 || !lf.ModTime.Equal(now) {
		t.Errorf("Read(good) = %+v, %v", lf, err)
	}

	zero := filepath.Join(dir, "5002.lock")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	var pe *ParseError
	if _, err := Read(zero, nil); !errors.As(err, &pe) || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Read(symlink to /dev/zero) = %v, want not a regular file", err)
	}
	fifo := filepath.Join(dir, "5003.lock")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(fifo, nil); !errors.As(err, &pe) || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Read(FIFO) = %v, want not a regular file", err)
	}
	if _, err := Read(filepath.Join(dir, "regular"), nil); !errors.Is(err, ErrNotLockfile) {
		t.Errorf("Read(not a lockfile name) = %v", err)
	}
	if _, err := Read(filepath.Join(dir, "5999.lock"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read(missing) = %v, want fs.ErrNotExist", err)
	}
	neg := -1
	if _, err := Read(good, &ScanOptions{UID: &neg}); err == nil {
		t.Error("Read with a negative UID succeeded")
	}

	if err := os.Chmod(good, 0o666); err != nil {
		t.Fatal(err)
	}
	var perm *PermissionError
	if _, err := Read(good, nil); !errors.As(err, &perm) || perm.Problem != ProblemWritable || perm.Path != good {
		t.Errorf("Read(file writable by others) = %v", err)
	}
	if _, err := Read(good, &ScanOptions{AllowInsecure: true}); err != nil {
		t.Errorf("Read with AllowInsecure: %v", err)
	}
	if err := os.Chmod(good, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	if _, err := Read(good, nil); !errors.As(err, &perm) || perm.Path != dir || perm.Lockfile != good {
		t.Errorf("Read in a directory writable by others = %v", err)
	}
	if _, err := Read(good, &ScanOptions{ForeignDirs: []string{dir}}); err != nil {
		t.Errorf("Read in a foreign directory: %v", err)
	}
}
