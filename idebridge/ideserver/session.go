package ideserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
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

// replyTo takes the messages about one request: its answer and the
// notifications about it (progress). A session's conn is one; an HTTP POST
// has its own.
type replyTo interface {
	writeMessage(data []byte) error
}

// finalWriter is a replyTo that must know which message is the answer, and
// its error code (0 for a result): an HTTP POST's, which ends with it and
// picks its status from it.
type finalWriter interface {
	writeFinal(data []byte, code int64) error
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
func (ss *session) send(data []byte) { ss.sendTo(ss.conn, data, 0, false) }

// sendTo writes one message about a request to out: the answer (final,
// with its error code) or a notification. A failed write to the session's
// own conn drops the client; out's owner sees its own failures.
func (ss *session) sendTo(out replyTo, data []byte, code int64, final bool) {
	var err error
	if fw, ok := out.(finalWriter); ok && final {
		err = fw.writeFinal(data, code)
	} else {
		err = out.writeMessage(data)
	}
	if err != nil && out == replyTo(ss.conn) {
		ss.srv.log.Debug("write failed; dropping client", "client", ss.info.ID, "err", err)
		ss.conn.close(closeGoingAway, "write failed")
	}
}

func (ss *session) reply(out replyTo, id json.RawMessage, result any) {
	b, err := encodeResult(id, result)
	if err != nil {
		ss.replyError(out, id, &mcp.Error{Code: mcp.CodeInternalError, Message: "Internal error", Data: mustJSON(err.Error())})
		return
	}
	ss.sendTo(out, b, 0, true)
}

// replyModern answers a modern request: result gets resultType and the
// server's _meta, and extra members (or "").
func (ss *session) replyModern(out replyTo, id json.RawMessage, result any, extra string) {
	res, err := json.Marshal(result)
	if err != nil {
		ss.replyError(out, id, &mcp.Error{Code: mcp.CodeInternalError, Message: "Internal error", Data: mustJSON(err.Error())})
		return
	}
	ss.replyRaw(out, id, ss.srv.modernResult(res, extra))
}

// replyRaw answers with a result already encoded.
func (ss *session) replyRaw(out replyTo, id json.RawMessage, res []byte) {
	ss.sendTo(out, wrapResult(id, res), 0, true)
}

func (ss *session) replyError(out replyTo, id json.RawMessage, e *mcp.Error) {
	ss.sendTo(out, encodeError(id, clipError(e)), e.Code, true)
}

// handle processes one message received from the client. It never blocks on
// a tool (Inline tools aside): a tools/call comes back as a function that
// runs the tool and answers, for the caller to run on a goroutine that is
// not needed for reading.
func (ss *session) handle(data []byte) (toolCall func()) {
	msg, e := ss.decode(data)
	if e != nil {
		ss.replyError(ss.conn, nil, e)
		return nil
	}
	return ss.handleMsg(msg, ss.conn)
}

// refuseOverlong answers, to out, a message from which lineScanner dropped
// strings too long for their place (over), data being what was kept of it:
// a tool call whose arguments only are at fault gets an isError result
// (the model can correct it), any other request a JSON-RPC error; a
// notification is dropped. The message is never handled.
func (ss *session) refuseOverlong(out replyTo, data []byte, over []overlong) {
	first := over[0]
	ss.srv.log.Warn("client message with a string too long for its place", "client", ss.info.ID, "what", first.String())
	msg, err := jsonrpc.Decode(data)
	if err != nil {
		ss.replyError(out, nil, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Invalid Request", Data: mustJSON(first.String())})
		return
	}
	id := msg.ID
	inArgs := true
	for _, o := range over {
		if o.where == "id" {
			id = nil // not the id sent: none is better
		}
		inArgs = inArgs && o.inArgs
	}
	if !msg.IsRequest() {
		if id == nil && len(msg.ID) > 0 {
			ss.replyError(out, nil, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Invalid Request", Data: mustJSON(first.String())})
		}
		return
	}
	p, err := scanParams(msg.Params)
	if inArgs && err == nil && msg.Method == mcp.MethodCallTool && len(p.name) > 0 && p.name[0] == '"' {
		full := jsonrpc.UnquoteValid(p.name)
		name := clip(full, maxQuoted)
		a := answer{ss: ss, out: out, id: id, modern: p.modern()}
		if _, ok := ss.srv.tools.get(full); !ok { // as callTool answers it
			if a.modern {
				a.fail(&mcp.Error{Code: mcp.CodeInvalidParams, Message: "Unknown tool: " + name})
			} else {
				a.fail(&mcp.Error{Code: mcp.CodeMethodNotFound, Message: "Tool not found: " + name})
			}
			return
		}
		a.result(mcp.ErrorResult(fmt.Sprintf("The arguments of %s do not fit its input schema: %s. Call %s again with the arguments its schema describes.", name, first, name)))
		return
	}
	code, message := int64(mcp.CodeInvalidParams), "Invalid params"
	if !strings.HasPrefix(first.where, "params") {
		code, message = mcp.CodeInvalidRequest, "Invalid Request"
	}
	ss.replyError(out, id, &mcp.Error{Code: code, Message: message, Data: mustJSON(first.String())})
}

// decode parses one message from the client, or returns the error to
// answer (id null).
func (ss *session) decode(data []byte) (*jsonrpc.Message, *mcp.Error) {
	msg, err := jsonrpc.Decode(data)
	if err != nil {
		e := &mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Invalid Request", Data: mustJSON(clip(err.Error(), maxQuoted))}
		if !jsonrpc.Valid(data) {
			e.Code, e.Message = mcp.CodeParseError, "Parse error"
		}
		ss.srv.log.Warn("invalid message from client", "client", ss.info.ID, "err", clip(err.Error(), maxQuoted))
		return nil, e
	}
	return msg, nil
}

// handleMsg processes one decoded message; the answer and the
// notifications about a request go to out.
func (ss *session) handleMsg(msg *jsonrpc.Message, out replyTo) (toolCall func()) {
	if log := ss.srv.log; log.Enabled(ss.ctx, slog.LevelDebug) {
		ss.mu.Lock()
		name := ss.info.Name
		ss.mu.Unlock()
		attrs := []any{"method", msg.Method, "client", name, "session", ss.info.ID}
		if len(msg.ID) > 0 {
			attrs = append(attrs, "id", json.RawMessage(msg.ID))
		}
		if msg.Method == mcp.MethodCallTool {
			// Scanned twice, but only when someone reads debug records.
			if p, err := scanParams(msg.Params); err == nil && len(p.name) > 0 && p.name[0] == '"' {
				attrs = append(attrs, "tool", clip(jsonrpc.UnquoteValid(p.name), maxQuoted))
			}
		}
		log.Debug("received", attrs...)
	}
	switch {
	case msg.IsRequest():
		p, err := scanParams(msg.Params)
		if err != nil {
			ss.replyError(out, msg.ID, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "Invalid params", Data: mustJSON(err.Error())})
			return nil
		}
		if p.modern() {
			if e := checkModern(p); e != nil {
				ss.replyError(out, msg.ID, e)
				return nil
			}
		}
		if msg.Method == mcp.MethodCallTool {
			return ss.callTool(msg, p, out)
		}
		ss.request(msg, p, out)
	case msg.IsNotification():
		ss.notification(msg)
	default:
		// A response: the server sends no requests, so there is nothing
		// waiting for it.
	}
	return nil
}

func (ss *session) request(msg *jsonrpc.Message, p *reqParams, out replyTo) {
	modern := p.modern()
	switch msg.Method {
	case mcp.MethodInitialize:
		if modern { // 2026-07-28 removed it: a modern request cannot name it
			ss.replyError(out, msg.ID, methodNotFound(msg.Method))
			return
		}
		ss.initialize(msg, out) // how a legacy client opens
	case mcp.MethodDiscover:
		if !modern {
			ss.replyError(out, msg.ID, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "Invalid params",
				Data: mustJSON(mcp.MethodDiscover + " needs params._meta with " + mcp.MetaProtocolVersion + " and " + mcp.MetaClientCapabilities)})
			return
		}
		ss.replyRaw(out, msg.ID, ss.srv.discoverResult())
	case mcp.MethodPing:
		if ss.srv.cfg.RefusePing || modern { // the modern era has no ping
			ss.replyError(out, msg.ID, methodNotFound(mcp.MethodPing))
			return
		}
		ss.reply(out, msg.ID, struct{}{})
	case mcp.MethodListTools:
		cursor := ""
		if len(p.cursor) > 0 && p.cursor[0] != 'n' {
			if p.cursor[0] != '"' {
				ss.replyError(out, msg.ID, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "Invalid params", Data: mustJSON("cursor must be a string")})
				return
			}
			cursor = jsonrpc.UnquoteValid(p.cursor)
		}
		res, err := ss.srv.tools.page(cursor, ss.srv.cfg.ToolsPageSize)
		if err != nil {
			ss.replyError(out, msg.ID, toRPCError(err))
			return
		}
		if modern {
			ss.replyModern(out, msg.ID, res, ss.srv.cacheHints())
			return
		}
		ss.reply(out, msg.ID, res)
	default:
		ss.replyError(out, msg.ID, methodNotFound(msg.Method))
	}
}

func methodNotFound(method string) *mcp.Error {
	return &mcp.Error{Code: mcp.CodeMethodNotFound, Message: "Method not found", Data: mustJSON("Unknown method: " + clip(method, maxQuoted))}
}

// params decodes msg's params into v (absent params leave v zero), or
// answers -32602 and returns false.
func (ss *session) params(msg *jsonrpc.Message, out replyTo, v any) bool {
	if len(msg.Params) == 0 || string(msg.Params) == "null" {
		return true
	}
	if err := json.Unmarshal(msg.Params, v); err != nil {
		ss.replyError(out, msg.ID, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "Invalid params", Data: mustJSON(clip(err.Error(), maxQuoted))})
		return false
	}
	return true
}

var serverCapabilities = json.RawMessage(`{"logging":{},"tools":{"listChanged":true}}`)

func (ss *session) initialize(msg *jsonrpc.Message, out replyTo) {
	var p mcp.InitializeParams
	if !ss.params(msg, out, &p) {
		return
	}
	p.ClientInfo.Name, p.ClientInfo.Version = clip(p.ClientInfo.Name, maxQuoted), clip(p.ClientInfo.Version, maxQuoted)
	p.ProtocolVersion = clip(p.ProtocolVersion, maxQuoted)
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
	ss.reply(out, msg.ID, &res)
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
func (ss *session) callTool(msg *jsonrpc.Message, p *reqParams, out replyTo) func() {
	if len(p.name) == 0 || p.name[0] != '"' {
		ss.replyError(out, msg.ID, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "Invalid params", Data: mustJSON("tools/call needs params.name, a string")})
		return nil
	}
	name := jsonrpc.UnquoteValid(p.name)
	t, ok := ss.srv.tools.get(name)
	if !ok {
		// The Neovim plugin's answer, message and all (the name clipped:
		// an answer never grows with the input).
		if p.modern() { // the 2026-07-28 answer
			ss.replyError(out, msg.ID, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "Unknown tool: " + clip(name, maxQuoted)})
			return nil
		}
		ss.replyError(out, msg.ID, &mcp.Error{Code: mcp.CodeMethodNotFound, Message: "Tool not found: " + clip(name, maxQuoted)})
		return nil
	}
	args := p.arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	modern := p.modern()
	tc := &ToolCall{Name: name, Arguments: args, Client: ss.clientInfo()}
	if modern {
		tc.Client.Name, tc.Client.Version, tc.Client.ProtocolVersion = p.clientName, p.clientVersion, p.version
	}
	a := answer{ss: ss, out: out, id: msg.ID, modern: modern}
	if t.Inline {
		if !ss.srv.beginHandler() {
			a.fail(&mcp.Error{Code: mcp.CodeServerError, Message: "server shutting down"})
			return nil
		}
		// Nothing can cancel it but the session ending: it holds up the
		// reader that would see notifications/cancelled.
		ss.runTool(ss.ctx, a, t, tc, 0, nil)
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
		a.fail(&mcp.Error{Code: mcp.CodeInvalidRequest, Message: "Invalid Request",
			Data: mustJSON("request id " + clip(key, maxQuoted) + " is already in flight")})
		return nil
	case busy:
		cancel(nil)
		a.fail(&mcp.Error{Code: mcp.CodeServerError, Message: fmt.Sprintf("too many concurrent tool calls (limit %d)", maxInflight)})
		return nil
	}
	// Large arguments are held by the call while it runs, and decoded by
	// its handler: together they may not exceed one message's worth, so
	// memory stays bounded by the largest message, not by their number.
	held := int64(0)
	if len(args) > argsBudgetFloor {
		held = int64(len(args))
		if ss.srv.argBytes.Add(held) > ss.srv.cfg.MaxMessageSize {
			ss.srv.argBytes.Add(-held)
			ss.forget(key, call)
			a.fail(&mcp.Error{Code: mcp.CodeServerError, Message: fmt.Sprintf(
				"server busy: the tool calls running hold too many bytes of arguments (this call's %d and the running calls' together exceed %d); retry when they end",
				held, ss.srv.cfg.MaxMessageSize)})
			return nil
		}
	}
	release := func() { ss.srv.argBytes.Add(-held) }
	// From here on shutdown waits for this call, so the goroutine that
	// runs it (and a reader taking over) may be started.
	if !ss.srv.beginHandler() {
		release()
		ss.forget(key, call)
		a.fail(&mcp.Error{Code: mcp.CodeServerError, Message: "server shutting down"})
		return nil
	}
	var pr *progressReporter
	if p.progress != nil {
		pr = &progressReporter{ss: ss, out: out, token: p.progress, interval: ss.srv.cfg.ProgressInterval}
		ctx = context.WithValue(ctx, progressKey{}, pr)
	}
	timeout := t.Timeout
	if timeout == 0 {
		timeout = ss.srv.cfg.CallTimeout
	}
	ss.calls.Add(1)
	return func() {
		defer ss.calls.Done()
		defer release()
		defer ss.forget(key, call)
		if pr != nil {
			defer pr.stop()
		}
		ss.runTool(ctx, a, t, tc, timeout, cancel)
	}
}

// answer is where a tools/call's answer goes, and in which era's form.
type answer struct {
	ss     *session
	out    replyTo
	id     json.RawMessage
	modern bool
}

func (a answer) fail(e *mcp.Error) { a.ss.replyError(a.out, a.id, e) }

func (a answer) result(res *mcp.ToolResult) {
	if res.IsError {
		res = clipErrorResult(res)
	}
	if a.modern {
		a.ss.replyModern(a.out, a.id, res, "")
		return
	}
	a.ss.reply(a.out, a.id, res)
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
func (ss *session) runTool(ctx context.Context, a answer, t *Tool, tc *ToolCall, timeout time.Duration, cancel context.CancelCauseFunc) {
	defer ss.srv.handlers.Done()
	var answered atomic.Bool // the first answer wins
	if timeout > 0 {
		timer := time.AfterFunc(timeout, func() {
			cancel(&callTimeoutError{tool: tc.Name, timeout: timeout})
			progressFrom(ctx).stop()
			if e := timeoutError(ctx); e != nil && answered.CompareAndSwap(false, true) {
				a.fail(e)
			}
		})
		defer timer.Stop()
	}
	res, err := invokeTool(ctx, t.Handler, tc)
	progressFrom(ctx).stop() // no progress after the answer
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
		a.fail(toRPCError(err))
		return
	}
	if res == nil {
		res = &mcp.ToolResult{}
	}
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	a.result(res)
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
