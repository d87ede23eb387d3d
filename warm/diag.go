package warm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"sync"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/lspdiag"
)

// A diagnostics request (op "diag") carries one DiagRequest for a
// Project: like a navigation request, the runtime answers the handshake's
// reply line at once (the project joined), then, once the files are
// settled and drained, one more line, a diagReply. The connection ends
// after it; a client that closes it first cancels the request.

// DiagRequest asks for the diagnostics of files, as `idebridge diag`
// prints them: each file opened in its language server, settled (see
// lsp.Manager.Settle), then what is new to this request drained.
type DiagRequest struct {
	// Files are absolute paths, confined as the project's Manager
	// confines them (the runtime adds no check and removes none).
	Files []string `json:"files"`
	// Settle are the choices of each file's Settle (its time; whether to
	// wait for the server's work-done progress, as the command line does).
	Settle lsp.SettleOptions `json:"settle"`
	// Limits are the attachment's (zero: the project's registry's, which
	// has MCP's: a whole file's set, no total).
	Limits lspdiag.ReaderOptions `json:"limits"`
}

// DiagResult is a diagnostics request's answer: what was new to the
// request (its own delivered-diagnostics memory, see lsp.Drainer: every
// diagnostic of its files that stands, whoever else drained them) and each
// file's outcome, in the request's order.
type DiagResult struct {
	// Attachment is nil when there is nothing at all.
	Attachment *diag.Attachment `json:"attachment"`
	Files      []DiagFile       `json:"files"`
}

// DiagFile is one file's outcome.
type DiagFile struct {
	Path string `json:"path"`
	// Server serves the file ("" when none does).
	Server string `json:"server,omitempty"`
	// Settle is its Settle's result (zero when it was not settled).
	Settle lsp.SettleResult `json:"settle"`
	// Err is why the file could not be opened or settled: a *NavError,
	// matching what the error matched in the runtime (lsp.ErrNoServer
	// with its *lsp.NoServerError, context.DeadlineExceeded ...). A
	// Settle that ran out of the request's time is not an error: its
	// result says so (FreshTimedOut), as in the command's own process.
	Err error `json:"-"`
}

// diagReply is the second reply line of a diagnostics request.
type diagReply struct {
	Result *DiagResult `json:"result,omitempty"`
	Errs   []*navErr   `json:"fileErrors,omitempty"` // per file, nil when none
	Err    *navErr     `json:"error,omitempty"`      // the request's
}

// Diagnose runs one diagnostics request on the project's language
// servers in the runtime, starting the runtime when none answers and
// Options.Start is set. The files are opened in the project's shared
// lsp.Manager for the request's length (those not open before are closed
// at its end: a client's documents are its own), settled inside the
// project's gate (never while another session stages an edit), and
// drained through an lsp.Drainer of the request's own, so that the answer
// is what a Manager of the process that opened the same files would have
// delivered, whichever other clients drained before: the files the
// request names, and what their servers publish for files nobody opened
// (a workspace's other files); not the files only other sessions have
// open, unless their server reports on files nobody opened (see
// lspdiag.Reader).
//
// ctx bounds the request as in Navigate: its deadline is the runtime's,
// and its cancellation closes the connection, which cancels the request
// there. A failure of the request itself (no files, a path that is not
// absolute, its time out before it began) is a *NavError; any other error
// means the runtime could not be reached or ended before it answered:
// the caller may run the request itself (it writes nothing).
func Diagnose(ctx context.Context, opts *Options, p *Project, req DiagRequest) (*DiagResult, *Runtime, error) {
	if err := checkDiagRequest(&req); err != nil {
		return nil, nil, &NavError{e: navErr{Message: "warm: Diagnose: " + err.Error()}}
	}
	var rep diagReply
	rt, err := oneRequest(ctx, opts, request{Op: "diag", Project: p, Diag: &req}, "diag", &rep)
	if err != nil {
		return nil, rt, err
	}
	res, err := rep.result(len(req.Files))
	return res, rt, err
}

// diag serves a diagnostics request: see Diagnose.
func (d *daemon) diag(ctx context.Context, c *net.UnixConn, br *bufio.Reader, req request, pid int) {
	if err := checkDiagRequest(req.Diag); err != nil {
		writeLine(c, reply{Error: err.Error()})
		return
	}
	d.answerOne(ctx, c, br, req, pid, func(ctx context.Context, p *project) any {
		return d.diagnoseIn(ctx, p, req.Diag)
	})
}

// checkDiagRequest refuses a request the runtime cannot run.
func checkDiagRequest(req *DiagRequest) error {
	if req == nil || len(req.Files) == 0 {
		return errors.New("no files")
	}
	for _, f := range req.Files {
		if !filepath.IsAbs(f) {
			return fmt.Errorf("diag: %q is not an absolute path", clip(f))
		}
	}
	return nil
}

// diagnoseIn runs a diagnostics request on p's servers, inside its gate,
// and makes its reply.
func (d *daemon) diagnoseIn(ctx context.Context, p *project, req *DiagRequest) diagReply {
	var rep diagReply
	if err := p.gate.acquire(ctx, false); err != nil {
		rep.Err = navErrOf(fmt.Errorf("diag: %w", err))
		return rep
	}
	res, errs := diagnose(ctx, p.srv.Manager(), req)
	p.gate.release(false)
	rep.Result = res
	for i, err := range errs {
		if err != nil {
			if rep.Errs == nil {
				rep.Errs = make([]*navErr, len(errs))
			}
			rep.Errs[i] = navErrOf(err)
		}
	}
	return rep
}

// result checks rep against the request it answers (n files) and makes
// its result, each file's error a *NavError.
func (rep *diagReply) result(n int) (*DiagResult, error) {
	if rep.Err != nil {
		return nil, &NavError{e: *rep.Err}
	}
	if rep.Result == nil || len(rep.Result.Files) != n {
		return nil, errors.New("warm: the runtime's answer: not one outcome per file")
	}
	for i, e := range rep.Errs {
		if e != nil && i < len(rep.Result.Files) {
			rep.Result.Files[i].Err = &NavError{e: *e}
		}
	}
	return rep.Result, nil
}

// diagnose opens, settles and drains req's files on m, as the command
// line's diag does in its own process, through a Drainer of its own.
// The files it opened are closed again at the end, unless they were open
// before or another request still holds them.
func diagnose(ctx context.Context, m *lsp.Manager, req *DiagRequest) (*DiagResult, []error) {
	dr := m.NewDrainer(&req.Limits)
	defer dr.Close()
	res := &DiagResult{Files: make([]DiagFile, len(req.Files))}
	errs := make([]error, len(req.Files))
	held := holds.take(m, req.Files)
	defer holds.release(ctx, m, held)
	// Open everything first, so that servers work on all files at once.
	for i, f := range req.Files {
		res.Files[i].Path = f
		if res.Files[i].Server, errs[i] = m.ServerFor(f); errs[i] == nil {
			errs[i] = m.Open(ctx, f)
		}
		if errs[i] == nil {
			errs[i] = dr.Watch(f)
		}
	}
	settle := req.Settle
	for i, f := range req.Files {
		if errs[i] != nil {
			continue
		}
		res.Files[i].Settle, errs[i] = m.SettleWith(ctx, f, &settle)
		if errors.Is(errs[i], context.DeadlineExceeded) && ctx.Err() != nil {
			errs[i] = nil // out of the request's time: an answer, not a failure
		}
	}
	res.Attachment, _ = dr.Drain()
	return res, errs
}

// holds are the files diagnostics requests hold open, per Manager.
var holds = &diagHolds{m: map[*lsp.Manager]map[string]*diagHold{}}

// diagHolds counts, for each file of a Manager, the diagnostics requests
// that hold it: a request's files are its client's, for the request's
// length. A file no one had open before the first of them is closed when
// the last ends: a process of the client's own would not have it open
// either, and a server that reports on open files only (pyright) would
// go on publishing for it to no one, while one that reports on its
// workspace (gopls) republishes it as a file nobody opened, which every
// client then sees (see lsp.Drainer).
type diagHolds struct {
	mu sync.Mutex
	m  map[*lsp.Manager]map[string]*diagHold
}

type diagHold struct {
	n     int
	owned bool // not open before the first request: closed after the last
}

// take holds files (absolute paths) of m, and returns the distinct ones.
func (h *diagHolds) take(m *lsp.Manager, files []string) []string {
	open := map[string]bool{}
	for _, p := range m.OpenDocuments() {
		open[p] = true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	docs := h.m[m]
	if docs == nil {
		docs = map[string]*diagHold{}
		h.m[m] = docs
	}
	var held []string
	for _, f := range files {
		f = filepath.Clean(f)
		if slices.Contains(held, f) {
			continue
		}
		held = append(held, f)
		d := docs[f]
		if d == nil {
			d = &diagHold{owned: !open[f]}
			docs[f] = d
		}
		d.n++
	}
	return held
}

// release lets go of held, closing the files no request holds any more
// that were not open before.
func (h *diagHolds) release(ctx context.Context, m *lsp.Manager, held []string) {
	var closing []string
	h.mu.Lock()
	docs := h.m[m]
	for _, f := range held {
		d := docs[f]
		if d == nil {
			continue
		}
		if d.n--; d.n == 0 {
			delete(docs, f)
			if d.owned {
				closing = append(closing, f)
			}
		}
	}
	if len(docs) == 0 {
		delete(h.m, m)
	}
	h.mu.Unlock()
	for _, f := range closing {
		_ = m.Close(context.WithoutCancel(ctx), f)
	}
}

// DiagnoseManager runs req on m, a Manager of the caller's own, as the
// runtime runs a diagnostics request on a project's shared one: the files
// opened (those not open before are closed again at the end), settled,
// and drained through an lsp.Drainer of the call's own, so the answer is
// every diagnostic of the files that stands, whatever m's other clients
// drained. It is what the C ABI's idb_lsp_diagnose does on a manager of
// the process, and Remote.Diagnose in the runtime. Each file's error is
// in its DiagFile.Err; an error is returned only for a request that
// cannot run (no files, a path that is not absolute).
func DiagnoseManager(ctx context.Context, m *lsp.Manager, req DiagRequest) (*DiagResult, error) {
	if err := checkDiagRequest(&req); err != nil {
		return nil, fmt.Errorf("warm: DiagnoseManager: %w", err)
	}
	res, errs := diagnose(ctx, m, &req)
	for i, err := range errs {
		res.Files[i].Err = err
	}
	return res, nil
}
