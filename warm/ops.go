package warm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/idebridge/idebridge/lsp"
)

// An operations connection (op "ops") is a Remote's session on a
// Project: after the handshake's reply (the project joined, counted as a
// session for as long as the connection lasts), the client writes calls
// and the runtime writes replies, one JSON object a line each, and any
// number of calls may be in flight at once (at most maxOpsInFlight):
// each reply names the id of its call, in the order the calls end.
//
// A call is {"id":N,"method":"nav","nav":<lsp.NavRequest>,"timeoutNs":T}
// (run on the project's lsp.Manager inside the project's gate, as a
// "nav" request is; T, when given, is its time in the runtime) or
// {"id":N,"method":"servers"} (the Manager's Servers) or
// {"id":N,"method":"diag","diag":<DiagRequest>,"timeoutNs":T} (a "diag"
// request's work: see Diagnose; its result is a diagReply). Its reply is
// {"id":N,"result":...} or {"id":N,"error":{...}} (a navErr). A call
// {"id":N,"method":"cancel"} cancels call N, which then replies with its
// cancellation error; it has no reply of its own. A line the runtime
// cannot read is answered {"id":0,"error":...} and ends the connection;
// so does the connection's end, which cancels every call in flight.

// opsCall is one line a client writes on an operations connection.
type opsCall struct {
	ID     uint64 `json:"id"`
	Method string `json:"method"` // "nav", "diag", "servers" or "cancel"
	// Nav is the request of a "nav" call, Diag that of a "diag" call,
	// and Timeout its time in the runtime (0: none).
	Nav     *lsp.NavRequest `json:"nav,omitempty"`
	Diag    *DiagRequest    `json:"diag,omitempty"`
	Timeout time.Duration   `json:"timeoutNs,omitempty"`
}

// opsReply is one line the runtime writes on an operations connection.
type opsReply struct {
	ID     uint64          `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Err    *navErr         `json:"error,omitempty"`
}

// serverWire is an lsp.ServerStatus on the wire, its error as text.
type serverWire struct {
	Name             string   `json:"name"`
	State            string   `json:"state"`
	PID              int      `json:"pid,omitempty"`
	Restarts         int      `json:"restarts"`
	Error            string   `json:"error,omitempty"`
	PositionEncoding string   `json:"positionEncoding,omitempty"`
	Extensions       []string `json:"extensions"`
}

func serverToWire(s lsp.ServerStatus) serverWire {
	w := serverWire{Name: s.Name, State: s.State.String(), PID: s.PID, Restarts: s.Restarts,
		PositionEncoding: s.PositionEncoding, Extensions: s.Extensions}
	if s.Err != nil {
		w.Error = s.Err.Error()
	}
	return w
}

func serverFromWire(w serverWire) lsp.ServerStatus {
	s := lsp.ServerStatus{Name: w.Name, State: lsp.StateError, PID: w.PID, Restarts: w.Restarts,
		PositionEncoding: w.PositionEncoding, Extensions: w.Extensions}
	known := false
	for st := lsp.StateStopped; st <= lsp.StateError; st++ {
		if st.String() == w.State {
			s.State, known = st, true
		}
	}
	if w.Error != "" {
		s.Err = errors.New(w.Error)
	} else if !known {
		s.Err = fmt.Errorf("the runtime named an unknown state %q", clip(w.State))
	}
	return s
}

const (
	// maxOpsInFlight bounds the calls in flight on one operations
	// connection; a call past it is refused with an error.
	maxOpsInFlight = 64
	// opsWriteTimeout bounds one reply's write: a client that reads
	// nothing for that long loses its connection.
	opsWriteTimeout = 30 * time.Second
)

// ops serves an operations connection: see the comment above.
func (d *daemon) ops(ctx context.Context, c *net.UnixConn, br *bufio.Reader, req request, pid int) {
	p, id, err := d.join(req.Project, pid)
	if err != nil {
		writeLine(c, reply{Error: err.Error()})
		return
	}
	defer d.leave(p, id)
	if err := writeLine(c, reply{}); err != nil {
		return
	}
	c.SetDeadline(time.Time{})
	d.o.Logger.Info("operations session started", "project", p.dir, "session", id, "client", pid)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel() // the connection ended: so does every call in flight
		wg.Wait()
		d.o.Logger.Info("operations session ended", "project", p.dir, "session", id)
	}()
	var wmu sync.Mutex
	send := func(r opsReply) {
		wmu.Lock()
		defer wmu.Unlock()
		c.SetWriteDeadline(time.Now().Add(opsWriteTimeout))
		if err := writeLine(c, r); err != nil {
			c.Close() // the reader then ends, and with it the session
		}
	}
	var mu sync.Mutex
	inflight := map[uint64]context.CancelFunc{}
	for {
		var call opsCall
		if err := readLine(br, &call); err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				send(opsReply{Err: &navErr{Message: "bad call: " + clip(err.Error())}})
			}
			return
		}
		switch call.Method {
		case "cancel":
			mu.Lock()
			if stop := inflight[call.ID]; stop != nil {
				stop()
			}
			mu.Unlock()
			continue
		case "nav", "diag", "servers":
		default:
			send(opsReply{ID: call.ID, Err: &navErr{Message: fmt.Sprintf("unknown method %q", clip(call.Method))}})
			continue
		}
		refuse := ""
		if call.Method == "nav" {
			if call.Nav == nil {
				refuse = "a nav call needs its request"
			} else if _, ok := navResultFor(call.Nav.Op); !ok {
				refuse = fmt.Sprintf("operation %q is not served", clip(string(call.Nav.Op)))
			}
		}
		if call.Method == "diag" {
			if err := checkDiagRequest(call.Diag); err != nil {
				refuse = err.Error()
			}
		}
		mu.Lock()
		if _, dup := inflight[call.ID]; dup && refuse == "" {
			refuse = fmt.Sprintf("call %d is already in flight", call.ID)
		} else if len(inflight) >= maxOpsInFlight && refuse == "" {
			refuse = fmt.Sprintf("%d calls are in flight already, the most one connection may have", maxOpsInFlight)
		}
		if refuse != "" {
			mu.Unlock()
			send(opsReply{ID: call.ID, Err: &navErr{Message: refuse}})
			continue
		}
		cctx, stop := context.WithCancel(ctx)
		if call.Timeout > 0 {
			var stopT context.CancelFunc
			cctx, stopT = context.WithTimeout(cctx, call.Timeout)
			stop = joinCancel(stop, stopT)
		}
		inflight[call.ID] = stop
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep := d.opsRun(cctx, p, call)
			stop()
			mu.Lock()
			delete(inflight, call.ID)
			mu.Unlock()
			send(rep)
		}()
	}
}

func joinCancel(a, b context.CancelFunc) context.CancelFunc {
	return func() { b(); a() }
}

// opsRun runs one call and makes its reply.
func (d *daemon) opsRun(ctx context.Context, p *project, call opsCall) opsReply {
	rep := opsReply{ID: call.ID}
	if call.Method == "servers" {
		ss := p.srv.Manager().Servers()
		ws := make([]serverWire, 0, len(ss))
		for _, s := range ss {
			ws = append(ws, serverToWire(s))
		}
		rep.Result, _ = json.Marshal(ws)
		return rep
	}
	if call.Method == "diag" {
		rep.Result, _ = json.Marshal(d.diagnoseIn(ctx, p, call.Diag))
		return rep
	}
	nr := navigateIn(ctx, p, *call.Nav)
	rep.Result, rep.Err = nr.Result, nr.Err
	return rep
}
