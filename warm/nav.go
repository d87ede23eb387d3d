package warm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/idebridge/idebridge/lsp"
)

// A navigation request (op "nav") carries one lsp.NavRequest for a
// Project: the runtime answers the handshake's reply line at once (the
// project joined), then, once the project's lsp.Manager has answered, one
// more line, a navReply. The connection ends after it. A client that
// closes its connection before then (interrupted, its own deadline)
// cancels the request in the runtime.

// navReply is the second reply line of a navigation request: the result
// (its JSON, as lsp writes it) or the error, with what callers test it
// for.
type navReply struct {
	Result json.RawMessage `json:"result,omitempty"`
	Err    *navErr         `json:"error,omitempty"`
}

type navErr struct {
	Message     string             `json:"message"`
	NoServer    *lsp.NoServerError `json:"noServer,omitempty"`
	Unsupported bool               `json:"unsupported,omitempty"`
	BadPos      bool               `json:"badPos,omitempty"`
	Deadline    bool               `json:"deadline,omitempty"`
	Canceled    bool               `json:"canceled,omitempty"`
}

// NavError is a navigation request's failure in the runtime, as the
// runtime's lsp.Manager gave it: its message, and what errors.Is and
// errors.As find in it there (lsp.ErrNoServer with its *lsp.NoServerError,
// lsp.ErrUnsupported, lsp.ErrBadPos, context.DeadlineExceeded,
// context.Canceled). Any other error of Navigate is the runtime's: it
// could not be reached, or it ended before it answered.
type NavError struct{ e navErr }

func (e *NavError) Error() string { return e.e.Message }

// Is matches what the error matched in the runtime.
func (e *NavError) Is(target error) bool {
	switch target {
	case lsp.ErrNoServer:
		return e.e.NoServer != nil
	case lsp.ErrUnsupported:
		return e.e.Unsupported
	case lsp.ErrBadPos:
		return e.e.BadPos
	case context.DeadlineExceeded:
		return e.e.Deadline
	case context.Canceled:
		return e.e.Canceled
	}
	return false
}

// As finds the *lsp.NoServerError of a file no server serves.
func (e *NavError) As(target any) bool {
	if t, ok := target.(**lsp.NoServerError); ok && e.e.NoServer != nil {
		ns := *e.e.NoServer
		ns.Known = append([]string(nil), ns.Known...)
		*t = &ns
		return true
	}
	return false
}

func navErrOf(err error) *navErr {
	e := &navErr{
		Message:     err.Error(),
		Unsupported: errors.Is(err, lsp.ErrUnsupported),
		BadPos:      errors.Is(err, lsp.ErrBadPos),
		Deadline:    errors.Is(err, context.DeadlineExceeded),
		Canceled:    errors.Is(err, context.Canceled),
	}
	var ns *lsp.NoServerError
	if errors.As(err, &ns) {
		e.NoServer = ns
	}
	return e
}

// navResultFor is the empty result of op, to decode its JSON into.
func navResultFor(op lsp.NavOp) (lsp.NavResult, bool) {
	switch op {
	case lsp.OpDefinition, lsp.OpDeclaration, lsp.OpTypeDefinition, lsp.OpImplementation, lsp.OpReferences:
		return &lsp.Locations{}, true
	case lsp.OpHover:
		return &lsp.Hover{}, true
	case lsp.OpDocumentSymbols, lsp.OpWorkspaceSymbols:
		return &lsp.Symbols{}, true
	case lsp.OpPrepareCallHierarchy, lsp.OpIncomingCalls, lsp.OpOutgoingCalls:
		return &lsp.CallHierarchy{}, true
	case lsp.OpPrepareTypeHierarchy, lsp.OpSupertypes, lsp.OpSubtypes:
		return &lsp.TypeHierarchy{}, true
	}
	return nil, false // rename is not read-only: never through the runtime
}

// Navigate runs one navigation request (lsp.Manager.Navigate) on the
// project's language servers in the runtime, starting the runtime when
// none answers and Options.Start is set, and returns its result, decoded
// into the type lsp gives for the operation (*lsp.Locations, *lsp.Hover,
// *lsp.Symbols, *lsp.CallHierarchy or *lsp.TypeHierarchy): a result equal
// to the one a Manager of the process would give, answered by servers
// that stay warm for the next call. The Project is one an MCP session
// could share (see Open). lsp.OpRename is refused: it is answered where
// it is applied.
//
// ctx bounds the request: its deadline is the runtime's for the request
// (so that a request that runs out of time fails there as it would in the
// process, with the same error), and its cancellation closes the
// connection, which cancels the request in the runtime. A failure of the
// request itself is a *NavError; any other error means the runtime could
// not be reached or ended before it answered: the caller may run the
// request itself. Runtime describes the runtime that answered.
func Navigate(ctx context.Context, opts *Options, p *Project, req lsp.NavRequest) (lsp.NavResult, *Runtime, error) {
	res, ok := navResultFor(req.Op)
	if !ok {
		return nil, nil, fmt.Errorf("warm: Navigate: operation %q does not go through the runtime", req.Op)
	}
	var rep navReply
	rt, err := oneRequest(ctx, opts, request{Op: "nav", Project: p, Nav: &req}, string(req.Op), &rep)
	if err != nil {
		return nil, rt, err
	}
	if rep.Err != nil {
		return nil, rt, &NavError{e: *rep.Err}
	}
	if err := json.Unmarshal(rep.Result, res); err != nil {
		return nil, rt, fmt.Errorf("warm: the runtime's answer: %w", err)
	}
	return res, rt, nil
}

// oneRequest makes a request that is one connection (a "nav" or a
// "diag"): it sends wire, with ctx's deadline as the request's time in
// the runtime, and reads the answer's one line into rep. Interrupted, it
// closes the connection, which cancels the request in the runtime; out of
// time, the runtime fails the request itself, with its own error, and
// the connection is closed only if it has not answered a while after.
// A failure of ctx is a *NavError naming what; any other error means the
// runtime could not be reached or ended before it answered.
func oneRequest(ctx context.Context, opts *Options, wire request, what string, rep any) (*Runtime, error) {
	c, err := newClient(opts)
	if err != nil {
		return nil, err
	}
	dl, hasDL := ctx.Deadline()
	if hasDL {
		wire.Timeout = time.Until(dl)
		if wire.Timeout <= 0 {
			return nil, &NavError{e: *navErrOf(ctx.Err())}
		}
	}
	conn, br, rt, err := c.openReq(ctx, wire)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			conn.Close()
		}
	})
	defer stop()
	if hasDL {
		conn.SetReadDeadline(dl.Add(10 * time.Second))
	}
	if err := readLineMax(br, rep, maxNavLine); err != nil {
		if ctx.Err() != nil {
			return rt, &NavError{e: *navErrOf(fmt.Errorf("%s: %w", what, context.Cause(ctx)))}
		}
		return rt, fmt.Errorf("warm: the runtime ended before it answered: %w", err)
	}
	return rt, nil
}

// nav serves a navigation request: see Navigate.
func (d *daemon) nav(ctx context.Context, c *net.UnixConn, br *bufio.Reader, req request, pid int) {
	if req.Nav == nil {
		writeLine(c, reply{Error: "a nav request needs its operation"})
		return
	}
	if _, ok := navResultFor(req.Nav.Op); !ok {
		writeLine(c, reply{Error: fmt.Sprintf("operation %q is not served", clip(string(req.Nav.Op)))})
		return
	}
	d.answerOne(ctx, c, br, req, pid, func(ctx context.Context, p *project) any {
		return navigateIn(ctx, p, *req.Nav)
	})
}

// navigateIn runs a navigation request on p's servers, inside its gate,
// and makes its reply.
func navigateIn(ctx context.Context, p *project, req lsp.NavRequest) navReply {
	var rep navReply
	if err := p.gate.acquire(ctx, false); err != nil {
		rep.Err = navErrOf(fmt.Errorf("%s: %w", req.Op, err))
		return rep
	}
	res, err := p.srv.Manager().Navigate(ctx, req)
	p.gate.release(false)
	if err == nil {
		rep.Result, err = json.Marshal(res)
	}
	if err != nil {
		rep.Result, rep.Err = nil, navErrOf(err)
	}
	return rep
}

// answerOne serves a request of one answer on its own connection (nav,
// diag): it joins the project as a session of its own, answers the
// handshake, runs answer (cancelled when the client closes the
// connection or the request's timeout passes), and writes what it
// returns as the last line. The session ends before that line is
// written, so a client holding its answer no longer counts in status.
func (d *daemon) answerOne(ctx context.Context, c *net.UnixConn, br *bufio.Reader, req request, pid int, answer func(context.Context, *project) any) {
	p, id, err := d.join(req.Project, pid)
	if err != nil {
		writeLine(c, reply{Error: err.Error()})
		return
	}
	left := sync.OnceFunc(func() { d.leave(p, id) })
	defer left()
	if err := writeLine(c, reply{}); err != nil {
		return
	}
	c.SetDeadline(time.Time{})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if req.Timeout > 0 {
		var cancelT context.CancelFunc
		ctx, cancelT = context.WithTimeout(ctx, req.Timeout)
		defer cancelT()
	}
	// The client sends nothing more: its closing the connection cancels.
	go func() {
		br.ReadByte()
		cancel()
	}()
	rep := answer(ctx, p)
	left()
	writeLine(c, rep)
}
