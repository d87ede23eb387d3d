// Package safefile opens files that ought to be regular files without
// trusting that they are: a FIFO, a device or a terminal put under the
// expected name (or swapped in after a check) is reported, never waited on
// or read without end.
//
// Open opens once, without blocking (O_NONBLOCK: a FIFO without a writer
// does not hold open(2)) and without acquiring a controlling terminal
// (O_NOCTTY), and judges the descriptor it got, not a name it stat'ed
// before. ReadFile adds a bound on the bytes read.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is matched by the error for anything but a regular file (a
// directory, FIFO, socket or device).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is matched by ReadFile's error for a file over its limit.
var ErrTooLarge = errors.New("file too large")

// Options adjust Open. The zero value follows symbolic links.
type Options struct {
	// NoFollow refuses a symbolic link as the last component of the path
	// (O_NOFOLLOW), for callers that resolved links themselves and must
	// not follow one swapped in since.
	NoFollow bool
	// Check, when set, judges the regular file that was opened: path and
	// the opened descriptor's FileInfo. An error from it closes the file
	// and is returned as is. It lets a caller check the file it got (for
	// example, that it is still the file a confined path resolves to)
	// rather than a name it resolved before the open.
	Check func(path string, opened fs.FileInfo) error
}

// Open opens path for reading and returns it with the opened descriptor's
// FileInfo when it is a regular file. Otherwise it closes it and returns an
// *fs.PathError wrapping ErrNotRegular that names the file's type. Reads
// from the returned file block as usual (O_NONBLOCK does not apply to
// regular files).
func Open(path string, opts *Options) (*os.File, fs.FileInfo, error) {
	noFollow := opts != nil && opts.NoFollow
	f, err := openFile(path, noFollow)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, info, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, typeName(info.Mode()))}
	}
	if opts != nil && opts.Check != nil {
		if err := opts.Check(path, info); err != nil {
			f.Close()
			return nil, info, err
		}
	}
	return f, info, nil
}

// ReadFile reads the regular file at path (see Open) when it holds at most
// limit bytes. A larger file gives an *fs.PathError wrapping ErrTooLarge;
// at most limit+1 bytes are read whatever the file claims its size is.
func ReadFile(path string, limit int64, opts *Options) ([]byte, fs.FileInfo, error) {
	f, info, err := Open(path, opts)
	if err != nil {
		return nil, info, err
	}
	defer f.Close()
	if info.Size() > limit {
		return nil, info, tooLarge(path, limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, info, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(data)) > limit {
		return nil, info, tooLarge(path, limit)
	}
	return data, info, nil
}

func tooLarge(path string, limit int64) error {
	return &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (over %d bytes)", ErrTooLarge, limit)}
}

// typeName says what a non-regular file is, in words.
func typeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "type " + m.Type().String()
}
