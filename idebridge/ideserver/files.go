package ideserver

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/idebridge/idebridge/internal/safefile"
)

// The default tools read only regular files: each is opened once without
// blocking (a FIFO or a device under the name is refused, not waited on or
// read without end), the opened descriptor is checked, and at most
// Options.MaxFileSize bytes are read.

// readRegular reads the regular file at path if it holds at most limit
// bytes.
func readRegular(path string, limit int64) ([]byte, error) {
	b, _, err := safefile.ReadFile(path, limit, nil)
	return b, err
}

// countLines counts lines as an editor buffer does: "a\nb\n" and "a\nb" have
// two, an empty file has one. The file must be regular and hold at most
// limit bytes; the count stops when ctx ends.
func countLines(ctx context.Context, path string, limit int64) (int, error) {
	f, info, err := safefile.Open(path, nil)
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
