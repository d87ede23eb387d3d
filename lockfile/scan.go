package lockfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/idebridge/idebridge/internal/safefile"
)

// ScanOptions adjusts Scan. A nil *ScanOptions means the zero value: the
// permission check on, owner compared with os.Getuid, no foreign dirs.
type ScanOptions struct {
	// AllowInsecure turns off the permission check: lockfiles and
	// directories that group or others may write, or that another user
	// owns, are then read like any other.
	AllowInsecure bool
	// UID is the uid that must own lockfiles (and, or root, their
	// directories). Nil means os.Getuid(). Tests set it to simulate a file
	// owned by someone else. A negative UID is rejected: every directory
	// is then reported with a *DirError saying so, and nothing is read.
	UID *int
	// ForeignDirs are directories whose Unix owner and mode are made up by
	// a mount (the Windows side under WSL: see WindowsDirs) and so are not
	// checked.
	ForeignDirs []string
}

// ScanResult is one lockfile found by Scan, or why it could not be used.
type ScanResult struct {
	// Path is the lockfile's path (for a *DirError, the directory's).
	Path string
	// Dir is the directory it was found in.
	Dir string
	// Port is the port from the file name; 0 for a *DirError.
	Port int
	// ModTime is the file's modification time.
	ModTime time.Time
	// Lockfile is the parsed lockfile when Err is nil.
	Lockfile *Lockfile
	// Err is why the lockfile could not be used: a *ParseError, a
	// *PermissionError, a *DirError (the whole directory was unreadable),
	// or an I/O error naming the file.
	Err error
}

// Scan reads every lockfile (<port>.lock) in dirs and returns them newest
// first, each with its parsed Lockfile or the reason it could not be read.
// Other files are ignored, a directory that does not exist is skipped
// without error, and a directory given twice is read once.
//
// Unless opts.AllowInsecure is set, Scan refuses (with a *PermissionError
// and without reading it) a lockfile that is writable by group or others
// or owned by another user, and every lockfile in a directory that is
// writable by group or others or owned by a user other than the current
// one or root. This check applies on Unix systems only.
func Scan(dirs []string, opts *ScanOptions) []ScanResult {
	if opts == nil {
		opts = &ScanOptions{}
	}
	uid := os.Getuid()
	var badUID error
	if opts.UID != nil {
		uid = *opts.UID
		if uid < 0 {
			badUID = fmt.Errorf("ScanOptions.UID is negative (%d)", uid)
		}
	}
	var results []ScanResult
	var seen []string
	for _, dir := range dirs {
		if containsPath(seen, dir) {
			continue
		}
		seen = append(seen, dir)
		if badUID != nil {
			results = append(results, ScanResult{Path: dir, Dir: dir, Err: &DirError{Dir: dir, Err: badUID}})
			continue
		}
		check := !opts.AllowInsecure && !containsPath(opts.ForeignDirs, dir)
		results = append(results, scanDir(dir, check, uid)...)
	}
	sort.SliceStable(results, func(i, j int) bool {
		if !results[i].ModTime.Equal(results[j].ModTime) {
			return results[i].ModTime.After(results[j].ModTime)
		}
		return results[i].Path < results[j].Path
	})
	return results
}

func scanDir(dir string, check bool, uid int) []ScanResult {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return []ScanResult{{Path: dir, Dir: dir, Err: &DirError{Dir: dir, Err: err}}}
	}
	var dirProblem *PermissionError
	if check {
		info, err := os.Stat(dir)
		if err != nil {
			return []ScanResult{{Path: dir, Dir: dir, Err: &DirError{Dir: dir, Err: err}}}
		}
		dirProblem = checkPermissions(dir, info, uid, true)
	}
	var results []ScanResult
	for _, e := range entries {
		port, ok := PortFromName(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		r := ScanResult{Path: path, Dir: dir, Port: port}
		if dirProblem != nil {
			p := *dirProblem
			p.Lockfile = path
			r.Err = &p
			if info, err := e.Info(); err == nil {
				r.ModTime = info.ModTime()
			}
			results = append(results, r)
			continue
		}
		lf, modTime, err := readLockfile(path, check, uid)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the directory was listed
		}
		r.Lockfile, r.ModTime, r.Err = lf, modTime, err
		results = append(results, r)
	}
	return results
}

// Read reads and parses the one lockfile at path with Scan's checks: the
// name must be <port>.lock, and unless opts.AllowInsecure is set (or the
// file's directory is one of opts.ForeignDirs) neither the file nor its
// directory may be writable by group or others or owned by another user.
// Reconnecting to a known IDE uses it to re-read its lockfile. A nil
// *ScanOptions means the zero value, as for Scan.
//
// The file is opened once, without blocking and without becoming a
// controlling terminal, and what was opened is checked: a FIFO or device
// under a lockfile name (even one swapped in after a check) is reported
// with a *ParseError, never read. A missing file gives an error matching
// fs.ErrNotExist.
func Read(path string, opts *ScanOptions) (*Lockfile, error) {
	if opts == nil {
		opts = &ScanOptions{}
	}
	if _, ok := PortFromName(path); !ok {
		return nil, &ParseError{Path: path, Err: ErrNotLockfile}
	}
	uid := os.Getuid()
	if opts.UID != nil {
		if uid = *opts.UID; uid < 0 {
			return nil, fmt.Errorf("reading lockfile %s: ScanOptions.UID is negative (%d)", path, uid)
		}
	}
	dir := filepath.Dir(path)
	check := !opts.AllowInsecure && !containsPath(opts.ForeignDirs, dir)
	if check {
		info, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("reading lockfile %s: %w", path, err)
		}
		if p := checkPermissions(dir, info, uid, true); p != nil {
			p.Lockfile = path
			return nil, p
		}
	}
	lf, _, err := readLockfile(path, check, uid)
	return lf, err
}

// readLockfile reads and parses one lockfile. It opens the path once, in a
// way that cannot block (a FIFO swapped in after the directory was listed
// would otherwise hold open(2) until someone writes to it) and checks type,
// owner and mode on the opened descriptor, so that a swap after any check
// cannot go unnoticed. A symbolic link is followed, and what it leads to is
// checked.
func readLockfile(path string, check bool, uid int) (*Lockfile, time.Time, error) {
	f, info, err := safefile.Open(path, nil)
	var pe *fs.PathError
	if errors.Is(err, safefile.ErrNotRegular) && errors.As(err, &pe) {
		return nil, info.ModTime(), &ParseError{Path: path, Err: pe.Err} // "not a regular file (a FIFO)"
	}
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("reading lockfile %s: %w", path, err)
	}
	defer f.Close()
	if check {
		if p := checkPermissions(path, info, uid, false); p != nil {
			p.Lockfile = path
			return nil, info.ModTime(), p
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, info.ModTime(), fmt.Errorf("reading lockfile %s: %w", path, err)
	}
	if len(data) > MaxSize {
		return nil, info.ModTime(), &ParseError{Path: path, Err: fmt.Errorf("larger than %d bytes", MaxSize)}
	}
	lf, err := Parse(path, data)
	if err != nil {
		return nil, info.ModTime(), err
	}
	lf.ModTime = info.ModTime()
	return lf, info.ModTime(), nil
}
