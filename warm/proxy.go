package warm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// ProxyOptions configure Proxy.
type ProxyOptions struct {
	// Options reach the runtime (and start it).
	Options
	// OnConnect, when set, is called after each connection to a runtime
	// (the first, and each after the runtime was lost).
	OnConnect func(*Runtime)
	// OnLost, when set, is called when the runtime is lost mid-session.
	OnLost func(err error)
}

// peekLimit is how much of a message Proxy reads to learn its id and
// method; the rest of a longer message is passed on as it comes.
const peekLimit = 64 << 10

// lostCode is the JSON-RPC error of a request whose runtime ended before
// answering (-32603, internal error).
const lostCode = -32603

// Proxy serves one MCP session read from in and written to out (MCP's
// stdio transport) through the runtime's session on p: what the client
// writes goes to the runtime, what the runtime answers comes back. It
// connects before reading anything, and returns the error of that first
// connection (ErrVersionSkew, ErrNotRunning, ...) so that the caller may
// serve the session itself instead.
//
// When the runtime is lost mid-session (it was killed, or stopped), the
// requests it had not answered get a JSON-RPC error saying so, and the
// next message the client sends reconnects (starting a runtime when
// Options.Start is set) and replays the session's initialize and
// notifications/initialized first, their answers kept from the client:
// the client sees one session throughout. A request whose message was
// longer than 64 KiB and whose id did not come in its first 64 KiB gets no
// such error.
//
// Proxy returns nil when in ends (after the runtime answered what was
// sent, for at most 10 s) or when ctx ends.
func Proxy(ctx context.Context, opts *ProxyOptions, p *Project, in io.Reader, out io.Writer) error {
	var o ProxyOptions
	if opts != nil {
		o = *opts
	}
	c, err := newClient(&o.Options)
	if err != nil {
		return err
	}
	px := &proxy{c: c, o: o, p: p, out: out, inflight: map[string]*flight{}}
	if err := px.connect(ctx); err != nil {
		return err
	}
	defer px.closeConn()
	// The client's input is read on a goroutine of its own, so that ctx's
	// end returns at once; a read in progress is left to it, and ends
	// when that read returns (as with ideserver's ServeStream).
	done := make(chan error, 1)
	go func() { done <- px.pump(ctx, in) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return nil
	}
}

// pump passes the client's messages on until in ends.
func (px *proxy) pump(ctx context.Context, in io.Reader) error {
	br := bufio.NewReaderSize(in, peekLimit)
	for {
		frag, err := br.ReadSlice('\n')
		if ctx.Err() != nil {
			return nil
		}
		if len(frag) > 0 {
			if werr := px.forward(ctx, br, frag, err); werr != nil {
				return werr
			}
		}
		if err == bufio.ErrBufferFull {
			continue // forward passed the rest on
		}
		if err != nil {
			if err == io.EOF {
				px.finish()
				return nil
			}
			return err
		}
	}
}

type proxy struct {
	c   *client
	o   ProxyOptions
	p   *Project
	out io.Writer

	outMu sync.Mutex // whole messages to out

	mu        sync.Mutex
	conn      *net.UnixConn
	done      chan struct{} // closed when conn's reader ends
	gen       int
	inflight  map[string]*flight // requests sent or being sent, not answered
	initLine  []byte             // the client's initialize, replayed after a reconnect
	initdLine []byte             // its notifications/initialized
	swallow   string             // the id of a replayed initialize, whose answer the client must not see
	ending    bool               // the client's input ended: the runtime closing is no loss
}

// connect opens a session; after a loss it replays the handshake.
func (px *proxy) connect(ctx context.Context) error {
	conn, br, rt, err := px.c.open(ctx, px.p)
	if err != nil {
		return err
	}
	px.mu.Lock()
	px.gen++
	gen := px.gen
	px.conn = conn
	done := make(chan struct{})
	px.done = done
	replay := px.initLine != nil
	var pre []byte
	if replay {
		id, _, _ := peek(px.initLine)
		px.swallow = id
		pre = append(append(pre, px.initLine...), px.initdLine...)
	}
	px.mu.Unlock()
	if px.o.OnConnect != nil {
		px.o.OnConnect(rt)
	}
	go px.read(conn, br, gen, done)
	if len(pre) > 0 {
		if _, err := conn.Write(pre); err != nil {
			return err
		}
	}
	return nil
}

// forward passes one message (its first fragment frag, and the rest from
// br when it was longer than the buffer) to the runtime, reconnecting
// once when the runtime is gone.
func (px *proxy) forward(ctx context.Context, br *bufio.Reader, frag []byte, rerr error) error {
	whole := rerr != bufio.ErrBufferFull
	id, method, isReq := peek(frag)
	var line []byte
	if whole {
		line = bytes.Clone(frag)
		if len(line) == 0 || line[len(line)-1] != '\n' {
			line = append(line, '\n')
		}
	}
	px.mu.Lock()
	if whole && method == "initialize" && isReq {
		px.initLine = line
	}
	if whole && method == "notifications/initialized" {
		px.initdLine = line
	}
	conn := px.conn
	px.mu.Unlock()
	if conn == nil {
		if err := px.connect(ctx); err != nil {
			if isReq {
				px.answerLost(id, fmt.Errorf("the idebridge runtime could not be reached: %v", err))
			}
			return px.skipRest(br, whole)
		}
		px.mu.Lock()
		conn = px.conn
		px.mu.Unlock()
	}
	var f *flight
	if isReq {
		f = px.begin(id, conn)
	}
	if whole {
		if _, err := conn.Write(line); err != nil {
			px.unsent(id, f)
			return px.retry(ctx, conn, line, id, isReq)
		}
		px.sent(id, f)
		return nil
	}
	// A long message: passed on piece by piece, not kept. If the runtime
	// goes meanwhile, the message is lost with it (the client gets an
	// error for it when its id was seen).
	failed := func(werr error, whole bool) error {
		px.unsent(id, f)
		px.lost(conn, werr)
		px.answerLost(id, errLostRequest)
		return px.skipRest(br, whole)
	}
	if _, err := conn.Write(frag); err != nil {
		return failed(err, false)
	}
	for {
		more, err := br.ReadSlice('\n')
		if len(more) > 0 {
			if _, werr := conn.Write(more); werr != nil {
				return failed(werr, err != bufio.ErrBufferFull)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			_, err = conn.Write([]byte{'\n'})
		}
		if err != nil {
			return failed(err, true)
		}
		px.sent(id, f)
		return nil
	}
}

// flight is a request on its way to the runtime (sent false) or written
// to it, awaiting its answer.
type flight struct {
	conn *net.UnixConn
	sent bool
}

var errLostRequest = errors.New("the idebridge runtime ended before answering; call again")

// begin records a request about to be written on conn.
func (px *proxy) begin(id string, conn *net.UnixConn) *flight {
	if id == "" {
		return nil
	}
	f := &flight{conn: conn}
	px.mu.Lock()
	px.inflight[id] = f
	px.mu.Unlock()
	return f
}

// sent marks a request written. When its connection was lost meanwhile,
// the runtime may never have read it: the client is told at once.
func (px *proxy) sent(id string, f *flight) {
	if f == nil {
		return
	}
	px.mu.Lock()
	if px.inflight[id] != f { // answered already
		px.mu.Unlock()
		return
	}
	if px.conn != f.conn {
		delete(px.inflight, id)
		px.mu.Unlock()
		px.answerLost(id, errLostRequest)
		return
	}
	f.sent = true
	px.mu.Unlock()
}

// unsent forgets a request whose write failed.
func (px *proxy) unsent(id string, f *flight) {
	if f == nil {
		return
	}
	px.mu.Lock()
	if px.inflight[id] == f {
		delete(px.inflight, id)
	}
	px.mu.Unlock()
}

// retry sends a whole message again on a new connection, once.
func (px *proxy) retry(ctx context.Context, old *net.UnixConn, line []byte, id string, isReq bool) error {
	px.lost(old, errors.New("writing to the runtime failed"))
	if err := px.connect(ctx); err != nil {
		if isReq {
			px.answerLost(id, fmt.Errorf("the idebridge runtime could not be reached: %v", err))
		}
		return nil
	}
	px.mu.Lock()
	conn := px.conn
	px.mu.Unlock()
	var f *flight
	if isReq {
		f = px.begin(id, conn)
	}
	if _, err := conn.Write(line); err != nil {
		px.unsent(id, f)
		px.lost(conn, err)
		if isReq {
			px.answerLost(id, errLostRequest)
		}
		return nil
	}
	px.sent(id, f)
	return nil
}

// skipRest drops the rest of a long message.
func (px *proxy) skipRest(br *bufio.Reader, whole bool) error {
	for !whole {
		_, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return err
		}
		whole = true
	}
	return nil
}

// read copies the runtime's messages to out until the connection ends.
func (px *proxy) read(conn *net.UnixConn, br *bufio.Reader, gen int, done chan struct{}) {
	defer close(done)
	var err error
	for {
		var frag []byte
		frag, err = br.ReadSlice('\n')
		if len(frag) > 0 {
			id, method, _ := peek(frag)
			px.mu.Lock()
			if method == "" && id != "" {
				if id == px.swallow && gen == px.gen {
					px.swallow = ""
					px.mu.Unlock()
					if err2 := skipLine(br, err); err2 != nil {
						err = err2
						break
					}
					continue
				}
				delete(px.inflight, id)
			}
			px.mu.Unlock()
			px.outMu.Lock()
			werr := px.copyLine(br, frag, err)
			px.outMu.Unlock()
			if werr != nil {
				err = werr
				break
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			break
		}
	}
	px.lost(conn, err)
}

// copyLine writes one message from the runtime to out.
func (px *proxy) copyLine(br *bufio.Reader, frag []byte, err error) error {
	if _, werr := px.out.Write(frag); werr != nil {
		return werr
	}
	for err == bufio.ErrBufferFull {
		frag, err = br.ReadSlice('\n')
		if _, werr := px.out.Write(frag); werr != nil {
			return werr
		}
	}
	return err
}

func skipLine(br *bufio.Reader, err error) error {
	for err == bufio.ErrBufferFull {
		_, err = br.ReadSlice('\n')
	}
	return err
}

// lost forgets a connection that failed, and answers the requests it had
// not answered.
func (px *proxy) lost(conn *net.UnixConn, why error) {
	px.mu.Lock()
	if px.conn != conn {
		px.mu.Unlock()
		return
	}
	px.conn = nil
	conn.Close()
	// The requests written on conn are lost with it; those still being
	// written are their writer's to settle.
	var ids []string
	for id, f := range px.inflight {
		if f.conn == conn && f.sent {
			ids = append(ids, id)
			delete(px.inflight, id)
		}
	}
	ending := px.ending
	px.mu.Unlock()
	if ending {
		return
	}
	if why == nil || errors.Is(why, io.EOF) {
		why = errors.New("the runtime closed the session")
	}
	if px.o.OnLost != nil {
		px.o.OnLost(why)
	}
	for _, id := range ids {
		px.answerLost(id, errLostRequest)
	}
}

func (px *proxy) answerLost(id string, why error) {
	if id == "" {
		return
	}
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id),
		"error": map[string]any{"code": lostCode, "message": why.Error()}})
	px.outMu.Lock()
	px.out.Write(append(msg, '\n'))
	px.outMu.Unlock()
}

// finish ends the session at the end of the client's input: the runtime
// sees the end of its input, answers what it was sent, and closes.
func (px *proxy) finish() {
	px.mu.Lock()
	conn, done := px.conn, px.done
	px.ending = true
	px.mu.Unlock()
	if conn == nil {
		return
	}
	conn.CloseWrite()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
}

func (px *proxy) closeConn() {
	px.mu.Lock()
	conn := px.conn
	px.conn = nil
	px.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
}

// peek reads a message's top-level id (as raw JSON) and method from its
// beginning, as far as it goes. isReq is true for a request (a method and
// an id) or a notification (a method alone).
func peek(b []byte) (id, method string, isReq bool) {
	if id, method, ok := peekFast(b); ok {
		return id, method, method != ""
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", "", false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			break
		}
		switch key {
		case "id":
			id = string(bytes.TrimSpace(raw))
		case "method":
			json.Unmarshal(raw, &method)
		}
		if id != "" && method != "" {
			break
		}
	}
	return id, method, method != ""
}

// peekFast reads the common shape at once, without a JSON decoder:
// {"jsonrpc":"2.0","id":ID,"method":"M" or {"jsonrpc":"2.0","id":ID,"result"
// (or "error"), with a number or a plain string (no escapes) as ID and no
// space. ok is false for any other shape.
func peekFast(b []byte) (id, method string, ok bool) {
	const head = `{"jsonrpc":"2.0","id":`
	rest, found := bytes.CutPrefix(b, []byte(head))
	if !found {
		return "", "", false
	}
	var n int
	switch {
	case len(rest) > 0 && rest[0] == '"':
		end := bytes.IndexByte(rest[1:], '"')
		if end < 0 || bytes.IndexByte(rest[1:end+1], '\\') >= 0 {
			return "", "", false
		}
		n = end + 2
	default:
		for n < len(rest) && (rest[n] == '-' || (rest[n] >= '0' && rest[n] <= '9')) {
			n++
		}
		if n == 0 {
			return "", "", false
		}
	}
	id, rest = string(rest[:n]), rest[n:]
	switch {
	case bytes.HasPrefix(rest, []byte(`,"result":`)), bytes.HasPrefix(rest, []byte(`,"error":`)):
		return id, "", true
	case bytes.HasPrefix(rest, []byte(`,"method":"`)):
		rest = rest[len(`,"method":"`):]
		end := bytes.IndexByte(rest, '"')
		if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
			return "", "", false
		}
		return id, string(rest[:end]), true
	}
	return "", "", false
}
