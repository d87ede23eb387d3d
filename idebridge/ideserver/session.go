package ideserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

// ClientInfo describes one connected client.
type ClientInfo struct {
	// ID is unique within the server ("c1", "c2", ...).
	ID string
	// Transport is "ws", "sse" or TransportStdio ("stdio", a session
	// served by ServeStream).
	Transport string
	// RemoteAddr is the client's address ("stdio" for ServeStream).
	RemoteAddr string
	// Name and Version come from initialize's clientInfo.
	Name, Version string
	// ProtocolVersion is the version the client asked for in initialize.
	ProtocolVersion string
	// PID is the agent's process id from ide_connected (0 until then).
	PID int
	// ConnectedAt is when the connection was accepted.
	ConnectedAt time.Time
}

// EventKind says what happened to a client.
type EventKind int

// Client lifecycle events, in the order they happen to one client.
const (
	// EventConnected: the transport is up (WebSocket upgraded, SSE stream
	// open); the client has not spoken yet.
	EventConnected EventKind = iota + 1
	// EventInitialized: initialize was answered; the client now receives
	// Notify broadcasts.
	EventInitialized
	// EventIDEConnected: ide_connected arrived; ClientInfo.PID is set.
	EventIDEConnected
	// EventDisconnected: the connection ended; Event.Err says why.
	EventDisconnected
)

func (k EventKind) String() string {
	switch k {
	case EventConnected:
		return "connected"
	case EventInitialized:
		return "initialized"
	case EventIDEConnected:
		return "ide_connected"
	case EventDisconnected:
		return "disconnected"
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one client lifecycle event, delivered to Options.OnEvent.
type Event struct {
	Kind   EventKind
	Client ClientInfo
	// Err is why the client disconnected (EventDisconnected only; nil for
	// a clean close).
	Err error
}

// maxInflight bounds concurrent tool calls per client; more are refused
// with an error rather than blocking the read loop (which would stall
// keep-alive and cancellation).
const maxInflight = 256

// WebSocket close codes used by the transports.
const (
	closeNormal      = 1000
	closeGoingAway   = 1001
	closeUnsupported = 1003
)

// conn is one client's transport. Implementations serialise writes.
type conn interface {
	// writeMessage sends one whole JSON-RPC message.
	writeMessage(data []byte) error
	// close ends the connection (idempotent) and unblocks its reader.
	close(code int, reason string)
}

type inflightCall struct {
	cancel context.CancelCauseFunc
}

// session is one client: it decodes messages and dispatches them.
type session struct {
	srv    *Server
	conn   conn
	ctx    context.Context
	cancel context.CancelCauseFunc
	seq    int

	mu       sync.Mutex
	info     ClientInfo
	inflight map[string]*inflightCall

	initMu      sync.Mutex
	initialized bool

	// calls counts the tool calls handed out by callTool and not yet
	// finished, for a stream session to await before it returns.
	calls sync.WaitGroup
}

func (ss *session) clientInfo() ClientInfo {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.info
}

func (ss *session) isInitialized() bool {
	ss.initMu.Lock()
	defer ss.initMu.Unlock()
	return ss.initialized
}

// send writes one message; a failed write drops the client.
func (ss *session) send(data []byte) {
	if err := ss.conn.writeMessage(data); err != nil {
		ss.srv.log.Debug("write failed; dropping client", "client", ss.info.ID, "err", err)
		ss.conn.close(closeGoingAway, "write failed")
	}
}

func (ss *session) reply(id json.RawMessage, result any) {
	b, err := encodeResult(id, result)
	if err != nil {
		ss.replyError(id, &mcp.Error{Code: mcp.CodeInternalError, Message: "Internal error", Data: mustJSON(err.Error())})
		return
	}
	ss.send(b)
}

func (ss *session) replyError(id json.RawMessage, e *mcp.Error) {
	ss.send(encodeError(id, e))
}

// handle processes one message received from the client. It never blocks on
// a tool (Inline tools aside): a tools/call comes back as a function that
// runs the tool and answers, for the caller to run on a goroutine that is
// not needed for reading.
func (ss *session) handle(data []byte) (toolCall func()) {
	msg, err := jsonrpc.Decode(data)
	if err != nil {
		e := &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Invalid Request", Data: mustJSON(err.Error())}
		if !json.Valid(data) {
			e.Code, e.Message = mcp.CodeParseError, "Parse error"
		}
		ss.srv.log.Warn("invalid message from client", "client", ss.info.ID, "err", err)
		ss.replyError(nil, e)
		return nil
	}
	if log := ss.srv.log; log.Enabled(ss.ctx, slog.LevelDebug) {
		ss.mu.Lock()
		name := ss.info.Name
		ss.mu.Unlock()
		attrs := []any{"method", msg.Method, "client", name, "session", ss.info.ID}
		if len(msg.ID) > 0 {
			attrs = append(attrs, "id", json.RawMessage(msg.ID))
		}
		if msg.Method == mcp.MethodCallTool {
			// Decoded twice, but only when someone reads debug records.
			var p struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(msg.Params, &p) == nil {
				attrs = append(attrs, "tool", p.Name)
			}
		}
		log.Debug("received", attrs...)
	}
	switch {
	case msg.IsRequest():
		if msg.Method == mcp.MethodCallTool {
			return ss.callTool(msg)
		}
		ss.request(msg)
	case msg.IsNotification():
		ss.notification(msg)
	default:
		// A response: the server sends no requests, so there is nothing
		// waiting for it.
	}
	return nil
}

func (ss *session) request(msg *jsonrpc.Message) {
	switch msg.Method {
	case mcp.MethodInitialize:
		ss.initialize(msg)
	case mcp.MethodPing:
		if ss.srv.cfg.RefusePing {
			ss.replyError(msg.ID, methodNotFound(mcp.MethodPing))
			return
		}
		ss.reply(msg.ID, struct{}{})
	case mcp.MethodListTools:
		var p mcp.ListToolsParams
		if !ss.params(msg, &p) {
			return
		}
		res, err := ss.srv.tools.page(p.Cursor, ss.srv.cfg.ToolsPageSize)
		if err != nil {
			ss.replyError(msg.ID, toRPCError(err))
			return
		}
		ss.reply(msg.ID, res)
	default:
		ss.replyError(msg.ID, methodNotFound(msg.Method))
	}
}

func methodNotFound(method string) *mcp.Error {
	return &mcp.Error{Code: mcp.CodeMethodNotFound, Message: "Method not found", Data: mustJSON("Unknown method: " + method)}
}

// params decodes msg's params into v (absent params leave v zero), or
// answers -32602 and returns false.
func (ss *session) params(msg *jsonrpc.Message, v any) bool {
	if len(msg.Params) == 0 || string(msg.Params) == "null" {
		return true
	}
	if err := json.Unmarshal(msg.Params, v); err != nil {
		ss.replyError(msg.ID, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "Invalid params", Data: mustJSON(err.Error())})
		return false
	}
	return true
}

var serverCapabilities = json.RawMessage(`{"logging":{},"tools":{"listChanged":true}}`)

func (ss *session) initialize(msg *jsonrpc.Message) {
	var p mcp.InitializeParams
	if !ss.params(msg, &p) {
		return
	}
	ss.mu.Lock()
	ss.info.Name, ss.info.Version = p.ClientInfo.Name, p.ClientInfo.Version
	ss.info.ProtocolVersion = p.ProtocolVersion
	ss.mu.Unlock()
	// Unless told to negotiate, answer our own version whatever the
	// client asked for: the client decides whether it speaks it (deployed
	// IDEs all answer 2024-11-05).
	version := ss.srv.cfg.ProtocolVersion
	if ss.srv.cfg.NegotiateProtocolVersion && mcp.IsSupportedProtocolVersion(p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	res := mcp.InitializeResult{
		ProtocolVersion: version,
		Capabilities:    serverCapabilities,
		ServerInfo:      mcp.Implementation{Name: ss.srv.cfg.ServerName, Version: ss.srv.cfg.ServerVersion},
		Instructions:    ss.srv.cfg.Instructions,
	}
	// The answer goes out before any broadcast, and a client that has read
	// it gets every broadcast made after: Notify waits on initMu.
	ss.initMu.Lock()
	ss.reply(msg.ID, &res)
	ss.initialized = true
	ss.initMu.Unlock()
	ss.srv.emit(EventInitialized, ss, nil)
}

func (ss *session) notification(msg *jsonrpc.Message) {
	switch msg.Method {
	case mcp.MethodIDEConnected:
		var p struct {
			PID int `json:"pid"`
		}
		if len(msg.Params) > 0 && json.Unmarshal(msg.Params, &p) != nil {
			ss.srv.log.Warn("ide_connected with invalid params", "client", ss.info.ID)
			return
		}
		ss.mu.Lock()
		ss.info.PID = p.PID
		ss.mu.Unlock()
		ss.srv.emit(EventIDEConnected, ss, nil)
	case mcp.MethodCancelled:
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if len(msg.Params) == 0 || json.Unmarshal(msg.Params, &p) != nil || len(p.RequestID) == 0 {
			return
		}
		ss.mu.Lock()
		call := ss.inflight[string(p.RequestID)]
		ss.mu.Unlock()
		if call != nil {
			call.cancel(ErrRequestCancelled)
		}
	default:
		// notifications/initialized and anything unknown: nothing to do.
	}
}

// callTool validates a tools/call and returns the function that runs it,
// or nil when it was answered already (an error, or an Inline tool).
func (ss *session) callTool(msg *jsonrpc.Message) func() {
	var p mcp.CallToolParams
	if !ss.params(msg, &p) {
		return nil
	}
	t, ok := ss.srv.tools.get(p.Name)
	if !ok {
		// The Neovim plugin's answer, message and all.
		ss.replyError(msg.ID, &mcp.Error{Code: mcp.CodeMethodNotFound, Message: "Tool not found: " + p.Name})
		return nil
	}
	args := p.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if t.Inline {
		if !ss.srv.beginHandler() {
			ss.replyError(msg.ID, &mcp.Error{Code: mcp.CodeServerError, Message: "server shutting down"})
			return nil
		}
		// Nothing can cancel it but the session ending: it holds up the
		// reader that would see notifications/cancelled.
		ss.runTool(ss.ctx, msg.ID, t, &ToolCall{Name: p.Name, Arguments: args, Client: ss.clientInfo()}, 0, nil)
		return nil
	}
	key := string(msg.ID)
	ctx, cancel := context.WithCancelCause(ss.ctx)
	call := &inflightCall{cancel: cancel}
	ss.mu.Lock()
	_, dup := ss.inflight[key]
	busy := len(ss.inflight) >= maxInflight
	if !dup && !busy {
		ss.inflight[key] = call
	}
	ss.mu.Unlock()
	switch {
	case dup:
		// Ids are unique among requests in flight: running this one too
		// would make the first uncancellable and uncounted.
		cancel(nil)
		ss.replyError(msg.ID, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Invalid Request",
			Data: mustJSON("request id " + clip(key, maxQuoted) + " is already in flight")})
		return nil
	case busy:
		cancel(nil)
		ss.replyError(msg.ID, &mcp.Error{Code: mcp.CodeServerError, Message: fmt.Sprintf("too many concurrent tool calls (limit %d)", maxInflight)})
		return nil
	}
	// From here on shutdown waits for this call, so the goroutine that
	// runs it (and a reader taking over) may be started.
	if !ss.srv.beginHandler() {
		ss.forget(key, call)
		ss.replyError(msg.ID, &mcp.Error{Code: mcp.CodeServerError, Message: "server shutting down"})
		return nil
	}
	tc := &ToolCall{Name: p.Name, Arguments: args, Client: ss.clientInfo()}
	timeout := t.Timeout
	if timeout == 0 {
		timeout = ss.srv.cfg.CallTimeout
	}
	ss.calls.Add(1)
	return func() {
		defer ss.calls.Done()
		defer ss.forget(key, call)
		ss.runTool(ctx, msg.ID, t, tc, timeout, cancel)
	}
}

func (ss *session) forget(key string, call *inflightCall) {
	ss.mu.Lock()
	if ss.inflight[key] == call {
		delete(ss.inflight, key)
	}
	ss.mu.Unlock()
	call.cancel(nil)
}

// callTimeoutError is the context cause of a call that ran out of time.
type callTimeoutError struct {
	tool    string
	timeout time.Duration
}

func (e *callTimeoutError) Error() string {
	return fmt.Sprintf("tool %s did not finish within %v", e.tool, e.timeout)
}

// Unwrap makes the cause match context.DeadlineExceeded.
func (e *callTimeoutError) Unwrap() error { return context.DeadlineExceeded }

// timeoutError is the answer to a call whose context ended because it ran
// out of time, or nil.
func timeoutError(ctx context.Context) *mcp.Error {
	var te *callTimeoutError
	if !errors.As(context.Cause(ctx), &te) {
		return nil
	}
	return &mcp.Error{Code: mcp.CodeServerError, Message: "Request timed out", Data: mustJSON(te.Error())}
}

// runTool runs a handler accounted for by beginHandler and sends its
// answer. With a positive timeout, cancel (ctx's) ends the call when it
// runs out and the call is answered with an error then, whether the
// handler has returned or not; the handler's late answer is dropped.
func (ss *session) runTool(ctx context.Context, id json.RawMessage, t *Tool, tc *ToolCall, timeout time.Duration, cancel context.CancelCauseFunc) {
	defer ss.srv.handlers.Done()
	var answered atomic.Bool // the first answer wins
	if timeout > 0 {
		timer := time.AfterFunc(timeout, func() {
			cancel(&callTimeoutError{tool: tc.Name, timeout: timeout})
			if e := timeoutError(ctx); e != nil && answered.CompareAndSwap(false, true) {
				ss.replyError(id, e)
			}
		})
		defer timer.Stop()
	}
	res, err := invokeTool(ctx, t.Handler, tc)
	if cause := context.Cause(ctx); errors.Is(cause, ErrRequestCancelled) || errors.Is(cause, ErrClientGone) {
		return // nobody is waiting for this answer
	}
	if !answered.CompareAndSwap(false, true) {
		return // answered when it timed out
	}
	if e := timeoutError(ctx); e != nil && err != nil {
		err = e // the same answer, whichever saw the deadline first
	}
	if err != nil {
		var pe *panicError
		if errors.As(err, &pe) {
			ss.srv.log.Error("tool handler panicked", "tool", tc.Name, "panic", pe.value, "stack", string(pe.stack))
		}
		ss.replyError(id, toRPCError(err))
		return
	}
	if res == nil {
		res = &mcp.ToolResult{}
	}
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	ss.reply(id, res)
}

type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("tool handler panicked: %v", p.value) }

func invokeTool(ctx context.Context, h ToolHandler, tc *ToolCall) (res *mcp.ToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, &panicError{value: v, stack: debug.Stack()}
		}
	}()
	return h(ctx, tc)
}

// toRPCError turns a handler error into the JSON-RPC error sent; see
// ToolHandler.
func toRPCError(err error) *mcp.Error {
	var e *mcp.Error
	if errors.As(err, &e) {
		return e
	}
	var pe *panicError
	if errors.As(err, &pe) {
		return &mcp.Error{Code: mcp.CodeInternalError, Message: "Internal error", Data: mustJSON(pe.Error())}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &mcp.Error{Code: mcp.CodeRequestCancelled, Message: err.Error()}
	}
	return &mcp.Error{Code: mcp.CodeServerError, Message: err.Error()}
}
