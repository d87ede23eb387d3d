package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/lsp"
)

// maxEditsFile bounds the EDITS.json read.
const maxEditsFile = 64 << 20

const editsHelp = "EDITS.json is a JSON array of edits (\"-\" reads it from standard input), each\n" +
	"one of:\n" +
	"  {\"file\": F, \"old_string\": S, \"new_string\": T}  S occurs exactly once in F\n" +
	"  {\"file\": F, \"new_text\": T}                     F's whole new text\n" +
	"  {\"file\": F, \"symbol\": \"Type.Method\", \"body\": T}  the symbol's new body\n" +
	"  {\"file\": F, \"symbol\": N, \"action\": A, \"text\": T} A is replace,\n" +
	"      insert_before, insert_after or delete (refused while N is still\n" +
	"      referenced, unless \"force\": true)\n" +
	"  {\"file\": F, \"format\": true}                    F formatted by its server\n" +
	"  {\"file\": F, \"line\": N, \"fix\": TITLE}           the code action TITLE at\n" +
	"      line N (or the one whose title contains TITLE): a quick fix, organize\n" +
	"      imports, a refactoring\n" +
	"Edits apply in order; paths are relative to the working directory."

func init() {
	for _, apply := range []bool{false, true} {
		name, summary, help := "edit check", "check edits with the language servers, writing nothing",
			"Sends the edits to the language servers as unsaved text, waits for their\n"+
				"diagnostics, and prints the unified diff and what the edits change in the\n"+
				"diagnostics (+ introduced, - resolved) of the edited files and of the files\n"+
				"that depend on them: those that use the symbols the edits touch, and the rest\n"+
				"of their directories. Nothing is written; the servers are put back on the\n"+
				"text on disk.\n\n"+
				"Exit status: 0 when the edits introduce no error; 1 when they do, or cannot\n"+
				"be applied (an old_string that does not occur once, an unknown symbol); 3\n"+
				"when a file's diagnostics were not known complete; 2 when no server serves\n"+
				"an edited file; 64 bad usage."
		if apply {
			name, summary, help = "edit apply", "write edits, all or none, and check what they changed",
				"Writes the edits, all of them or none: a file that changed on disk since it\n"+
					"was read, or lies outside the working directory, stops the whole write,\n"+
					"and the error names it. When an IDE is found for the working directory (as\n"+
					"`idebridge ide diff` finds it, or the one on --port), a file with unsaved\n"+
					"changes there stops the write too (--save-unsaved asks the IDE to save them\n"+
					"first; the edits then apply to the saved text), and every file is shown in\n"+
					"its diff viewer, one after the other: nothing is written unless the user\n"+
					"accepts them all, and a file they edited in the diff is written as they left\n"+
					"it (and checked so). Interrupting (Ctrl-C) ends the review, writing nothing.\n"+
					"--no-ide writes directly. Then prints the diff written and what it changed\n"+
					"in the diagnostics of the edited files and their dependents.\n\n"+
					"Exit status: 0 when the edits were written; 1 when nothing was written;\n"+
					"2 when no server serves an edited file; 64 bad usage."
		}
		usage := "EDITS.json [--json] [--timeout D] [--config FILE] [--plugin-dir DIR] [--marketplace DIR] [--no-plugins] [-q]"
		if apply {
			usage = "EDITS.json [--no-ide] [--port N] [--save-unsaved] [--json] [--timeout D] [--config FILE] [--plugin-dir DIR] [--marketplace DIR] [--no-plugins] [-q]"
		}
		register(&command{
			Name:    name,
			Usage:   usage,
			Summary: summary,
			Help:    help + "\n\n" + editsHelp + "\n\n" + sourcesHelp + "\n\n" + progressHelp,
			Setup: func(fs *flag.FlagSet) runFunc {
				var src serverSources
				src.register(fs)
				asJSON := fs.Bool("json", false, "print the result as JSON (lsp.EditCheck; for apply, lsp.EditApplied)")
				timeout := fs.Duration("timeout", 2*time.Minute, "how long to wait for the servers, in all")
				quiet := fs.Bool("q", false, "print no progress line on standard error")
				var ide ideChoice
				if apply {
					fs.BoolVar(&ide.off, "no-ide", false, "write directly, without the IDE's review")
					fs.IntVar(&ide.port, "port", 0, "the IDE's port (default: the one usable IDE for the working directory)")
					fs.BoolVar(&ide.saveUnsaved, "save-unsaved", false, "ask the IDE to save the edited files' unsaved changes first, instead of refusing")
				}
				return func(ctx context.Context, inv *invocation, args []string) int {
					return runEdit(ctx, inv, "idebridge "+name, apply, &src, *asJSON, *timeout, *quiet, &ide, args)
				}
			},
		})
	}
}

// readEdits reads EDITS.json: a file, or standard input for "-".
func readEdits(inv *invocation, wd, arg string) ([]lsp.Edit, error) {
	var r io.Reader
	if arg == "-" {
		r = inv.Stdin
	} else {
		f, err := os.Open(absIn(wd, arg))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxEditsFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxEditsFile {
		return nil, fmt.Errorf("%s is larger than %d MiB", arg, maxEditsFile>>20)
	}
	edits, err := lsp.DecodeEdits(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", arg, err)
	}
	for i := range edits {
		edits[i].File = absIn(wd, edits[i].File)
	}
	return edits, nil
}

// ideChoice is how edit apply uses the IDE.
type ideChoice struct {
	off         bool
	port        int
	saveUnsaved bool
}

func runEdit(ctx context.Context, inv *invocation, name string, apply bool, src *serverSources, asJSON bool, timeout time.Duration, quiet bool, ide *ideChoice, args []string) int {
	if len(args) != 1 {
		fmt.Fprintf(inv.Stderr, "%s: want EDITS.json, got %d arguments\n", name, len(args))
		return exitUsage
	}
	if !validPort(ide.port) {
		fmt.Fprintf(inv.Stderr, "%s: --port must be 1-65535\n", name)
		return exitUsage
	}
	if ide.off && (ide.port != 0 || ide.saveUnsaved) {
		fmt.Fprintf(inv.Stderr, "%s: --no-ide leaves no IDE for --port or --save-unsaved\n", name)
		return exitUsage
	}
	if timeout <= 0 {
		fmt.Fprintf(inv.Stderr, "%s: --timeout must be positive\n", name)
		return exitUsage
	}
	wd, err := inv.Getwd()
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: working directory: %v\n", name, err)
		return exitFailure
	}
	edits, err := readEdits(inv, wd, args[0])
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		return exitUsage
	}
	files := make([]string, len(edits))
	for i, e := range edits {
		files[i] = e.File
	}
	set := loadServers(inv, wd, src, files)
	set.printWarnings(inv.Stderr, name)
	if src.explicit() && set.fromFlags() == 0 {
		fmt.Fprintf(inv.Stderr, "%s: the servers named by --config, --plugin-dir and --marketplace did not load\n", name)
		return exitUnavailable
	}
	progress := newProgressLine(inv, quiet)
	defer progress.Close()
	// Roots: wd, so that apply never writes outside the project.
	m, err := lsp.NewManager(set.configs, &lsp.ManagerOptions{ProjectDir: wd, Roots: []string{wd}, Env: inv.environ(),
		WaitForProgress: true, OnEvent: progress.onEvent()})
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		return exitFailure
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = m.Shutdown(sctx)
	}()
	// The user's review is not bounded by --timeout, only by interruption.
	interrupted := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var client *idebridge.Client
	via := ""
	if apply && !ide.off {
		c, cand, why := findIDE(ctx, wd, inv.environ(), ide.port)
		switch {
		case c != nil:
			defer c.Close()
			client, via = c, fmt.Sprintf("%s (port %d)", cand.IDEName, cand.Port)
		case ide.port != 0:
			progress.Close()
			fmt.Fprintf(inv.Stderr, "%s: no IDE on port %d: %s\n", name, ide.port, why)
			return exitFailure
		case ide.saveUnsaved:
			progress.Close()
			fmt.Fprintf(inv.Stderr, "%s: --save-unsaved: no IDE connected (%s)\n", name, why)
			return exitFailure
		case !quiet:
			progress.Close()
			fmt.Fprintf(inv.Stderr, "%s: no IDE connected (%s): writing the files directly\n", name, why)
		}
	}
	if client != nil && ide.saveUnsaved {
		saved, err := client.SaveUnsaved(ctx, files)
		if err != nil {
			progress.Close()
			fmt.Fprintf(inv.Stderr, "%s: saving the unsaved changes in %s first: %v; nothing was written\n", name, via, err)
			return exitFailure
		}
		for _, p := range saved {
			fmt.Fprintf(inv.Stderr, "%s: %s saved the unsaved changes of %s\n", name, via, p)
		}
	}

	es := m.NewEditSet()
	defer es.Discard(context.WithoutCancel(ctx))
	fail := func(err error) int {
		progress.Close()
		fmt.Fprintf(inv.Stderr, "%s: %s\n", name, set.advice(err))
		if errors.Is(err, lsp.ErrNoServer) {
			return exitUnavailable
		}
		return exitFailure
	}
	if err := es.Stage(ctx, edits); err != nil {
		return fail(err)
	}
	var out any
	var check *lsp.EditCheck
	if apply {
		actx, opts := ctx, (*lsp.ApplyOptions)(nil)
		if client != nil {
			opts = &lsp.ApplyOptions{
				BeforeWrite: func(ctx context.Context, paths []string) error {
					dirty, _, err := client.UnsavedFiles(ctx, paths)
					if err != nil {
						return err
					}
					if len(dirty) > 0 {
						return fmt.Errorf("%s has unsaved changes in %s; save or revert them there first (or --save-unsaved); nothing was written", strings.Join(dirty, ", "), via)
					}
					return nil
				},
				Review: idebridge.NewReviewer(client, nil).ReviewFunc(nil),
			}
			actx = interrupted
			progress.Close()
			fmt.Fprintf(inv.Stderr, "%s: showing each file in %s's diff viewer; nothing is written unless every one is accepted\n", name, via)
		}
		applied, err := es.Apply(actx, opts)
		if applied == nil {
			return fail(err)
		}
		if err != nil {
			progress.Close()
			fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		}
		out, check = applied, applied.Check
	} else {
		c, err := es.Check(ctx)
		if err != nil {
			return fail(err)
		}
		out, check = c, c
	}
	progress.Close()
	code := exitOK
	if !apply && check != nil {
		switch {
		case introducesErrors(check):
			code = exitFailure
		case check.Status != lsp.StatusComplete:
			code = exitIncomplete
		}
	}
	if asJSON {
		if !inv.writeJSON(name, out) {
			return exitFailure
		}
		return code
	}
	if check != nil {
		if apply {
			a := out.(*lsp.EditApplied)
			fmt.Fprintf(inv.Stdout, "written: %d files", len(a.Written))
			if via != "" {
				fmt.Fprintf(inv.Stdout, ", reviewed in %s", via)
			}
			fmt.Fprintln(inv.Stdout)
			for _, p := range a.Modified {
				fmt.Fprintf(inv.Stdout, "changed by the user in the review (written, and checked, as they left it): %s\n", p)
			}
		}
		fmt.Fprint(inv.Stdout, check.Render(wd))
		fmt.Fprint(inv.Stdout, check.Diff)
	}
	return code
}

// introducesErrors reports whether the check found an error introduced.
func introducesErrors(c *lsp.EditCheck) bool {
	for _, f := range c.Files {
		for _, d := range f.Introduced {
			if d.Severity == 1 {
				return true
			}
		}
	}
	return false
}
