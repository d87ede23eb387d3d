// Package atomicfile writes files the way an edit must be written: all at
// once (a temporary file renamed over the old one, flushed to disk, mode
// and owner kept), and only when the file still has the content the edit
// was computed from (State, ConflictError). Edit review in package
// idebridge and rename in package lsp both write through it.
package atomicfile

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
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
	f, err := os.Open(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, st, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("reading the state of %s: %w", abs, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, nil, fmt.Errorf("reading the state of %s: %w", abs, err)
	}
	if !info.Mode().IsRegular() {
		return 0, nil, fmt.Errorf("reading the state of %s: not a regular file (%v)", abs, info.Mode().Type())
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(h, w), f)
	if err != nil {
		return 0, nil, fmt.Errorf("reading the state of %s: %w", abs, err)
	}
	st.Exists, st.Size, st.ModTime, st.Mode = true, n, info.ModTime(), info.Mode()
	st.SHA256 = hex.EncodeToString(h.Sum(nil))
	return n, st, nil
}

// sameContent reports whether two states hold the same content (or both
// are absent). ModTime and Mode are not compared: touching a file, or
// changing its mode, is not an edit of it.
func sameContent(a, b *State) bool {
	if a.Exists != b.Exists {
		return false
	}
	return !a.Exists || (a.Size == b.Size && a.SHA256 == b.SHA256)
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
}

func (e *ConflictError) Error() string {
	what := "its content changed"
	switch {
	case e.Expected == nil || e.Actual == nil:
	case e.Expected.Exists && !e.Actual.Exists:
		what = "it was deleted"
	case !e.Expected.Exists && e.Actual.Exists:
		what = "it was created"
	case e.Expected.Size != e.Actual.Size:
		what = fmt.Sprintf("its size went from %d to %d bytes", e.Expected.Size, e.Actual.Size)
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
// When expect is not nil, the file's current content is compared with it
// just before the rename; if it differs (or the file appeared or vanished),
// nothing is written and the error is a *ConflictError. On any error the
// temporary file is removed.
func Write(path string, data []byte, expect *State) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	target := abs
	if info, err := os.Lstat(abs); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		if target, err = filepath.EvalSymlinks(abs); err != nil {
			return fmt.Errorf("writing %s: following its symbolic link: %w", abs, err)
		}
	}
	var old fs.FileInfo
	if info, err := os.Stat(target); err == nil {
		if !info.Mode().IsRegular() {
			return fmt.Errorf("writing %s: not a regular file (%v)", abs, info.Mode().Type())
		}
		old = info
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("writing %s: %w", abs, err)
	}

	dir := filepath.Dir(target)
	tmp, tmpName, err := createTemp(dir, filepath.Base(target), old == nil)
	if err != nil {
		return fmt.Errorf("writing %s: %w", abs, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", abs, err)
	}
	if old != nil {
		if err := tmp.Chmod(old.Mode().Perm() | old.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
			return fmt.Errorf("writing %s: keeping its mode: %w", abs, err)
		}
		keepOwner(tmp, old)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", abs, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", abs, err)
	}
	if expect != nil {
		// As late as possible: the window left is the rename itself.
		now, err := Stat(target)
		if err != nil {
			return fmt.Errorf("writing %s: checking for a concurrent change: %w", abs, err)
		}
		if !sameContent(expect, now) {
			return &ConflictError{Path: abs, Expected: expect, Actual: now, Text: string(data)}
		}
	}
	if err := os.Rename(tmpName, target); err != nil {
		return fmt.Errorf("writing %s: %w", abs, err)
	}
	done = true
	syncDir(dir)
	return nil
}

// tempPrefix starts the names of the temporary files Write
// creates: hidden, and recognisable as ours.
const tempPrefix = ".idebridge-"

// createTemp creates a new temporary file next to base in dir. A file that
// will become a new file is created with mode 0666 so that the umask
// applies; one that replaces a file gets 0600 until chmod gives it the old
// file's mode.
func createTemp(dir, base string, newFile bool) (*os.File, string, error) {
	perm := fs.FileMode(0o600)
	if newFile {
		perm = 0o666
	}
	for range 100 {
		var r [6]byte
		_, _ = rand.Read(r[:])
		name := filepath.Join(dir, tempPrefix+base+"-"+hex.EncodeToString(r[:])+".tmp")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		return f, name, nil
	}
	return nil, "", fmt.Errorf("creating a temporary file in %s: too many collisions", dir)
}

// syncDir flushes a directory entry change (the rename) to disk where the
// platform allows; failure only weakens durability, never atomicity.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	d.Close()
}
