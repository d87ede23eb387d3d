package idebridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idebridge/idebridge/internal/jsonrpc"
)

// mux is the JSON-RPC multiplexer over one transport: request ids, pending
// calls, notifications, and requests from the IDE. One goroutine reads;
// any goroutine may call. Each incoming message is decoded once; results
// stay raw JSON for the caller.
type mux struct {
	t       transport
	log     *slog.Logger
	maxSize int64
	act     *activity

	nextID atomic.Int64

	mu      sync.Mutex
	pending map[int64]*pendingCall
	err     error // why the connection ended; nil while it is up
	done    chan struct{}

	// onNotification is called by the reader for every notification;
	// it must not block.
	onNotification func(method string, params json.RawMessage)
	// onEnd is called once, when nothing reads or dispatches any more.
	onEnd func()

	bg       sync.WaitGroup // goroutines other than the reader
	readDone chan struct{}  // closed once nothing reads or dispatches any more

	// The reader role, with an interruptible transport (WebSocket): the
	// goroutine waiting for a reply reads the connection itself, so that on
	// the common path (one call at a time) the reply reaches its caller
	// without a hand-off between goroutines, which on a loopback round trip
	// costs as much as the rest of the client together. Whoever holds the
	// token in readTok reads and dispatches every message: a caller until
	// its reply is in, or the background reader while no caller waits. A
	// caller that finds the background reader blocked in recv interrupts it
	// and takes over; a caller done reading leaves the role free, and the
	// background reader takes it back only after readerIdleHandoff, so that
	// back-to-back calls never wake it.
	shared    bool
	readTok   chan struct{} // holds the token while nobody reads
	bgWake    chan struct{}
	bgReading atomic.Bool  // the background reader holds the token
	wanting   atomic.Int32 // callers waiting for a reply
	idleTimer *time.Timer
}

// readerIdleHandoff is how long the reader role stays free after a call
// before the background reader takes it again; notifications arriving in
// between wait at most this long.
const readerIdleHandoff = 2 * time.Millisecond

type pendingCall struct {
	ch chan callResult // capacity 1: the reader never blocks on it
}

type callResult struct {
	msg *jsonrpc.Message
	err error
}

var pendingPool = sync.Pool{New: func() any { return &pendingCall{ch: make(chan callResult, 1)} }}

func newMux(t transport, log *slog.Logger, maxSize int64, act *activity) *mux {
	m := &mux{
		t:        t,
		log:      log,
		maxSize:  maxSize,
		act:      act,
		pending:  make(map[int64]*pendingCall),
		done:     make(chan struct{}),
		readDone: make(chan struct{}),
	}
	m.nextID.Store(-1) // the first request (initialize) gets id 0, as Claude Code sends
	return m
}

// start runs the reader and, when interval > 0, the keep-alive.
func (m *mux) start(pingInterval time.Duration) {
	if m.t.interruptible() {
		m.shared = true
		m.readTok = make(chan struct{}, 1)
		m.readTok <- struct{}{}
		m.bgWake = make(chan struct{}, 1)
		m.idleTimer = time.AfterFunc(time.Hour, m.wakeBackground)
		m.idleTimer.Stop()
		go m.backgroundReader()
		m.wakeBackground()
	} else {
		go m.readLoop()
	}
	if pingInterval > 0 {
		m.bg.Add(1)
		go m.keepAlive(pingInterval)
	}
}

// paramsFunc appends a request's params JSON to the buffer.
type paramsFunc func(m *msgBuf) error

// call sends a request and waits for its response, which it returns whole
// (the caller looks at Result or Error). The wait ends with ctx, after
// timeout (when positive), or when the connection ends. A call abandoned by
// ctx or timeout sends notifications/cancelled in the background and its
// late reply is dropped.
func (m *mux) call(ctx context.Context, method string, params paramsFunc, timeout time.Duration) (*jsonrpc.Message, error) {
	if err := m.failure(); err != nil {
		return nil, err
	}
	id := m.nextID.Add(1)
	b := getMsgBuf()
	b.b = jsonrpc.AppendRequestHead(b.b, id, method)
	if params != nil {
		b.b = append(b.b, `,"params":`...)
		if err := params(b); err != nil {
			putMsgBuf(b)
			return nil, fmt.Errorf("encoding %s params: %w", method, err)
		}
	}
	b.b = append(b.b, '}')
	if size := int64(len(b.payload())); size > m.maxSize {
		putMsgBuf(b)
		return nil, &MessageTooLargeError{Size: size, Limit: m.maxSize}
	}

	pc := pendingPool.Get().(*pendingCall)
	m.mu.Lock()
	if m.err != nil {
		err := m.err
		m.mu.Unlock()
		pendingPool.Put(pc)
		putMsgBuf(b)
		return nil, err
	}
	m.pending[id] = pc
	m.mu.Unlock()

	finish, err := m.t.send(ctx, b)
	if err != nil {
		return m.sendFailed(ctx, id, pc, method, err)
	}

	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
		if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
			deadline, timeout = time.Time{}, 0 // ctx ends first
		}
	}
	if finish != nil {
		// The message is out but its POST not answered yet. The reply
		// usually comes first (or with it): wait a little for it, and
		// only then look at the POST's answer, which by then has
		// arrived, so that the common call waits once, not twice.
		phase := time.Now().Add(postAnswerGrace)
		if !deadline.IsZero() && deadline.Before(phase) {
			phase = deadline
		}
		r, end := m.wait(ctx, pc, phase)
		if end == gotReply {
			if err := finish(ctx, time.Now().Add(wsWriteTimeout)); err != nil {
				m.log.Debug("a POST answered with an error after its reply came", "method", method, "err", err)
			}
			pendingPool.Put(pc)
			return r.msg, r.err
		}
		if end == ctxEnded {
			m.goBackground(func() { _ = finish(context.Background(), time.Now().Add(wsWriteTimeout)) })
			return m.giveUp(ctx, id, pc, timeout)
		}
		if err := finish(ctx, deadline); err != nil {
			if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
				return m.giveUp(ctx, id, pc, timeout)
			}
			return m.sendFailed(ctx, id, pc, method, err)
		}
	}
	r, end := m.wait(ctx, pc, deadline)
	if end == gotReply {
		pendingPool.Put(pc)
		return r.msg, r.err
	}
	return m.giveUp(ctx, id, pc, timeout)
}

// postAnswerGrace is how long a call over SSE waits for its reply before
// reading its POST's answer (see call).
const postAnswerGrace = 10 * time.Millisecond

// sendFailed ends a call whose message could not be sent (or whose POST
// was refused).
func (m *mux) sendFailed(ctx context.Context, id int64, pc *pendingCall, method string, err error) (*jsonrpc.Message, error) {
	if errors.Is(err, ErrConnectionLost) {
		m.fail(err)
	}
	if r, ok := m.abandon(id, pc); ok {
		return r.msg, r.err // a reply, or the connection's failure, came first
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if ferr := m.failure(); ferr != nil {
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

// wait waits for pc's result until ctx ends or until (when not zero).
func (m *mux) wait(ctx context.Context, pc *pendingCall, until time.Time) (callResult, waitEnd) {
	if m.shared {
		return m.waitShared(ctx, pc, until)
	}
	var timeoutC <-chan time.Time
	if !until.IsZero() {
		timer := time.NewTimer(time.Until(until))
		defer timer.Stop()
		timeoutC = timer.C
	}
	select {
	case r := <-pc.ch:
		return r, gotReply
	case <-ctx.Done():
		return callResult{}, ctxEnded
	case <-timeoutC:
		return callResult{}, deadlinePassed
	}
}

// waitShared waits for a reply, reading the connection itself whenever the
// reader role is free (see the mux type).
func (m *mux) waitShared(ctx context.Context, pc *pendingCall, until time.Time) (callResult, waitEnd) {
	m.wanting.Add(1)
	asReader := func() (callResult, waitEnd) {
		m.wanting.Add(-1)
		m.idleTimer.Stop()
		r, end := m.readOwnReply(ctx, pc, until)
		m.releaseReader()
		return r, end
	}
	select {
	case <-m.readTok:
		return asReader()
	default:
	}
	if m.bgReading.Load() {
		m.t.interrupt() // it sees wanting and lets go
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
	case <-m.readTok:
		return asReader()
	case <-ctx.Done():
		end = ctxEnded
	case <-timeoutC:
		end = deadlinePassed
	}
	// Leaving without having read: make sure someone reads again.
	m.wanting.Add(-1)
	m.idleTimer.Reset(readerIdleHandoff)
	return r, end
}

// readOwnReply reads and dispatches messages until pc's result is in, ctx
// ends, or until passes. The caller holds the reader role.
func (m *mux) readOwnReply(ctx context.Context, pc *pendingCall, until time.Time) (callResult, waitEnd) {
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, m.t.interrupt)
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
		m.t.setReadDeadline(until)
		// After setting the deadline: an interrupt from ctx's AfterFunc
		// that came before it would have been overwritten.
		if ctx.Err() != nil {
			return callResult{}, ctxEnded
		}
		data, err := m.t.recv()
		if err != nil {
			if !errors.Is(err, errInterrupted) {
				m.readFailed(err) // delivers the failure to pc too
			}
			continue
		}
		m.dispatch(data)
	}
}

// releaseReader gives the reader role back; a waiting caller may take it,
// else the background reader will after readerIdleHandoff.
func (m *mux) releaseReader() {
	m.readTok <- struct{}{}
	m.idleTimer.Reset(readerIdleHandoff)
}

func (m *mux) wakeBackground() {
	select {
	case m.bgWake <- struct{}{}:
	default:
	}
}

// backgroundReader reads whenever no caller does (shared mode).
func (m *mux) backgroundReader() {
	defer close(m.readDone)
	defer func() {
		// Take the role for good, so that nobody dispatches any more.
		<-m.readTok
		if m.onEnd != nil {
			m.onEnd()
		}
	}()
	for {
		select {
		case <-m.bgWake:
		case <-m.done:
			return
		}
		select {
		case <-m.readTok:
		default:
			continue // a caller reads; it arms idleTimer when it lets go
		}
		if !m.readInBackground() {
			return
		}
	}
}

// readInBackground reads until a caller wants the role (true) or the
// connection ends (false); it gives the role back either way.
func (m *mux) readInBackground() bool {
	m.bgReading.Store(true)
	defer func() {
		m.bgReading.Store(false)
		m.readTok <- struct{}{}
	}()
	for {
		m.t.setReadDeadline(time.Time{})
		// After clearing the deadline, so that a caller's interrupt is
		// either seen here or cuts the recv below.
		if m.wanting.Load() > 0 {
			return true
		}
		data, err := m.t.recv()
		if err != nil {
			if errors.Is(err, errInterrupted) {
				continue
			}
			m.readFailed(err)
			return false
		}
		m.dispatch(data)
	}
}

// giveUp ends a call whose ctx ended or whose deadline passed.
func (m *mux) giveUp(ctx context.Context, id int64, pc *pendingCall, timeout time.Duration) (*jsonrpc.Message, error) {
	if r, ok := m.abandon(id, pc); ok {
		return r.msg, r.err
	}
	if err := ctx.Err(); err != nil {
		m.cancelInBackground(id, context.Cause(ctx).Error())
		return nil, err
	}
	m.cancelInBackground(id, "timed out")
	return nil, fmt.Errorf("no reply within %v: %w", timeout, context.DeadlineExceeded)
}

// abandon forgets a pending call. When the reader (or a failure) had
// already taken it, its result is on the way: abandon waits for it and
// returns it with ok true, so that a reply that did arrive is not lost.
func (m *mux) abandon(id int64, pc *pendingCall) (callResult, bool) {
	m.mu.Lock()
	_, waiting := m.pending[id]
	if waiting {
		delete(m.pending, id)
	}
	m.mu.Unlock()
	if waiting {
		pendingPool.Put(pc)
		return callResult{}, false
	}
	r := <-pc.ch
	pendingPool.Put(pc)
	return r, true
}

// cancelInBackground tells the IDE a request is no longer wanted, without
// making the caller wait for the write.
func (m *mux) cancelInBackground(id int64, reason string) {
	m.goBackground(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := m.notify(ctx, "notifications/cancelled", func(b *msgBuf) error {
			b.b = append(b.b, `{"requestId":`...)
			b.b = strconv.AppendInt(b.b, id, 10)
			b.b = append(b.b, `,"reason":`...)
			b.b = jsonrpc.AppendString(b.b, reason)
			b.b = append(b.b, '}')
			return nil
		})
		if err != nil {
			m.log.Debug("could not send notifications/cancelled", "id", id, "err", err)
		}
	})
}

// goBackground runs f on a goroutine that Close waits for; it does nothing
// once the connection has ended.
func (m *mux) goBackground(f func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return
	}
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		f()
	}()
}

// notify sends a notification.
func (m *mux) notify(ctx context.Context, method string, params paramsFunc) error {
	if err := m.failure(); err != nil {
		return err
	}
	b := getMsgBuf()
	b.b = jsonrpc.AppendNotificationHead(b.b, method)
	if params != nil {
		b.b = append(b.b, `,"params":`...)
		if err := params(b); err != nil {
			putMsgBuf(b)
			return fmt.Errorf("encoding %s params: %w", method, err)
		}
	}
	b.b = append(b.b, '}')
	if size := int64(len(b.payload())); size > m.maxSize {
		putMsgBuf(b)
		return &MessageTooLargeError{Size: size, Limit: m.maxSize}
	}
	finish, err := m.t.send(ctx, b)
	if err == nil && finish != nil {
		err = finish(ctx, time.Now().Add(wsWriteTimeout))
	}
	if err != nil {
		if errors.Is(err, ErrConnectionLost) {
			m.fail(err)
		}
		if ferr := m.failure(); ferr != nil {
			return ferr
		}
		return fmt.Errorf("sending %s: %w", method, err)
	}
	return nil
}

// failure returns why the connection ended, or nil while it is up.
func (m *mux) failure() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// fail ends the connection with err (once): every pending call fails with
// it at once, and the transport is closed.
func (m *mux) fail(err error) {
	m.mu.Lock()
	if m.err != nil {
		m.mu.Unlock()
		return
	}
	m.err = err
	pending := m.pending
	m.pending = nil
	close(m.done)
	m.mu.Unlock()
	for _, pc := range pending {
		pc.ch <- callResult{err: err}
	}
	if cerr := m.t.close(); cerr != nil {
		m.log.Debug("closing transport", "err", cerr)
	}
}

// close ends the connection as the client's own decision and waits for
// every goroutine of the mux.
func (m *mux) close() {
	m.fail(ErrClosed)
	<-m.readDone
	m.bg.Wait()
	if m.idleTimer != nil {
		m.idleTimer.Stop()
	}
}

// readLoop reads and dispatches every message, for transports that cannot
// be interrupted (SSE).
func (m *mux) readLoop() {
	defer close(m.readDone)
	defer func() {
		if m.onEnd != nil {
			m.onEnd()
		}
	}()
	for {
		data, err := m.t.recv()
		if err != nil {
			m.readFailed(err)
			return
		}
		m.dispatch(data)
	}
}

// readFailed ends the connection after a failed read.
func (m *mux) readFailed(err error) {
	if !errors.Is(err, ErrClosed) {
		err = connLost(err)
	}
	m.fail(err)
}

// dispatch decodes one message and routes it: a response to its call, a
// request to answer, a notification to the client.
func (m *mux) dispatch(data []byte) {
	msg, err := jsonrpc.Decode(data)
	if err != nil {
		m.log.Debug("dropping malformed message from the IDE", "err", err, "size", len(data))
		return
	}
	switch {
	case msg.IsResponse():
		m.deliver(msg)
	case msg.IsRequest():
		m.answer(msg)
	default:
		if m.onNotification != nil {
			m.onNotification(msg.Method, msg.Params)
		}
	}
}

// deliver hands a response to its pending call; a response to an unknown
// or abandoned id is dropped.
func (m *mux) deliver(msg *jsonrpc.Message) {
	id, ok := jsonrpc.ParseIntID(msg.ID)
	var pc *pendingCall
	m.mu.Lock()
	if ok {
		pc = m.pending[id]
		if pc != nil {
			delete(m.pending, id)
		}
	}
	m.mu.Unlock()
	if pc == nil {
		m.log.Debug("dropping response to an unknown or abandoned request", "id", string(msg.ID))
		return
	}
	pc.ch <- callResult{msg: msg}
}

// answer replies to a request from the IDE: ping with {}, anything else
// with -32601. The reply is written off the reader, so that a large
// outgoing message never stalls reading.
func (m *mux) answer(req *jsonrpc.Message) {
	m.log.Debug("request from the IDE", "method", req.Method, "id", string(req.ID))
	m.goBackground(func() {
		b := getMsgBuf()
		if req.Method == "ping" {
			b.b = jsonrpc.AppendResult(b.b, req.ID, []byte("{}"))
		} else {
			b.b = jsonrpc.AppendError(b.b, req.ID, jsonrpc.CodeMethodNotFound, "Method not found: "+req.Method)
		}
		ctx, cancel := context.WithTimeout(context.Background(), wsWriteTimeout)
		defer cancel()
		finish, err := m.t.send(ctx, b)
		if err == nil && finish != nil {
			err = finish(ctx, time.Now().Add(wsWriteTimeout))
		}
		if err != nil {
			m.log.Debug("could not answer the IDE's request", "method", req.Method, "err", err)
		}
	})
}

// keepAlive probes the connection every interval and declares it lost when
// nothing at all (not even a pong) arrived for two intervals: a half-open
// connection, whose pending calls would otherwise wait forever.
func (m *mux) keepAlive(interval time.Duration) {
	defer m.bg.Done()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var pinging atomic.Bool
	for {
		select {
		case <-m.done:
			return
		case <-tick.C:
		}
		if idle := m.act.idle(); idle > 2*interval {
			m.fail(connLost(fmt.Errorf("nothing received from the IDE for %v despite keep-alive pings (half-open connection)", idle.Round(time.Millisecond))))
			return
		}
		err := m.t.ping(interval)
		if errors.Is(err, errNoTransportPing) {
			// An MCP ping, off this loop (a POST to a frozen server can
			// block): any answer, even -32601, is a sign of life, and
			// the idle check above decides.
			err = nil
			if pinging.CompareAndSwap(false, true) {
				m.goBackground(func() {
					defer pinging.Store(false)
					ctx, cancel := context.WithTimeout(context.Background(), 2*interval)
					defer cancel()
					m.call(ctx, "ping", nil, 0)
				})
			}
		}
		if err != nil && m.failure() == nil {
			m.log.Debug("keep-alive ping failed", "err", err)
		}
	}
}
