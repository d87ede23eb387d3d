package idebridge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/idebridge/idebridge/internal/env"
	"github.com/idebridge/idebridge/lockfile"
	"github.com/idebridge/idebridge/pathconv"
)

// DefaultProbeTimeout bounds the TCP connect that checks an IDE's port.
const DefaultProbeTimeout = 500 * time.Millisecond

// DefaultDiscoverConcurrency is how many lockfiles are checked at once. A
// refused connection answers at once; this bounds the case of ports that
// never answer (each check holds one socket for up to the probe timeout)
// while staying well under small descriptor limits (256 on macOS).
const DefaultDiscoverConcurrency = 100

// DiscoverOptions adjusts Discover and RemoveStale. A nil *DiscoverOptions,
// and every zero field, means the documented default: the process's own
// environment, working directory and processes, real TCP probes. A
// negative ProbeTimeout, Concurrency or SelfPID is rejected: Discover and
// RemoveStale return an error naming the field and do nothing.
type DiscoverOptions struct {
	// Cwd is the directory the IDE's workspace must contain. Empty means
	// os.Getwd.
	Cwd string
	// Env is the environment in os.Environ form ("KEY=value"), read for
	// CLAUDE_CONFIG_DIR, HOME, CLAUDE_CODE_SSE_PORT,
	// CLAUDE_CODE_IDE_SKIP_VALID_CHECK, CLAUDE_CODE_IDE_HOST_OVERRIDE,
	// WSL_DISTRO_NAME and the IDE terminal variables. Nil means the
	// process's own; tests pass one so that they never read the real one.
	Env []string
	// Dirs are the lockfile directories to scan. Nil means lockfile.Dirs
	// over Env and DirOptions.
	Dirs []string
	// DirOptions adjusts lockfile.Dirs (home directory, Windows profiles
	// root under WSL).
	DirOptions *lockfile.DirOptions
	// AllowInsecure reads lockfiles that group or others could write or
	// that another user owns; by default they are reported with
	// ReasonInsecurePermissions and not used.
	AllowInsecure bool
	// Terminal overrides what DetectTerminal(Env) says (in an IDE's
	// terminal or not, WSL or not).
	Terminal *Terminal
	// Processes inspects processes (pid alive, parent of pid). Nil means
	// the system's processes: on Linux signal 0 and /proc/<pid>/stat, on
	// other Unix systems signal 0 and `ps -o ppid= -p <pid>`, on Windows
	// the process API.
	Processes ProcessInspector
	// SelfPID is the process whose ancestors the ancestry check walks.
	// Zero means os.Getpid().
	SelfPID int
	// Dial opens the TCP connection that probes an IDE's port. Nil means a
	// net.Dialer.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// ProbeTimeout bounds each probe. Zero means DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// Concurrency is how many lockfiles are checked at once. Zero means
	// DefaultDiscoverConcurrency.
	Concurrency int
	// WindowsHost finds the Windows host under WSL. Nil means
	// pathconv.WindowsHost with Env.
	WindowsHost func(ctx context.Context) (string, error)
	// WSL adjusts the path converter of IDEs running on Windows under WSL.
	// Nil means the pure-Go conversion helped by wslpath when installed.
	WSL *pathconv.WSLOptions
	// Logger receives debug records about checks that could not be made.
	// Nil is silent.
	Logger *slog.Logger
}

// discovery is one Discover or RemoveStale run with its options resolved.
type discovery struct {
	opts      DiscoverOptions
	env       []string // nil: the process's
	term      Terminal
	insp      ProcessInspector
	dial      func(ctx context.Context, network, address string) (net.Conn, error)
	timeout   time.Duration
	limit     int
	ssePort   int
	skipCheck bool
	override  string
	log       *slog.Logger

	foreign []string // lockfile directories whose modes are made up

	hostOnce sync.Once
	winHost  string
	hostErr  error
}

// newDiscovery resolves opts; a negative number is an error.
func newDiscovery(opts *DiscoverOptions) (*discovery, error) {
	d := &discovery{}
	if opts != nil {
		d.opts = *opts
	}
	switch {
	case d.opts.ProbeTimeout < 0:
		return nil, fmt.Errorf("DiscoverOptions.ProbeTimeout is negative (%v)", d.opts.ProbeTimeout)
	case d.opts.Concurrency < 0:
		return nil, fmt.Errorf("DiscoverOptions.Concurrency is negative (%d)", d.opts.Concurrency)
	case d.opts.SelfPID < 0:
		return nil, fmt.Errorf("DiscoverOptions.SelfPID is negative (%d)", d.opts.SelfPID)
	}
	d.env = d.opts.Env
	if d.opts.Terminal != nil {
		d.term = *d.opts.Terminal
	} else {
		d.term = DetectTerminal(d.env)
	}
	d.insp = d.opts.Processes
	if d.insp == nil {
		d.insp = systemInspector{}
	}
	d.dial = d.opts.Dial
	if d.dial == nil {
		d.dial = (&net.Dialer{}).DialContext
	}
	d.timeout = cmp.Or(d.opts.ProbeTimeout, DefaultProbeTimeout)
	d.limit = cmp.Or(d.opts.Concurrency, DefaultDiscoverConcurrency)
	if p, err := strconv.Atoi(strings.TrimSpace(env.Get(d.env, EnvSSEPort))); err == nil && p > 0 && p <= 65535 {
		d.ssePort = p
	}
	d.skipCheck = env.Truthy(env.Get(d.env, EnvSkipValidCheck))
	d.override, _ = pathconv.HostOverride(d.env)
	d.log = d.opts.Logger
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	return d, nil
}

// LockfileDirs returns the directories Discover scans with these options:
// opts.Dirs, or lockfile.Dirs over opts.Env and opts.DirOptions.
func LockfileDirs(opts *DiscoverOptions) []string {
	var o DiscoverOptions
	if opts != nil {
		o = *opts
	}
	return lockfileDirs(&o)
}

func lockfileDirs(o *DiscoverOptions) []string {
	if o.Dirs != nil {
		return o.Dirs
	}
	return lockfile.Dirs(o.Env, o.DirOptions)
}

// Discover finds every IDE lockfile, checks each one concurrently, and
// returns them all, newest first, usable or not: Candidate.Valid says
// which, Reasons and Message say why not.
//
// The checks, as the deployed agents make them (docs/PROTOCOL.md,
// Discovery):
//   - the lockfile parses and is safe to read (ReasonParseError,
//     ReasonInsecurePermissions);
//   - a workspace folder contains the working directory, unless the port
//     is CLAUDE_CODE_SSE_PORT or CLAUDE_CODE_IDE_SKIP_VALID_CHECK is set
//     (ReasonWorkspaceMismatch);
//   - the IDE's pid is alive (ReasonPIDDead; not checked for an IDE on the
//     Windows side of WSL, whose pids are not ours);
//   - inside an IDE's terminal, not under WSL, the pid is one of the
//     agent's ancestors, at most MaxAncestors up, unless the port is
//     CLAUDE_CODE_SSE_PORT (ReasonNotAncestor);
//   - its port accepts a TCP connection within the probe timeout
//     (ReasonPortClosed).
//
// The same IDE seen through two directories (WSL) is reported once.
// Listing never removes anything: see RemoveStale. ctx bounds the whole
// run. The error is non-nil when ctx ends, the working directory cannot be
// found, or a lockfile directory exists but cannot be read
// (*lockfile.DirError, joined); the candidates found are returned with it.
func Discover(ctx context.Context, opts *DiscoverOptions) ([]Candidate, error) {
	d, err := newDiscovery(opts)
	if err != nil {
		return nil, fmt.Errorf("discovering IDEs: %w", err)
	}
	cwds, err := d.cwds()
	if err != nil {
		return nil, err
	}
	dirs := lockfileDirs(&d.opts)
	d.foreign = lockfile.WindowsDirs(d.env, d.opts.DirOptions)
	results := lockfile.Scan(dirs, &lockfile.ScanOptions{
		AllowInsecure: d.opts.AllowInsecure,
		ForeignDirs:   d.foreign,
	})

	var dirErrs []error
	var todo []lockfile.ScanResult
	seen := map[string]bool{}
	for _, r := range results {
		var de *lockfile.DirError
		if errors.As(r.Err, &de) {
			dirErrs = append(dirErrs, r.Err)
			continue
		}
		if r.Lockfile != nil {
			key := sameIDEKey(r.Lockfile)
			if seen[key] {
				continue
			}
			seen[key] = true
		}
		todo = append(todo, r)
	}

	var ancestorSet map[int]bool
	if d.ancestryApplies() {
		ancestorSet = d.ancestorSet(ctx)
	}

	cands := make([]Candidate, len(todo))
	sem := make(chan struct{}, d.limit)
	var wg sync.WaitGroup
	for i, r := range todo {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			cands[i] = d.check(ctx, r, cwds, ancestorSet)
		}()
	}
	wg.Wait()

	if err := ctx.Err(); err != nil {
		return cands, fmt.Errorf("discovering IDEs: %w", err)
	}
	return cands, errors.Join(dirErrs...)
}

// ValidCandidates returns the candidates whose checks all passed, in order.
func ValidCandidates(cands []Candidate) []Candidate {
	var out []Candidate
	for _, c := range cands {
		if c.Valid {
			out = append(out, c)
		}
	}
	return out
}

// sameIDEKey identifies an IDE across lockfile directories: under WSL the
// same lockfile can be reachable through two paths.
func sameIDEKey(lf *lockfile.Lockfile) string {
	return fmt.Sprintf("%d\x00%d\x00%s\x00%s\x00%s\x00%q", lf.Port, lf.PID, lf.IDEName, lf.Transport, lf.AuthToken, lf.WorkspaceFolders)
}

// cwds returns the working directory, cleaned and absolute, and its
// symlink-resolved form when that differs (macOS /tmp is /private/tmp; the
// IDE may have written either).
func (d *discovery) cwds() ([]string, error) {
	cwd := d.opts.Cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("discovering IDEs: working directory: %w", err)
		}
		cwd = wd
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("discovering IDEs: working directory %s: %w", cwd, err)
	}
	out := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		out = append(out, real)
	}
	return out, nil
}

// ancestryApplies reports whether lockfile pids must be ancestors: inside
// an IDE's terminal, not under WSL.
func (d *discovery) ancestryApplies() bool { return d.term.InIDE() && !d.term.WSL }

func (d *discovery) ancestorSet(ctx context.Context) map[int]bool {
	self := d.opts.SelfPID
	if self == 0 {
		self = os.Getpid()
	}
	pids, err := ancestors(ctx, d.insp, self)
	if err != nil {
		d.log.Debug("walking the agent's ancestors", "pid", self, "found", pids, "err", err)
	}
	set := make(map[int]bool, len(pids))
	for _, p := range pids {
		set[p] = true
	}
	return set
}

// windowsHost resolves the Windows host once per run.
func (d *discovery) windowsHost(ctx context.Context) (string, error) {
	d.hostOnce.Do(func() {
		if d.opts.WindowsHost != nil {
			d.winHost, d.hostErr = d.opts.WindowsHost(ctx)
		} else {
			d.winHost, d.hostErr = pathconv.WindowsHost(ctx, &pathconv.HostOptions{Env: d.env})
		}
		if d.hostErr != nil {
			d.log.Debug("finding the Windows host; using 127.0.0.1", "err", d.hostErr)
		}
	})
	return d.winHost, d.hostErr
}

// check runs every check on one scanned lockfile.
func (d *discovery) check(ctx context.Context, r lockfile.ScanResult, cwds []string, ancestorSet map[int]bool) Candidate {
	c := Candidate{
		Port:             r.Port,
		Path:             r.Path,
		ModTime:          r.ModTime,
		WorkspaceFolders: []string{},
		Reasons:          []Reason{},
		Paths:            pathconv.Identity{},
		unchecked: d.opts.AllowInsecure || slices.ContainsFunc(d.foreign, func(dir string) bool {
			return filepath.Clean(dir) == filepath.Clean(r.Dir)
		}),
	}
	if r.Err != nil {
		var pe *lockfile.PermissionError
		if errors.As(r.Err, &pe) {
			c.Reasons = append(c.Reasons, ReasonInsecurePermissions)
		} else {
			c.Reasons = append(c.Reasons, ReasonParseError)
		}
		c.Message = r.Err.Error()
		return c
	}
	lf := r.Lockfile
	c.Lockfile = lf
	c.IDEName = lf.IDEName
	c.Transport = lf.Transport
	if lf.WorkspaceFolders != nil {
		c.WorkspaceFolders = lf.WorkspaceFolders
	}
	c.PID = lf.PID
	c.RunningInWindows = lf.RunningInWindows
	c.AuthToken = lf.AuthToken

	windowsSide := d.term.WSL && lf.RunningInWindows
	if windowsSide {
		wslOpts := d.opts.WSL
		if wslOpts == nil {
			wslOpts = &pathconv.WSLOptions{WSLPath: pathconv.SystemWSLPath()}
		}
		c.Paths = pathconv.NewWSL(d.term.Distro, wslOpts)
	}
	var hostNote string
	switch {
	case d.override != "":
		c.Host = d.override
	case windowsSide:
		h, err := d.windowsHost(ctx)
		if err != nil {
			c.Host = "127.0.0.1"
			hostNote = " (the Windows host could not be found: " + err.Error() + ")"
		} else {
			c.Host = h
		}
	default:
		c.Host = "127.0.0.1"
	}
	hostPort := net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	if c.Transport == lockfile.TransportWS {
		c.URL = "ws://" + hostPort + "/"
	} else {
		c.URL = "http://" + hostPort + "/sse"
	}

	var problems []string
	fail := func(r Reason, msg string) {
		c.Reasons = append(c.Reasons, r)
		problems = append(problems, msg)
	}

	// Workspace.
	var why string
	switch {
	case d.ssePort == c.Port:
		why = "its port is " + EnvSSEPort
	case d.skipCheck:
		why = "the workspace check is off (" + EnvSkipValidCheck + ")"
	default:
		folder, ok := "", false
		for _, cwd := range cwds {
			if folder, ok = lockfile.MatchingFolder(lf.WorkspaceFolders, cwd, &lockfile.MatchOptions{ToLocal: c.Paths.ToLocal}); ok {
				break
			}
		}
		if ok {
			why = "workspace " + folder + " contains " + cwds[0]
		} else {
			fail(ReasonWorkspaceMismatch, d.mismatchMessage(lf.WorkspaceFolders, c.Paths, cwds[0]))
		}
	}

	// Process: alive, and an ancestor inside an IDE's terminal.
	alive := true
	if lf.PID > 0 && !windowsSide {
		ok, err := d.insp.Alive(ctx, lf.PID)
		if err != nil {
			d.log.Debug("checking whether the IDE's pid is alive", "pid", lf.PID, "lockfile", r.Path, "err", err)
		} else if !ok {
			alive = false
			fail(ReasonPIDDead, fmt.Sprintf("pid %d is not running", lf.PID))
		}
	}
	if ancestorSet != nil && c.Port != d.ssePort && alive {
		switch {
		case lf.PID <= 0:
			fail(ReasonNotAncestor, fmt.Sprintf("the lockfile has no pid to show that it is the IDE of this %s terminal", d.term.IDE))
		case !ancestorSet[lf.PID]:
			fail(ReasonNotAncestor, fmt.Sprintf("pid %d is not an ancestor of this process, so it is not the IDE of this %s terminal", lf.PID, d.term.IDE))
		}
	}

	// Port.
	if err := d.probe(ctx, hostPort); err != nil {
		fail(ReasonPortClosed, portMessage(hostPort, err, d.timeout)+hostNote)
	}

	name := c.IDEName
	if name == "" {
		name = "IDE"
	}
	if len(problems) == 0 {
		c.Valid = true
		c.Message = fmt.Sprintf("%s on port %d is usable: %s", name, c.Port, why)
	} else {
		c.Message = strings.Join(problems, "; ")
	}
	return c
}

func (d *discovery) mismatchMessage(folders []string, conv pathconv.Converter, cwd string) string {
	if len(folders) == 0 {
		return "the lockfile lists no workspace folders, so none contains " + cwd
	}
	shown := make([]string, len(folders))
	for i, f := range folders {
		shown[i] = f
		if local := conv.ToLocal(f); local != f {
			shown[i] = f + " (" + local + ")"
		}
	}
	if len(folders) == 1 {
		return "workspace " + shown[0] + " does not contain " + cwd
	}
	return "none of the workspace folders " + strings.Join(shown, ", ") + " contains " + cwd
}
