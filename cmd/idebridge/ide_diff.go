package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/lockfile"
)

func init() {
	register(&command{
		Name:    "ide diff",
		Usage:   "FILE NEWFILE [--port N] [--json] [--diagnostics] [--wait D] [--cwd DIR]",
		Summary: "show NEWFILE as a proposed edit of FILE in the IDE's diff viewer; write FILE if accepted",
		Help: "Runs the edit review an agent runs: openDiff in the IDE with FILE's path and\n" +
			"NEWFILE's text (NEWFILE - reads standard input), waits for the user, then:\n" +
			"accepted (FILE_SAVED) writes the IDE's final text, which the user may have edited;\n" +
			"tab closed (TAB_CLOSED) writes the proposal; rejected leaves FILE untouched. The\n" +
			"write is atomic and keeps FILE's mode; if FILE changed on disk meanwhile, nothing\n" +
			"is written (a conflict, exit status 1). Then the diff tab is closed.\n" +
			"\n" +
			"Without --port the IDE is found as auto-connect finds it: exactly one usable\n" +
			"IDE for the working directory (see `idebridge ide list`), waiting up to --wait.\n" +
			"--diagnostics also prints the diagnostics the edit introduced, as the IDE\n" +
			"reports them (getDiagnostics before and after).\n" +
			"\n" +
			"Exit status: 0 when the user decided (accepted, tab closed, rejected, or any\n" +
			"other answer: the output says which); 1 conflict, lost connection, or IDE error;\n" +
			"2 no usable IDE; 64 bad usage. Interrupting leaves FILE untouched.",
		Setup: func(fs *flag.FlagSet) runFunc {
			var o diffFlags
			fs.IntVar(&o.port, "port", 0, "the IDE's port (default: the one usable IDE)")
			fs.BoolVar(&o.asJSON, "json", false, "print the outcome as a JSON object with the keys path, status, written, bytes,\nuserModified, created, cancelled, viaIDE, tabName, ideAnswer, closeTabError, ide,\nport, and error and newDiagnostics when there are any")
			fs.BoolVar(&o.diagnostics, "diagnostics", false, "print the diagnostics the edit introduced (a <new-diagnostics> block)")
			fs.DurationVar(&o.wait, "wait", 0, "without --port, how long to wait for exactly one usable IDE (default: look once)")
			fs.StringVar(&o.cwd, "cwd", "", "the directory the IDE's workspace must contain (default: the working directory)")
			return func(ctx context.Context, inv *invocation, args []string) int {
				if len(args) != 2 {
					fmt.Fprintf(inv.Stderr, "idebridge ide diff: want FILE and NEWFILE, got %d argument(s)\n", len(args))
					return exitUsage
				}
				if o.port < 0 || o.port > 65535 || o.wait < 0 {
					fmt.Fprintln(inv.Stderr, "idebridge ide diff: --port must be 1-65535 and --wait not negative")
					return exitUsage
				}
				return ideDiff(ctx, inv, &o, args[0], args[1])
			}
		},
	})
}

type diffFlags struct {
	port        int
	asJSON      bool
	diagnostics bool
	wait        time.Duration
	cwd         string
}

// diffOutput is what --json prints.
type diffOutput struct {
	*idebridge.EditResult
	// IDE and Port name the IDE that reviewed the edit.
	IDE            string `json:"ide,omitempty"`
	Port           int    `json:"port"`
	Error          string `json:"error,omitempty"`
	NewDiagnostics string `json:"newDiagnostics,omitempty"`
}

func ideDiff(ctx context.Context, inv *invocation, o *diffFlags, file, newFile string) int {
	const name = "idebridge ide diff"
	wd, err := inv.Getwd()
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: working directory: %v\n", name, err)
		return exitFailure
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(wd, p)
	}
	var text []byte
	if newFile == "-" {
		text, err = io.ReadAll(inv.Stdin)
	} else {
		text, err = os.ReadFile(abs(newFile))
	}
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: reading the proposal: %v\n", name, err)
		return exitUsage
	}
	path := abs(file)
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		fmt.Fprintf(inv.Stderr, "%s: %s is not a regular file\n", name, path)
		return exitUsage
	}
	cwd := wd
	if o.cwd != "" {
		cwd = abs(o.cwd)
	}

	client, cand, code := diffConnect(ctx, inv, cwd, o.port, o.wait)
	if code != exitOK {
		return code
	}
	defer client.Close()

	var snap *idebridge.DiagnosticsSnapshot
	if o.diagnostics {
		snap = idebridge.TrySnapshotDiagnostics(ctx, client, path)
		if snap == nil {
			fmt.Fprintf(inv.Stderr, "%s: note: the IDE did not report diagnostics for %s; none will be shown\n", name, path)
		}
	}
	res, err := idebridge.NewReviewer(client, nil).ProposeEdit(ctx, idebridge.EditRequest{Path: path, NewText: string(text)})
	out := diffOutput{EditResult: res, IDE: cand.IDEName, Port: cand.Port}
	if err != nil {
		out.Error = err.Error()
	}
	if snap != nil && res != nil && res.Written {
		out.NewDiagnostics = snap.TryNewDiagnosticsText(ctx, client, &diag.RenderOptions{ProjectDir: cwd})
	}

	code = exitOK
	if err != nil {
		code = exitFailure
	}
	if o.asJSON {
		if out.EditResult == nil {
			out.EditResult = &idebridge.EditResult{Path: path, ViaIDE: true}
		}
		if !inv.writeJSON(name, out) {
			return exitFailure
		}
		return code
	}
	if err != nil {
		var ce *idebridge.ConflictError
		if errors.As(err, &ce) {
			fmt.Fprintf(inv.Stderr, "%s: %v; run it again to propose against the new content\n", name, err)
		} else {
			fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		}
		return code
	}
	fmt.Fprintln(inv.Stdout, describeOutcome(res))
	if res.CloseTabError != "" {
		fmt.Fprintf(inv.Stderr, "%s: note: closing the diff tab failed (the outcome stands): %s\n", name, res.CloseTabError)
	}
	if out.NewDiagnostics != "" {
		fmt.Fprintln(inv.Stdout, out.NewDiagnostics)
	} else if snap != nil && res.Written {
		fmt.Fprintln(inv.Stdout, "No new diagnostics.")
	}
	return code
}

// describeOutcome is the one line ide diff prints.
func describeOutcome(r *idebridge.EditResult) string {
	switch r.Status {
	case idebridge.EditAccepted:
		if r.UserModified {
			return fmt.Sprintf("accepted with your edits: wrote %s (%d bytes)", r.Path, r.Bytes)
		}
		return fmt.Sprintf("accepted: wrote %s (%d bytes)", r.Path, r.Bytes)
	case idebridge.EditTabClosed:
		return fmt.Sprintf("tab closed: wrote the proposal to %s (%d bytes)", r.Path, r.Bytes)
	case idebridge.EditRejected:
		if r.Cancelled {
			return fmt.Sprintf("cancelled: %s unchanged", r.Path)
		}
		return fmt.Sprintf("rejected: %s unchanged", r.Path)
	}
	return fmt.Sprintf("not accepted (the IDE answered %s): %s unchanged", strconv.Quote(r.IDEAnswer), r.Path)
}

// diffConnect connects to the IDE on port, or to the one usable IDE for
// cwd (waiting up to wait). It prints why when it cannot.
func diffConnect(ctx context.Context, inv *invocation, cwd string, port int, wait time.Duration) (*idebridge.Client, *idebridge.Candidate, int) {
	const name = "idebridge ide diff"
	dopts := &idebridge.DiscoverOptions{Cwd: cwd, Env: inv.environ()}
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
			fmt.Fprintf(inv.Stderr, "%s: no IDE lockfile for port %d in %v (see `idebridge ide list`)\n", name, port, idebridge.LockfileDirs(dopts))
			return nil, nil, exitUnavailable
		}
	} else {
		if wait == 0 {
			wait = -1 // look once
		}
		c, _, err := idebridge.WaitForIDE(ctx, &idebridge.AutoConnectOptions{Discover: dopts, Wait: wait})
		if err != nil {
			fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
			if errors.Is(err, idebridge.ErrNoIDE) || errors.Is(err, idebridge.ErrAmbiguousIDE) {
				if errors.Is(err, idebridge.ErrAmbiguousIDE) {
					fmt.Fprintf(inv.Stderr, "%s: choose one with --port\n", name)
				}
				return nil, nil, exitUnavailable
			}
			return nil, nil, exitFailure
		}
		cand = c
	}
	client, err := idebridge.Connect(ctx, *cand, nil)
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		return nil, nil, exitUnavailable
	}
	return client, cand, exitOK
}
