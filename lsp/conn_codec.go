package lsp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DefaultMaxMessageBytes bounds one LSP message body when FrameCodec's
// MaxBytes is zero. A publish of 100,000 diagnostics is about 20 MB.
const DefaultMaxMessageBytes = 64 << 20

// Bounds on the header part of a frame.
const (
	maxHeaderLine  = 1024
	maxHeaderLines = 32
)

// ErrFrame is matched (errors.Is) by every *FrameError.
var ErrFrame = errors.New("malformed LSP frame")

// FrameError is a violation of the LSP base protocol (Content-Length
// framing) or a message body that is not JSON.
type FrameError struct {
	// Problem says what was wrong, e.g. "no Content-Length header".
	Problem string
	// Err is the underlying error, if any (io.ErrUnexpectedEOF for a
	// stream that ends inside a frame).
	Err error
}

func (e *FrameError) Error() string {
	if e.Err != nil {
		return "malformed LSP frame: " + e.Problem + ": " + e.Err.Error()
	}
	return "malformed LSP frame: " + e.Problem
}

// Unwrap returns the underlying error.
func (e *FrameError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrFrame) true for every FrameError.
func (e *FrameError) Is(target error) bool { return target == ErrFrame }

// FrameCodec is the LSP base protocol ("Content-Length: N\r\n\r\n" then N
// bytes of JSON) as a jsonrpc2.ObjectCodec, for use with
// jsonrpc2.NewBufferedStream.
//
// It reads the same frames as jsonrpc2.VSCodeObjectCodec and is stricter
// where that codec is unsafe: a body is read in full before it is decoded,
// so bytes after the JSON value can never be taken for the next header; the
// body size is bounded; and every violation is a *FrameError. Header names
// are matched without regard to case, other headers (Content-Type) are
// ignored, lines may end in "\r\n" or "\n", and empty lines before a header
// block are skipped.
type FrameCodec struct {
	// MaxBytes bounds a message body; 0 means DefaultMaxMessageBytes.
	MaxBytes int
}

// WriteObject writes obj as one frame.
func (FrameCodec) WriteObject(w io.Writer, obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var hdr [40]byte
	h := append(hdr[:0], "Content-Length: "...)
	h = strconv.AppendInt(h, int64(len(data)), 10)
	h = append(h, "\r\n\r\n"...)
	if _, err := w.Write(h); err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// ReadObject reads one frame and decodes its body into v. At a clean end of
// the stream, before any byte of a frame, it returns io.EOF.
func (c FrameCodec) ReadObject(r *bufio.Reader, v any) error {
	body, err := c.ReadFrame(r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return &FrameError{Problem: "body is not a JSON-RPC message", Err: err}
	}
	return nil
}

// ReadFrame reads one frame and returns its body, undecoded. At a clean end
// of the stream, before any byte of a frame, it returns io.EOF.
func (c FrameCodec) ReadFrame(r *bufio.Reader) ([]byte, error) {
	limit := c.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxMessageBytes
	}
	length := -1
	lines := 0
	started := false
	for {
		line, err := readHeaderLine(r)
		if err != nil {
			if err == io.EOF && !started && line == "" {
				return nil, io.EOF
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			var fe *FrameError
			if errors.As(err, &fe) {
				return nil, err
			}
			return nil, &FrameError{Problem: "reading header", Err: err}
		}
		if line == "" {
			if lines == 0 {
				continue // stray line break between frames
			}
			break
		}
		started = true
		lines++
		if lines > maxHeaderLines {
			return nil, &FrameError{Problem: "more than " + strconv.Itoa(maxHeaderLines) + " header lines"}
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, &FrameError{Problem: fmt.Sprintf("header line %q has no colon", clip(line))}
		}
		if !strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil || n < 0 {
			return nil, &FrameError{Problem: fmt.Sprintf("bad Content-Length %q", clip(strings.TrimSpace(value)))}
		}
		if length >= 0 && n != length {
			return nil, &FrameError{Problem: "conflicting Content-Length headers"}
		}
		length = n
	}
	if length < 0 {
		return nil, &FrameError{Problem: "no Content-Length header"}
	}
	if length > limit {
		return nil, &FrameError{Problem: fmt.Sprintf("message of %d bytes exceeds the limit of %d", length, limit)}
	}
	// Grow with the data actually received, so a lying Content-Length
	// costs no more memory than the bytes that arrive.
	var buf bytes.Buffer
	if length <= 1<<20 {
		buf.Grow(length)
	}
	if _, err := io.CopyN(&buf, r, int64(length)); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, &FrameError{Problem: fmt.Sprintf("reading %d-byte body", length), Err: err}
	}
	return buf.Bytes(), nil
}

// readHeaderLine reads a line ending in "\n" (a preceding "\r" is dropped)
// of at most maxHeaderLine bytes. At EOF it returns what it read and io.EOF.
func readHeaderLine(r *bufio.Reader) (string, error) {
	var sb []byte
	for {
		b, err := r.ReadByte()
		if err != nil {
			return string(sb), err
		}
		if b == '\n' {
			if n := len(sb); n > 0 && sb[n-1] == '\r' {
				sb = sb[:n-1]
			}
			return string(sb), nil
		}
		if len(sb) >= maxHeaderLine {
			return "", &FrameError{Problem: "header line longer than " + strconv.Itoa(maxHeaderLine) + " bytes"}
		}
		sb = append(sb, b)
	}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
