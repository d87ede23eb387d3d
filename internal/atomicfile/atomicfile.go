// Package atomicfile writes files the way an edit must be written: only
// when each file still is the file the edit was computed from (its
// content and its identity, State, ConflictError), and all at once.
//
// Write replaces one file: a temporary file beside it, flushed to disk,
// given the old file's mode and owner, renamed over it. WriteAll does the
// same for a set of files, all or nothing: it checks every file first,
// stages every new text beside its file, verifies again, and only then
// renames each staged file into place; when anything fails (a file
// changed, one cannot be staged, a rename fails) it puts back every file
// it already replaced and removes what it staged, and the error names
// the file that stopped it and why. Options.Roots confines a write to
// the project: a file that lies outside, its symbolic links resolved, is
// refused before anything is written.
//
// Every file is reached through a descriptor of its directory (os.Root)
// opened when the write is checked, and its identity (device and inode)
// is compared with the one checked just before it is replaced: a file
// swapped for another, or for a symbolic link to a file elsewhere, between
// the check and the write is refused, never written through.
//
// # What is atomic, and what is not
//
// Each file is replaced by one rename, so a reader of one file sees its
// old text or its new one, never a mix. Across files there is no such
// instant: the renames follow each other, and a crash of the process or
// the machine between two of them leaves some files new and some old. The
// staged files say which, and let a user finish or undo the write by hand.
// Every file of one WriteAll stages, in its own directory,
//
//	.idebridge-TXID-NAME.new   the new text of NAME, not yet in place
//	.idebridge-TXID-NAME.old   the old text of NAME (a hard link to the
//	                           old file, or a copy where links fail), for
//	                           every file but the last (nothing can fail
//	                           after the last rename)
//
// with one TXID (12 hex digits) shared by the whole write, so that
// `find DIR -name '.idebridge-TXID-*'` lists all of them. To undo a write
// cut short, rename each .old file back over its NAME (where both are
// already the same file, NAME was not replaced yet: delete the .old one)
// and delete the .new files; to finish it, rename each .new file over its
// NAME and delete the .old files. A write that ends, whether it succeeded or rolled back,
// leaves none of them, except the .old files of a rollback that could not
// put a file back, which its error names (WriteError.Unrestored).
//
// Edit review in package idebridge and rename in package lsp write
// through this package.
package atomicfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/idebridge/idebridge/internal/safefile"
)

// ErrConflict is matched (errors.Is) by every *ConflictError.
var ErrConflict = errors.New("file changed on disk since the edit was proposed")

// State is what a file looked like at one moment: whether it existed,
// its size, modification time, mode and a SHA-256 of its content. Edits
// record it when they are proposed and compare it before they write, so
// that a file changed underneath (by the user, a formatter, another agent)
// is never overwritten silently.
type State struct {
	// Path is the file's absolute path.
	Path string `json:"path"`
	// Exists is false for a file that did not exist (an edit creating it).
	Exists bool `json:"exists"`
	// Size, ModTime and Mode describe an existing file.
	Size    int64       `json:"size"`
	ModTime time.Time   `json:"modTime"`
	Mode    fs.FileMode `json:"mode"`
	// SHA256 is the hex SHA-256 of the content ("" when the file did not
	// exist).
	SHA256 string `json:"sha256,omitempty"`
	// ID is the file's identity (device and inode, opaque) where the
	// platform has one: a write against this state replaces only this
	// file, not another one put under its name since (even with the same
	// text). "" compares content alone.
	ID string `json:"id,omitempty"`
}

// Stat records the current state of the file at path (made absolute;
// symbolic links are followed). A file that does not exist is a state too
// (Exists false), not an error; a directory, or a file that cannot be
// read, is an error.
func Stat(path string) (*State, error) {
	_, st, err := read(path, io.Discard)
	return st, err
}

// Read returns the content of the file at path and its state, read at
// once, so that the state is the state of that content. A file that does
// not exist reads as no content and a state with Exists false.
func Read(path string) ([]byte, *State, error) {
	var buf bytes.Buffer
	_, st, err := read(path, &buf)
	if err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), st, nil
}

// read hashes the file at path, copying its content to w.
func read(path string, w io.Writer) (int64, *State, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, nil, fmt.Errorf("reading the state of %s: %w", path, err)
	}
	st := &State{Path: abs}
	// One open, judged by its descriptor: a FIFO put under the name is
	// refused, never waited on.
	f, info, err := safefile.Open(abs, nil)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, st, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("reading the state of %s: %w", abs, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(h, w), f)
	if err != nil {
		return 0, nil, fmt.Errorf("reading the state of %s: %w", abs, err)
	}
	st.Exists, st.Size, st.ModTime, st.Mode = true, n, info.ModTime(), info.Mode()
	st.SHA256, st.ID = hex.EncodeToString(h.Sum(nil)), fileID(info)
	return n, st, nil
}

// sameFile reports whether now is still the file expect describes: the
// same content (or both absent) and, when both record one, the same
// identity. ModTime and Mode are not compared: touching a file, or
// changing its mode, is not an edit of it.
func sameFile(expect, now *State) bool {
	if expect.Exists != now.Exists {
		return false
	}
	if !expect.Exists {
		return true
	}
	if expect.ID != "" && now.ID != "" && expect.ID != now.ID {
		return false
	}
	return expect.Size == now.Size && expect.SHA256 == now.SHA256
}

// ConflictError reports an edit that was not written because the file
// changed on disk after the edit was proposed (Expected) and before it
// could be written (Actual). Nothing was written. It matches ErrConflict.
type ConflictError struct {
	// Path is the file.
	Path string
	// Expected is the file's state when the edit was proposed; Actual is
	// its state when the write was attempted.
	Expected, Actual *State
	// Text is what would have been written, so that a caller can show it
	// or propose it again.
	Text string
	// Reason, when set, says how the file changed where the states
	// cannot (its name now holds a symbolic link, another file was put
	// under it while it was written).
	Reason string
}

func (e *ConflictError) Error() string {
	what := "its content changed"
	switch {
	case e.Reason != "":
		what = e.Reason
	case e.Expected == nil || e.Actual == nil:
	case e.Expected.Exists && !e.Actual.Exists:
		what = "it was deleted"
	case !e.Expected.Exists && e.Actual.Exists:
		what = "it was created"
	case e.Expected.Size != e.Actual.Size:
		what = fmt.Sprintf("its size went from %d to %d bytes", e.Expected.Size, e.Actual.Size)
	case e.Expected.ID != "" && e.Actual.ID != "" && e.Expected.ID != e.Actual.ID:
		what = "another file was put under its name"
		if e.Actual.SHA256 == e.Expected.SHA256 {
			what += ", with the same text"
		}
	}
	return fmt.Sprintf("edit of %s not written: the file changed on disk since the edit was proposed (%s)", e.Path, what)
}

// Is makes every ConflictError match ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// Write replaces the file at path with data so that readers see
// either the old content or the new, never a part: it writes a temporary
// file in the same directory, flushes it to disk (fsync), gives it the old
// file's mode (and, where permitted, owner), and renames it over path. A
// symbolic link at path is followed: its target is replaced, the link
// stays. A new file gets mode 0666 minus the umask, as os.WriteFile would.
//
// When expect is not nil, the file must still be what it describes (its
// content, and its identity when expect records one) just before the
// rename; if not (or the file appeared or vanished), nothing is written
// and the error is a *ConflictError. On any error the temporary file is
// removed. Write is WriteAll of one file.
func Write(path string, data []byte, expect *State) error {
	err := WriteAll([]Change{{Path: path, Data: data, Base: expect}}, nil)
	var we *WriteError
	if errors.As(err, &we) && len(we.Unrestored) == 0 {
		return we.Err // names the file already
	}
	return err
}
