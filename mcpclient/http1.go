package mcpclient

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Just enough HTTP/1.1 for an IDE's SSE endpoints, read without net/http:
// a response's status and headers, then a body by Content-Length, chunked,
// or until the connection closes. Every reader keeps its progress in its
// struct, so that a read cut by a deadline resumes where it stopped.

// maxPostResponse bounds what is read of a response to a POST: a message
// endpoint answers "Accepted" or nothing.
const maxPostResponse = 1 << 20

// responseHead is what the client needs of an HTTP/1.x response head.
type responseHead struct {
	status        int
	keepAlive     bool
	contentLength int64 // -1 when absent
	chunked       bool
	contentType   string
}

// readResponseHead reads a status line and headers. It works on bufio's
// own buffer and converts nothing it does not keep.
func readResponseHead(br *bufio.Reader) (responseHead, error) {
	h := responseHead{contentLength: -1}
	line, err := readLine(br)
	if err != nil {
		return h, err
	}
	// HTTP/1.1 202 Accepted
	proto, rest, ok := bytes.Cut(line, []byte(" "))
	if !ok || !bytes.HasPrefix(proto, []byte("HTTP/1.")) || len(rest) < 3 {
		return h, fmt.Errorf("malformed HTTP status line %q", truncateText(string(line), 80))
	}
	for _, c := range rest[:3] {
		if c < '0' || c > '9' {
			return h, fmt.Errorf("malformed HTTP status line %q", truncateText(string(line), 80))
		}
		h.status = h.status*10 + int(c-'0')
	}
	http10 := string(proto) == "HTTP/1.0"
	h.keepAlive = string(proto) == "HTTP/1.1"
	for {
		hl, err := readLine(br)
		if err != nil {
			return h, err
		}
		if len(hl) == 0 {
			return h, nil
		}
		name, value, ok := bytes.Cut(hl, []byte(":"))
		if !ok {
			return h, fmt.Errorf("malformed HTTP header %q", truncateText(string(hl), 80))
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, ok := parseDecimal(value)
			if !ok {
				return h, fmt.Errorf("malformed Content-Length %q", value)
			}
			h.contentLength = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			if h.chunked = bytes.EqualFold(value, []byte("chunked")); !h.chunked {
				return h, fmt.Errorf("unsupported Transfer-Encoding %q", value)
			}
		case bytes.EqualFold(name, []byte("Content-Type")):
			h.contentType = string(value)
		case bytes.EqualFold(name, []byte("Connection")):
			for len(value) > 0 {
				var tok []byte
				tok, value, _ = bytes.Cut(value, []byte(","))
				tok = bytes.TrimSpace(tok)
				switch {
				case bytes.EqualFold(tok, []byte("close")):
					h.keepAlive = false
				case bytes.EqualFold(tok, []byte("keep-alive")) && http10:
					h.keepAlive = true
				}
			}
		}
	}
}

// parseDecimal parses a non-negative decimal integer of at most 18 digits.
func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// readPostResponse reads one HTTP/1.x response and discards its body. It
// reports the status and whether the connection can carry another request.
func readPostResponse(br *bufio.Reader) (status int, reusable bool, err error) {
	for {
		h, err := readResponseHead(br)
		if err != nil {
			return 0, false, err
		}
		if h.status >= 100 && h.status < 200 && h.status != 101 {
			continue // 100 Continue and friends come before the real answer
		}
		reusable = h.keepAlive
		switch {
		case h.status == 204 || h.status == 304:
		case h.chunked:
			n, err := io.Copy(io.Discard, io.LimitReader(&chunkedBody{br: br}, maxPostResponse+1))
			if err != nil {
				return 0, false, err
			}
			if n > maxPostResponse {
				reusable = false // not read to its end
			}
		case h.contentLength >= 0:
			if h.contentLength > maxPostResponse {
				return h.status, false, nil // not worth reading; drop the connection
			}
			if _, err := br.Discard(int(h.contentLength)); err != nil {
				return 0, false, err
			}
		default:
			// The body runs to the end of the connection.
			if _, err := io.Copy(io.Discard, io.LimitReader(br, maxPostResponse)); err != nil {
				return 0, false, err
			}
			reusable = false
		}
		return h.status, reusable, nil
	}
}

// readLine reads one CRLF- (or LF-) terminated line of at most the
// buffer's size.
// The line aliases br's buffer: it is valid until the next read.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, errors.New("HTTP header line too long")
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r")), nil
}

// chunkedBody decodes a chunked body. Its progress lives in the struct, so
// that a read cut by a deadline resumes where it stopped.
type chunkedBody struct {
	br        *bufio.Reader
	left      int64  // data bytes left in the current chunk
	line      []byte // a line read in part
	afterData bool   // the CRLF after chunk data comes next
	trailers  bool   // reading trailers after the last chunk
	done      bool
}

func (c *chunkedBody) Read(p []byte) (int, error) {
	for {
		if c.done {
			return 0, io.EOF
		}
		if c.left > 0 {
			if int64(len(p)) > c.left {
				p = p[:c.left]
			}
			n, err := c.br.Read(p)
			c.left -= int64(n)
			if c.left == 0 {
				c.afterData = true
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return n, err
		}
		line, err := c.readLine()
		if err != nil {
			return 0, err
		}
		switch {
		case c.afterData:
			if len(line) != 0 {
				return 0, errors.New("malformed chunked body: no CRLF after chunk data")
			}
			c.afterData = false
		case c.trailers:
			if len(line) == 0 {
				c.done = true
			}
		default:
			size, _, _ := bytes.Cut(line, []byte(";"))
			n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 64)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("malformed chunk size %q", truncateText(string(line), 40))
			}
			if n == 0 {
				c.trailers = true
			}
			c.left = n
		}
	}
}

// readLine returns the next line without its line ending; a line cut by a
// read error is kept for the next call.
func (c *chunkedBody) readLine() ([]byte, error) {
	for {
		frag, err := c.br.ReadSlice('\n')
		if len(c.line)+len(frag) > 8<<10 {
			return nil, errors.New("chunked body line too long")
		}
		c.line = append(c.line, frag...)
		switch err {
		case nil:
			line := bytes.TrimSuffix(bytes.TrimSuffix(c.line, []byte("\n")), []byte("\r"))
			c.line = c.line[:0]
			return line, nil
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// limitedBody reads a body of known length, resumably.
type limitedBody struct {
	br   *bufio.Reader
	left int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.br.Read(p)
	l.left -= int64(n)
	return n, err
}

func truncateText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
