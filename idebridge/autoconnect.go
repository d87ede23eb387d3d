package idebridge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/idebridge/idebridge/internal/env"
	"github.com/idebridge/idebridge/lockfile"
)

// Auto-connect defaults, Claude Code's (docs/PROTOCOL.md, Discovery).
const (
	// DefaultPollInterval is how often auto-connect looks for the IDE.
	DefaultPollInterval = time.Second
	// DefaultAutoConnectWait is how long auto-connect looks before it
	// gives up.
	DefaultAutoConnectWait = 30 * time.Second
)

// EnvAutoConnect turns auto-connect on (truthy: 1, true, yes, on) or off
// (falsy: 0, false, no, off), whatever else asks for it.
const EnvAutoConnect = "CLAUDE_CODE_AUTO_CONNECT_IDE"

// Errors of auto-connect. Test for them with errors.Is; the errors
// returned are *NoIDEError and *AmbiguousIDEError, which carry the
// candidates and say why each was or was not usable.
var (
	// ErrNoIDE: no usable IDE was found in time.
	ErrNoIDE = errors.New("no usable IDE")
	// ErrAmbiguousIDE: several usable IDEs were found; auto-connect picks
	// only when exactly one is, and the caller must choose.
	ErrAmbiguousIDE = errors.New("several usable IDEs")
)

// NoIDEError says that no usable IDE was found, listing every lockfile
// seen at the last look and why each was not usable. It matches ErrNoIDE.
type NoIDEError struct {
	// Candidates are every lockfile found at the last look (none valid).
	Candidates []Candidate
	// Dirs are the lockfile directories searched.
	Dirs []string
	// Waited is how long auto-connect looked.
	Waited time.Duration
}

func (e *NoIDEError) Error() string {
	var b strings.Builder
	b.WriteString("no usable IDE")
	if e.Waited > 0 {
		fmt.Fprintf(&b, " after %v", e.Waited.Round(100*time.Millisecond))
	}
	if len(e.Candidates) == 0 {
		b.WriteString(": no IDE lockfiles")
		if len(e.Dirs) > 0 {
			b.WriteString(" in " + strings.Join(e.Dirs, ", "))
		}
		b.WriteString(" (is the IDE running with its Claude Code extension or plugin?)")
		return b.String()
	}
	b.WriteString(": ")
	writeCandidates(&b, e.Candidates)
	return b.String()
}

// Is makes every NoIDEError match ErrNoIDE.
func (e *NoIDEError) Is(target error) bool { return target == ErrNoIDE }

// AmbiguousIDEError says that several usable IDEs were found; Valid lists
// them so that the caller can let the user choose. It matches
// ErrAmbiguousIDE.
type AmbiguousIDEError struct {
	// Valid are the usable candidates (at least two).
	Valid []Candidate
	// Candidates are every lockfile found at the last look.
	Candidates []Candidate
	// Waited is how long auto-connect looked.
	Waited time.Duration
}

func (e *AmbiguousIDEError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d usable IDEs", len(e.Valid))
	if e.Waited > 0 {
		fmt.Fprintf(&b, " after %v", e.Waited.Round(100*time.Millisecond))
	}
	b.WriteString(", choose one (auto-connect needs exactly one): ")
	writeCandidates(&b, e.Valid)
	return b.String()
}

// Is makes every AmbiguousIDEError match ErrAmbiguousIDE.
func (e *AmbiguousIDEError) Is(target error) bool { return target == ErrAmbiguousIDE }

func writeCandidates(b *strings.Builder, cands []Candidate) {
	for i, c := range cands {
		if i > 0 {
			b.WriteString("; ")
		}
		name := c.IDEName
		if name == "" {
			name = "IDE"
		}
		fmt.Fprintf(b, "%s on port %d", name, c.Port)
		if len(c.WorkspaceFolders) > 0 {
			fmt.Fprintf(b, " (%s)", strings.Join(c.WorkspaceFolders, ", "))
		}
		if c.Message != "" {
			b.WriteString(": " + c.Message)
		}
	}
}

// AutoConnectOptions configure ShouldAutoConnect, WaitForIDE and
// AutoConnect. A nil *AutoConnectOptions, and every zero field, means the
// documented default; a negative PollInterval is rejected (WaitForIDE and
// AutoConnect return an error naming it). NewAutoConnectOptions makes the
// common case: an agent that wants the IDE of a project directory.
//
// AutoConnect(ctx, nil) already connects to the one usable IDE whose
// workspace holds the working directory: Requested matters only to
// ShouldAutoConnect, and the directory is Discover.Cwd.
type AutoConnectOptions struct {
	// Requested is the caller's own setting (an agent's autoConnectIde
	// configuration key or --ide flag).
	Requested bool
	// Discover configures discovery (environment, working directory,
	// lockfile directories). Its Env is also the environment
	// ShouldAutoConnect reads when given none.
	Discover *DiscoverOptions
	// Client configures the connection; its ConnectTimeout (default 35 s)
	// bounds the connection attempt.
	Client *ClientOptions
	// PollInterval is how often discovery runs. Zero means
	// DefaultPollInterval (1 s).
	PollInterval time.Duration
	// Wait is how long to look for exactly one usable IDE. Zero means
	// DefaultAutoConnectWait (30 s); negative means look once.
	Wait time.Duration
	// MinServerVersion, when set, is the oldest IDE extension version
	// (serverInfo.version) that is not warned about; see CheckVersion. An
	// older IDE is still used.
	MinServerVersion string
	// Logger receives the polling progress (debug) and version warnings.
	// Nil is silent.
	Logger *slog.Logger
}

// NewAutoConnectOptions returns the options of the common case: the
// caller asks for auto-connect (Requested, so ShouldAutoConnect says yes
// unless CLAUDE_CODE_AUTO_CONNECT_IDE turns it off), and the IDE is the
// one whose workspace holds dir (Discover.Cwd; "" means the working
// directory). Everything else is the default: the process's environment,
// a look every second for up to 30 s. The fields may be changed before
// use.
func NewAutoConnectOptions(dir string) *AutoConnectOptions {
	return &AutoConnectOptions{Requested: true, Discover: &DiscoverOptions{Cwd: dir}}
}

// ShouldAutoConnect decides from the caller's setting and the environment
// whether to connect to an IDE without being asked, by Claude Code's rules
// (docs/PROTOCOL.md, Discovery): a falsy CLAUDE_CODE_AUTO_CONNECT_IDE (0,
// false, no, off) turns it off whatever else asks; otherwise any of
// opts.Requested, running in an IDE's terminal (DiscoverOptions.Terminal,
// or DetectTerminal of environ), CLAUDE_CODE_SSE_PORT set, or a truthy
// CLAUDE_CODE_AUTO_CONNECT_IDE (1, true, yes, on) turns it on. environ
// (os.Environ form) nil means opts.Discover.Env, or the process's
// environment. why says which rule decided.
func ShouldAutoConnect(opts *AutoConnectOptions, environ []string) (ok bool, why string) {
	var o AutoConnectOptions
	if opts != nil {
		o = *opts
	}
	if environ == nil && o.Discover != nil {
		environ = o.Discover.Env
	}
	v := env.Get(environ, EnvAutoConnect)
	if env.Falsy(v) {
		return false, EnvAutoConnect + "=" + v + " turns auto-connect off"
	}
	if o.Requested {
		return true, "the caller asked for it"
	}
	term := DetectTerminal(environ)
	if o.Discover != nil && o.Discover.Terminal != nil {
		term = *o.Discover.Terminal
	}
	if term.InIDE() {
		return true, "running in " + term.IDE + "'s terminal (" + term.Via + ")"
	}
	if p := strings.TrimSpace(env.Get(environ, EnvSSEPort)); p != "" {
		return true, EnvSSEPort + "=" + p + " names the IDE"
	}
	if env.Truthy(v) {
		return true, EnvAutoConnect + "=" + v
	}
	return false, "nothing asks for it (no caller setting, not in an IDE terminal, no " + EnvSSEPort + ", no " + EnvAutoConnect + ")"
}

// WaitForIDE runs discovery every PollInterval until exactly one candidate
// is valid, and returns it with every candidate of that look. After Wait
// (or at once, for a negative Wait) without exactly one, the error is a
// *NoIDEError or *AmbiguousIDEError, according to the last look, listing
// the candidates and why. ctx ends the wait early with ctx's error.
// Unreadable lockfile directories are logged and skipped; other discovery
// errors are returned at once.
func WaitForIDE(ctx context.Context, opts *AutoConnectOptions) (*Candidate, []Candidate, error) {
	var o AutoConnectOptions
	if opts != nil {
		o = *opts
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.PollInterval < 0 {
		return nil, nil, fmt.Errorf("waiting for an IDE: AutoConnectOptions.PollInterval is negative (%v)", o.PollInterval)
	}
	interval := cmp.Or(o.PollInterval, DefaultPollInterval)
	wait := o.Wait
	if wait == 0 {
		wait = DefaultAutoConnectWait
	}
	start := time.Now()
	deadline := start.Add(wait)
	var timer *time.Timer
	for look := 1; ; look++ {
		cands, err := Discover(ctx, o.Discover)
		if err != nil {
			var de *lockfile.DirError
			if !errors.As(err, &de) || ctx.Err() != nil {
				return nil, cands, fmt.Errorf("waiting for an IDE: %w", err)
			}
			log.Debug("some lockfile directories could not be read", "err", err)
		}
		valid := ValidCandidates(cands)
		log.Debug("looked for IDEs", "look", look, "lockfiles", len(cands), "valid", len(valid))
		if len(valid) == 1 {
			c := valid[0]
			return &c, cands, nil
		}
		remaining := time.Until(deadline)
		if wait < 0 || remaining <= 0 {
			waited := time.Since(start)
			if wait < 0 {
				waited = 0
			}
			if len(valid) > 1 {
				return nil, cands, &AmbiguousIDEError{Valid: valid, Candidates: cands, Waited: waited}
			}
			return nil, cands, &NoIDEError{Candidates: cands, Dirs: LockfileDirs(o.Discover), Waited: waited}
		}
		// The last look is at the deadline itself.
		pause := min(interval, remaining)
		if timer == nil {
			timer = time.NewTimer(pause)
			defer timer.Stop()
		} else {
			timer.Reset(pause)
		}
		select {
		case <-ctx.Done():
			return nil, cands, fmt.Errorf("waiting for an IDE: %w", ctx.Err())
		case <-timer.C:
		}
	}
}

// AutoConnect waits for exactly one usable IDE (WaitForIDE: every second
// for up to 30 s by default) and connects to it (Connect, within the
// client's 35 s connection limit). It returns the client and the
// candidate it connected to. When opts.MinServerVersion is set and the
// IDE reports an older version, a warning is logged (see
// Client.CheckVersion); the client is returned all the same.
//
// AutoConnect does not consult ShouldAutoConnect: the caller decides
// whether to auto-connect, then calls it.
func AutoConnect(ctx context.Context, opts *AutoConnectOptions) (*Client, *Candidate, error) {
	var o AutoConnectOptions
	if opts != nil {
		o = *opts
	}
	cand, _, err := WaitForIDE(ctx, &o)
	if err != nil {
		return nil, nil, err
	}
	client, err := Connect(ctx, *cand, o.Client)
	if err != nil {
		return nil, cand, fmt.Errorf("auto-connecting to %s on port %d: %w", orIDE(cand.IDEName), cand.Port, err)
	}
	if o.MinServerVersion != "" && o.Logger != nil {
		if vc := client.CheckVersion(o.MinServerVersion); vc.Older {
			o.Logger.Warn(vc.Message, "ide", cand.IDEName, "port", cand.Port, "version", vc.Version, "minimum", vc.Minimum)
		}
	}
	return client, cand, nil
}

func orIDE(name string) string {
	if name == "" {
		return "IDE"
	}
	return name
}

// ErrLockfileGone is matched by Reconnect's error when the IDE's lockfile
// no longer exists: the IDE has shut down (or moved to another port, which
// discovery finds).
var ErrLockfileGone = errors.New("the IDE's lockfile is gone")

// Reconnect connects again to the IDE of cand after its connection was
// lost: the same port, the lockfile re-read for the current auth token
// and transport (an IDE that restarted on the same port writes a new
// token). Host and path conversion are kept from cand. It returns the
// client and the refreshed candidate. When the lockfile is gone, the
// error matches ErrLockfileGone (and the connection is not tried).
//
// The lockfile is re-read with discovery's checks (lockfile.Read): a FIFO
// or device in its place is an error, never waited on, and so is a file
// that group or others may write or another user owns, unless cand came
// from a discovery that skipped those checks (AllowInsecure, or the
// Windows side under WSL). A Candidate built by hand is checked.
func Reconnect(ctx context.Context, cand Candidate, opts *ClientOptions) (*Client, *Candidate, error) {
	fresh := cand
	if cand.Path != "" {
		lf, err := lockfile.Read(cand.Path, &lockfile.ScanOptions{AllowInsecure: cand.unchecked})
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("reconnecting to the IDE on port %d: %w (%s)", cand.Port, ErrLockfileGone, cand.Path)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("reconnecting to the IDE on port %d: %w", cand.Port, err)
		}
		fresh.Lockfile = lf
		fresh.AuthToken = lf.AuthToken
		fresh.Transport = lf.Transport
		fresh.IDEName = lf.IDEName
		fresh.PID = lf.PID
		if lf.WorkspaceFolders != nil {
			fresh.WorkspaceFolders = lf.WorkspaceFolders
		}
		host := cand.Host
		if host == "" {
			host = "127.0.0.1"
		}
		hp := net.JoinHostPort(host, strconv.Itoa(cand.Port))
		if fresh.Transport == lockfile.TransportWS {
			fresh.URL = "ws://" + hp + "/"
		} else {
			fresh.URL = "http://" + hp + "/sse"
		}
	}
	client, err := Connect(ctx, fresh, opts)
	if err != nil {
		return nil, &fresh, fmt.Errorf("reconnecting to %s on port %d: %w", orIDE(fresh.IDEName), fresh.Port, err)
	}
	return client, &fresh, nil
}
