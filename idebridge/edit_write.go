package idebridge

import (
	"errors"
	"io"
	"io/fs"

	"github.com/idebridge/idebridge/internal/atomicfile"
	"github.com/idebridge/idebridge/internal/safefile"
)

// ErrConflict is matched (errors.Is) by every *ConflictError.
var ErrConflict = atomicfile.ErrConflict

// FileState is what a file looked like at one moment: whether it existed
// (Exists), its absolute Path, Size, ModTime, Mode and the hex SHA256 of
// its content. Edits record it when they are proposed and compare it
// before they write, so that a file changed underneath (by the user, a
// formatter, another agent) is never overwritten silently. Only the
// content counts: touching a file or changing its mode is not an edit of
// it. (It is the same type as lsp.FileState, which a rename's proposed
// file edits carry.)
type FileState = atomicfile.State

// StatFile records the current state of the file at path (made absolute;
// symbolic links are followed). A file that does not exist is a state too
// (Exists false), not an error; a directory, or a file that cannot be
// read, is an error.
func StatFile(path string) (*FileState, error) { return atomicfile.Stat(path) }

// ConflictError reports an edit that was not written because the file
// changed on disk after the edit was proposed (Expected) and before it
// could be written (Actual); Text is what would have been written.
// Nothing was written. It matches ErrConflict.
type ConflictError = atomicfile.ConflictError

// WriteFileAtomic replaces the file at path with data so that readers see
// either the old content or the new, never a part: it writes a temporary
// file in the same directory, flushes it to disk (fsync), gives it the old
// file's mode (and, where permitted, owner), and renames it over path. A
// symbolic link at path is followed: its target is replaced, the link
// stays. A new file gets mode 0666 minus the umask, as os.WriteFile would.
//
// When expect is not nil, the file's current content is compared with it
// just before the rename; if it differs (or the file appeared or vanished),
// nothing is written and the error is a *ConflictError. On any error the
// temporary file is removed.
func WriteFileAtomic(path string, data []byte, expect *FileState) error {
	return atomicfile.Write(path, data, expect)
}

// readText reads a file as text; a missing file reads as "" with exists
// false. Only a regular file is read: a FIFO or a device under the name is
// an error, never waited on.
func readText(path string) (text string, exists bool, err error) {
	f, _, err := safefile.Open(path, nil)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return "", false, err
	}
	return string(b), true, nil
}
