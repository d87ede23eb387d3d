package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/lockfile"
	"github.com/idebridge/idebridge/mcp"
)

func init() {
	register(&command{
		Name:    "ide tools",
		Usage:   "[--port N] [--json]",
		Summary: "print the IDE's tool list",
		Help: "Connects to the IDE (without --port: the one usable IDE for the working\n" +
			"directory, see `idebridge ide list`; with --port: the IDE whose lockfile has\n" +
			"that port) and prints the tools it offers, following tools/list pages.\n" +
			"\n" +
			"Exit status: 0 listed; 1 the IDE failed; 2 no usable IDE; 64 bad usage.",
		Setup: func(fs *flag.FlagSet) runFunc {
			port := fs.Int("port", 0, "the IDE's port (default: the one usable IDE)")
			asJSON := fs.Bool("json", false, "print the tools as a JSON array of {name, title, description, inputSchema, ...}")
			return func(ctx context.Context, inv *invocation, args []string) int {
				const name = "idebridge ide tools"
				if len(args) != 0 || !validPort(*port) {
					fmt.Fprintf(inv.Stderr, "%s: takes no arguments; --port must be 1-65535\n", name)
					return exitUsage
				}
				client, _, code := ideConnect(ctx, inv, name, *port, nil)
				if code != exitOK {
					return code
				}
				defer client.Close()
				tools, err := client.Tools(ctx)
				if err != nil {
					fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
					return exitFailure
				}
				if *asJSON {
					if tools == nil {
						tools = []mcp.Tool{}
					}
					if !inv.writeJSON(name, tools) {
						return exitFailure
					}
					return exitOK
				}
				tw := tabwriter.NewWriter(inv.Stdout, 0, 4, 2, ' ', 0)
				for _, t := range tools {
					desc, _, _ := strings.Cut(t.Description, "\n")
					fmt.Fprintf(tw, "%s\t%s\n", t.Name, desc)
				}
				if err := tw.Flush(); err != nil {
					fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
					return exitFailure
				}
				return exitOK
			}
		},
	})
}

func validPort(p int) bool { return p >= 0 && p <= 65535 }

// ideConnect connects to the IDE the ide tools, call and watch commands
// talk to: with port, the IDE whose lockfile has that port (found through
// discovery, so that its token is known); without, the one usable IDE for
// the working directory. It prints why on failure and returns the exit
// status: 2 when no IDE is usable (with discovery's reasons), 1 for other
// failures.
func ideConnect(ctx context.Context, inv *invocation, name string, port int, opts *idebridge.ClientOptions) (*idebridge.Client, *idebridge.Candidate, int) {
	wd, err := inv.Getwd()
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: working directory: %v\n", name, err)
		return nil, nil, exitFailure
	}
	dopts := &idebridge.DiscoverOptions{Cwd: wd, Env: inv.environ()}
	var cand *idebridge.Candidate
	if port != 0 {
		cands, err := idebridge.Discover(ctx, dopts)
		var de *lockfile.DirError
		if err != nil && !errors.As(err, &de) {
			fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
			return nil, nil, exitFailure
		}
		for i := range cands {
			if cands[i].Port == port && cands[i].Lockfile != nil {
				cand = &cands[i]
				break
			}
		}
		if cand == nil {
			fmt.Fprintf(inv.Stderr, "%s: no IDE lockfile for port %d in %s (see `idebridge ide list`)\n",
				name, port, strings.Join(idebridge.LockfileDirs(dopts), ", "))
			return nil, nil, exitUnavailable
		}
	} else {
		c, _, err := idebridge.WaitForIDE(ctx, &idebridge.AutoConnectOptions{Discover: dopts, Wait: -1})
		if err != nil {
			fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
			switch {
			case errors.Is(err, idebridge.ErrAmbiguousIDE):
				fmt.Fprintf(inv.Stderr, "%s: choose one with --port\n", name)
				return nil, nil, exitUnavailable
			case errors.Is(err, idebridge.ErrNoIDE):
				return nil, nil, exitUnavailable
			}
			return nil, nil, exitFailure
		}
		cand = c
	}
	client, err := idebridge.Connect(ctx, *cand, opts)
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		if ctx.Err() != nil {
			return nil, nil, exitFailure
		}
		return nil, nil, exitUnavailable
	}
	return client, cand, exitOK
}
