package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

// Defaults used when the matching Options field is zero.
const (
	// DefaultMaxMessageSize bounds one message.
	DefaultMaxMessageSize = 64 << 20
	// DefaultPingInterval is the keep-alive interval.
	DefaultPingInterval = 15 * time.Second
)

// Options configure a Conn. A nil *Options, and every zero field, means the
// documented default.
type Options struct {
	// Logger receives debug records (dropped messages, requests from the
	// server, keep-alive failures). Nil is silent.
	Logger *slog.Logger
	// MaxMessageSize bounds one outgoing message, in bytes; a larger one
	// is refused with a *MessageTooLargeError before anything is sent.
	// (The transport bounds incoming ones.) Default DefaultMaxMessageSize;
	// negative is an error.
	MaxMessageSize int64
	// PingInterval is the keep-alive interval: every interval the Conn
	// probes the server (Transport.Ping, or an MCP ping when the transport
	// has no probe of its own), and when no sign of life (an answer, or
	// any data at all) comes within two intervals, the connection is
	// declared lost and every pending call fails with ErrConnectionLost.
	// Default DefaultPingInterval; negative turns keep-alive off.
	PingInterval time.Duration
	// OnNotification, if set, is called for every notification from the
	// server, on the goroutine that reads the connection: it must not
	// block (hand the notification off). params is the callee's.
	OnNotification func(method string, params json.RawMessage)
	// OnEnd, if set, is called once when the connection has ended and
	// OnNotification will not be called again.
	OnEnd func()
}

// Conn is the JSON-RPC multiplexer of an MCP client over one Transport:
// request ids, pending calls, notifications, requests from the server
// (ping is answered {}, anything else -32601) and keep-alive. Any goroutine
// may call; each incoming message is decoded once, and results stay raw
// JSON for the caller.
//
// The goroutine that waits for a reply reads the connection itself, so
// that on the common path (one call at a time) the reply reaches its caller
// without a hand-off between goroutines, which on a loopback round trip
// costs as much as the rest of the client together. Whoever holds the
// reader role reads and dispatches every message: a caller until its reply
// is in, or a background reader while no caller waits. A caller that finds
// the background reader blocked in Recv interrupts it and takes over; a
// caller done reading leaves the role free, and the background reader takes
// it back only after readerIdleHandoff, so that back-to-back calls never
// wake it.
type Conn struct {
	t       Transport
	log     *slog.Logger
	maxSize int64

	nextID atomic.Int64

	mu      sync.Mutex
	pending map[int64]*pendingCall
	err     error // why the connection ended; nil while it is up
	done    chan struct{}

	onNotification func(method string, params json.RawMessage)
	onEnd          func()

	bg       sync.WaitGroup // goroutines other than the background reader
	readDone chan struct{}  // closed once nothing reads or dispatches any more

	readTok   chan struct{} // holds the token while nobody reads
	bgWake    chan struct{}
	bgReading atomic.Bool  // the background reader holds the token
	wanting   atomic.Int32 // callers waiting for a reply
	idleTimer *time.Timer

	lastRecv  atomic.Int64 // when a message last arrived, since epoch
	closeOnce sync.Once
}

// readerIdleHandoff is how long the reader role stays free after a call
// before the background reader takes it again; notifications arriving in
// between wait at most this long.
const readerIdleHandoff = 2 * time.Millisecond

var epoch = time.Now()

type pendingCall struct {
	ch     chan callResult // capacity 1: the reader never blocks on it
	method string
}

type callResult struct {
	msg *jsonrpc.Message
	err error
}

var pendingPool = sync.Pool{New: func() any { return &pendingCall{ch: make(chan callResult, 1)} }}

// New starts a Conn over t: its reader and, unless turned off, its
// keep-alive. The Conn owns t from then on and closes it when the
// connection ends. It fails only for invalid options (and then t is left
// open).
func New(t Transport, o *Options) (*Conn, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	switch {
	case opts.MaxMessageSize < 0:
		return nil, fmt.Errorf("mcpclient: negative MaxMessageSize %d", opts.MaxMessageSize)
	case opts.MaxMessageSize == 0:
		opts.MaxMessageSize = DefaultMaxMessageSize
	}
	if opts.PingInterval == 0 {
		opts.PingInterval = DefaultPingInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Conn{
		t:              t,
		log:            opts.Logger,
		maxSize:        opts.MaxMessageSize,
		pending:        make(map[int64]*pendingCall),
		done:           make(chan struct{}),
		readDone:       make(chan struct{}),
		onNotification: opts.OnNotification,
		onEnd:          opts.OnEnd,
		readTok:        make(chan struct{}, 1),
		bgWake:         make(chan struct{}, 1),
	}
	c.nextID.Store(-1) // the first request (initialize) gets id 0, as Claude Code sends
	c.lastRecv.Store(int64(time.Since(epoch)))
	c.readTok <- struct{}{}
	c.idleTimer = time.AfterFunc(time.Hour, c.wakeBackground)
	c.idleTimer.Stop()
	go c.backgroundReader()
	c.wakeBackground()
	if opts.PingInterval > 0 {
		c.bg.Add(1)
		go c.keepAlive(opts.PingInterval)
	}
	return c, nil
}

// Call sends a request and waits for its result, returned as raw JSON. An
// error response comes back as an *mcp.Error. The wait ends with ctx, after
// timeout (when positive), or when the connection ends (ErrClosed, or an
// error matching ErrConnectionLost). A call abandoned by ctx or timeout
// sends notifications/cancelled in the background and its late reply is
// dropped. params nil sends none.
func (c *Conn) Call(ctx context.Context, method string, params Params, timeout time.Duration) (json.RawMessage, error) {
	msg, err := c.call(ctx, method, params, timeout)
	if err != nil {
		return nil, err
	}
	if msg.Error != nil {
		return nil, msg.Error
	}
	return msg.Result, nil
}

func (c *Conn) call(ctx context.Context, method string, params Params, timeout time.Duration) (*jsonrpc.Message, error) {
	if err := c.Err(); err != nil {
		return nil, err
	}
	id := c.nextID.Add(1)
	m := getMessage()
	m.id, m.req = id, true
	m.b = jsonrpc.AppendRequestHead(m.b, id, method)
	if err := c.finish(m, method, params); err != nil {
		return nil, err
	}

	pc := pendingPool.Get().(*pendingCall)
	pc.method = method
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		pendingPool.Put(pc)
		putMessage(m)
		return nil, err
	}
	c.pending[id] = pc
	c.mu.Unlock()

	err := c.t.Send(ctx, m)
	putMessage(m)
	if err != nil {
		return c.sendFailed(ctx, id, pc, method, err)
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
		if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
			deadline, timeout = time.Time{}, 0 // ctx ends first
		}
	}
	r, end := c.wait(ctx, pc, deadline)
	if end == gotReply {
		pendingPool.Put(pc)
		return r.msg, r.err
	}
	return c.giveUp(ctx, id, pc, timeout)
}

// finish appends params and the closing brace to m and checks its size; on
// error m is released.
func (c *Conn) finish(m *Message, method string, params Params) error {
	if params != nil {
		m.b = append(m.b, `,"params":`...)
		if err := params(m); err != nil {
			putMessage(m)
			return fmt.Errorf("encoding %s params: %w", method, err)
		}
	}
	m.b = append(m.b, '}')
	if size := int64(len(m.Bytes())); size > c.maxSize {
		putMessage(m)
		return &MessageTooLargeError{Size: size, Limit: c.maxSize}
	}
	return nil
}

// sendFailed ends a call whose message could not be sent.
func (c *Conn) sendFailed(ctx context.Context, id int64, pc *pendingCall, method string, err error) (*jsonrpc.Message, error) {
	if errors.Is(err, ErrConnectionLost) {
		c.fail(err)
	}
	if r, ok := c.abandon(id, pc); ok {
		return r.msg, r.err // a reply, or the connection's failure, came first
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if ferr := c.Err(); ferr != nil {
		return nil, ferr
	}
	return nil, fmt.Errorf("sending %s: %w", method, err)
}

// waitEnd says how a wait ended.
type waitEnd int

const (
	gotReply waitEnd = iota
	ctxEnded
	deadlinePassed
)

// wait waits for pc's result until ctx ends or until (when not zero),
// reading the connection itself whenever the reader role is free.
func (c *Conn) wait(ctx context.Context, pc *pendingCall, until time.Time) (callResult, waitEnd) {
	c.wanting.Add(1)
	asReader := func() (callResult, waitEnd) {
		c.wanting.Add(-1)
		c.idleTimer.Stop()
		r, end := c.readOwnReply(ctx, pc, until)
		c.releaseReader()
		return r, end
	}
	select {
	case <-c.readTok:
		return asReader()
	default:
	}
	if c.bgReading.Load() {
		c.t.Interrupt() // it sees wanting and lets go
	}
	var timeoutC <-chan time.Time
	if !until.IsZero() {
		timer := time.NewTimer(time.Until(until))
		defer timer.Stop()
		timeoutC = timer.C
	}
	var r callResult
	var end waitEnd
	select {
	case r = <-pc.ch:
		end = gotReply
	case <-c.readTok:
		return asReader()
	case <-ctx.Done():
		end = ctxEnded
	case <-timeoutC:
		end = deadlinePassed
	}
	// Leaving without having read: make sure someone reads again.
	c.wanting.Add(-1)
	c.idleTimer.Reset(readerIdleHandoff)
	return r, end
}

// readOwnReply reads and dispatches messages until pc's result is in, ctx
// ends, or until passes. The caller holds the reader role.
func (c *Conn) readOwnReply(ctx context.Context, pc *pendingCall, until time.Time) (callResult, waitEnd) {
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, c.t.Interrupt)
		defer stop()
	}
	for {
		select {
		case r := <-pc.ch:
			return r, gotReply
		default:
		}
		if !until.IsZero() && !time.Now().Before(until) {
			return callResult{}, deadlinePassed
		}
		if ctx.Err() != nil {
			return callResult{}, ctxEnded
		}
		c.read(until)
	}
}

// read reads and dispatches one message; it reports false when the
// connection has ended.
func (c *Conn) read(until time.Time) bool {
	data, err := c.t.Recv(until)
	if err == nil {
		c.lastRecv.Store(int64(time.Since(epoch)))
		c.dispatch(data)
		return true
	}
	var re *RefusedError
	switch {
	case errors.Is(err, ErrInterrupted):
		return true
	case errors.As(err, &re):
		c.refused(re)
		return true
	}
	c.readFailed(err) // delivers the failure to every pending call
	return false
}

// releaseReader gives the reader role back; a waiting caller may take it,
// else the background reader will after readerIdleHandoff.
func (c *Conn) releaseReader() {
	c.readTok <- struct{}{}
	c.idleTimer.Reset(readerIdleHandoff)
}

func (c *Conn) wakeBackground() {
	select {
	case c.bgWake <- struct{}{}:
	default:
	}
}

// backgroundReader reads whenever no caller does.
func (c *Conn) backgroundReader() {
	defer close(c.readDone)
	defer func() {
		// Take the role for good, so that nobody dispatches any more.
		<-c.readTok
		if c.onEnd != nil {
			c.onEnd()
		}
	}()
	for {
		select {
		case <-c.bgWake:
		case <-c.done:
			return
		}
		select {
		case <-c.readTok:
		default:
			continue // a caller reads; it arms idleTimer when it lets go
		}
		if !c.readInBackground() {
			return
		}
	}
}

// readInBackground reads until a caller wants the role (true) or the
// connection ends (false); it gives the role back either way.
func (c *Conn) readInBackground() bool {
	c.bgReading.Store(true)
	defer func() {
		c.bgReading.Store(false)
		c.readTok <- struct{}{}
	}()
	for {
		// A caller that starts wanting after this check interrupts the
		// Recv below (Interrupt works on the next Recv too).
		if c.wanting.Load() > 0 {
			return true
		}
		if !c.read(time.Time{}) {
			return false
		}
	}
}

// giveUp ends a call whose ctx ended or whose deadline passed.
func (c *Conn) giveUp(ctx context.Context, id int64, pc *pendingCall, timeout time.Duration) (*jsonrpc.Message, error) {
	if r, ok := c.abandon(id, pc); ok {
		return r.msg, r.err
	}
	if err := ctx.Err(); err != nil {
		c.cancelInBackground(id, context.Cause(ctx).Error())
		return nil, err
	}
	c.cancelInBackground(id, "timed out")
	return nil, fmt.Errorf("no reply within %v: %w", timeout, context.DeadlineExceeded)
}

// abandon forgets a pending call. When the reader (or a failure) had
// already taken it, its result is on the way: abandon waits for it and
// returns it with ok true, so that a reply that did arrive is not lost.
func (c *Conn) abandon(id int64, pc *pendingCall) (callResult, bool) {
	c.mu.Lock()
	_, waiting := c.pending[id]
	if waiting {
		delete(c.pending, id)
	}
	c.mu.Unlock()
	if waiting {
		pendingPool.Put(pc)
		return callResult{}, false
	}
	r := <-pc.ch
	pendingPool.Put(pc)
	return r, true
}

// cancelInBackground tells the server a request is no longer wanted,
// without making the caller wait for the write.
func (c *Conn) cancelInBackground(id int64, reason string) {
	c.goBackground(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := c.Notify(ctx, mcp.MethodCancelled, func(m *Message) error {
			m.AppendRaw(`{"requestId":`)
			m.AppendInt(id)
			m.AppendRaw(`,"reason":`)
			m.AppendString(reason)
			m.AppendRaw(`}`)
			return nil
		})
		if err != nil {
			c.log.Debug("could not send notifications/cancelled", "id", id, "err", err)
		}
	})
}

// goBackground runs f on a goroutine that Close waits for; it does nothing
// once the connection has ended.
func (c *Conn) goBackground(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		f()
	}()
}

// Notify sends a notification; params nil sends none. ctx bounds the wait
// to start sending; see Transport.Send.
func (c *Conn) Notify(ctx context.Context, method string, params Params) error {
	if err := c.Err(); err != nil {
		return err
	}
	m := getMessage()
	m.b = jsonrpc.AppendNotificationHead(m.b, method)
	if err := c.finish(m, method, params); err != nil {
		return err
	}
	err := c.t.Send(ctx, m)
	putMessage(m)
	if err != nil {
		if errors.Is(err, ErrConnectionLost) {
			c.fail(err)
		}
		if ferr := c.Err(); ferr != nil {
			return ferr
		}
		return fmt.Errorf("sending %s: %w", method, err)
	}
	return nil
}

// Err returns why the connection ended: nil while it is up, ErrClosed after
// Close, an error matching ErrConnectionLost otherwise.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Done returns a channel closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// fail ends the connection with err (once): every pending call fails with
// it at once, and the transport is closed.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	pending := c.pending
	c.pending = nil
	close(c.done)
	c.mu.Unlock()
	for _, pc := range pending {
		pc.ch <- callResult{err: err}
	}
	if cerr := c.t.Close(); cerr != nil {
		c.log.Debug("closing transport", "err", cerr)
	}
}

// Close ends the connection as the client's own decision: pending calls
// fail with ErrClosed, and every goroutine of the Conn and its transport
// has exited when Close returns. It is idempotent and returns nil.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.fail(ErrClosed)
		<-c.readDone
		c.bg.Wait()
		c.idleTimer.Stop()
	})
	return nil
}

// readFailed ends the connection after a failed read.
func (c *Conn) readFailed(err error) {
	if !errors.Is(err, ErrClosed) {
		err = connLost(err)
	}
	c.fail(err)
}

// refused fails the call whose request the server turned down.
func (c *Conn) refused(re *RefusedError) {
	c.mu.Lock()
	pc := c.pending[re.ID]
	if pc != nil {
		delete(c.pending, re.ID)
	}
	c.mu.Unlock()
	if pc == nil {
		c.log.Debug("the server refused a request nobody waits for", "id", re.ID, "err", re.Err)
		return
	}
	pc.ch <- callResult{err: fmt.Errorf("sending %s: %w", pc.method, re)}
}

// dispatch decodes one message and routes it: a response to its call, a
// request to answer, a notification to OnNotification.
func (c *Conn) dispatch(data []byte) {
	msg, err := jsonrpc.Decode(data)
	if err != nil {
		c.log.Debug("dropping a malformed message from the server", "err", err, "size", len(data))
		return
	}
	switch {
	case msg.IsResponse():
		c.deliver(msg)
	case msg.IsRequest():
		c.answer(msg)
	default:
		if c.onNotification != nil {
			c.onNotification(msg.Method, msg.Params)
		}
	}
}

// deliver hands a response to its pending call; a response to an unknown
// or abandoned id is dropped.
func (c *Conn) deliver(msg *jsonrpc.Message) {
	id, ok := jsonrpc.ParseIntID(msg.ID)
	var pc *pendingCall
	c.mu.Lock()
	if ok {
		pc = c.pending[id]
		if pc != nil {
			delete(c.pending, id)
		}
	}
	c.mu.Unlock()
	if pc == nil {
		c.log.Debug("dropping a response to an unknown or abandoned request", "id", string(msg.ID))
		return
	}
	pc.ch <- callResult{msg: msg}
}

// answerTimeout bounds sending an answer to a request from the server.
const answerTimeout = 30 * time.Second

// answer replies to a request from the server: ping with {}, anything else
// with -32601. The reply is written off the reader, so that a large
// outgoing message never stalls reading.
func (c *Conn) answer(req *jsonrpc.Message) {
	c.log.Debug("request from the server", "method", req.Method, "id", string(req.ID))
	c.goBackground(func() {
		m := getMessage()
		if req.Method == mcp.MethodPing {
			m.b = jsonrpc.AppendResult(m.b, req.ID, []byte("{}"))
		} else {
			m.b = jsonrpc.AppendError(m.b, req.ID, mcp.CodeMethodNotFound, "Method not found: "+req.Method)
		}
		ctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
		defer cancel()
		err := c.t.Send(ctx, m)
		putMessage(m)
		if err != nil {
			c.log.Debug("could not answer the server's request", "method", req.Method, "err", err)
		}
	})
}

// keepAlive probes the connection every interval and declares it lost when
// no sign of life comes within two intervals of a probe: a half-open
// connection, whose pending calls would otherwise wait forever.
func (c *Conn) keepAlive(interval time.Duration) {
	defer c.bg.Done()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-tick.C:
		}
		sent := time.Since(epoch)
		// Close unblocks the probe (Transport.Close ends Ping, and a
		// failed Conn ends Call).
		pctx, pcancel := context.WithTimeout(context.Background(), 2*interval)
		err := c.t.Ping(pctx)
		if errors.Is(err, ErrNoPing) {
			// Any answer, even -32601 as the Neovim plugin gives, is a
			// sign of life.
			_, err = c.Call(pctx, mcp.MethodPing, nil, 0)
			var rpcErr *mcp.Error
			if errors.As(err, &rpcErr) {
				err = nil
			}
		}
		pcancel()
		if err == nil || c.Err() != nil || time.Duration(c.lastRecv.Load()) > sent {
			continue
		}
		if pctx.Err() == nil {
			c.log.Debug("keep-alive probe failed", "err", err)
			continue
		}
		c.fail(connLost(fmt.Errorf("nothing received from the IDE for %v despite keep-alive pings (half-open connection)", 2*interval)))
		return
	}
}
