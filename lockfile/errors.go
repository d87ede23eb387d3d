package lockfile

import (
	"fmt"
	"io/fs"
)

// ParseError reports a lockfile whose name or content is not a lockfile.
type ParseError struct {
	// Path is the file name or path as given to Parse or found by Scan.
	Path string
	// Err says what is wrong.
	Err error
}

func (e *ParseError) Error() string { return "parsing lockfile " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the underlying problem (ErrNotLockfile for a bad name).
func (e *ParseError) Unwrap() error { return e.Err }

// PermissionError reports a lockfile that Scan refused to read because it,
// or the directory holding it, could have been written by someone else.
type PermissionError struct {
	// Path is the file or directory whose ownership or mode is unsafe.
	Path string
	// Lockfile is the lockfile that was refused (Path itself, or a file in
	// the directory Path).
	Lockfile string
	// Mode is Path's mode.
	Mode fs.FileMode
	// Owner is Path's owner uid; Want is the uid it should have been.
	Owner, Want int
	// Problem is ProblemWritable or ProblemOtherOwner.
	Problem string
}

func (e *PermissionError) Error() string {
	what := "lockfile"
	if e.Path != e.Lockfile {
		what = "lockfile directory"
	}
	msg := fmt.Sprintf("refusing lockfile %s: %s %s is %s (mode %v, owner uid %d), so another user could have planted it", e.Lockfile, what, e.Path, e.Problem, e.Mode.Perm(), e.Owner)
	if e.Problem == ProblemWritable {
		msg += "; fix with: chmod go-w " + e.Path
	} else {
		msg += fmt.Sprintf("; it must be owned by uid %d", e.Want)
	}
	return msg
}

// Problems reported in PermissionError.Problem.
const (
	ProblemWritable   = "writable by group or others"
	ProblemOtherOwner = "owned by another user"
)

// DirError reports a lockfile directory that exists but could not be read.
type DirError struct {
	Dir string
	Err error
}

func (e *DirError) Error() string {
	return "reading lockfile directory " + e.Dir + ": " + e.Err.Error()
}

// Unwrap returns the underlying file-system error.
func (e *DirError) Unwrap() error { return e.Err }
