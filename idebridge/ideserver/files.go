package ideserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/idebridge/idebridge/internal/safefile"
)

// The default tools read only regular files: each is opened once without
// blocking (a FIFO or a device under the name is refused, not waited on or
// read without end), the opened descriptor is checked, and at most
// Options.MaxFileSize bytes are read.

// readRegular reads the regular file at path if it holds at most limit
// bytes (see openOptions for the confinement check).
func (s *Server) readRegular(path string, limit int64) ([]byte, error) {
	for attempt := 1; ; attempt++ {
		b, _, err := safefile.ReadFile(path, limit, s.openOptions())
		if errors.Is(err, errChangedWhileOpening) && attempt < openAttempts {
			continue
		}
		return b, err
	}
}

// openRegular opens the regular file at path, with the confinement check
// of openOptions.
func (s *Server) openRegular(path string) (*os.File, fs.FileInfo, error) {
	for attempt := 1; ; attempt++ {
		f, info, err := safefile.Open(path, s.openOptions())
		if errors.Is(err, errChangedWhileOpening) && attempt < openAttempts {
			continue
		}
		return f, info, err
	}
}

// openAttempts bounds the opens of a file that changes under a confined
// path: an editor's save by rename can make one attempt fail; a link
// swapped back and forth without end is refused after this many.
const openAttempts = 3

var errChangedWhileOpening = errors.New("the file changed while it was opened")

// openOptions returns, for a confined server, the check that closes the
// window between resolvePath's check and the open: the file opened must
// be the file the path resolves to afterwards, and that must lie inside a
// workspace folder. A link swapped to a file outside in between is
// caught either way: the path then resolves outside, or (swapped back) to
// a file other than the one opened.
func (s *Server) openOptions() *safefile.Options {
	if s.cfg.Unconfined {
		return nil
	}
	return &safefile.Options{Check: func(path string, opened fs.FileInfo) error {
		real, err := realPath(path)
		if err == nil && !s.insideFolders(real) {
			err = fmt.Errorf("it now resolves to %s, outside the workspace folders", real)
		}
		if err == nil {
			var now fs.FileInfo
			if now, err = os.Stat(real); err == nil && !os.SameFile(opened, now) {
				err = errors.New("another file is now at its path")
			}
		}
		if err != nil {
			return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%v)", errChangedWhileOpening, err)}
		}
		return nil
	}}
}

// countLines counts lines as an editor buffer does: "a\nb\n" and "a\nb" have
// two, an empty file has one. The file must be regular and hold at most
// limit bytes; the count stops when ctx ends.
func (s *Server) countLines(ctx context.Context, path string, limit int64) (int, error) {
	f, info, err := s.openRegular(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if info.Size() > limit {
		return 0, fmt.Errorf("%w (%d bytes, over %d)", safefile.ErrTooLarge, info.Size(), limit)
	}
	r := io.LimitReader(f, limit+1)
	var read int64
	n, last := 0, byte('\n')
	buf := make([]byte, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		k, err := r.Read(buf)
		if k > 0 {
			read += int64(k)
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if read > limit {
		return 0, fmt.Errorf("%w (over %d bytes)", safefile.ErrTooLarge, limit)
	}
	if last != '\n' || n == 0 {
		n++
	}
	return n, nil
}
