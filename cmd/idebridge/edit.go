package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

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
					"and the error names it. Then prints the diff written and what it changed in\n"+
					"the diagnostics of the edited files and their dependents.\n\n"+
					"Exit status: 0 when the edits were written; 1 when nothing was written;\n"+
					"2 when no server serves an edited file; 64 bad usage."
		}
		register(&command{
			Name:    name,
			Usage:   "EDITS.json [--json] [--timeout D] [--config FILE] [--plugin-dir DIR] [--marketplace DIR] [--no-plugins] [-q]",
			Summary: summary,
			Help:    help + "\n\n" + editsHelp + "\n\n" + sourcesHelp + "\n\n" + progressHelp,
			Setup: func(fs *flag.FlagSet) runFunc {
				var src serverSources
				src.register(fs)
				asJSON := fs.Bool("json", false, "print the result as JSON (lsp.EditCheck; for apply, lsp.EditApplied)")
				timeout := fs.Duration("timeout", 2*time.Minute, "how long to wait for the servers, in all")
				quiet := fs.Bool("q", false, "print no progress line on standard error")
				return func(ctx context.Context, inv *invocation, args []string) int {
					return runEdit(ctx, inv, "idebridge "+name, apply, &src, *asJSON, *timeout, *quiet, args)
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

func runEdit(ctx context.Context, inv *invocation, name string, apply bool, src *serverSources, asJSON bool, timeout time.Duration, quiet bool, args []string) int {
	if len(args) != 1 {
		fmt.Fprintf(inv.Stderr, "%s: want EDITS.json, got %d arguments\n", name, len(args))
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
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

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
		applied, err := es.Apply(ctx, nil)
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
			fmt.Fprintf(inv.Stdout, "written: %d files\n", len(out.(*lsp.EditApplied).Written))
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
