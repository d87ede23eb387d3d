package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/lockfile"
)

func init() {
	register(&command{
		Name:    "ide list",
		Usage:   "[--json] [--cwd DIR] [--wait D]",
		Summary: "list the IDEs found through their lockfiles, usable or not, with reasons",
		Help: "Reads every lockfile (CLAUDE_CONFIG_DIR/ide or ~/.claude/ide, and the Windows\n" +
			"profiles' under WSL), and checks each: workspace folder, pid, ancestry inside an\n" +
			"IDE terminal, TCP port. Nothing is removed. Exit status 0 whenever the listing\n" +
			"ran, even if nothing was found (the output says where it looked).\n" +
			"\n" +
			"--wait D waits as auto-connect does: it looks once a second until exactly one\n" +
			"IDE is usable, for at most D, then lists what it saw last. Exit status 0 when\n" +
			"exactly one is usable, 2 when none or several are (standard error says why).",
		Setup: func(fs *flag.FlagSet) runFunc {
			asJSON := fs.Bool("json", false, "print a JSON array of objects with the keys port, ideName, transport,\nworkspaceFolders, pid, url, valid, reasons, message, path")
			cwd := fs.String("cwd", "", "the directory the IDE's workspace must contain (default: the working directory)")
			wait := fs.Duration("wait", 0, "wait up to D for exactly one usable IDE, looking once a second (auto-connect's rule)")
			return func(ctx context.Context, inv *invocation, args []string) int {
				if len(args) > 0 {
					fmt.Fprintf(inv.Stderr, "idebridge ide list: unexpected argument %q\n", args[0])
					return exitUsage
				}
				if *wait < 0 {
					fmt.Fprintln(inv.Stderr, "idebridge ide list: --wait must not be negative")
					return exitUsage
				}
				return ideList(ctx, inv, *cwd, *asJSON, *wait)
			}
		},
	})
}

func ideList(ctx context.Context, inv *invocation, cwd string, asJSON bool, wait time.Duration) int {
	dir, code := resolveDir(inv, cwd)
	if code != exitOK {
		return code
	}
	opts := &idebridge.DiscoverOptions{Cwd: dir, Env: inv.environ()}
	dirs := idebridge.LockfileDirs(opts)
	var cands []idebridge.Candidate
	var err, waitErr error
	if wait > 0 {
		_, cands, err = idebridge.WaitForIDE(ctx, &idebridge.AutoConnectOptions{Discover: opts, Wait: wait})
		if errors.Is(err, idebridge.ErrNoIDE) || errors.Is(err, idebridge.ErrAmbiguousIDE) {
			waitErr, err = err, nil // list what was seen, then say why
		}
	} else {
		cands, err = idebridge.Discover(ctx, opts)
	}
	if err != nil {
		var de *lockfile.DirError
		if !errors.As(err, &de) {
			fmt.Fprintf(inv.Stderr, "idebridge ide list: %v\n", err)
			return exitFailure
		}
		// Some directory could not be read; the rest is still worth showing.
		fmt.Fprintf(inv.Stderr, "idebridge ide list: warning: %v\n", err)
	}
	if cands == nil {
		cands = []idebridge.Candidate{}
	}
	if asJSON {
		if !inv.writeJSON("idebridge ide list", cands) {
			return exitFailure
		}
		if len(cands) == 0 {
			fmt.Fprintln(inv.Stderr, nothingFound(dirs))
		}
		return waitStatus(inv, waitErr)
	}
	printCandidates(inv.Stdout, dir, dirs, cands)
	return waitStatus(inv, waitErr)
}

// waitStatus reports how --wait ended: 0 with exactly one usable IDE, 2
// (and why) otherwise.
func waitStatus(inv *invocation, waitErr error) int {
	if waitErr == nil {
		return exitOK
	}
	fmt.Fprintf(inv.Stderr, "idebridge ide list: %v\n", waitErr)
	return exitUnavailable
}

// resolveDir returns the directory to match workspaces against: --cwd
// (relative to the working directory) or the working directory itself.
func resolveDir(inv *invocation, cwd string) (string, int) {
	wd, err := inv.Getwd()
	if err != nil && (cwd == "" || !filepath.IsAbs(cwd)) {
		fmt.Fprintf(inv.Stderr, "idebridge ide list: working directory: %v\n", err)
		return "", exitFailure
	}
	if cwd == "" {
		return wd, exitOK
	}
	if !filepath.IsAbs(cwd) {
		cwd = filepath.Join(wd, cwd)
	}
	info, err := os.Stat(cwd)
	if err != nil || !info.IsDir() {
		fmt.Fprintf(inv.Stderr, "idebridge ide list: --cwd %s is not a directory\n", cwd)
		return "", exitUsage
	}
	return filepath.Clean(cwd), exitOK
}

// nothingFound says where the listing looked and what to do.
func nothingFound(dirs []string) string {
	if len(dirs) == 0 {
		return "No IDE lockfiles found: no lockfile directory is known (set CLAUDE_CONFIG_DIR or HOME)."
	}
	shown := make([]string, len(dirs))
	for i, d := range dirs {
		shown[i] = d
		if _, err := os.Stat(d); errors.Is(err, fs.ErrNotExist) {
			shown[i] += " (does not exist)"
		}
	}
	return "No IDE lockfiles found in " + strings.Join(shown, ", ") + ".\n" +
		"An IDE writes <port>.lock there when its Claude Code extension or plugin starts;\n" +
		"start the IDE with the extension installed (or set CLAUDE_CONFIG_DIR if it uses another directory)."
}

func printCandidates(w io.Writer, cwd string, dirs []string, cands []idebridge.Candidate) {
	if len(cands) == 0 {
		fmt.Fprintln(w, nothingFound(dirs))
		return
	}
	fmt.Fprintf(w, "Working directory: %s\nLockfile directories: %s\n\n", cwd, strings.Join(dirs, ", "))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PORT\tIDE\tTRANSPORT\tPID\tVALID\tURL")
	for _, c := range cands {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", c.Port, orDash(c.IDEName), orDash(c.Transport), pidText(c.PID), yesNo(c.Valid), orDash(c.URL))
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, c := range cands {
		line := c.Message
		if len(c.Reasons) > 0 {
			reasons := make([]string, len(c.Reasons))
			for i, r := range c.Reasons {
				reasons[i] = string(r)
			}
			line += " [" + strings.Join(reasons, ", ") + "]"
		}
		fmt.Fprintf(w, "%-5d  %s\n       %s\n", c.Port, line, c.Path)
	}
	fmt.Fprintln(w)
	switch n := len(idebridge.ValidCandidates(cands)); n {
	case 0:
		fmt.Fprintf(w, "No usable IDE among %d lockfile(s).\n", len(cands))
	case 1:
		fmt.Fprintln(w, "1 usable IDE.")
	default:
		fmt.Fprintf(w, "%d usable IDEs: a caller must choose one (auto-connect needs exactly one).\n", n)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func pidText(pid int) string {
	if pid == 0 {
		return "-"
	}
	return strconv.Itoa(pid)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
