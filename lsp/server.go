package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/internal/env"
	"github.com/idebridge/idebridge/internal/fileuri"
	"github.com/idebridge/idebridge/internal/safefile"
	"github.com/idebridge/idebridge/lspdiag"
)

// ServerState is the life-cycle state of a language server.
type ServerState int

// The states of a server. A server starts Stopped, is started lazily on
// first use (Starting, then Running), and ends Stopped after Shutdown or
// Reload. A crash or a failed start moves it to Error; the next use
// restarts it while its restart policy allows.
const (
	StateStopped ServerState = iota
	StateStarting
	StateRunning
	StateStopping
	StateError
)

func (s ServerState) String() string {
	switch s {
	case StateStopped:
		return "stopped"
	case StateStarting:
		return "starting"
	case StateRunning:
		return "running"
	case StateStopping:
		return "stopping"
	case StateError:
		return "error"
	}
	return fmt.Sprintf("ServerState(%d)", int(s))
}

// MarshalText writes the state's name.
func (s ServerState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ServerStatus is a snapshot of one configured server.
type ServerStatus struct {
	Name  string      `json:"name"`
	State ServerState `json:"state"`
	// PID is the server's process id while it runs, else 0.
	PID int `json:"pid,omitempty"`
	// Restarts counts the restarts used after crashes.
	Restarts int `json:"restarts"`
	// Err is the last failure while State is StateError.
	Err error `json:"-"`
	// PositionEncoding is what the running server chose for columns.
	PositionEncoding string `json:"positionEncoding,omitempty"`
	// Extensions are the extensions routed to the server, sorted.
	Extensions []string `json:"extensions"`
}

// server supervises one configured language server: it starts instances
// (processes) on demand, detects crashes and applies the restart policy.
type server struct {
	m   *Manager
	cfg ServerConfig
	log *slog.Logger

	// syncMu orders the document messages (didOpen, didChange, didSave,
	// didClose) sent to the server, and guards the documents routed to it.
	syncMu sync.Mutex

	mu       sync.Mutex
	state    ServerState
	stateCh  chan struct{} // closed and replaced at every state change
	inst     *instance     // the current instance while starting or running
	lastErr  *ServerError  // in StateError
	restarts int
	failedAt time.Time
	retired  bool // stopped by Reload or Shutdown for good

	// pace is what Settle has measured of the server's timing, across
	// restarts.
	pace pace
}

func newServer(m *Manager, cfg ServerConfig) *server {
	return &server{m: m, cfg: cfg, log: m.log.With("server", cfg.Name), stateCh: make(chan struct{})}
}

// errShutDown is the end of an instance that was shut down on purpose.
var errShutDown = errors.New("language server was shut down")

// errRetired is returned by ensure for a server that Reload removed.
var errRetired = errors.New("language server configuration was replaced")

// setState changes the state and wakes everyone waiting for a change.
// Call with s.mu held.
func (s *server) setState(st ServerState) {
	s.state = st
	close(s.stateCh)
	s.stateCh = make(chan struct{})
}

// ensure returns a running instance, starting or restarting the server
// when needed. It waits for a start (bounded by the startup timeout) or a
// restart backoff, and returns early when ctx ends.
func (s *server) ensure(ctx context.Context) (*instance, error) {
	for {
		s.mu.Lock()
		if s.retired {
			s.mu.Unlock()
			return nil, errRetired
		}
		switch s.state {
		case StateRunning:
			inst := s.inst
			s.mu.Unlock()
			return inst, nil
		case StateError:
			if errors.Is(s.lastErr.Err, ErrCommandNotFound) {
				// Not a crash: start again, without using a restart,
				// only once the command is installed.
				if !s.commandFound() {
					e := *s.lastErr
					e.Final, e.Restarts = true, s.restarts
					s.mu.Unlock()
					return nil, &e
				}
				s.beginStart()
				break
			}
			if s.restarts >= s.cfg.restartLimit() {
				e := *s.lastErr
				e.Final, e.Restarts = true, s.restarts
				s.mu.Unlock()
				return nil, &e
			}
			if wait := s.m.restartDelay(s.restarts) - time.Since(s.failedAt); wait > 0 {
				s.mu.Unlock()
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return nil, fmt.Errorf("waiting to restart %s: %w", s.cfg.Name, ctx.Err())
				case <-t.C:
				}
				continue
			}
			s.restarts++
			s.log.Info("lsp: restarting language server", "restart", s.restarts, "cause", s.lastErr.Err)
			s.beginStart()
		case StateStopped:
			s.beginStart()
		}
		ch := s.stateCh
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("starting %s: %w", s.cfg.Name, ctx.Err())
		}
	}
}

// commandFound reports whether the server's command may now start: a
// bare name is found on PATH as exec.Command finds it, an absolute path
// is an executable file (a relative one is tried again).
func (s *server) commandFound() bool {
	c := exec.Command(s.cfg.Command)
	if c.Err != nil {
		return false
	}
	return !filepath.IsAbs(c.Path) || isExecutable(c.Path)
}

// beginStart starts an instance in the background. Call with s.mu held.
func (s *server) beginStart() {
	s.setState(StateStarting)
	go s.runStart()
}

// event tells ManagerOptions.OnEvent, when set, about e.
func (s *server) event(e Event) {
	if f := s.m.opts.OnEvent; f != nil {
		e.Server = s.cfg.Name
		if e.Kind != EventProgress {
			e.Percentage = -1
		}
		f(e)
	}
}

// runStart starts an instance and reopens the documents routed to the
// server, then settles the state: Running, Error, or Stopped when the
// server was retired meanwhile.
func (s *server) runStart() {
	s.event(Event{Kind: EventStarting})
	inst, err := s.spawn()
	if err == nil {
		s.m.reopen(s, inst)
	}
	s.mu.Lock()
	if err == nil && inst.dead {
		err = inst.exitErr
	}
	if s.retired {
		s.inst = nil
		s.mu.Unlock()
		if inst != nil {
			inst.shutdown(context.Background(), s.shutdownTimeout())
		}
		s.mu.Lock()
		s.setState(StateStopped)
		s.mu.Unlock()
		return
	}
	if err != nil {
		var se *ServerError
		if !errors.As(err, &se) {
			se = &ServerError{Server: s.cfg.Name, Err: err}
		}
		s.inst, s.lastErr, s.failedAt = nil, se, time.Now()
		s.setState(StateError)
		s.mu.Unlock()
		s.log.Warn("lsp: language server failed to start", "err", err)
		s.m.reg.ReportFailure(s.cfg.Name, err)
		s.event(Event{Kind: EventFailed, Err: err})
		return
	}
	s.inst = inst
	s.setState(StateRunning)
	s.mu.Unlock()
	s.event(Event{Kind: EventRunning})
	s.log.Debug("lsp: language server running", "pid", inst.proc.cmd.Process.Pid, "encoding", inst.encoding())
}

func (s *server) startupTimeout() time.Duration {
	if s.cfg.StartupTimeout > 0 {
		return s.cfg.StartupTimeout
	}
	return s.m.opts.StartupTimeout
}

func (s *server) shutdownTimeout() time.Duration {
	if s.cfg.ShutdownTimeout > 0 {
		return s.cfg.ShutdownTimeout
	}
	return s.m.opts.ShutdownTimeout
}

// workspaceFolder is the folder the server works on.
func (s *server) workspaceFolder() string {
	if s.cfg.WorkspaceFolder != "" {
		return s.cfg.WorkspaceFolder
	}
	if s.cfg.ProjectDir != "" {
		return s.cfg.ProjectDir
	}
	return s.m.opts.ProjectDir
}

// environ is the server's environment: the base environment, the three
// CLAUDE_* variables, then the configuration's env.
func (s *server) environ() []string {
	env := append([]string(nil), env.Resolve(s.m.opts.Env)...)
	project := s.cfg.ProjectDir
	if project == "" {
		project = s.m.opts.ProjectDir
	}
	env = append(env, VarPluginRoot+"="+s.cfg.Root, VarPluginData+"="+s.cfg.DataDir, VarProjectDir+"="+project)
	for k, v := range s.cfg.Env {
		env = append(env, k+"="+v)
	}
	return env
}

// spawn starts the process and initializes it, within the startup
// timeout.
func (s *server) spawn() (*instance, error) {
	s.mu.Lock()
	restarts := s.restarts
	s.mu.Unlock()
	fail := func(err error) error { return &ServerError{Server: s.cfg.Name, Restarts: restarts, Err: err} }
	if s.cfg.Transport == TransportSocket {
		return nil, fail(fmt.Errorf("transport %q: %w", s.cfg.Transport, ErrUnsupportedTransport))
	}
	folder := s.workspaceFolder()
	cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
	if st, err := os.Stat(folder); err == nil && st.IsDir() {
		cmd.Dir = folder
	}
	cmd.Env = s.environ()
	p, err := startProc(cmd)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			err = &CommandNotFoundError{Command: s.cfg.Command, Hint: InstallHint(s.cfg.Command), Err: err}
			e := fail(err).(*ServerError)
			e.Final = true
			return nil, e
		}
		return nil, fail(fmt.Errorf("starting %s: %w", s.cfg.Command, err))
	}
	s.mu.Lock()
	inst := newInstance(s, p, s.restarts)
	s.inst = inst
	retired := s.retired
	s.mu.Unlock()
	go inst.watch()
	if retired {
		// stop ran before the instance was known: it kills what it
		// finds, so this start ends here.
		inst.kill()
		<-inst.gone
		return nil, inst.failure(errShutDown)
	}

	timeout := s.startupTimeout()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	abort := func(err error) (*instance, error) {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w (%v): %w", ErrStartupTimeout, timeout, err)
		}
		inst.kill()
		<-inst.gone // for the exit status
		return nil, inst.failure(fmt.Errorf("initializing: %w", err))
	}
	var res initializeResult
	params := s.initializeParams(folder)
	params["processId"] = p.clientProcessID() // null inside a PID namespace
	var raw json.RawMessage
	if err := inst.conn.call(ctx, "initialize", params, &raw); err != nil {
		return abort(err)
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return abort(fmt.Errorf("decoding the initialize result: %w", err))
	}
	inst.fmu.Lock()
	inst.enc = res.encoding()
	inst.nav.caps = navProviders(raw)
	if p, ok := parsePullOptions(res.Capabilities.DiagnosticProvider); ok {
		inst.pullStatic = &p
	}
	inst.fmu.Unlock()
	if err := inst.conn.notify(ctx, "initialized", struct{}{}); err != nil {
		return abort(err)
	}
	if len(s.cfg.Settings) > 0 {
		params := map[string]json.RawMessage{"settings": s.cfg.Settings}
		if err := inst.conn.notify(ctx, "workspace/didChangeConfiguration", params); err != nil {
			return abort(err)
		}
	}
	return inst, nil
}

// initializeResult is the part of the initialize result we use.
type initializeResult struct {
	Capabilities struct {
		PositionEncoding string `json:"positionEncoding"`
		// DiagnosticProvider offers pull diagnostics.
		DiagnosticProvider json.RawMessage `json:"diagnosticProvider"`
	} `json:"capabilities"`
	// OffsetEncoding is clangd's pre-3.17 form of the same choice.
	OffsetEncoding string `json:"offsetEncoding"`
}

func (r *initializeResult) encoding() string {
	for _, e := range []string{r.Capabilities.PositionEncoding, r.OffsetEncoding} {
		switch e {
		case EncodingUTF8, EncodingUTF16, EncodingUTF32:
			return e
		}
	}
	return EncodingUTF16
}

// initializeParams identifies the client and advertises what it handles.
func (s *server) initializeParams(folder string) map[string]any {
	encodings := []string{EncodingUTF16, EncodingUTF8}
	p := map[string]any{
		"processId":  os.Getpid(),
		"clientInfo": map[string]string{"name": s.m.opts.ClientName, "version": s.m.opts.ClientVersion},
		"locale":     "en",
		"rootPath":   folder,
		"rootUri":    fileuri.FromPath(folder),
		"workspaceFolders": []map[string]string{
			{"uri": fileuri.FromPath(folder), "name": filepath.Base(folder)},
		},
		"trace": "off",
		"capabilities": map[string]any{
			"general": map[string]any{"positionEncodings": encodings},
			// clangd's extension, from before positionEncodings.
			"offsetEncoding": encodings,
			"workspace": map[string]any{
				"configuration":          true,
				"workspaceFolders":       true,
				"didChangeConfiguration": map[string]any{"dynamicRegistration": false},
				// Files changed on disk are polled before Settle and Drain.
				"didChangeWatchedFiles": map[string]any{"dynamicRegistration": true, "relativePatternSupport": true},
				"diagnostics":           map[string]any{"refreshSupport": true},
			},
			"textDocument": map[string]any{
				"synchronization": map[string]any{"dynamicRegistration": false, "didSave": true,
					"willSave": false, "willSaveWaitUntil": false},
				"publishDiagnostics": map[string]any{
					"relatedInformation":     true,
					"versionSupport":         true,
					"tagSupport":             map[string]any{"valueSet": []int{diag.TagUnnecessary, diag.TagDeprecated}},
					"codeDescriptionSupport": true,
					"dataSupport":            false,
				},
				// Pull diagnostics, asked by Settle whenever offered.
				"diagnostic":     map[string]any{"dynamicRegistration": true, "relatedDocumentSupport": false},
				"hover":          map[string]any{"contentFormat": []string{"markdown", "plaintext"}},
				"definition":     map[string]any{"linkSupport": true},
				"references":     map[string]any{},
				"documentSymbol": map[string]any{"hierarchicalDocumentSymbolSupport": true},
				"callHierarchy":  map[string]any{},
				"typeHierarchy":  map[string]any{},
				// Code actions and formatting, as staged edits (edit_fix.go).
				"codeAction": map[string]any{
					"codeActionLiteralSupport": map[string]any{"codeActionKind": map[string]any{"valueSet": []string{
						"", "quickfix", "refactor", "refactor.extract", "refactor.inline", "refactor.rewrite",
						"source", "source.organizeImports", "source.fixAll"}}},
					"isPreferredSupport": true,
					"disabledSupport":    true,
					"dataSupport":        true,
					"resolveSupport":     map[string]any{"properties": []string{"edit"}},
				},
				"formatting": map[string]any{},
			},
			"window": map[string]any{
				"workDoneProgress": true,
				"showMessage":      map[string]any{},
			},
			// rust-analyzer's readiness: experimental/serverStatus
			// (see statusSignal).
			"experimental": map[string]any{"serverStatusNotification": true},
		},
	}
	if len(s.cfg.InitializationOptions) > 0 {
		p["initializationOptions"] = s.cfg.InitializationOptions
	}
	return p
}

// instanceGone records that inst ended; crash says it was not being
// shut down. It reports whether the server moved to StateError.
func (s *server) instanceGone(inst *instance, crash bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst.dead = true
	if !crash || s.inst != inst || s.state != StateRunning {
		return false // a start in progress sees dead; a stop handles itself
	}
	s.inst, s.lastErr, s.failedAt = nil, inst.exitErr, time.Now()
	s.setState(StateError)
	return true
}

// current returns the running instance, or nil.
func (s *server) current() *instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateRunning {
		return nil
	}
	return s.inst
}

// failure returns the error a use of the server should report when it has
// no running instance, or nil.
func (s *server) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == StateError && s.lastErr != nil {
		e := *s.lastErr
		e.Restarts = s.restarts
		e.Final = s.restarts >= s.cfg.restartLimit() || errors.Is(e.Err, ErrCommandNotFound)
		return &e
	}
	return nil
}

// stop stops the server for good: a running instance is shut down
// gracefully within the shutdown timeout (and ctx), then its process group
// is killed; a start in progress is killed at once (a server that has not
// answered initialize has nothing to save, and waiting for it would let
// a server that never answers hold stop for its whole startup timeout).
func (s *server) stop(ctx context.Context) {
	s.mu.Lock()
	s.retired = true
	for {
		switch s.state {
		case StateStarting:
			// spawn sees retired when it has no instance yet; otherwise
			// the kill ends its initialize, and runStart, seeing the
			// server retired, settles it Stopped.
			ch, inst := s.stateCh, s.inst
			s.mu.Unlock()
			if inst != nil {
				inst.kill()
			}
			<-ch
			s.mu.Lock()
			continue
		case StateStopping:
			ch, inst := s.stateCh, s.inst
			s.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				if inst != nil {
					inst.kill()
				}
				<-ch
			}
			s.mu.Lock()
			continue
		case StateRunning:
			inst := s.inst
			s.setState(StateStopping)
			s.mu.Unlock()
			inst.shutdown(ctx, s.shutdownTimeout())
			s.mu.Lock()
			s.inst = nil
			s.setState(StateStopped)
		case StateError:
			s.setState(StateStopped)
		}
		s.mu.Unlock()
		return
	}
}

func (s *server) status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ServerStatus{Name: s.cfg.Name, State: s.state, Restarts: s.restarts}
	if s.state == StateError && s.lastErr != nil {
		st.Err = s.lastErr
	}
	if s.inst != nil && s.state == StateRunning {
		st.PID = s.inst.proc.cmd.Process.Pid
		st.PositionEncoding = s.inst.encoding()
	}
	return st
}

// instance is one process of a server and its connection.
type instance struct {
	s        *server
	proc     *proc
	rwc      *pipeRWC
	conn     *conn
	enc      string // position encoding; guarded by fmu
	gone     chan struct{}
	goneOnce sync.Once
	exitErr  *ServerError // set before gone is closed
	stopping atomic.Bool
	restarts int  // restarts used before this instance
	dead     bool // guarded by s.mu; set before gone is closed

	fmu      sync.Mutex
	fresh    chan struct{} // closed and replaced at every freshness event
	mark     uint64        // messages received when the last document message was sent
	markTime time.Time
	sent     uint64 // document messages (and watched-file changes) sent
	workSent uint64 // sent, when the server last began work (workBegan)
	realSent uint64 // sent, at the last message that was not a document's unchanged text
	// carryURI, carryN: a document closed to be reopened at once with the
	// same text, and its docTrack.realN, which the reopened one keeps.
	carryURI string
	carryN   uint64
	activity time.Time         // last progress, publish or pull answer
	active   map[string]uint64 // progress token -> arrival of its begin
	ended    uint64            // latest arrival of the begin of an ended progress
	// unclaimed: the arrivals of the begins of the progresses ended since
	// the last publish that no request's answer has claimed (see
	// endedUnclaimed).
	unclaimed []uint64
	requests  int                  // the caller's requests outstanding (callRequest)
	reqOwn    map[string]struct{}  // active progress tokens begun while a request was outstanding
	docs      map[string]*docTrack // uri -> open document
	clearing  map[string]bool      // closed documents whose clearing publish may still come
	// Pull diagnostics: offered in the initialize answer or registered;
	// pullOff when the server turned out not to serve them.
	pullStatic *pullProvider
	pullDyn    map[string]pullProvider // registration id -> provider
	pullOff    bool
	refreshGen uint64 // workspace/diagnostic/refresh requests so far
	refreshing bool   // the refresher goroutine runs
	refreshC   chan struct{}
	files      *watcher
	nav        navLoad // the server's loading, for navigation (nav_load.go)
}

// docTrack is what an instance knows of one open document: its text as
// last sent (for column conversion) and what the server said about it.
type docTrack struct {
	version int
	lang    string
	text    string
	idx     *lineIndex // built on first use
	sentSeq uint64     // messages received when its last didOpen/didChange was sent
	sentN   uint64     // the instance's count of messages sent, after it
	sentAt  time.Time
	opened  bool // the last message was didOpen
	// realN: sentN at the last message that gave the server a text it
	// did not have: not a reopen with the text it had just before, which
	// changes nothing another document's set depends on.
	realN uint64

	// Publishes answering the last message.
	pubSeq     uint64 // arrival of the last publish that counts for it; 0: none
	pubVersion *int
	pubEmpty   bool      // that publish had no diagnostics
	firstAt    time.Time // the first publish after sentSeq
	lastAt     time.Time
	everPub    bool // the server published for it in this session

	// Pull diagnostics.
	pulled pullRecord
	// pushed: the last set published for it, as the server sent it (in
	// its position encoding), kept when the server also serves pulls for
	// it: the two sets are joined (see pushedSet).
	pushed    []diag.Diagnostic
	items     map[string][]diag.Diagnostic // identifier -> last full set, converted
	resultIDs map[string]string

	// The last whole set published or pulled for it in this session,
	// converted to characters (see currentSet).
	set      []diag.Diagnostic
	setTotal int // how many the set had before it was cut to set
	hasSet   bool
}

func (t *docTrack) index() *lineIndex {
	if t.idx == nil {
		t.idx = newLineIndex(t.text)
	}
	return t.idx
}

func newInstance(s *server, p *proc, restarts int) *instance {
	inst := &instance{
		s: s, proc: p, restarts: restarts, gone: make(chan struct{}),
		fresh: make(chan struct{}), active: map[string]uint64{}, reqOwn: map[string]struct{}{},
		docs: map[string]*docTrack{}, clearing: map[string]bool{},
		pullDyn: map[string]pullProvider{}, refreshC: make(chan struct{}, 1),
		markTime: time.Now(), nav: navLoad{start: time.Now()},
	}
	roots := []string{s.workspaceFolder()}
	if pd := s.m.opts.ProjectDir; pd != "" && pd != roots[0] {
		roots = append(roots, pd)
	}
	inst.files = newWatcher(roots, func(msg string, args ...any) { s.log.Warn(msg, args...) })
	inst.rwc = &pipeRWC{r: p.stdout, w: p.stdin, writeTimeout: s.m.opts.WriteTimeout, broken: p.kill}
	inst.conn = newConn(inst.rwc, inst, s.m.opts.RetryBackoff, s.log)
	return inst
}

// encoding is the position encoding the server chose.
func (inst *instance) encoding() string {
	inst.fmu.Lock()
	defer inst.fmu.Unlock()
	return inst.enc
}

func (inst *instance) isGone() bool {
	select {
	case <-inst.gone:
		return true
	default:
		return false
	}
}

// failed returns the instance's failure when err, from sending to it,
// means the instance is gone or going (the connection closed, or a write
// failed and the server is being killed); nil otherwise.
func (inst *instance) failed(err error) error {
	if !inst.isGone() && !errors.Is(err, ErrConnClosed) && inst.rwc.writeErr() == nil {
		return nil
	}
	<-inst.gone
	return inst.exitErr
}

// kill kills the process group at once.
func (inst *instance) kill() { inst.proc.kill() }

// watch waits for the process to exit or its stream to end. Unless the
// instance is being shut down, that is a crash: the group is killed and
// the server told.
func (inst *instance) watch() {
	select {
	case <-inst.proc.exited:
	case <-inst.conn.disconnected():
	}
	stopping := inst.stopping.Load()
	if !stopping {
		inst.proc.kill()
	}
	// Wait for the process, then for the ends of its output (the group is
	// dead, so they come at once), so the stderr tail and the reason the
	// stream ended are complete. Bounded, in case a process cannot die.
	limit, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	for _, ch := range []<-chan struct{}{inst.proc.exited, inst.conn.disconnected(), inst.proc.stderrDone} {
		select {
		case <-ch:
		case <-limit.Done():
		}
	}
	cancel()
	inst.conn.close()
	cause := ErrServerExited
	if stopping {
		cause = errShutDown
	} else if err := inst.conn.stream.readErr(); err != nil && errors.Is(err, ErrFrame) &&
		!errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, os.ErrClosed) {
		cause = fmt.Errorf("%w: connection lost: %w", ErrServerExited, err)
	} else if err := inst.rwc.writeErr(); err != nil {
		cause = fmt.Errorf("%w: writing to it failed: %w", ErrServerExited, err)
	}
	inst.exitErr = inst.failure(cause)
	// The server's state changes before gone is closed, so that whoever
	// sees the instance gone also sees the server failed.
	crashed := inst.s.instanceGone(inst, !stopping)
	inst.goneOnce.Do(func() { close(inst.gone) })
	inst.fmu.Lock()
	inst.signal()
	inst.fmu.Unlock()
	if crashed {
		inst.s.log.Warn("lsp: language server crashed", "err", inst.exitErr)
		inst.s.m.reg.ReportFailure(inst.s.cfg.Name, inst.exitErr)
	}
}

// failure describes the instance's end with cause.
func (inst *instance) failure(cause error) *ServerError {
	e := &ServerError{Server: inst.s.cfg.Name, Restarts: inst.restarts, Err: cause, Stderr: inst.proc.stderr.String()}
	select {
	case <-inst.proc.exited:
		e.ExitStatus = inst.proc.exitStatus()
	default:
	}
	return e
}

// shutdown stops the instance: shutdown request, exit notification,
// stdin closed, a wait for the process, then the process group killed (it
// catches children, and servers that ignore exit). Bounded by timeout and
// ctx.
func (inst *instance) shutdown(ctx context.Context, timeout time.Duration) {
	inst.stopping.Store(true)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if !inst.isGone() {
		if err := inst.conn.call(ctx, "shutdown", nil, nil); err != nil {
			inst.s.log.Debug("lsp: shutdown request failed", "err", err)
		}
		_ = inst.conn.notify(ctx, "exit", nil)
		// Only now: closing stdin before exit can kill a server by SIGPIPE
		// while it still writes.
		inst.rwc.closeWrite()
		select {
		case <-inst.proc.exited:
		case <-ctx.Done():
			inst.s.log.Warn("lsp: language server did not exit in time; killing it", "timeout", timeout)
		}
	}
	inst.proc.kill()
	<-inst.gone
}

// setText records the text of a document about to be sent (didOpen or
// didChange), so that the columns of publishes for it can be converted and
// their freshness judged. Reading the arrival count before sending means a
// publish that overtakes the return of the write still counts as a
// reaction to it. Call with the server's syncMu held.
//
// same says that the message gives the server the text it had open just
// before (a reopen; see docTrack.realN).
func (inst *instance) setText(uri, lang string, version int, text string, open, same bool) {
	inst.fmu.Lock()
	defer inst.fmu.Unlock()
	t := inst.docs[uri]
	if t == nil {
		t = &docTrack{}
		inst.docs[uri] = t
	}
	t.version, t.lang, t.text, t.idx, t.opened = version, lang, text, nil, open
	inst.markLocked()
	if uri == inst.carryURI {
		t.realN = max(t.realN, inst.carryN) // reopened: its last real change stands
		inst.carryURI = ""
	}
	if !same {
		inst.realSent, t.realN = inst.sent, inst.sent
	}
	t.sentSeq, t.sentAt, t.sentN = inst.mark, inst.markTime, inst.sent
}

// dropText forgets a document about to be closed. Servers answer a close
// with an empty publish, which may arrive after the document was opened
// again: clearing remembers to expect it. reopen says the document is
// opened again at once with the same text (the pair changes nothing).
// Call with syncMu held.
func (inst *instance) dropText(uri string, reopen bool) {
	inst.fmu.Lock()
	defer inst.fmu.Unlock()
	inst.carryURI = ""
	if t := inst.docs[uri]; t != nil && reopen {
		inst.carryURI, inst.carryN = uri, t.realN
	}
	delete(inst.docs, uri)
	if len(inst.clearing) >= 4*maxWatchedEntries {
		clear(inst.clearing) // servers that never clear: stay bounded
	}
	inst.clearing[uri] = true
	inst.markLocked()
	if !reopen {
		inst.realSent = inst.sent
	}
}

// setMark records that a message that may change diagnostics (other than
// a document's own) is about to be sent: later publishes and progress
// count as reactions to it. Call with syncMu held.
func (inst *instance) setMark() {
	inst.fmu.Lock()
	inst.markLocked()
	inst.realSent = inst.sent
	inst.fmu.Unlock()
}

func (inst *instance) markLocked() {
	inst.sent++
	inst.mark = max(inst.mark, inst.conn.received())
	inst.markTime = time.Now()
}

// signal wakes everyone waiting for a freshness event. Call with fmu held.
func (inst *instance) signal() {
	close(inst.fresh)
	inst.fresh = make(chan struct{})
}

// notification applies a server notification; it runs on the connection's
// dispatch goroutine, in arrival order.
func (inst *instance) notification(seq uint64, method string, params json.RawMessage) {
	switch method {
	case "textDocument/publishDiagnostics":
		inst.onPublish(seq, params)
	case "$/progress":
		inst.onProgress(seq, params)
	case "experimental/serverStatus", "$/analyzerStatus", "language/status":
		inst.onStatus(seq, method, params)
	case "window/logMessage", "window/showMessage":
		var m struct {
			Type    int    `json:"type"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(params, &m)
		level := slog.LevelDebug
		switch m.Type {
		case 1:
			level = slog.LevelError
		case 2:
			level = slog.LevelWarn
		case 3:
			if method == "window/showMessage" {
				level = slog.LevelInfo
			}
		}
		if method == "window/logMessage" && level < slog.LevelWarn {
			level = slog.LevelDebug
		}
		inst.s.log.Log(context.Background(), level, "lsp: "+method, "message", m.Message)
	default:
		inst.s.log.Debug("lsp: notification ignored", "method", method)
	}
}

// request answers a server request; it runs on the dispatch goroutine.
func (inst *instance) request(_ context.Context, seq uint64, method string, params json.RawMessage) (any, error) {
	switch method {
	case "workspace/configuration":
		var p struct {
			Items []struct {
				Section string `json:"section"`
			} `json:"items"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &RPCError{Code: -32602, Message: "invalid params: " + err.Error()}
		}
		out := make([]json.RawMessage, len(p.Items))
		for i, it := range p.Items {
			out[i] = settingsSection(inst.s.cfg.Settings, it.Section)
		}
		return out, nil
	case "client/registerCapability":
		inst.register(params)
		return nil, nil
	case "client/unregisterCapability":
		inst.unregister(params)
		return nil, nil
	case "workspace/diagnostic/refresh":
		inst.onRefresh()
		return nil, nil
	case "window/workDoneProgress/create":
		// Work is coming: until the token begins, the server counts as
		// loading.
		inst.fmu.Lock()
		inst.navCreated(seq, params)
		if inst.requests == 0 {
			inst.workBegan()
		}
		inst.activity = time.Now()
		inst.signal()
		inst.fmu.Unlock()
		return nil, nil
	case "window/showMessageRequest", "workspace/semanticTokens/refresh",
		"workspace/inlayHint/refresh", "workspace/codeLens/refresh", "workspace/inlineValue/refresh",
		"workspace/foldingRange/refresh":
		return nil, nil
	case "workspace/workspaceFolders":
		f := inst.s.workspaceFolder()
		return []map[string]string{{"uri": fileuri.FromPath(f), "name": filepath.Base(f)}}, nil
	case "workspace/applyEdit":
		return map[string]any{"applied": false, "failureReason": "this client does not apply edits"}, nil
	case "window/showDocument":
		return map[string]bool{"success": false}, nil
	}
	return nil, &RPCError{Code: -32601, Message: "method not found: " + method}
}

// register records the capabilities a server registers that Settle uses:
// pull diagnostics and file watchers.
func (inst *instance) register(params json.RawMessage) {
	var p struct {
		Registrations []struct {
			ID              string          `json:"id"`
			Method          string          `json:"method"`
			RegisterOptions json.RawMessage `json:"registerOptions"`
		} `json:"registrations"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	for _, r := range p.Registrations {
		switch r.Method {
		case "textDocument/diagnostic":
			prov, ok := parsePullOptions(r.RegisterOptions)
			if !ok {
				prov = pullProvider{}
			}
			inst.fmu.Lock()
			inst.pullDyn[r.ID] = prov
			inst.signal()
			inst.fmu.Unlock()
		case "workspace/didChangeWatchedFiles":
			inst.files.register(r.ID, parseWatchers(r.RegisterOptions, inst.s.workspaceFolder()))
		}
	}
}

func (inst *instance) unregister(params json.RawMessage) {
	var p struct {
		// The protocol's own spelling.
		Unregisterations []struct {
			ID     string `json:"id"`
			Method string `json:"method"`
		} `json:"unregisterations"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	for _, r := range p.Unregisterations {
		switch r.Method {
		case "textDocument/diagnostic":
			inst.fmu.Lock()
			delete(inst.pullDyn, r.ID)
			inst.signal()
			inst.fmu.Unlock()
		case "workspace/didChangeWatchedFiles":
			inst.files.unregister(r.ID)
		}
	}
}

// settingsSection returns the part of settings a workspace/configuration
// item asks for: all of it for an empty section, else the value at the
// dotted path ("python.analysis"), trying a literal top-level key of that
// name first; null when absent.
func settingsSection(settings json.RawMessage, section string) json.RawMessage {
	null := json.RawMessage("null")
	if len(settings) == 0 {
		return null
	}
	if section == "" {
		return settings
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(settings, &top) != nil {
		return null
	}
	if v, ok := top[section]; ok {
		return v
	}
	cur := settings
	for _, part := range splitDots(section) {
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) != nil {
			return null
		}
		v, ok := obj[part]
		if !ok {
			return null
		}
		cur = v
	}
	return cur
}

func splitDots(s string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// onProgress tracks work-done progress, the exact "done" signal of servers
// that report it (gopls with verboseWorkDoneProgress).
func (inst *instance) onProgress(seq uint64, params json.RawMessage) {
	var p struct {
		Token json.RawMessage `json:"token"`
		Value struct {
			Kind       string `json:"kind"`
			Title      string `json:"title"`
			Message    string `json:"message"`
			Percentage *int   `json:"percentage"`
		} `json:"value"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	tok := string(p.Token)
	if isNavToken(tok) {
		return // a navigation request's own progress, not the server's work
	}
	if inst.s.m.opts.OnEvent != nil {
		e := Event{Kind: EventProgress, Progress: p.Value.Kind, Token: tok, Title: p.Value.Title, Message: p.Value.Message, Percentage: -1}
		if p.Value.Percentage != nil {
			e.Percentage = *p.Value.Percentage
		}
		inst.s.event(e)
	}
	inst.fmu.Lock()
	defer inst.fmu.Unlock()
	inst.navProgress(seq, tok, p.Value.Kind, params)
	switch p.Value.Kind {
	case "begin":
		inst.active[tok] = seq
		if inst.requests > 0 {
			inst.reqOwn[tok] = struct{}{}
		} else {
			inst.workBegan()
		}
	case "end":
		if began, ok := inst.active[tok]; ok {
			delete(inst.active, tok)
			inst.ended = max(inst.ended, began)
			if _, own := inst.reqOwn[tok]; own {
				delete(inst.reqOwn, tok)
				break
			}
			if len(inst.unclaimed) == maxUnclaimed {
				inst.unclaimed = inst.unclaimed[1:]
			}
			inst.unclaimed = append(inst.unclaimed, began)
		}
	case "report":
	default:
		return
	}
	inst.activity = time.Now()
	inst.signal()
}

// maxUnclaimed bounds instance.unclaimed: the oldest are dropped, which
// only makes a progress less likely to be read as "unchanged".
const maxUnclaimed = 64

// endedUnclaimed reports whether a progress begun after the message
// numbered after, and ended since, is unclaimed: no publish followed its
// end (that publish's document was what it worked on) and it was no
// request's own work. Only such a progress, once a quiet period has
// passed, says that a document's set is unchanged. Called with fmu held.
func (inst *instance) endedUnclaimed(after uint64) bool {
	for _, began := range inst.unclaimed {
		if began > after {
			return true
		}
	}
	return false
}

// callRequest sends a request of the caller's (navigation, or one sent
// for the embedder) and waits for its answer. A progress begun while it
// is outstanding is taken for the request's own work (pylsp reports one
// under a token of its own for each request), which says nothing about
// diagnostics: it is never read as "the set is unchanged". A server's
// lint that happens to begin meanwhile is merely not used as evidence.
func (inst *instance) callRequest(ctx context.Context, method string, params, result any) error {
	inst.fmu.Lock()
	inst.requests++
	inst.fmu.Unlock()
	defer func() {
		inst.fmu.Lock()
		inst.requests--
		inst.fmu.Unlock()
	}()
	return inst.conn.call(ctx, method, params, result)
}

// onPublish converts a publishDiagnostics to characters of the document,
// hands it to the registry, and records what it says about the freshness
// of the document's diagnostics.
func (inst *instance) onPublish(seq uint64, params json.RawMessage) {
	if inst.stopping.Load() {
		return // servers clear everything on shutdown; that is not news
	}
	name := inst.s.cfg.Name
	reg := inst.s.m.reg
	decoded, err := lspdiag.DecodePublish(params)
	if err != nil {
		// Publish counts the failure of the server.
		if err := reg.Publish(name, params); err != nil {
			inst.s.log.Warn("lsp: malformed publishDiagnostics", "err", err)
		}
		return
	}
	p := &decoded.Params
	p.URI = fileuri.Canonical(p.URI)
	inst.fmu.Lock()
	enc := inst.enc
	t := inst.docs[p.URI]
	var idx *lineIndex
	version := 0
	if t != nil {
		version = t.version
		if len(p.Diagnostics) > 0 && enc != EncodingUTF32 {
			idx = t.index()
		}
	}
	// A server that serves pulls for the document and publishes too: the
	// registry gets the union (see pushedSet).
	merge := t != nil && len(inst.pullProviders(p.URI, t.lang)) > 0
	var raw []diag.Diagnostic
	if merge {
		raw = cloneDiagnostics(mostSevere(p.Diagnostics, maxSetKept))
	}
	others := map[string]*lineIndex{}
	for i := range p.Diagnostics {
		for _, ri := range p.Diagnostics[i].RelatedInformation {
			u := fileuri.Canonical(ri.Location.URI)
			if o := inst.docs[u]; o != nil && u != p.URI {
				others[u] = o.index()
			}
		}
	}
	inst.fmu.Unlock()

	if p.Version != nil && t == nil {
		// A version refers to an open document; this one is closed, so
		// the publish belongs to an earlier session of it.
		return
	}
	stale := p.Version != nil && *p.Version < version
	if enc != EncodingUTF32 && len(p.Diagnostics) > 0 {
		if idx == nil {
			idx = diskIndex(p.URI)
		}
		for i := range p.Diagnostics {
			d := &p.Diagnostics[i]
			if idx != nil {
				d.Range = idx.convertRange(d.Range, enc)
			}
			for j := range d.RelatedInformation {
				loc := &d.RelatedInformation[j].Location
				loc.URI = fileuri.Canonical(loc.URI)
				switch {
				case loc.URI == p.URI && idx != nil:
					loc.Range = idx.convertRange(loc.Range, enc)
				case others[loc.URI] != nil:
					loc.Range = others[loc.URI].convertRange(loc.Range, enc)
				}
			}
		}
	}
	if merge {
		// The union includes what was pulled, which the server never
		// clears by publishing: it goes to the registry under fmu, while
		// the document is open (see pull).
		inst.fmu.Lock()
		if cur := inst.docs[p.URI]; cur == t {
			t.pushed = raw
			u := *decoded
			u.Params.Diagnostics = append(slices.Clip(p.Diagnostics), t.pulledSet()...)
			v := t.version // the union stands for the document as it is
			u.Params.Version = &v
			inst.toRegistry(&u)
		} else if p.Version == nil {
			// Closed or reopened meanwhile: an unversioned publish is
			// about the file, as for a document that is not open; a
			// versioned one was about the session that ended.
			inst.toRegistry(decoded)
		}
		inst.fmu.Unlock()
	} else if p.Version != nil {
		// About the open document (a closed one returned above): under
		// fmu, while it is still open, so that a close handled meanwhile
		// (which drops the track before it clears the registry) cannot
		// be overtaken by it. A server that does not clear closed files
		// would leave the set standing for the closed file.
		inst.fmu.Lock()
		if inst.docs[p.URI] == t {
			inst.toRegistry(decoded)
		}
		inst.fmu.Unlock()
	} else {
		inst.toRegistry(decoded)
	}
	pc := &inst.s.pace
	if p.Version != nil {
		pc.setVersioned()
	}
	versioned := pc.isVersioned()
	now := time.Now()
	inst.fmu.Lock()
	defer inst.fmu.Unlock()
	inst.activity = now
	inst.signal()
	// The progresses that ended since the last publish were this
	// publish's work (a server that ends its work before publishing, as
	// pylsp does per document), not news about other documents.
	inst.unclaimed = inst.unclaimed[:0]
	t = inst.docs[p.URI] // it may have been closed or reopened meanwhile
	if inst.clearing[p.URI] {
		delete(inst.clearing, p.URI)
		if p.Version == nil && len(p.Diagnostics) == 0 {
			return // the answer to an earlier close, not to what is open now
		}
	}
	if t == nil {
		return
	}
	// A stale publish says nothing about the current version. Nor does an
	// unversioned one from a server that versions its publishes: gopls
	// clears a closed document with one, and it can arrive after the
	// document has been opened again.
	if stale || (p.Version == nil && versioned) {
		return
	}
	t.recordSet(p.Diagnostics, inst.s.cfg.NoDiagnostics)
	if t.pubSeq <= t.sentSeq {
		t.firstAt = now
		if !t.opened {
			// A change's latency is the server's pace; an open's
			// includes loading the project.
			pc.observeFirst(now.Sub(t.sentAt))
		}
	} else if inst.mark <= t.sentSeq {
		// A later step of the same answer (nothing else was sent since).
		pc.observeTail(t.opened, now.Sub(t.firstAt), t.firstAt.Sub(t.sentAt))
		if t.pubEmpty && len(p.Diagnostics) > 0 && p.Version != nil && t.pubVersion != nil && *p.Version == *t.pubVersion {
			pc.setFindsAfterEmpty()
		}
	}
	t.pubSeq, t.pubVersion, t.lastAt, t.everPub = seq, p.Version, now, true
	t.pubEmpty = len(p.Diagnostics) == 0
	if !t.pubEmpty {
		inst.navAnswered("")
	}
}

// toRegistry hands a publish to the Manager's registry, unless the
// server's diagnostics are off.
func (inst *instance) toRegistry(d *lspdiag.Decoded) {
	if inst.s.cfg.NoDiagnostics {
		return
	}
	if err := inst.s.m.reg.PublishDecoded(inst.s.cfg.Name, d); err != nil {
		inst.s.log.Warn("lsp: publishDiagnostics rejected", "err", err)
	}
}

// maxDiskIndexBytes bounds the files read from disk to convert the
// columns of diagnostics for documents that are not open.
const maxDiskIndexBytes = 4 << 20

// diskIndex indexes the file a URI names, for a publish about a document
// that is not open; nil when it cannot be read.
func diskIndex(uri string) *lineIndex {
	path, ok := fileuri.ToPath(uri)
	if !ok || strings.HasPrefix(path, "//") {
		return nil
	}
	data, _, err := safefile.ReadFile(path, maxDiskIndexBytes, nil)
	if err != nil {
		return nil
	}
	return newLineIndex(string(data))
}
