package warm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/idebridge/idebridge/internal/env"
)

// Options configure the client side (Open, Proxy, GetStatus, Stop). A nil
// *Options, and every zero field, means the documented default.
type Options struct {
	// Dir is the runtime directory (default DefaultDir(Env)).
	Dir string
	// Build is the build identity the runtime must have (default
	// BuildID()); it names the socket.
	Build string
	// Env is the environment (nil: the process's own): DefaultDir reads
	// it, and a runtime this client starts inherits it, so its language
	// servers run in it.
	Env []string
	// Start is the command that runs a runtime of this build in the
	// foreground (argv; `idebridge runtime serve`). Open starts it,
	// detached, when no runtime answers. Nil: never start one (Open fails
	// with ErrNotRunning).
	Start []string
	// StartTimeout bounds starting a runtime until its socket answers
	// (default 20s).
	StartTimeout time.Duration
}

// Errors of the client side.
var (
	// ErrNotRunning: no runtime of this build answers on its socket.
	ErrNotRunning = errors.New("warm: no runtime of this build is running")
	// ErrVersionSkew: the runtime on the socket is of another build; the
	// message names both. The runtime is left alone.
	ErrVersionSkew = errors.New("warm: the runtime is of another build")
	// ErrUnsupported: the system has no unix sockets or file locks the
	// runtime can use.
	ErrUnsupported = errors.New("warm: the runtime is not supported on this system")
)

// Runtime describes the runtime a client reached.
type Runtime struct {
	PID    int
	Build  string
	Socket string
	// Started is true when this call started it.
	Started bool
}

type client struct {
	o     Options
	paths paths
}

func newClient(opts *Options) (*client, error) {
	var o Options
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
			return nil, err
		}
		o.Build = b
	}
	if err := checkBuild(o.Build); err != nil {
		return nil, err
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 20 * time.Second
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("warm: runtime directory: %w", err)
	}
	return &client{o: o, paths: pathsOf(dir, o.Build)}, nil
}

// dial connects and reads the runtime's hello.
func (c *client) dial(ctx context.Context) (*net.UnixConn, *bufio.Reader, *Runtime, error) {
	if err := checkDir(filepath.Dir(c.paths.socket)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, nil, fmt.Errorf("%w (no directory %s)", ErrNotRunning, filepath.Dir(c.paths.socket))
		}
		return nil, nil, nil, err
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", c.paths.socket)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, nil, nil, fmt.Errorf("%w (nothing answers at %s)", ErrNotRunning, c.paths.socket)
		}
		return nil, nil, nil, fmt.Errorf("warm: %w", err)
	}
	conn := nc.(*net.UnixConn)
	conn.SetDeadline(time.Now().Add(handshakeTimeout))
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	br := bufio.NewReaderSize(conn, 64<<10)
	var h hello
	if err := readLine(br, &h); err != nil {
		conn.Close()
		// A runtime that refused this user closes without a word.
		return nil, nil, nil, fmt.Errorf("warm: %w at %s: %w", errNoGreeting, c.paths.socket, err)
	}
	if h.Runtime != protoName || h.Build != c.o.Build {
		conn.Close()
		return nil, nil, nil, fmt.Errorf("%w: it is %s build %s (pid %d), this client is %s build %s", ErrVersionSkew,
			clip(h.Runtime), clip(h.Build), h.PID, protoName, c.o.Build)
	}
	return conn, br, &Runtime{PID: h.PID, Build: h.Build, Socket: c.paths.socket}, nil
}

// do sends a request and reads its reply; on success the connection is
// left open for what follows (a session) and returned.
func (c *client) do(ctx context.Context, req request) (*net.UnixConn, *bufio.Reader, *Runtime, *reply, error) {
	conn, br, rt, err := c.dial(ctx)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	var rep reply
	if err := writeLine(conn, req); err != nil {
		// A runtime that refuses at once (too many connections) said why
		// before it closed.
		if readLine(br, &rep) == nil && rep.Error != "" {
			err = fmt.Errorf("the runtime refused: %s", rep.Error)
		}
		conn.Close()
		return nil, nil, nil, nil, fmt.Errorf("warm: %w", err)
	}
	if err := readLine(br, &rep); err != nil {
		conn.Close()
		return nil, nil, nil, nil, fmt.Errorf("warm: reading the runtime's reply: %w", err)
	}
	if rep.Error != "" {
		conn.Close()
		return nil, nil, nil, nil, fmt.Errorf("warm: the runtime refused: %s", rep.Error)
	}
	conn.SetDeadline(time.Time{})
	return conn, br, rt, &rep, nil
}

// GetStatus asks the running runtime for its status (ErrNotRunning when
// none answers; it never starts one).
func GetStatus(ctx context.Context, opts *Options) (*Status, error) {
	c, err := newClient(opts)
	if err != nil {
		return nil, err
	}
	conn, _, _, rep, err := c.do(ctx, request{Op: "status"})
	if err != nil {
		return nil, err
	}
	conn.Close()
	if rep.Status == nil {
		return nil, errors.New("warm: the runtime answered no status")
	}
	return rep.Status, nil
}

// Stop asks the running runtime to stop, and returns once it has stopped
// its language servers (ErrNotRunning when none answers).
func Stop(ctx context.Context, opts *Options) (*Runtime, error) {
	c, err := newClient(opts)
	if err != nil {
		return nil, err
	}
	conn, _, rt, _, err := c.do(ctx, request{Op: "stop"})
	if err != nil {
		return nil, err
	}
	conn.Close()
	return rt, nil
}

// Open opens an MCP session on the project in the runtime, starting the
// runtime when none answers and Options.Start is set. The connection
// carries MCP's stdio transport (newline-delimited JSON-RPC) both ways;
// the session ends when either side closes it (CloseWrite ends it after
// the answers to what was sent), so a client that dies, however, has its
// session ended as the system closes its socket. Read the session from
// the returned reader (it may hold what the runtime sent already) and
// write it to the connection; close the connection to end it.
func Open(ctx context.Context, opts *Options, p *Project) (*net.UnixConn, *bufio.Reader, *Runtime, error) {
	c, err := newClient(opts)
	if err != nil {
		return nil, nil, nil, err
	}
	return c.open(ctx, p)
}

func (c *client) open(ctx context.Context, p *Project) (*net.UnixConn, *bufio.Reader, *Runtime, error) {
	if p == nil {
		return nil, nil, nil, errors.New("warm: Open needs a Project")
	}
	return c.openReq(ctx, request{Op: "session", Project: p})
}

// openReq sends req, a request on a project, starting the runtime when
// none answers and Options.Start is set.
func (c *client) openReq(ctx context.Context, req request) (*net.UnixConn, *bufio.Reader, *Runtime, error) {
	if req.Project == nil {
		return nil, nil, nil, errors.New("warm: a request needs a Project")
	}
	conn, br, rt, _, err := c.do(ctx, req)
	if !transient(err) || c.o.Start == nil {
		return conn, br, rt, err
	}
	// No runtime, or one dying (it accepts but never greets; it holds its
	// lock a moment longer, so one started now exits at once): start one,
	// again until one answers or StartTimeout passes.
	deadline := time.Now().Add(c.o.StartTimeout)
	for {
		started, serr := c.start(ctx)
		if serr == nil {
			conn, br, rt, _, err = c.do(ctx, req)
			if rt != nil {
				rt.Started = started
			}
			if !transient(err) {
				return conn, br, rt, err
			}
		} else {
			err = serr
			if !transient(serr) {
				return nil, nil, nil, serr
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, nil, nil, err
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// errNoGreeting: a connection the runtime closed without its hello (a
// runtime dying).
var errNoGreeting = errors.New("the runtime did not greet")

// errStartExited: the runtime started exited at once (another, dying,
// still held its lock).
var errStartExited = errors.New("the runtime exited at start")

// transient tells the failures that starting a runtime, or waiting, may
// cure.
func transient(err error) bool {
	return errors.Is(err, ErrNotRunning) || errors.Is(err, errNoGreeting) || errors.Is(err, errStartExited)
}

// start runs the runtime, detached, unless another client started one
// meanwhile: the start lock makes clients that start at once make one
// runtime. It returns once the socket answers.
func (c *client) start(ctx context.Context) (bool, error) {
	dir := filepath.Dir(c.paths.socket)
	if _, err := prepareDir(dir); err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.StartTimeout)
	defer cancel()
	unlock, err := lock(ctx, c.paths.startLock)
	if err != nil {
		return false, err
	}
	defer unlock()
	if conn, _, _, err := c.dial(ctx); err == nil {
		conn.Close()
		return false, nil // another client started it
	} else if !errors.Is(err, ErrNotRunning) {
		return false, err
	}
	logf, err := os.OpenFile(c.paths.log, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return false, fmt.Errorf("warm: runtime log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(c.o.Start[0], c.o.Start[1:]...)
	cmd.Env = append(append([]string(nil), c.o.Env...), EnvDir+"="+dir)
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = detached()
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("warm: starting the runtime: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps it whenever it ends
	for {
		conn, _, _, err := c.dial(ctx)
		if err == nil {
			conn.Close()
			return true, nil
		}
		if !errors.Is(err, ErrNotRunning) {
			return false, err
		}
		select {
		case err := <-exited:
			return false, fmt.Errorf("warm: %w (%v); its log is %s", errStartExited, err, c.paths.log)
		case <-ctx.Done():
			return false, fmt.Errorf("warm: the runtime did not answer within %s; its log is %s", c.o.StartTimeout, c.paths.log)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Running lists the runtimes answering in the runtime directory, of every
// build (this one's and others', such as one left by the build before an
// upgrade), by socket name. Stop one with Options.Build set to its Build.
func Running(ctx context.Context, opts *Options) ([]Runtime, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Env = env.Resolve(o.Env)
	if o.Dir == "" {
		o.Dir = DefaultDir(o.Env)
	}
	if err := checkDir(o.Dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	socks, err := filepath.Glob(filepath.Join(o.Dir, "*.sock"))
	if err != nil {
		return nil, fmt.Errorf("warm: %w", err)
	}
	var out []Runtime
	for _, s := range socks {
		o.Build = strings.TrimSuffix(filepath.Base(s), ".sock")
		c, err := newClient(&o)
		if err != nil {
			continue // not a runtime's name
		}
		conn, _, rt, err := c.dial(ctx)
		if err != nil {
			continue // dead, or not a runtime
		}
		conn.Close()
		out = append(out, *rt)
	}
	return out, nil
}
