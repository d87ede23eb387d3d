package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/warm"
)

// The runtime: one process per user that owns the language servers, shared
// by every `idebridge mcp` (package warm).

func init() {
	register(&command{
		Name:    "runtime serve",
		Usage:   "[--idle DURATION] [--http 127.0.0.1:PORT] [--http-session-idle DURATION]",
		Summary: "run the shared runtime in the foreground (clients start it on their own)",
		Help: "Serves the language servers of every project to every `idebridge mcp` of this\n" +
			"user, on a unix socket in $IDEBRIDGE_RUNTIME_DIR, else $XDG_RUNTIME_DIR/idebridge,\n" +
			"else a 0700 directory idebridge-UID in the temporary directory. Clients start it\n" +
			"detached when none answers; running it by hand is for debugging. It exits after\n" +
			"--idle with no client (default $IDEBRIDGE_RUNTIME_IDLE, else 5m; negative: never),\n" +
			"and a project's language servers stop after as long with no client of its own.\n" +
			"The log goes to standard error (a runtime a client started writes it to BUILD.log\n" +
			"in the runtime directory).\n\n" + runtimeHTTPHelp,
		Setup: func(fs *flag.FlagSet) runFunc {
			idle := fs.Duration("idle", 0, "exit after this long with no client (default $IDEBRIDGE_RUNTIME_IDLE, else 5m; negative: never)")
			var h runtimeHTTPFlags
			h.register(fs)
			return func(ctx context.Context, inv *invocation, args []string) int {
				if len(args) > 0 {
					fmt.Fprintf(inv.Stderr, "idebridge runtime serve: unexpected argument %q\n", args[0])
					return exitUsage
				}
				logger := slog.New(slog.NewTextHandler(&cappedWriter{w: inv.Stderr, left: maxRuntimeLog}, &slog.HandlerOptions{Level: slog.LevelInfo}))
				err := warm.Serve(ctx, &warm.ServeOptions{Idle: *idle, Env: inv.environ(), Logger: logger, HTTP: h.options(inv)})
				switch {
				case err == nil, errors.Is(err, context.Canceled):
					return exitOK
				case errors.Is(err, warm.ErrNotLoopback):
					fmt.Fprintf(inv.Stderr, "idebridge runtime serve: --http: %v\n", err)
					return exitUsage
				case errors.Is(err, warm.ErrRunning):
					fmt.Fprintf(inv.Stderr, "idebridge runtime serve: %v\n", err)
					return exitFailure
				}
				fmt.Fprintf(inv.Stderr, "idebridge runtime serve: %v\n", err)
				return exitFailure
			}
		},
	})
	register(&command{
		Name:    "runtime status",
		Usage:   "[--json]",
		Summary: "show the shared runtime: its projects, language servers, memory and clients",
		Help:    "Exit status 2 when no runtime of this build runs (the runtimes of other builds\nthat do are named).",
		Setup: func(fs *flag.FlagSet) runFunc {
			asJSON := fs.Bool("json", false, "print the status as JSON")
			return func(ctx context.Context, inv *invocation, args []string) int {
				const name = "idebridge runtime status"
				if len(args) > 0 {
					fmt.Fprintf(inv.Stderr, "%s: unexpected argument %q\n", name, args[0])
					return exitUsage
				}
				ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				st, err := warm.GetStatus(ctx, &warm.Options{Env: inv.environ()})
				if err != nil {
					fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
					if errors.Is(err, warm.ErrNotRunning) || errors.Is(err, warm.ErrVersionSkew) {
						if others, _ := warm.Running(ctx, &warm.Options{Env: inv.environ()}); len(others) > 0 {
							fmt.Fprintf(inv.Stderr, "%s: runtimes of other builds run: %s (idebridge runtime stop --all stops them)\n", name, describeRuntimes(others))
						}
						return exitUnavailable
					}
					return exitFailure
				}
				if *asJSON {
					if !inv.writeJSON(name, st) {
						return exitFailure
					}
					return exitOK
				}
				printRuntimeStatus(inv, st)
				return exitOK
			}
		},
	})
	register(&command{
		Name:    "runtime stop",
		Usage:   "[--all]",
		Summary: "stop the shared runtime and its language servers",
		Help: "Its clients reconnect to a new runtime at their next call. --all stops the\n" +
			"runtimes of every build in the runtime directory (one left by the build before an\n" +
			"upgrade exits on its own once idle).",
		Setup: func(fs *flag.FlagSet) runFunc {
			all := fs.Bool("all", false, "stop the runtimes of every build, not only this one's")
			return func(ctx context.Context, inv *invocation, args []string) int {
				const name = "idebridge runtime stop"
				if len(args) > 0 {
					fmt.Fprintf(inv.Stderr, "%s: unexpected argument %q\n", name, args[0])
					return exitUsage
				}
				ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				if *all {
					return stopAll(ctx, inv, name)
				}
				rt, err := warm.Stop(ctx, &warm.Options{Env: inv.environ()})
				switch {
				case errors.Is(err, warm.ErrNotRunning):
					fmt.Fprintf(inv.Stdout, "no runtime was running\n")
					return exitOK
				case err != nil:
					fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
					return exitFailure
				}
				fmt.Fprintf(inv.Stdout, "stopped the runtime (pid %d)\n", rt.PID)
				return exitOK
			}
		},
	})
}

// maxRuntimeLog bounds what a runtime writes to its log (a line per
// session, for as long as it lives).
const maxRuntimeLog = 8 << 20

// cappedWriter writes until its budget is spent, then says so once and
// drops the rest.
type cappedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	left int
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.left > len(p):
		c.left -= len(p)
		return c.w.Write(p)
	case c.left >= 0:
		c.left = -1
		fmt.Fprintf(c.w, "idebridge runtime serve: the log reached %d bytes; nothing more is written\n", maxRuntimeLog)
	}
	return len(p), nil
}

// stopAll stops the runtime of every build in the runtime directory.
func stopAll(ctx context.Context, inv *invocation, name string) int {
	rts, err := warm.Running(ctx, &warm.Options{Env: inv.environ()})
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		return exitFailure
	}
	if len(rts) == 0 {
		fmt.Fprintln(inv.Stdout, "no runtime was running")
		return exitOK
	}
	code := exitOK
	for _, rt := range rts {
		if _, err := warm.Stop(ctx, &warm.Options{Env: inv.environ(), Build: rt.Build}); err != nil && !errors.Is(err, warm.ErrNotRunning) {
			fmt.Fprintf(inv.Stderr, "%s: build %s: %v\n", name, rt.Build, err)
			code = exitFailure
			continue
		}
		fmt.Fprintf(inv.Stdout, "stopped the runtime of build %s (pid %d)\n", rt.Build, rt.PID)
	}
	return code
}

func describeRuntimes(rts []warm.Runtime) string {
	parts := make([]string, len(rts))
	for i, rt := range rts {
		parts[i] = fmt.Sprintf("build %s (pid %d)", rt.Build, rt.PID)
	}
	return strings.Join(parts, ", ")
}

func mib(b int64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

func printRuntimeStatus(inv *invocation, st *warm.Status) {
	idle := "never"
	if st.Idle > 0 {
		idle = "after " + st.Idle.String() + " with no client"
	}
	fmt.Fprintf(inv.Stdout, "runtime pid %d, build %s, up %s, %s resident, %d session(s); exits %s\n",
		st.PID, st.Build, st.Uptime.Round(time.Second), mib(st.RSS), st.Sessions, idle)
	fmt.Fprintf(inv.Stdout, "socket %s\n", st.Socket)
	printRuntimeHTTP(inv, st.HTTP)
	if len(st.Projects) == 0 {
		fmt.Fprintln(inv.Stdout, "no project")
		return
	}
	for _, p := range st.Projects {
		fmt.Fprintf(inv.Stdout, "\nproject %s (%s)\n", p.Dir, p.Key)
		tw := tabwriter.NewWriter(inv.Stdout, 2, 4, 2, ' ', 0)
		if len(p.Sessions) == 0 && p.IdleSince != nil {
			fmt.Fprintf(tw, "  sessions\tnone since %s\n", p.IdleSince.Format(time.TimeOnly))
		} else {
			parts := make([]string, len(p.Sessions))
			for i, s := range p.Sessions {
				parts[i] = fmt.Sprintf("#%d client pid %d since %s", s.ID, s.PID, s.Since.Format(time.TimeOnly))
				if s.Transport != "" {
					parts[i] = describeHTTPSession(s)
				}
			}
			fmt.Fprintf(tw, "  sessions\t%d: %s\n", len(p.Sessions), strings.Join(parts, ", "))
		}
		if len(p.Clients) > 0 {
			names := make([]string, len(p.Clients))
			for i, c := range p.Clients {
				names[i] = c
				if c == "" {
					names[i] = "(not initialized)"
				}
			}
			fmt.Fprintf(tw, "  clients\t%s\n", strings.Join(names, ", "))
		}
		for _, s := range p.Servers {
			pid := "-"
			if s.PID > 0 {
				pid = fmt.Sprint(s.PID)
			}
			fmt.Fprintf(tw, "  server %s\t%s, pid %s, %s resident\n", s.Name, s.State, pid, mib(s.RSS))
		}
		fmt.Fprintf(tw, "  open documents\t%d\n", len(p.OpenDocuments))
		tw.Flush()
	}
}

// runtimeNoIDE is why a session through the runtime has no IDE: the IDE
// an agent may use depends on the agent (its environment and, in an IDE's
// terminal, its process ancestry), which the shared runtime is not.
const runtimeNoIDE = "served by the shared runtime, which has no IDE link yet; no IDE was open on the project when idebridge mcp started (restart it, or use --no-runtime, to reach one opened since)"

// usableIDE names the IDE `idebridge mcp` would connect to, found now, or
// says "" when there is none (or the IDE link is off): then the session
// may go through the runtime without losing the IDE.
func usableIDE(ctx context.Context, o *mcpFlags, dir string, environ []string) string {
	if o.noIDE {
		return ""
	}
	if ok, _ := idebridge.ShouldAutoConnect(&idebridge.AutoConnectOptions{Requested: true}, environ); !ok {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	cands, _ := idebridge.Discover(ctx, &idebridge.DiscoverOptions{Cwd: dir, Env: environ})
	for _, c := range cands {
		if c.Valid {
			if c.IDEName != "" {
				return c.IDEName
			}
			return "an IDE"
		}
	}
	return ""
}

// runtimeStart is how a client starts the runtime: this executable.
func runtimeStart() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return []string{exe, "runtime", "serve"}, nil
}

// useRuntime tells whether `idebridge mcp` goes through the runtime: by
// default, over stdio, unless --no-runtime or IDEBRIDGE_RUNTIME=0 says
// not to. Windows has no runtime yet. A test binary never does: starting itself as the runtime would
// run its tests.
func useRuntime(inv *invocation, o *mcpFlags) bool {
	if runtimeOff(inv) {
		return false
	}
	return !o.noRuntime && !o.http.enabled() && !testing.Testing() && goruntime.GOOS != "windows"
}

// runMCPRuntime serves the session through the runtime. served is false
// when it should not, or no runtime could be reached before the session
// began: the caller then serves it in this process, and logs
// o.runtimeNote, which says why, after its first line.
func runMCPRuntime(ctx context.Context, inv *invocation, o *mcpFlags, dir string, set *serverSet) (code int, served bool) {
	const name = "idebridge mcp"
	start, err := runtimeStart()
	if err != nil {
		o.runtimeNote = fmt.Sprintf("warning: no runtime (%v); serving in this process", err)
		return 0, false
	}
	environ := inv.environ()
	if ide := usableIDE(ctx, o, dir, environ); ide != "" {
		o.runtimeNote = fmt.Sprintf("%s is open on the project and the shared runtime has no IDE link yet: serving in this process", ide)
		return 0, false
	}
	var connected atomic.Bool // OnConnect may run on the proxy's goroutine
	popts := &warm.ProxyOptions{
		Options: warm.Options{Env: environ, Start: start},
		OnConnect: func(rt *warm.Runtime) {
			how := "shared"
			if rt.Started {
				how = "started"
			}
			if connected.CompareAndSwap(false, true) {
				fmt.Fprintf(inv.Stderr, "%s: project %s; language servers: %s; IDE: none (%s); runtime pid %d (%s) at %s\n",
					name, dir, describeServers(set.configs, environ), runtimeNoIDE, rt.PID, how, rt.Socket)
				set.printWarnings(inv.Stderr, name)
				if set.goplsErr != nil {
					fmt.Fprintf(inv.Stderr, "%s: warning: no language server for .go files: %v\n", name, set.goplsErr)
				}
				return
			}
			fmt.Fprintf(inv.Stderr, "%s: reconnected to the runtime, pid %d (%s)\n", name, rt.PID, how)
		},
		OnLost: func(err error) {
			fmt.Fprintf(inv.Stderr, "%s: lost the runtime (%v); the next call reconnects\n", name, err)
		},
	}
	p := runtimeProject(dir, set.configs)
	err = warm.Proxy(ctx, popts, p, inv.Stdin, inv.Stdout)
	if !connected.Load() {
		o.runtimeNote = fmt.Sprintf("warning: no runtime (%v); serving in this process", err)
		return 0, false
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		return exitFailure, true
	}
	return exitOK, true
}
