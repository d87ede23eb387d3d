package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// LSP error codes the package acts on.
const (
	CodeRequestCancelled = -32800
	CodeContentModified  = -32801
	CodeServerCancelled  = -32802
)

// RPCError is an error response from a language server.
type RPCError struct {
	Code    int64
	Message string
	Data    json.RawMessage
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("server error %d: %s", e.Code, e.Message)
}

// Is matches another *RPCError with the same code, so errors.Is(err,
// ErrContentModified) works for any message text.
func (e *RPCError) Is(target error) bool {
	t, ok := target.(*RPCError)
	return ok && t.Code == e.Code
}

// Sentinels for error responses, matched by code.
var (
	ErrContentModified  error = &RPCError{Code: CodeContentModified, Message: "content modified"}
	ErrRequestCancelled error = &RPCError{Code: CodeRequestCancelled, Message: "request cancelled"}
	ErrMethodNotFound   error = &RPCError{Code: jsonrpc2.CodeMethodNotFound, Message: "method not found"}
	ErrServerCancelled  error = &RPCError{Code: CodeServerCancelled, Message: "server cancelled"}
)

// ErrConnClosed is returned for requests on a connection that is gone.
var ErrConnClosed = errors.New("connection to language server closed")

// maxContentModifiedRetries is how often a request answered with
// ContentModified is sent again.
const maxContentModifiedRetries = 3

// pipeRWC joins a server's stdout and stdin into one stream. Every write
// has a deadline, so a server that stops reading cannot block us forever.
// A failed write leaves a partial frame behind, so the stream is beyond
// repair: broken is called (it kills the server, which is then handled as
// a crash).
type pipeRWC struct {
	r, w         *os.File
	writeTimeout time.Duration
	broken       func()
	once         sync.Once

	mu  sync.Mutex
	err error // the first failed write
}

func (p *pipeRWC) Read(b []byte) (int, error) { return p.r.Read(b) }

func (p *pipeRWC) Write(b []byte) (int, error) {
	if p.writeTimeout > 0 {
		_ = p.w.SetWriteDeadline(time.Now().Add(p.writeTimeout))
	}
	n, err := p.w.Write(b)
	if err != nil && !errors.Is(err, os.ErrClosed) {
		p.mu.Lock()
		first := p.err == nil
		if first {
			p.err = err
		}
		p.mu.Unlock()
		if first && p.broken != nil {
			p.broken()
		}
	}
	return n, err
}

// writeErr returns the first failed write's error, if any.
func (p *pipeRWC) writeErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Close closes both pipes. The shutdown sequence closes stdin on its own
// first (closeWrite), after the exit notification.
func (p *pipeRWC) Close() error {
	p.once.Do(func() {
		p.w.Close()
		p.r.Close()
	})
	return nil
}

func (p *pipeRWC) closeWrite() { p.w.Close() }

// recordStream remembers the first read error, so that the reason a
// connection died (a malformed frame, say) can be reported; jsonrpc2 only
// logs it.
type recordStream struct {
	jsonrpc2.ObjectStream
	mu  sync.Mutex
	err error
}

func (s *recordStream) ReadObject(v any) error {
	err := s.ObjectStream.ReadObject(v)
	if err != nil {
		s.mu.Lock()
		if s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
	}
	return err
}

// readErr is the error that ended reading, or nil; io.EOF is a clean end.
func (s *recordStream) readErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// incoming is a request or notification from the server, stamped with the
// order it arrived in.
type incoming struct {
	req    *jsonrpc2.Request
	params json.RawMessage
	seq    uint64
}

// inbox is an unbounded FIFO between the jsonrpc2 read loop, which must
// never block on our work, and the goroutine that applies messages in
// order.
type inbox struct {
	mu     sync.Mutex
	items  []incoming
	signal chan struct{}
}

func (q *inbox) push(in incoming) {
	q.mu.Lock()
	q.items = append(q.items, in)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *inbox) take() []incoming {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}

// dispatcher handles what a server sends, in arrival order, on one
// goroutine. A request's result (or error) is sent back as its response.
type dispatcher interface {
	notification(seq uint64, method string, params json.RawMessage)
	request(ctx context.Context, seq uint64, method string, params json.RawMessage) (any, error)
}

// conn is a JSON-RPC connection to one language server.
type conn struct {
	rpc     *jsonrpc2.Conn
	stream  *recordStream
	rwc     *pipeRWC
	in      inbox
	recv    atomic.Uint64 // messages received from the server so far
	reading atomic.Bool   // a message is arriving or being decoded
	// rawParams holds the params of the request or notification just
	// read, for the handler; both run on jsonrpc2's read goroutine.
	rawParams json.RawMessage
	pending   atomic.Int64 // messages received and not yet applied
	nextID    atomic.Uint64
	// The answers to calls reach jsonrpc2 without their results (it would
	// decode a result into maps only to tell it from null); results holds
	// them, by id, for the calls that wait (waiting).
	resMu   sync.Mutex
	waiting map[uint64]bool
	results map[uint64]json.RawMessage
	// before holds, for each answer read for a call that waits, how many
	// of the server's requests and notifications had arrived before it:
	// the answer is handed over only once they have all been applied
	// (see awaitApplied).
	before map[uint64]uint64
	// applied is the arrival number of the last message the dispatch
	// goroutine has applied; appliedC, when not nil, is closed when it
	// moves. Guarded by applyMu.
	applyMu   sync.Mutex
	applied   uint64
	appliedC  chan struct{}
	retryBase time.Duration
	log       *slog.Logger
	done      chan struct{} // closed when the dispatch goroutine ends
	ctx       context.Context
	cancel    context.CancelFunc
}

// newConn starts a connection over rwc whose server-sent messages go to d.
func newConn(rwc *pipeRWC, d dispatcher, retryBase time.Duration, log *slog.Logger) *conn {
	c := &conn{
		rwc:       rwc,
		retryBase: retryBase,
		log:       log,
		done:      make(chan struct{}),
		waiting:   map[uint64]bool{},
		results:   map[uint64]json.RawMessage{},
		before:    map[uint64]uint64{},
	}
	c.stream = &recordStream{ObjectStream: jsonrpc2.NewBufferedStream(rwc, trackingCodec{c: c})}
	c.in.signal = make(chan struct{}, 1)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.rpc = jsonrpc2.NewConn(c.ctx, c.stream, handlerFunc(func(r *jsonrpc2.Request) {
		params := c.rawParams
		c.rawParams = nil
		c.pending.Add(1)
		c.in.push(incoming{req: r, params: params, seq: c.recv.Add(1)})
	}), jsonrpc2.SetLogger(slogPrintf{log}))
	go c.dispatch(d)
	return c
}

type handlerFunc func(*jsonrpc2.Request)

func (h handlerFunc) Handle(_ context.Context, _ *jsonrpc2.Conn, r *jsonrpc2.Request) { h(r) }

type slogPrintf struct{ l *slog.Logger }

func (s slogPrintf) Printf(format string, v ...any) {
	s.l.Debug(fmt.Sprintf(format, v...))
}

func (c *conn) dispatch(d dispatcher) {
	defer close(c.done)
	disconnected := c.rpc.DisconnectNotify()
	for {
		items := c.in.take()
		if len(items) == 0 {
			select {
			case <-c.in.signal:
				continue
			case <-disconnected:
				// Apply what arrived before the end, then stop.
				items = c.in.take()
				if len(items) == 0 {
					return
				}
			}
		}
		for _, it := range items {
			c.apply(d, it)
		}
	}
}

// apply hands one message to d (a request's result goes back as its
// response) and records that it has been applied.
func (c *conn) apply(d dispatcher, it incoming) {
	defer c.markApplied(it.seq)
	params := it.params
	if it.req.Notif {
		d.notification(it.seq, it.req.Method, params)
		c.pending.Add(-1)
		return
	}
	res, err := d.request(c.ctx, it.seq, it.req.Method, params)
	if err != nil {
		var re *RPCError
		if !errors.As(err, &re) {
			re = &RPCError{Code: jsonrpc2.CodeInternalError, Message: err.Error()}
		}
		e := &jsonrpc2.Error{Code: re.Code, Message: re.Message}
		if len(re.Data) > 0 {
			data := re.Data
			e.Data = &data
		}
		_ = c.rpc.ReplyWithError(c.ctx, it.req.ID, e)
		c.pending.Add(-1)
		return
	}
	_ = c.rpc.Reply(c.ctx, it.req.ID, res)
	c.pending.Add(-1)
}

func (c *conn) markApplied(seq uint64) {
	c.applyMu.Lock()
	c.applied = seq
	if c.appliedC != nil {
		close(c.appliedC)
		c.appliedC = nil
	}
	c.applyMu.Unlock()
}

// awaitApplied waits until the dispatch goroutine has applied the
// server's message number seq and all before it, or the connection ends,
// or ctx does. Answers to calls travel apart from the server's requests
// and notifications (those are applied in order on one goroutine, these
// go straight to the caller), so without it an answer could overtake what
// the server sent before it: pyright publishes a partial set of a file's
// diagnostics between the slices of its analysis, then answers a pull
// with the whole set, and the partial set, applied last, would stand.
func (c *conn) awaitApplied(ctx context.Context, seq uint64) {
	for {
		c.applyMu.Lock()
		if c.applied >= seq {
			c.applyMu.Unlock()
			return
		}
		if c.appliedC == nil {
			c.appliedC = make(chan struct{})
		}
		ch := c.appliedC
		c.applyMu.Unlock()
		select {
		case <-ch:
		case <-c.done:
			return
		case <-ctx.Done():
			return
		}
	}
}

// idle reports whether no message from the server is arriving, being
// decoded or waiting to be applied: Settle's quiet period only runs while
// the connection is idle, so a large publish still in flight is never
// mistaken for silence.
func (c *conn) idle() bool { return !c.reading.Load() && c.pending.Load() == 0 }

// trackingCodec is FrameCodec that tells its conn when a message starts
// arriving.
type trackingCodec struct {
	FrameCodec
	c *conn
}

func (t trackingCodec) ReadObject(r *bufio.Reader, v any) error {
	// The previous message, if any, has been handed to the handler (a
	// request or notification is in the inbox, counted as pending).
	t.c.reading.Store(false)
	if _, err := r.Peek(1); err == nil {
		t.c.reading.Store(true)
	}
	body, err := t.ReadFrame(r)
	if err != nil {
		return err
	}
	// Requests and notifications from the server reach jsonrpc2 without
	// their params, which are kept raw for the handler: jsonrpc2 would
	// decode them into maps and encode them again, the bulk of the cost of
	// a large publish.
	var env struct {
		ID     *json.RawMessage `json:"id,omitempty"`
		Method *string          `json:"method,omitempty"`
		Params json.RawMessage  `json:"params,omitempty"`
		Result json.RawMessage  `json:"result,omitempty"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return &FrameError{Problem: "body is not a JSON-RPC message", Err: err}
	}
	if env.Method == nil && env.ID != nil {
		t.c.noteAnswer(*env.ID)
	}
	if env.Method == nil && len(env.Result) > 0 && env.ID != nil && t.c.stash(*env.ID, env.Result) {
		// An answer to a call that waits: jsonrpc2 gets it with a null
		// result, the call takes the real one from the stash.
		short, err := json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
		}{"2.0", *env.ID, json.RawMessage("null")})
		if err == nil {
			err = json.Unmarshal(short, v)
		}
		if err != nil {
			return &FrameError{Problem: "body is not a JSON-RPC message", Err: err}
		}
		return nil
	}
	if env.Method == nil || len(env.Params) == 0 {
		if err := json.Unmarshal(body, v); err != nil {
			return &FrameError{Problem: "body is not a JSON-RPC message", Err: err}
		}
		return nil
	}
	t.c.rawParams = env.Params
	env.Params = nil
	short, err := json.Marshal(struct {
		JSONRPC string           `json:"jsonrpc"`
		ID      *json.RawMessage `json:"id,omitempty"`
		Method  string           `json:"method"`
	}{"2.0", env.ID, *env.Method})
	if err == nil {
		err = json.Unmarshal(short, v)
	}
	if err != nil {
		return &FrameError{Problem: "body is not a JSON-RPC message", Err: err}
	}
	return nil
}

// stash keeps the raw result of the answer with the given id, when a call
// waits for it.
func (c *conn) stash(id json.RawMessage, result json.RawMessage) bool {
	n, err := strconv.ParseUint(string(id), 10, 64)
	if err != nil {
		return false
	}
	c.resMu.Lock()
	defer c.resMu.Unlock()
	if !c.waiting[n] {
		return false
	}
	c.results[n] = result
	return true
}

// noteAnswer records, for the answer with the given id to a call that
// waits, how many of the server's messages came before it.
func (c *conn) noteAnswer(id json.RawMessage) {
	n, err := strconv.ParseUint(string(id), 10, 64)
	if err != nil {
		return
	}
	c.resMu.Lock()
	defer c.resMu.Unlock()
	if c.waiting[n] {
		c.before[n] = c.recv.Load()
	}
}

// received returns how many messages the server has sent so far.
func (c *conn) received() uint64 { return c.recv.Load() }

// notify sends a notification.
func (c *conn) notify(ctx context.Context, method string, params any) error {
	if err := c.rpc.Notify(ctx, method, params); err != nil {
		return c.sendErr(method, err)
	}
	return nil
}

// call sends a request and waits for its response, decoding the result
// into result (when not nil). A ContentModified answer is retried up to 3
// times with exponential backoff from retryBase. When ctx ends first the
// server is told with $/cancelRequest.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	delay := c.retryBase
	for attempt := 0; ; attempt++ {
		err := c.callOnce(ctx, method, params, result)
		if err == nil || attempt >= maxContentModifiedRetries || !errors.Is(err, ErrContentModified) {
			return err
		}
		c.log.Debug("content modified; retrying", "method", method, "attempt", attempt+1, "delay", delay)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w (after content modified)", method, ctx.Err())
		case <-t.C:
		}
		delay *= 2
	}
}

func (c *conn) callOnce(ctx context.Context, method string, params, result any) error {
	wait, err := c.start(ctx, method, params)
	if err != nil {
		return err
	}
	return wait(ctx, result)
}

// start sends a request and returns a function that waits for its
// response and decodes the result into result (when not nil). When the
// wait's ctx ends first the server is told with $/cancelRequest. Sending
// and waiting are apart so that a caller can send under a lock (pinning
// the document version the request is about) and wait without it.
func (c *conn) start(ctx context.Context, method string, params any) (func(ctx context.Context, result any) error, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	id := jsonrpc2.ID{Num: c.nextID.Add(1)}
	c.resMu.Lock()
	c.waiting[id.Num] = true
	c.resMu.Unlock()
	forget := func() (json.RawMessage, uint64) {
		c.resMu.Lock()
		defer c.resMu.Unlock()
		r, before := c.results[id.Num], c.before[id.Num]
		delete(c.waiting, id.Num)
		delete(c.results, id.Num)
		delete(c.before, id.Num)
		return r, before
	}
	w, err := c.rpc.DispatchCall(ctx, method, params, jsonrpc2.PickID(id))
	if err != nil {
		forget()
		return nil, c.sendErr(method, err)
	}
	return func(ctx context.Context, result any) error {
		var raw json.RawMessage
		err := w.Wait(ctx, &raw)
		stashed, before := forget()
		if stashed != nil && err == nil {
			raw = stashed
		}
		if ctx.Err() == nil {
			// What the server sent before its answer counts first.
			c.awaitApplied(ctx, before)
		}
		switch {
		case err == nil:
		case ctx.Err() != nil:
			// Tell the server; its answer (usually RequestCancelled) is
			// dropped by jsonrpc2 when it comes.
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = c.rpc.Notify(cctx, "$/cancelRequest", map[string]any{"id": id.Num})
			cancel()
			return fmt.Errorf("%s: %w", method, ctx.Err())
		case errors.Is(err, jsonrpc2.ErrClosed):
			return fmt.Errorf("%s: %w", method, c.closedErr())
		default:
			var je *jsonrpc2.Error
			if errors.As(err, &je) {
				re := &RPCError{Code: je.Code, Message: je.Message}
				if je.Data != nil {
					re.Data = *je.Data
				}
				return fmt.Errorf("%s: %w", method, re)
			}
			return fmt.Errorf("%s: %w", method, err)
		}
		if rm, ok := result.(*json.RawMessage); ok {
			*rm = raw // already checked: by the codec, or by jsonrpc2
			return nil
		}
		if result != nil && len(raw) > 0 {
			if err := json.Unmarshal(raw, result); err != nil {
				return fmt.Errorf("%s: decoding result: %w", method, err)
			}
		}
		return nil
	}, nil
}

func (c *conn) sendErr(method string, err error) error {
	if errors.Is(err, jsonrpc2.ErrClosed) {
		return fmt.Errorf("sending %s: %w", method, c.closedErr())
	}
	return fmt.Errorf("sending %s: %w", method, err)
}

// closedErr is ErrConnClosed, with the read error that ended the
// connection when there was one.
func (c *conn) closedErr() error {
	if err := c.stream.readErr(); err != nil && err != io.EOF {
		return fmt.Errorf("%w: %w", ErrConnClosed, err)
	}
	return ErrConnClosed
}

// disconnected is closed when the connection ends.
func (c *conn) disconnected() <-chan struct{} { return c.rpc.DisconnectNotify() }

// close ends the connection and waits for the dispatch goroutine. It is
// safe to call more than once.
func (c *conn) close() {
	_ = c.rpc.Close()
	c.cancel()
	<-c.done
}
