package warm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/idebridge/idebridge/lsp"
)

// Navigator is the read-only navigation of a project's language servers:
// what an agent asks of an *lsp.Manager in its own process, or of a
// *Remote, the same project's servers in the user's runtime, shared with
// every other client and already warm. Code written against Navigator
// switches from one to the other by its constructor alone
// (lsp.NewManager or Dial); the results are lsp's own types, equal for
// equal servers, and the errors match the same errors.Is targets
// (lsp.ErrNoServer, lsp.ErrUnsupported, lsp.ErrBadPos,
// context.DeadlineExceeded, context.Canceled).
type Navigator interface {
	// Navigate runs the operation the request names (lsp.Manager.Navigate).
	Navigate(ctx context.Context, req lsp.NavRequest) (lsp.NavResult, error)
	Definition(ctx context.Context, at lsp.Pos) (*lsp.Locations, error)
	Declaration(ctx context.Context, at lsp.Pos) (*lsp.Locations, error)
	TypeDefinition(ctx context.Context, at lsp.Pos) (*lsp.Locations, error)
	Implementation(ctx context.Context, at lsp.Pos) (*lsp.Locations, error)
	References(ctx context.Context, at lsp.Pos, includeDeclaration bool) (*lsp.Locations, error)
	Hover(ctx context.Context, at lsp.Pos) (*lsp.Hover, error)
	DocumentSymbols(ctx context.Context, path string) (*lsp.Symbols, error)
	WorkspaceSymbols(ctx context.Context, query, path string) (*lsp.Symbols, error)
	PrepareCallHierarchy(ctx context.Context, at lsp.Pos) (*lsp.CallHierarchy, error)
	IncomingCalls(ctx context.Context, at lsp.Pos) (*lsp.CallHierarchy, error)
	OutgoingCalls(ctx context.Context, at lsp.Pos) (*lsp.CallHierarchy, error)
	PrepareTypeHierarchy(ctx context.Context, at lsp.Pos) (*lsp.TypeHierarchy, error)
	Supertypes(ctx context.Context, at lsp.Pos) (*lsp.TypeHierarchy, error)
	Subtypes(ctx context.Context, at lsp.Pos) (*lsp.TypeHierarchy, error)
	// ProjectDir is the directory results render relative to.
	ProjectDir() string
}

var (
	_ Navigator = (*lsp.Manager)(nil)
	_ Navigator = (*Remote)(nil)
)

// Errors of a Remote.
var (
	// ErrRuntimeLost: the runtime ended (killed, stopped) before it
	// answered the call. The call may have run: it is not sent again. The
	// next call reconnects, starting a runtime when Options.Start is set.
	ErrRuntimeLost = errors.New("warm: the runtime ended before it answered; call again")
	// ErrRemoteClosed: the Remote was closed.
	ErrRemoteClosed = errors.New("warm: the Remote is closed")
)

// CommandOptions are the Options of a client that shares the runtime of
// the idebridge command at exe (the runtime `idebridge mcp` and the
// command line's navigation commands go through) without being that
// command: an agent using this package, or the C library. Build is exe's
// (BuildOf), and Start runs `exe runtime serve`. exe "" is "idebridge"
// found in PATH. The command must be of the same version as this
// package: a runtime that does not know a Remote's calls refuses them
// with an error saying so.
func CommandOptions(exe string) (*Options, error) {
	if exe == "" {
		exe = "idebridge"
	}
	path, err := exec.LookPath(exe)
	if err != nil {
		return nil, fmt.Errorf("warm: the idebridge command: %w", err)
	}
	if st, err := os.Stat(path); err != nil || st.IsDir() {
		return nil, fmt.Errorf("warm: the idebridge command %s is not a file", path)
	}
	b, err := BuildOf(path)
	if err != nil {
		return nil, err
	}
	return &Options{Build: b, Start: []string{path, "runtime", "serve"}}, nil
}

// Remote is a Project's language servers in the user's runtime, for an
// agent of its own: the read-only navigation of an lsp.Manager
// (Navigator), Diagnose and Servers, over one connection to the runtime that is
// the Remote's session there. The runtime shares the project's servers
// with every other client (MCP sessions, commands, other Remotes on an
// equal Project) and keeps them warm between calls; each call runs in the
// project's gate (never while another session stages an edit).
//
// A Remote is safe for concurrent use: calls in flight at once go on the
// one connection (at most 64; more wait for a slot). A call's ctx bounds
// it: its deadline is the call's time in the runtime, which fails it
// there with the error it would have had in the process, and its
// cancellation cancels the call in the runtime.
//
// When the runtime dies, the calls in flight fail with ErrRuntimeLost
// (never sent again: the caller calls again), and the next call
// reconnects, starting a new runtime when Options.Start is set. Close
// ends the session at once; so does the end of the process, however it
// ends, as the system closes its socket.
//
// Diagnostics go through Diagnose: a call opens its files for its
// length, settles them and answers what stands for them, with a delivered
// memory of its own (as `idebridge diag` through the runtime).
//
// Not through a Remote: what changes the servers' state for the caller
// alone or writes files (Open, Change, unsaved text, edit sets, Rename
// and ApplyRename), which stay with an lsp.Manager of the caller's own,
// and a Drain that delivers each diagnostic once across calls: Diagnose
// answers each call whole.
type Remote struct {
	c       *client
	project Project
	dialing chan struct{} // a one-slot lock on (re)connecting whose wait ends with ctx
	slots   chan struct{} // a slot per call in flight

	mu     sync.Mutex
	cur    *remoteConn
	closed bool
	nextID uint64
}

// remoteConn is one connection of a Remote.
type remoteConn struct {
	conn *net.UnixConn
	rt   *Runtime
	wmu  sync.Mutex // one writer at a time

	mu      sync.Mutex
	pending map[uint64]*pendingCall
	done    chan struct{} // closed once the connection is lost
	err     error         // why, set before done is closed
}

type pendingCall struct {
	ch      chan opsReply // buffered: the reader never waits
	release func()        // frees the call's slot, once
}

// Dial connects to the runtime (starting it when none answers and
// Options.Start is set; see CommandOptions) and opens a session on the
// project p, an equal Project of which every client shares, as Open
// does. It fails as Open does (ErrNotRunning, ErrVersionSkew, ...): the
// caller may then use an lsp.Manager of its own. Close the Remote when
// done.
func Dial(ctx context.Context, opts *Options, p *Project) (*Remote, error) {
	if p == nil {
		return nil, errors.New("warm: Dial needs a Project")
	}
	c, err := newClient(opts)
	if err != nil {
		return nil, err
	}
	r := &Remote{c: c, project: *p, dialing: make(chan struct{}, 1), slots: make(chan struct{}, maxOpsInFlight)}
	if _, err := r.connection(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// Runtime describes the runtime of the Remote's connection (nil while it
// has none: after the runtime was lost, until the next call).
func (r *Remote) Runtime() *Runtime {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil || r.cur.lost() {
		return nil
	}
	rt := *r.cur.rt
	return &rt
}

// ProjectDir is the project's directory (Project.Dir).
func (r *Remote) ProjectDir() string { return r.project.Dir }

// Close ends the Remote's session in the runtime; its calls in flight
// fail with ErrRemoteClosed, and later calls too.
func (r *Remote) Close() error {
	r.mu.Lock()
	cur := r.cur
	r.closed, r.cur = true, nil
	r.mu.Unlock()
	if cur != nil {
		cur.fail(ErrRemoteClosed)
	}
	return nil
}

// connection returns the current connection, making one when there is
// none or it was lost.
func (r *Remote) connection(ctx context.Context) (*remoteConn, error) {
	if rc, err := r.current(); rc != nil || err != nil {
		return rc, err
	}
	select {
	case r.dialing <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	defer func() { <-r.dialing }()
	if rc, err := r.current(); rc != nil || err != nil {
		return rc, err // another call reconnected meanwhile
	}
	p := r.project
	conn, br, rt, err := r.c.openReq(ctx, request{Op: "ops", Project: &p})
	if err != nil {
		return nil, err
	}
	rc := &remoteConn{conn: conn, rt: rt, pending: map[uint64]*pendingCall{}, done: make(chan struct{})}
	go rc.read(br)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		rc.fail(ErrRemoteClosed)
		return nil, ErrRemoteClosed
	}
	r.cur = rc
	return rc, nil
}

func (r *Remote) current() (*remoteConn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrRemoteClosed
	}
	if r.cur != nil && !r.cur.lost() {
		return r.cur, nil
	}
	return nil, nil
}

func (rc *remoteConn) lost() bool {
	select {
	case <-rc.done:
		return true
	default:
		return false
	}
}

// read delivers the runtime's replies until the connection ends.
func (rc *remoteConn) read(br *bufio.Reader) {
	for {
		var rep opsReply
		if err := readLineMax(br, &rep, maxNavLine); err != nil {
			rc.fail(err)
			return
		}
		if rep.ID == 0 { // the runtime could not read a call: it closes
			msg := "the runtime ended the connection"
			if rep.Err != nil {
				msg = rep.Err.Message
			}
			rc.fail(errors.New(msg))
			return
		}
		rc.mu.Lock()
		pc := rc.pending[rep.ID]
		delete(rc.pending, rep.ID)
		rc.mu.Unlock()
		if pc != nil {
			pc.ch <- rep
			pc.release()
		}
	}
}

// fail ends the connection for err, once; the calls in flight see done.
func (rc *remoteConn) fail(err error) {
	rc.mu.Lock()
	if rc.lost() {
		rc.mu.Unlock()
		return
	}
	rc.err = err
	close(rc.done)
	pending := rc.pending
	rc.pending = map[uint64]*pendingCall{}
	rc.mu.Unlock()
	rc.conn.Close()
	for _, pc := range pending {
		pc.release()
	}
}

// errOf is the error of a call the connection was lost under.
func (rc *remoteConn) errOf() error {
	if errors.Is(rc.err, ErrRemoteClosed) {
		return ErrRemoteClosed
	}
	return fmt.Errorf("%w (%v)", ErrRuntimeLost, rc.err)
}

// write sends one call; n is how much of it was written.
func (rc *remoteConn) write(call opsCall) (int, error) {
	b, err := json.Marshal(call)
	if err != nil {
		return 0, err
	}
	rc.wmu.Lock()
	defer rc.wmu.Unlock()
	rc.conn.SetWriteDeadline(time.Now().Add(opsWriteTimeout))
	return rc.conn.Write(append(b, '\n'))
}

// deadlineGrace is how long a call waits past its deadline for the
// runtime's own answer (the runtime fails it at the deadline, with the
// error it would have had in the process) before it gives up on it.
const deadlineGrace = 10 * time.Second

// call sends a call and waits for its reply. canceled makes the error of
// a call whose ctx ended first.
func (r *Remote) call(ctx context.Context, call opsCall, canceled func(error) error) (json.RawMessage, error) {
	if ctx.Err() != nil {
		return nil, canceled(context.Cause(ctx))
	}
	dl, hasDL := ctx.Deadline()
	// acquire takes a slot; the release it returns frees it once (the
	// reader does, at the reply or the connection's end).
	acquire := func() (func(), error) {
		select {
		case r.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, canceled(context.Cause(ctx))
		}
		var once sync.Once
		return func() { once.Do(func() { <-r.slots }) }, nil
	}
	release, err := acquire()
	if err != nil {
		return nil, err
	}
	var rc *remoteConn
	ch := make(chan opsReply, 1)
	for attempt := 0; ; attempt++ {
		rc, err = r.connection(ctx)
		if err != nil {
			release()
			if ctx.Err() != nil {
				return nil, canceled(context.Cause(ctx))
			}
			return nil, err
		}
		if hasDL {
			call.Timeout = time.Until(dl)
			if call.Timeout <= 0 {
				release()
				return nil, canceled(context.DeadlineExceeded)
			}
		}
		r.mu.Lock()
		r.nextID++
		call.ID = r.nextID
		r.mu.Unlock()
		rc.mu.Lock()
		if rc.lost() {
			rc.mu.Unlock()
			continue // lost before the call was sent: connect again
		}
		rc.pending[call.ID] = &pendingCall{ch: ch, release: release}
		rc.mu.Unlock()
		n, err := rc.write(call)
		if err == nil {
			break
		}
		rc.fail(err) // frees the call's slot
		if n > 0 || attempt > 0 {
			return nil, rc.errOf() // it may have reached the runtime: never sent again
		}
		// Nothing of it was written, so the runtime never saw it (it had
		// died; the reader had not noticed yet): send it on a new
		// connection, once.
		if release, err = acquire(); err != nil {
			return nil, err
		}
	}
	answer := func(rep opsReply) (json.RawMessage, error) {
		if rep.Err != nil {
			return nil, &NavError{e: *rep.Err}
		}
		return rep.Result, nil
	}
	select {
	case rep := <-ch:
		return answer(rep)
	case <-rc.done:
		select {
		case rep := <-ch: // answered just before the end
			return answer(rep)
		default:
		}
		return nil, rc.errOf()
	case <-ctx.Done():
	}
	if hasDL && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// The runtime fails the call at the deadline itself, with the
		// error it would have had in the process: wait for it a while.
		t := time.NewTimer(deadlineGrace)
		defer t.Stop()
		select {
		case rep := <-ch:
			return answer(rep)
		case <-rc.done:
			return nil, rc.errOf()
		case <-t.C:
		}
	}
	// Cancelled: so is the call in the runtime. Its slot is freed when its
	// reply (the cancellation's error) comes.
	rc.write(opsCall{ID: call.ID, Method: "cancel"})
	return nil, canceled(context.Cause(ctx))
}

// Navigate runs a read-only navigation request on the project's servers
// in the runtime and returns lsp's own result for the operation
// (*lsp.Locations, *lsp.Hover, *lsp.Symbols, *lsp.CallHierarchy or
// *lsp.TypeHierarchy), as lsp.Manager.Navigate would. lsp.OpRename is
// refused (lsp.ErrUnsupported): a rename is applied where it is made,
// by an lsp.Manager of the caller's. A failure of the request in the
// runtime is a *NavError.
func (r *Remote) Navigate(ctx context.Context, req lsp.NavRequest) (lsp.NavResult, error) {
	res, ok := navResultFor(req.Op)
	if !ok {
		if req.Op == lsp.OpRename {
			return nil, fmt.Errorf("warm: %s does not go through the runtime (it is applied where it is made: use an lsp.Manager): %w", req.Op, lsp.ErrUnsupported)
		}
		return nil, fmt.Errorf("warm: unknown navigation operation %q", clip(string(req.Op)))
	}
	raw, err := r.call(ctx, opsCall{Method: "nav", Nav: &req}, func(cause error) error {
		return &NavError{e: *navErrOf(fmt.Errorf("%s: %w", req.Op, cause))}
	})
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, fmt.Errorf("warm: the runtime's answer to %s: %w", req.Op, err)
	}
	return res, nil
}

// Diagnose is Diagnose on the Remote's session: the files opened in the
// project's servers for the call's length, settled, and what stands for
// them delivered, through a delivered-diagnostics memory of the call's
// own (so each call answers every diagnostic of its files that stands,
// whatever other calls or clients drained). A failure of the request is
// a *NavError, as is each file's DiagFile.Err.
func (r *Remote) Diagnose(ctx context.Context, req DiagRequest) (*DiagResult, error) {
	if err := checkDiagRequest(&req); err != nil {
		return nil, &NavError{e: navErr{Message: "warm: Diagnose: " + err.Error()}}
	}
	raw, err := r.call(ctx, opsCall{Method: "diag", Diag: &req}, func(cause error) error {
		return &NavError{e: *navErrOf(fmt.Errorf("diag: %w", cause))}
	})
	if err != nil {
		return nil, err
	}
	var rep diagReply
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, fmt.Errorf("warm: the runtime's answer to diag: %w", err)
	}
	return rep.result(len(req.Files))
}

// Servers returns the project's language servers in the runtime, as
// lsp.Manager.Servers does (an error's text only, as Err).
func (r *Remote) Servers(ctx context.Context) ([]lsp.ServerStatus, error) {
	raw, err := r.call(ctx, opsCall{Method: "servers"}, func(cause error) error { return fmt.Errorf("warm: servers: %w", cause) })
	if err != nil {
		return nil, err
	}
	var ws []serverWire
	if err := json.Unmarshal(raw, &ws); err != nil {
		return nil, fmt.Errorf("warm: the runtime's servers: %w", err)
	}
	out := make([]lsp.ServerStatus, 0, len(ws))
	for _, w := range ws {
		out = append(out, serverFromWire(w))
	}
	return out, nil
}

// navAs runs req and returns its result as T.
func navAs[T lsp.NavResult](ctx context.Context, r *Remote, req lsp.NavRequest) (T, error) {
	var zero T
	res, err := r.Navigate(ctx, req)
	if err != nil {
		return zero, err
	}
	t, ok := res.(T)
	if !ok {
		return zero, fmt.Errorf("warm: %s answered %T", req.Op, res)
	}
	return t, nil
}

// Definition is lsp.Manager.Definition in the runtime.
func (r *Remote) Definition(ctx context.Context, at lsp.Pos) (*lsp.Locations, error) {
	return navAs[*lsp.Locations](ctx, r, lsp.NavRequest{Op: lsp.OpDefinition, At: at})
}

// Declaration is lsp.Manager.Declaration in the runtime.
func (r *Remote) Declaration(ctx context.Context, at lsp.Pos) (*lsp.Locations, error) {
	return navAs[*lsp.Locations](ctx, r, lsp.NavRequest{Op: lsp.OpDeclaration, At: at})
}

// TypeDefinition is lsp.Manager.TypeDefinition in the runtime.
func (r *Remote) TypeDefinition(ctx context.Context, at lsp.Pos) (*lsp.Locations, error) {
	return navAs[*lsp.Locations](ctx, r, lsp.NavRequest{Op: lsp.OpTypeDefinition, At: at})
}

// Implementation is lsp.Manager.Implementation in the runtime.
func (r *Remote) Implementation(ctx context.Context, at lsp.Pos) (*lsp.Locations, error) {
	return navAs[*lsp.Locations](ctx, r, lsp.NavRequest{Op: lsp.OpImplementation, At: at})
}

// References is lsp.Manager.References in the runtime.
func (r *Remote) References(ctx context.Context, at lsp.Pos, includeDeclaration bool) (*lsp.Locations, error) {
	return navAs[*lsp.Locations](ctx, r, lsp.NavRequest{Op: lsp.OpReferences, At: at, IncludeDeclaration: includeDeclaration})
}

// Hover is lsp.Manager.Hover in the runtime.
func (r *Remote) Hover(ctx context.Context, at lsp.Pos) (*lsp.Hover, error) {
	return navAs[*lsp.Hover](ctx, r, lsp.NavRequest{Op: lsp.OpHover, At: at})
}

// DocumentSymbols is lsp.Manager.DocumentSymbols in the runtime.
func (r *Remote) DocumentSymbols(ctx context.Context, path string) (*lsp.Symbols, error) {
	return navAs[*lsp.Symbols](ctx, r, lsp.NavRequest{Op: lsp.OpDocumentSymbols, At: lsp.Pos{Path: path}})
}

// WorkspaceSymbols is lsp.Manager.WorkspaceSymbols in the runtime.
func (r *Remote) WorkspaceSymbols(ctx context.Context, query, path string) (*lsp.Symbols, error) {
	return navAs[*lsp.Symbols](ctx, r, lsp.NavRequest{Op: lsp.OpWorkspaceSymbols, Query: query, At: lsp.Pos{Path: path}})
}

// PrepareCallHierarchy is lsp.Manager.PrepareCallHierarchy in the runtime.
func (r *Remote) PrepareCallHierarchy(ctx context.Context, at lsp.Pos) (*lsp.CallHierarchy, error) {
	return navAs[*lsp.CallHierarchy](ctx, r, lsp.NavRequest{Op: lsp.OpPrepareCallHierarchy, At: at})
}

// IncomingCalls is lsp.Manager.IncomingCalls in the runtime.
func (r *Remote) IncomingCalls(ctx context.Context, at lsp.Pos) (*lsp.CallHierarchy, error) {
	return navAs[*lsp.CallHierarchy](ctx, r, lsp.NavRequest{Op: lsp.OpIncomingCalls, At: at})
}

// OutgoingCalls is lsp.Manager.OutgoingCalls in the runtime.
func (r *Remote) OutgoingCalls(ctx context.Context, at lsp.Pos) (*lsp.CallHierarchy, error) {
	return navAs[*lsp.CallHierarchy](ctx, r, lsp.NavRequest{Op: lsp.OpOutgoingCalls, At: at})
}

// PrepareTypeHierarchy is lsp.Manager.PrepareTypeHierarchy in the runtime.
func (r *Remote) PrepareTypeHierarchy(ctx context.Context, at lsp.Pos) (*lsp.TypeHierarchy, error) {
	return navAs[*lsp.TypeHierarchy](ctx, r, lsp.NavRequest{Op: lsp.OpPrepareTypeHierarchy, At: at})
}

// Supertypes is lsp.Manager.Supertypes in the runtime.
func (r *Remote) Supertypes(ctx context.Context, at lsp.Pos) (*lsp.TypeHierarchy, error) {
	return navAs[*lsp.TypeHierarchy](ctx, r, lsp.NavRequest{Op: lsp.OpSupertypes, At: at})
}

// Subtypes is lsp.Manager.Subtypes in the runtime.
func (r *Remote) Subtypes(ctx context.Context, at lsp.Pos) (*lsp.TypeHierarchy, error) {
	return navAs[*lsp.TypeHierarchy](ctx, r, lsp.NavRequest{Op: lsp.OpSubtypes, At: at})
}
