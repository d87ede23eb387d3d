package mcpclient

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/idebridge/idebridge/mcp"
)

// poster POSTs messages to an SSE endpoint over kept-alive connections: the
// request goes out with one write (its header and body together) and its
// answer is read without a goroutine of its own on the common path.
//
// A request's answer is not waited for in send. Its reply usually arrives
// on the stream first (or with it), and the caller is reading the stream
// for it; the next send, which needs a connection, then reads the answer
// that has arrived in the meantime and reuses the connection, so that one
// call at a time waits once per call, not twice. An answer nobody claimed
// within ackGrace is read by a goroutine of its own, which also reports a
// refusal (refused) or a broken connection (broken) promptly.
type poster struct {
	ep      httpEndpoint
	u       *url.URL
	head    []byte // request line and fixed headers, up to "Content-Length: "
	timeout time.Duration
	refused func(id int64, err error) // a request's POST answered with an error status
	broken  func(err error)           // a request's POST connection broke before its answer

	mu      sync.Mutex
	idle    []*postConn
	pending []*postConn // a request written, its answer not read yet, oldest first
	open    map[*postConn]bool
	closed  bool
	awaits  sync.WaitGroup // armed ack timers and the reads they start
}

type postConn struct {
	p        *poster
	c        net.Conn
	br       *bufio.Reader
	lastUsed time.Time
	// While pending: the request written, and how many messages the
	// stream had delivered then.
	id    int64
	seq   uint64
	timer *time.Timer // reads the answer ackGrace after the write
}

const (
	// ackGrace is how long a request's answer waits to be claimed by the
	// next send before a goroutine reads it.
	ackGrace = 10 * time.Millisecond
	// claimWait bounds how long a send waits for an answer it expects to
	// have arrived before it takes another connection.
	claimWait = 2 * time.Millisecond
	// A connection idle for longer is not reused: IDE servers close idle
	// keep-alive connections (Node's default is after 5 s), and a request
	// written just as the server closes would be lost.
	postMaxIdle  = time.Second
	postMaxConns = 16
)

func newPoster(ep httpEndpoint, u *url.URL, token string, timeout time.Duration, refused func(int64, error), broken func(error)) *poster {
	var h []byte
	h = append(h, "POST "...)
	h = append(h, u.RequestURI()...)
	h = append(h, " HTTP/1.1\r\nHost: "...)
	h = append(h, u.Host...)
	h = append(h, "\r\nUser-Agent: idebridge\r\nContent-Type: application/json\r\n"...)
	if token != "" {
		h = append(h, mcp.AuthHeader+": "...)
		h = append(h, token...)
		h = append(h, "\r\n"...)
	}
	h = append(h, "Content-Length: "...)
	return &poster{ep: ep, u: u, head: h, timeout: timeout, refused: refused, broken: broken, open: map[*postConn]bool{}}
}

// send POSTs m. For a notification or a response it reads the answer (a
// status other than 2xx is an *httpStatusError); for a request it leaves
// the answer for later (see poster). started reports whether anything was
// written.
func (p *poster) send(ctx context.Context, m *Message, seq uint64) (started bool, err error) {
	pc, err := p.acquire(ctx, seq)
	if err != nil {
		return false, err
	}
	// Header and body in one buffer and one write: on loopback, and more
	// so under gVisor, a syscall costs more than copying the message.
	body := m.Bytes()
	req := getMessage()
	h := append(req.b[:0], p.head...)
	h = strconv.AppendInt(h, int64(len(body)), 10)
	h = append(h, "\r\n\r\n"...)
	h = append(h, body...)
	req.b = h
	pc.c.SetWriteDeadline(time.Now().Add(p.timeout))
	_, err = pc.c.Write(h)
	putMessage(req)
	if err != nil {
		p.drop(pc)
		return true, err
	}
	if id, ok := m.RequestID(); ok {
		p.park(pc, id, seq)
		return true, nil
	}
	return true, p.finish(ctx, pc)
}

// finish reads the answer to the POST just written on pc, within ctx and
// the timeout.
func (p *poster) finish(ctx context.Context, pc *postConn) error {
	pc.c.SetReadDeadline(time.Now().Add(p.timeout))
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { pc.c.SetReadDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	status, reusable, err := readPostResponse(pc.br)
	if err != nil {
		p.drop(pc)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if isTimeout(err) {
			return fmt.Errorf("%w: no answer to the POST within %v", context.DeadlineExceeded, p.timeout)
		}
		return err
	}
	if reusable {
		p.put(pc)
	} else {
		p.drop(pc)
	}
	if status < 200 || status > 299 {
		return &httpStatusError{status}
	}
	return nil
}

// park leaves pc's answer to be claimed, arming its timer.
func (p *poster) park(pc *postConn, id int64, seq uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		pc.c.Close()
		delete(p.open, pc)
		return
	}
	pc.id, pc.seq = id, seq
	p.pending = append(p.pending, pc)
	p.awaits.Add(1)
	pc.timer.Reset(ackGrace)
}

// fire is pc's timer: nobody claimed the answer, so read it here.
func (pc *postConn) fire() {
	p := pc.p
	defer p.awaits.Done()
	p.mu.Lock()
	for i, q := range p.pending {
		if q == pc {
			p.pending = append(p.pending[:i], p.pending[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	p.await(pc)
}

// await reads pc's answer, however long it takes.
func (p *poster) await(pc *postConn) {
	pc.c.SetReadDeadline(time.Time{})
	status, reusable, err := readPostResponse(pc.br)
	if p.answered(pc, status, reusable, err) {
		p.put(pc)
	}
}

// answered acts on a request's answer: a refusal is reported, a broken
// connection fails the session. It reports whether pc can carry another
// POST.
func (p *poster) answered(pc *postConn, status int, reusable bool, err error) bool {
	if err != nil {
		p.drop(pc)
		if !p.isClosed() {
			p.broken(fmt.Errorf("reading the answer: %w", err))
		}
		return false
	}
	if status < 200 || status > 299 {
		p.refused(pc.id, &httpStatusError{status})
	}
	if !reusable {
		p.drop(pc)
		return false
	}
	return true
}

// acquire returns a connection for one POST: an idle one that is still
// fresh, a pending one whose answer has arrived, or a new one.
func (p *poster) acquire(ctx context.Context, seq uint64) (*postConn, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	for len(p.idle) > 0 {
		pc := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if time.Since(pc.lastUsed) < postMaxIdle {
			p.open[pc] = true
			p.mu.Unlock()
			return pc, nil
		}
		pc.c.Close()
	}
	// A message arrived on the stream since this request went out: its
	// reply, most likely, and then its answer is in too.
	var claimed *postConn
	for i, pc := range p.pending {
		if pc.seq != seq && pc.timer.Stop() {
			claimed = pc
			p.pending = append(p.pending[:i], p.pending[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	if claimed != nil && p.claim(claimed) {
		return claimed, nil
	}
	dctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	c, err := p.ep.connect(dctx, p.u)
	if err != nil {
		return nil, err
	}
	pc := &postConn{p: p, c: c, br: bufio.NewReaderSize(c, 4096)}
	pc.timer = time.AfterFunc(time.Hour, pc.fire)
	pc.timer.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return nil, ErrClosed
	}
	p.open[pc] = true
	return pc, nil
}

// claim reads the answer of a pending connection whose timer it stopped,
// waiting at most claimWait for it to start; it reports whether pc is free
// for the next POST. An answer that has not started by then is left to a
// goroutine.
func (p *poster) claim(pc *postConn) bool {
	pc.c.SetReadDeadline(time.Now().Add(claimWait))
	if _, err := pc.br.Peek(1); err != nil {
		if isTimeout(err) {
			go func() {
				defer p.awaits.Done()
				p.await(pc)
			}()
			return false
		}
		p.awaits.Done()
		p.answered(pc, 0, false, err)
		return false
	}
	pc.c.SetReadDeadline(time.Now().Add(p.timeout))
	status, reusable, err := readPostResponse(pc.br)
	p.awaits.Done()
	return p.answered(pc, status, reusable, err)
}

// httpStatusError is a POST answered with a status other than 2xx: the
// server is there and refused this one message.
type httpStatusError struct{ status int }

func (e *httpStatusError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.status, http.StatusText(e.status))
}

func (p *poster) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

func (p *poster) put(pc *postConn) {
	pc.c.SetDeadline(time.Time{})
	pc.lastUsed = time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.open, pc)
	if p.closed || len(p.idle) >= postMaxConns {
		pc.c.Close()
		return
	}
	p.idle = append(p.idle, pc)
}

func (p *poster) drop(pc *postConn) {
	pc.c.Close()
	p.mu.Lock()
	delete(p.open, pc)
	p.mu.Unlock()
}

// close closes every connection, unblocking POSTs in flight, and waits for
// the answers being read in the background.
func (p *poster) close() {
	p.mu.Lock()
	p.closed = true
	for _, pc := range p.pending {
		if pc.timer.Stop() {
			p.awaits.Done()
		}
	}
	p.pending = nil
	for _, pc := range p.idle {
		pc.c.Close()
	}
	p.idle = nil
	for pc := range p.open {
		pc.c.Close()
	}
	p.mu.Unlock()
	p.awaits.Wait()
}
