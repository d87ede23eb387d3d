package warm

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/internal/env"
	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/mcp"
	"github.com/idebridge/idebridge/mcpserver"
)

// DefaultIdle is how long the runtime, and each of its projects, lives
// with no session before it exits (the runtime) or stops its language
// servers (a project).
const DefaultIdle = 5 * time.Minute

// ServeOptions configure Serve. A nil *ServeOptions, and every zero field,
// means the documented default.
type ServeOptions struct {
	// Dir is the runtime directory (default DefaultDir(Env)). It is made
	// 0700 when missing; one owned by another user, or open to others,
	// is refused (ErrUnsafeDir).
	Dir string
	// Build is the runtime's build identity, which clients must share
	// (default BuildID()); it names the socket.
	Build string
	// Idle is how long the runtime lives with no session, and how long a
	// project keeps its language servers with no session. Zero means
	// $IDEBRIDGE_RUNTIME_IDLE, else DefaultIdle; negative never exits
	// (projects still stop their servers after DefaultIdle).
	Idle time.Duration
	// Env is the environment the language servers run in and find the
	// IDE by (nil: the process's own).
	Env []string
	// Logger receives the runtime's log (nil: silent).
	Logger *slog.Logger
	// Ready, when set, is called once the socket listens, with its path.
	Ready func(socket string)
	// HTTP configures the Streamable HTTP endpoints (see HTTPOptions).
	HTTP HTTPOptions
}

// ErrRunning is Serve's error when a runtime of the same build already
// serves the directory.
var ErrRunning = errors.New("warm: a runtime of this build already runs")

// Serve runs the runtime: it listens on a unix socket in the runtime
// directory, named after the build, and serves each connection of this
// user (other users' connections are refused; see the package comment)
// until ctx ends, a client asks it to stop, or it has had no session for
// the idle time. Before it returns, every session has ended and every
// language server it started has been stopped. It returns nil after an
// idle exit or a stop.
func Serve(ctx context.Context, opts *ServeOptions) error {
	var o ServeOptions
	if opts != nil {
		o = *opts
	}
	o.Env = env.Resolve(o.Env)
	if o.Dir == "" {
		o.Dir = DefaultDir(o.Env)
	}
	if o.Build == "" {
		b, err := BuildID()
		if err != nil {
			return err
		}
		o.Build = b
	}
	if err := checkBuild(o.Build); err != nil {
		return err
	}
	if o.Idle == 0 {
		o.Idle = DefaultIdle
		if v := env.Get(o.Env, EnvIdle); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d == 0 {
				return fmt.Errorf("warm: %s=%q: want a duration such as 5m (negative: never)", EnvIdle, clip(v))
			}
			o.Idle = d
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	dir, err := prepareDir(o.Dir)
	if err != nil {
		return err
	}
	p := pathsOf(dir, o.Build)
	unlock, err := tryLock(p.serveLock)
	if err != nil {
		return err
	}
	defer unlock()
	// Holding the serve lock, any socket file left is a dead runtime's.
	os.Remove(p.socket)
	ln, err := listenUnix(p.socket)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	d := &daemon{
		o: o, paths: p, ln: ln, cancel: cancel, started: time.Now(),
		projects: map[string]*project{}, servers: map[string]*servers{}, lastEnd: time.Now(), open: map[*net.UnixConn]struct{}{},
	}
	if d.http, err = d.startHTTP(); err != nil {
		ln.Close()
		return err
	}
	go d.http.expireLoop(ctx)
	d.armIdle()
	if o.Ready != nil {
		o.Ready(p.socket)
	}
	o.Logger.Info("runtime listening", "socket", p.socket, "build", o.Build, "pid", os.Getpid(), "idle", o.Idle)
	go d.accept(ctx)
	<-ctx.Done()
	d.shutdown()
	c := context.Cause(ctx)
	if errors.Is(c, errIdle) || errors.Is(c, errStopped) {
		o.Logger.Info("runtime exits", "why", c)
		return nil
	}
	return c // ctx's own, or the listener's failure
}

var (
	errIdle    = errors.New("idle")
	errStopped = errors.New("stopped by a client")
)

type paths struct {
	socket, startLock, serveLock, log string
}

func pathsOf(dir, build string) paths {
	b := filepath.Join(dir, build)
	return paths{socket: b + ".sock", startLock: b + ".start.lock", serveLock: b + ".serve.lock", log: b + ".log"}
}

// maxConns bounds the runtime's connections (sessions and requests in
// their handshake): one more is refused with a reply saying so.
const maxConns = 256

// maxSocketPath is the longest unix socket path every unix accepts.
const maxSocketPath = 103

func listenUnix(path string) (*net.UnixListener, error) {
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("warm: socket path %s is longer than %d bytes, too long for a unix socket: set %s to a shorter directory", path, maxSocketPath, EnvDir)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("warm: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("warm: %w", err)
	}
	return ln, nil
}

type daemon struct {
	o       ServeOptions
	paths   paths
	ln      *net.UnixListener
	cancel  context.CancelCauseFunc
	started time.Time

	mu       sync.Mutex
	projects map[string]*project
	servers  map[string]*servers // the language servers of the projects, by serversKey
	sessions int                 // across projects
	lastEnd  time.Time           // when the session count last fell to zero
	nextID   int
	closing  bool
	conns    sync.WaitGroup
	open     map[*net.UnixConn]struct{} // every connection, to close at the end
	http     *httpFront                 // http.go
}

// project is one shared MCP server with its sessions.
type project struct {
	key      string
	dir      string
	servers  *servers          // its language servers, shared with projects of equal servers
	srv      *mcpserver.Server // its tools and language servers
	mcp      *ideserver.Server // the sessions: srv's tools, gated
	gate     *gate             // the gate of the sessions' tools and of navigation requests
	sessions map[int]SessionStatus
	lastEnd  time.Time
	timer    *time.Timer
}

func (d *daemon) accept(ctx context.Context) {
	for {
		c, err := d.ln.AcceptUnix()
		if err != nil {
			d.mu.Lock()
			closing := d.closing
			d.mu.Unlock()
			if ctx.Err() == nil && !closing {
				d.o.Logger.Error("accept failed; the runtime exits", "err", err)
				d.cancel(err)
			}
			return
		}
		d.mu.Lock()
		if d.closing {
			d.mu.Unlock()
			c.Close()
			return
		}
		if len(d.open) >= maxConns {
			d.mu.Unlock()
			d.o.Logger.Warn("refused a connection: too many", "max", maxConns)
			c.SetDeadline(time.Now().Add(time.Second))
			writeLine(c, hello{Runtime: protoName, Build: d.o.Build, PID: os.Getpid()})
			writeLine(c, reply{Error: fmt.Sprintf("the runtime serves %d connections already, its most", maxConns)})
			c.Close()
			continue
		}
		d.conns.Add(1)
		d.open[c] = struct{}{}
		d.mu.Unlock()
		go func() {
			defer d.conns.Done()
			d.serveConn(ctx, c)
			d.mu.Lock()
			delete(d.open, c)
			d.mu.Unlock()
		}()
	}
}

func (d *daemon) serveConn(ctx context.Context, c *net.UnixConn) {
	defer c.Close()
	uid, pid, err := peerCred(c)
	if err != nil {
		d.o.Logger.Warn("refused a connection: its peer is not known", "err", err)
		return
	}
	if uid >= 0 && uid != os.Getuid() {
		d.o.Logger.Warn("refused a connection from another user", "uid", uid, "pid", pid)
		return
	}
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	if err := writeLine(c, hello{Runtime: protoName, Build: d.o.Build, PID: os.Getpid()}); err != nil {
		return
	}
	br := bufio.NewReaderSize(c, 64<<10)
	var req request
	if err := readLine(br, &req); err != nil {
		writeLine(c, reply{Error: "bad request: " + clip(err.Error())})
		return
	}
	switch req.Op {
	case "status":
		st := d.status()
		writeLine(c, reply{Status: &st})
	case "stop":
		d.mu.Lock()
		d.closing = true
		d.mu.Unlock()
		d.ln.Close()
		d.closeProjects()
		writeLine(c, reply{})
		d.cancel(errStopped)
	case "session":
		d.session(ctx, c, br, req.Project, pid)
	case "nav":
		d.nav(ctx, c, br, req, pid)
	case "diag":
		d.diag(ctx, c, br, req, pid)
	case "ops":
		d.ops(ctx, c, br, req, pid)
	default:
		writeLine(c, reply{Error: fmt.Sprintf("unknown op %q", clip(req.Op))})
	}
}

func (d *daemon) session(ctx context.Context, c *net.UnixConn, br *bufio.Reader, want *Project, pid int) {
	p, id, err := d.join(want, pid)
	if err != nil {
		writeLine(c, reply{Error: err.Error()})
		return
	}
	defer d.leave(p, id)
	if err := writeLine(c, reply{}); err != nil {
		return
	}
	c.SetDeadline(time.Time{})
	d.o.Logger.Info("session started", "project", p.dir, "session", id, "client", pid)
	err = p.mcp.ServeStream(ctx, br, c)
	d.o.Logger.Info("session ended", "project", p.dir, "session", id, "err", err)
}

// sessionServer is the MCP server the project's sessions are served on:
// srv's tools, each in the project's gate (see exclusiveTools), with the
// initialize answers mcpserver gives.
func sessionServer(srv *mcpserver.Server, want *Project, g *gate) (*ideserver.Server, error) {
	own, err := ideserver.New(&ideserver.Options{
		WorkspaceFolders:         srv.Underlying().WorkspaceFolders(),
		NoLockfile:               true,
		NoDefaultTools:           true,
		ProtocolVersion:          mcp.ProtocolVersion,
		NegotiateProtocolVersion: true,
		ServerName:               mcpserver.DefaultServerName,
		ServerVersion:            cmpOr(want.ServerVersion, mcpserver.DefaultServerVersion),
		Instructions:             mcpserver.DefaultInstructions,
	})
	if err != nil {
		return nil, fmt.Errorf("warm: %w", err)
	}
	for _, t := range srv.Tools() {
		if err := own.RegisterTool(gated(t, g)); err != nil {
			own.Close()
			return nil, fmt.Errorf("warm: %w", err)
		}
	}
	return own, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// close ends the project's sessions, and stops its language servers
// unless another project uses them.
func (d *daemon) closeProject(p *project) {
	p.mcp.Close()
	p.srv.Close()
	d.mu.Lock()
	ls := d.releaseServersLocked(p.servers)
	d.mu.Unlock()
	if ls != nil {
		ls.close()
	}
}

// servers are the language servers of one directory and server
// configuration, shared by every project (every setup of the MCP server:
// the IDE link's words, the version initialize answers) that asks for
// both, so that an agent's Remote, the command line and `idebridge mcp`
// on one directory use one server process whatever else tells them
// apart. Their gate is the projects' gate: a staged edit in the servers
// holds off every project's calls on them.
type servers struct {
	key   string
	carry *ideserver.Server // the workspace NewDiagnostics serves; no session uses it
	diags *ideserver.Diagnostics
	gate  *gate
	refs  int // projects using them
}

// serversKey tells apart the language servers of one directory: the
// directory and the configurations, nothing else.
func serversKey(p *Project) string {
	b, _ := json.Marshal(struct {
		Dir     string             `json:"dir"`
		Configs []lsp.ServerConfig `json:"configs"`
	}{p.Dir, p.Configs})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// serversFor finds or makes the language servers of want and counts a
// project on them. d.mu is held.
func (d *daemon) serversFor(want *Project) (*servers, error) {
	key := serversKey(want)
	if ls := d.servers[key]; ls != nil {
		ls.refs++
		return ls, nil
	}
	carry, err := ideserver.New(&ideserver.Options{
		WorkspaceFolders: []string{want.Dir},
		NoLockfile:       true,
		NoDefaultTools:   true,
	})
	if err != nil {
		return nil, fmt.Errorf("warm: %w", err)
	}
	diags, err := ideserver.NewDiagnostics(carry, &ideserver.DiagnosticsOptions{
		Configs: want.Configs, Env: d.o.Env, Logger: d.o.Logger.With("project", want.Dir)})
	if err != nil {
		carry.Close()
		return nil, fmt.Errorf("warm: %w", err)
	}
	ls := &servers{key: key, carry: carry, diags: diags, gate: newGate(), refs: 1}
	d.servers[key] = ls
	return ls, nil
}

// releaseServersLocked uncounts a project on ls and returns ls when no
// project uses it any more, for the caller to close outside d.mu.
func (d *daemon) releaseServersLocked(ls *servers) *servers {
	ls.refs--
	if ls.refs > 0 {
		return nil
	}
	if d.servers[ls.key] == ls {
		delete(d.servers, ls.key)
	}
	return ls
}

// close stops the language servers.
func (ls *servers) close() {
	ctx, cancel := context.WithTimeout(context.Background(), serversGrace)
	defer cancel()
	ls.diags.Close(ctx)
	ls.carry.Close()
}

// serversGrace bounds how long stopping a project's language servers
// waits for them to exit (lsp.Manager.Shutdown kills them after it).
const serversGrace = 5 * time.Second

// projectKey tells apart the setups of one directory.
func projectKey(p *Project) string {
	b, _ := json.Marshal(p)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// join finds or makes the project's server and counts a session on it.
func (d *daemon) join(want *Project, pid int) (*project, int, error) {
	if want == nil || !filepath.IsAbs(want.Dir) {
		return nil, 0, errors.New("a session needs a project with an absolute directory")
	}
	want.Dir = filepath.Clean(want.Dir)
	key := projectKey(want)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing {
		return nil, 0, errors.New("the runtime is stopping")
	}
	p := d.projects[key]
	if p == nil {
		ls, err := d.serversFor(want)
		if err != nil {
			return nil, 0, err
		}
		srv, err := mcpserver.New(&mcpserver.Options{
			ProjectDir:    want.Dir,
			Diagnostics:   ls.diags,
			Env:           d.o.Env,
			NoIDE:         want.NoIDE,
			NoIDEReason:   want.NoIDEReason,
			Logger:        d.o.Logger.With("project", want.Dir),
			ServerVersion: want.ServerVersion,
		})
		if err != nil {
			d.releaseServersLocked(ls)
			return nil, 0, err
		}
		own, err := sessionServer(srv, want, ls.gate)
		if err != nil {
			srv.Close()
			d.releaseServersLocked(ls)
			return nil, 0, err
		}
		p = &project{key: key, dir: want.Dir, servers: ls, srv: srv, mcp: own, gate: ls.gate, sessions: map[int]SessionStatus{}}
		d.projects[key] = p
		d.o.Logger.Info("project opened", "project", want.Dir, "key", key)
	}
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	d.nextID++
	p.sessions[d.nextID] = SessionStatus{ID: d.nextID, PID: pid, Since: time.Now()}
	d.sessions++
	return p, d.nextID, nil
}

// leave ends a session; the project's servers stop after the idle time
// with no session, and the runtime exits after it with none at all.
func (d *daemon) leave(p *project, id int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(p.sessions, id)
	d.sessions--
	now := time.Now()
	if len(p.sessions) == 0 && !d.closing {
		p.lastEnd = now
		p.timer = time.AfterFunc(d.projectIdle(), func() { d.expire(p) })
	}
	if d.sessions == 0 {
		d.lastEnd = now
		d.armIdleLocked()
	}
}

func (d *daemon) projectIdle() time.Duration {
	if d.o.Idle < 0 {
		return DefaultIdle
	}
	return d.o.Idle
}

// expire stops a project that is still without a session.
func (d *daemon) expire(p *project) {
	d.mu.Lock()
	if len(p.sessions) > 0 || d.projects[p.key] != p {
		d.mu.Unlock()
		return
	}
	delete(d.projects, p.key)
	d.mu.Unlock()
	d.o.Logger.Info("project idle: it ends, and its language servers stop unless another project of the directory uses them", "project", p.dir)
	d.closeProject(p)
}

func (d *daemon) armIdle() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.armIdleLocked()
}

func (d *daemon) armIdleLocked() {
	if d.o.Idle < 0 {
		return
	}
	wait := d.o.Idle - time.Since(d.lastEnd)
	time.AfterFunc(max(wait, 0), func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.sessions > 0 || d.closing {
			return
		}
		if time.Since(d.lastEnd) < d.o.Idle {
			d.armIdleLocked() // a session came and went meanwhile
			return
		}
		d.closing = true
		d.cancel(errIdle)
	})
}

// closeProjects stops every project's servers, at once.
func (d *daemon) closeProjects() {
	d.mu.Lock()
	ps := make([]*project, 0, len(d.projects))
	for k, p := range d.projects {
		ps = append(ps, p)
		if p.timer != nil {
			p.timer.Stop()
		}
		delete(d.projects, k)
	}
	d.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Add(1)
		go func() { defer wg.Done(); d.closeProject(p) }()
	}
	wg.Wait()
}

func (d *daemon) shutdown() {
	d.mu.Lock()
	d.closing = true
	d.mu.Unlock()
	d.ln.Close()
	d.http.close()
	d.closeProjects()
	d.mu.Lock()
	for c := range d.open {
		c.Close() // connections still in their handshake
	}
	d.mu.Unlock()
	d.conns.Wait()
}

func (d *daemon) status() Status {
	d.mu.Lock()
	st := Status{
		PID: os.Getpid(), Build: d.o.Build, Socket: d.paths.socket, Started: d.started,
		Uptime: time.Since(d.started).Round(time.Millisecond), Idle: d.o.Idle, Sessions: d.sessions,
		RSS: rss(os.Getpid()), HTTP: d.http.status(),
	}
	ps := make([]*project, 0, len(d.projects))
	for _, p := range d.projects {
		ps = append(ps, p)
		ss := make([]SessionStatus, 0, len(p.sessions))
		for _, s := range p.sessions {
			ss = append(ss, s)
		}
		slices.SortFunc(ss, func(a, b SessionStatus) int { return a.ID - b.ID })
		pst := ProjectStatus{Dir: p.dir, Key: p.key, Sessions: ss}
		if len(ss) == 0 {
			t := p.lastEnd
			pst.IdleSince = &t
		}
		st.Projects = append(st.Projects, pst)
	}
	d.mu.Unlock()
	for i, p := range ps {
		m := p.srv.Manager()
		for _, s := range m.Servers() {
			st.Projects[i].Servers = append(st.Projects[i].Servers, ServerStatus{
				Name: s.Name, State: s.State.String(), PID: s.PID, Restarts: s.Restarts, Extensions: s.Extensions, RSS: rss(s.PID)})
		}
		st.Projects[i].OpenDocuments = m.OpenDocuments()
		for _, c := range p.mcp.Clients() {
			name := c.Name
			if c.Version != "" {
				name += " " + c.Version
			}
			st.Projects[i].Clients = append(st.Projects[i].Clients, name)
		}
	}
	slices.SortFunc(st.Projects, func(a, b ProjectStatus) int {
		if a.Dir != b.Dir {
			if a.Dir < b.Dir {
				return -1
			}
			return 1
		}
		if a.Key < b.Key {
			return -1
		}
		return 1
	})
	return st
}
