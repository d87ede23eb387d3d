package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/mcpserver"
)

// The navigation commands: each runs one operation of the lsp package on
// the servers `diag` would use, and prints its result as a model reads it,
// or as JSON.

// exitIncomplete: the server had not finished loading the workspace; the
// answer may be incomplete (as diag's 3: not known to be current).
const exitIncomplete = 3

const posHelp = "POS is FILE:LINE:COL (1-based, the column counted in characters) or\n" +
	"FILE:LINE:SYMBOL, the text of a symbol on that line (a qualified name names its\n" +
	"last part: fmt.Println is Println); when the symbol occurs more than once on the\n" +
	"line, SYMBOL#N picks the Nth occurrence. A symbol not on the line is an error\n" +
	"that shows the line."

const navRuntimeHelp = "By default the request goes to the project's language servers in the user's\n" +
	"shared runtime (`idebridge runtime status`), started on first use and kept warm\n" +
	"for the next command and every `idebridge mcp` on the working directory; the\n" +
	"output is what the command prints in its own process. --no-runtime, or\n" +
	"IDEBRIDGE_RUNTIME=0, starts the servers in this process instead, as do a\n" +
	"--load-wait other than the default and a runtime that cannot be reached (a note\n" +
	"says why). rename always runs in this process: it writes files."

const navExitHelp = "Exit status: 0 when the server answered (even with nothing); 3 when it had\n" +
	"not finished loading the workspace, so that the answer may be incomplete (the\n" +
	"output says so); 1 when the server failed, does not offer the operation, or POS\n" +
	"names no place in the file; 2 when no server serves the file; 64 bad usage."

// navFlags are the flags every navigation command has.
type navFlags struct {
	src       serverSources
	asJSON    bool
	timeout   time.Duration
	loadWait  time.Duration
	max       int
	quiet     bool
	noRuntime bool
}

func (o *navFlags) register(fs *flag.FlagSet) {
	o.src.register(fs)
	fs.BoolVar(&o.asJSON, "json", false, "print the result as JSON (the lsp package's result type)")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "how long to wait for the server, in all (its start and load included)")
	fs.DurationVar(&o.loadWait, "load-wait", lsp.DefaultLoadWait, "how long to wait for a server still loading the workspace before asking anyway (0: ask at once)")
	fs.IntVar(&o.max, "max", lsp.DefaultMaxLocations, "show at most this many locations, symbols or calls (0: all)")
	fs.BoolVar(&o.quiet, "q", false, "print no progress line on standard error")
	fs.BoolVar(&o.noRuntime, "no-runtime", false, "run the language servers in this process, not through the user's shared runtime")
}

// navCommand describes one navigation command.
type navCommand struct {
	name, usage, summary, help string
	// args checks the positional arguments (after flags) and returns
	// the run function, or a usage error.
	setup func(fs *flag.FlagSet) func(args []string) (navRun, error)
}

// navRun runs the operation on m and returns what to print.
type navRun func(ctx context.Context, s *navSession) (any, error)

// navSession is what a navigation command works with.
type navSession struct {
	inv *invocation
	wd  string
	o   *navFlags
	// local is the manager of this process, made at first use (never when
	// every request goes through the runtime).
	local func() (*lsp.Manager, error)
	// rt, when set, runs read-only requests through the user's runtime
	// (lsp_runtime.go); nil runs them on local.
	rt   *navRuntime
	name string // the command's, for its notes
	// interrupted ends when the user interrupts the command; unlike the
	// operation's context it has no --timeout, since a user reviewing a
	// rename takes the time they need.
	interrupted context.Context
}

func init() {
	for _, c := range []navCommand{
		{name: "def", usage: "POS [--decl | --type] [--offset N] [--limit N]", summary: "where the symbol at POS is defined (or declared, or its type defined)",
			help: "Prints the definition of the symbol at POS: textDocument/definition; with\n" +
				"--decl its declaration (a C or C++ header's, say), with --type the definition\n" +
				"of its type.\n\n" + pageHelp,
			setup: func(fs *flag.FlagSet) func([]string) (navRun, error) {
				decl := fs.Bool("decl", false, "the declaration instead (textDocument/declaration)")
				typ := fs.Bool("type", false, "the definition of the symbol's type (textDocument/typeDefinition)")
				pg := registerPage(fs)
				return onePos(func(ctx context.Context, s *navSession, p lsp.Pos) (any, error) {
					op := lsp.OpDefinition
					switch {
					case *decl && *typ:
						return nil, usageError("--decl and --type exclude each other")
					case *decl:
						op = lsp.OpDeclaration
					case *typ:
						op = lsp.OpTypeDefinition
					}
					return pg.navigate(ctx, s, lsp.NavRequest{Op: op, At: p})
				})
			}},
		{name: "refs", usage: "POS [--no-decl] [--offset N] [--limit N]", summary: "the references to the symbol at POS",
			help: "Prints every reference to the symbol at POS (textDocument/references),\n" +
				"grouped by file, its declaration included unless --no-decl.\n\n" + pageHelp,
			setup: func(fs *flag.FlagSet) func([]string) (navRun, error) {
				noDecl := fs.Bool("no-decl", false, "leave the declaration out")
				pg := registerPage(fs)
				return onePos(func(ctx context.Context, s *navSession, p lsp.Pos) (any, error) {
					return pg.navigate(ctx, s, lsp.NavRequest{Op: lsp.OpReferences, At: p, IncludeDeclaration: !*noDecl})
				})
			}},
		{name: "hover", usage: "POS", summary: "the signature and documentation of the symbol at POS",
			help: "Prints what the server shows when hovering over POS (textDocument/hover), as\n" +
				"Markdown.",
			setup: func(fs *flag.FlagSet) func([]string) (navRun, error) {
				return onePos(func(ctx context.Context, s *navSession, p lsp.Pos) (any, error) {
					return s.navigate(ctx, lsp.NavRequest{Op: lsp.OpHover, At: p})
				})
			}},
		{name: "impl", usage: "POS [--offset N] [--limit N]", summary: "the implementations of the interface or method at POS",
			help: "Prints the implementations of the interface, abstract method or virtual\n" +
				"function at POS (textDocument/implementation).\n\n" + pageHelp,
			setup: func(fs *flag.FlagSet) func([]string) (navRun, error) {
				pg := registerPage(fs)
				return onePos(func(ctx context.Context, s *navSession, p lsp.Pos) (any, error) {
					return pg.navigate(ctx, s, lsp.NavRequest{Op: lsp.OpImplementation, At: p})
				})
			}},
		{name: "symbols", usage: "FILE", summary: "the symbols declared in FILE, as a tree",
			help: "Prints the symbols declared in FILE (textDocument/documentSymbol), each with its\n" +
				"kind and place, children indented under their parent.",
			setup: func(fs *flag.FlagSet) func([]string) (navRun, error) {
				return func(args []string) (navRun, error) {
					if len(args) != 1 {
						return nil, usageError("want FILE, got %d arguments", len(args))
					}
					return func(ctx context.Context, s *navSession) (any, error) {
						return s.navigate(ctx, lsp.NavRequest{Op: lsp.OpDocumentSymbols, At: lsp.Pos{Path: absIn(s.wd, args[0])}})
					}, nil
				}
			}},
		{name: "wsymbols", usage: "FILE QUERY [--offset N] [--limit N]", summary: "the workspace's symbols matching QUERY, from FILE's server",
			help: "Prints the symbols of the workspace that match QUERY (workspace/symbol), from\n" +
				"the server of FILE (which is opened, so that the server loads its workspace).\n\n" + pageHelp,
			setup: func(fs *flag.FlagSet) func([]string) (navRun, error) {
				pg := registerPage(fs)
				return func(args []string) (navRun, error) {
					if len(args) != 2 {
						return nil, usageError("want FILE and QUERY, got %d arguments", len(args))
					}
					return func(ctx context.Context, s *navSession) (any, error) {
						return pg.navigate(ctx, s, lsp.NavRequest{Op: lsp.OpWorkspaceSymbols, Query: args[1], At: lsp.Pos{Path: absIn(s.wd, args[0])}})
					}, nil
				}
			}},
		{name: "types", usage: "POS [--super | --sub] [--offset N] [--limit N]", summary: "the supertypes and subtypes of the type at POS",
			help: "Prints the type hierarchy of the type at POS: its direct supertypes\n" +
				"(typeHierarchy/supertypes: what it extends or implements), then its direct\n" +
				"subtypes (typeHierarchy/subtypes: what extends or implements it); --super\n" +
				"or --sub prints one of them. A server that offers no type hierarchy is an\n" +
				"error (exit status 1).\n\n" + pageHelp,
			setup: func(fs *flag.FlagSet) func([]string) (navRun, error) {
				super := fs.Bool("super", false, "only the supertypes")
				sub := fs.Bool("sub", false, "only the subtypes")
				pg := registerPage(fs)
				return onePos(func(ctx context.Context, s *navSession, p lsp.Pos) (any, error) {
					if *super && *sub {
						return nil, usageError("--super and --sub exclude each other")
					}
					var res []lsp.NavResult
					for _, op := range []lsp.NavOp{lsp.OpSupertypes, lsp.OpSubtypes} {
						if op == lsp.OpSupertypes && *sub || op == lsp.OpSubtypes && *super {
							continue
						}
						r, err := pg.navigate(ctx, s, lsp.NavRequest{Op: op, At: p})
						if err != nil {
							return nil, err
						}
						res = append(res, r)
					}
					return navResults(res), nil
				})
			}},
		{name: "calls", usage: "POS [--in | --out] [--offset N] [--limit N]", summary: "the callers of the function at POS, and what it calls",
			help: "Prints the call hierarchy of the function or method at POS: its callers\n" +
				"(callHierarchy/incomingCalls) with the call sites, then what it calls\n" +
				"(outgoingCalls); --in or --out prints one of them.\n\n" + pageHelp,
			setup: func(fs *flag.FlagSet) func([]string) (navRun, error) {
				in := fs.Bool("in", false, "only the callers")
				out := fs.Bool("out", false, "only what it calls")
				pg := registerPage(fs)
				return onePos(func(ctx context.Context, s *navSession, p lsp.Pos) (any, error) {
					if *in && *out {
						return nil, usageError("--in and --out exclude each other")
					}
					var res []lsp.NavResult
					if !*out {
						r, err := pg.navigate(ctx, s, lsp.NavRequest{Op: lsp.OpIncomingCalls, At: p})
						if err != nil {
							return nil, err
						}
						res = append(res, r)
					}
					if !*in {
						r, err := pg.navigate(ctx, s, lsp.NavRequest{Op: lsp.OpOutgoingCalls, At: p})
						if err != nil && !(errors.Is(err, lsp.ErrUnsupported) && !*out) {
							return nil, err
						}
						if err != nil {
							fmt.Fprintf(s.inv.Stderr, "idebridge lsp calls: note: %v\n", err)
						} else {
							res = append(res, r)
						}
					}
					return navResults(res), nil
				})
			}},
		{name: "rename", usage: "POS NEWNAME [--apply] [--no-ide] [--port N]", summary: "rename the symbol at POS: the diff, then (with --apply) the files",
			help: "Asks the server how to rename the symbol at POS to NEWNAME\n" +
				"(textDocument/rename) and prints the unified diff of every file it would\n" +
				"change. Nothing is written without --apply. With --apply, when an IDE is\n" +
				"found for the working directory (as `idebridge ide diff` finds it, or the one\n" +
				"on --port), each file is shown in its diff viewer, one tab at a time, and\n" +
				"written only if the user accepts it; interrupting (Ctrl-C) cancels the\n" +
				"review, as ESC does in Claude Code, and leaves the remaining files\n" +
				"untouched. Without an IDE (or with --no-ide), --apply writes the files\n" +
				"directly, all or none: when one changed on disk since the rename was\n" +
				"computed, or cannot be written, none is (those already replaced are put\n" +
				"back) and the error names it. A rename that would write outside the\n" +
				"working directory (the project; say through a module replaced by ../lib,\n" +
				"or a symbolic link out of it) is refused whole, naming those files.",
			setup: func(fs *flag.FlagSet) func([]string) (navRun, error) {
				apply := fs.Bool("apply", false, "write the files (through the IDE's diff review when there is one)")
				noIDE := fs.Bool("no-ide", false, "with --apply, write the files without the IDE's review")
				port := fs.Int("port", 0, "the IDE's port (default: the one usable IDE for the working directory)")
				return func(args []string) (navRun, error) {
					if len(args) != 2 {
						return nil, usageError("want POS and NEWNAME, got %d arguments", len(args))
					}
					if !validPort(*port) {
						return nil, usageError("--port must be 1-65535")
					}
					p, err := lsp.ParsePos(args[0])
					if err != nil {
						return nil, usageError("%v", err)
					}
					return func(ctx context.Context, s *navSession) (any, error) {
						p.Path = absIn(s.wd, p.Path)
						return runRename(ctx, s, p, args[1], *apply, *noIDE, *port)
					}, nil
				}
			}},
	} {
		registerNav(c)
	}
}

const pageHelp = "With --offset or --limit, prints a page of the answer: at most --limit\n" +
	"entries from the 0-based --offset on, saying which (\"showing 101-112 of 112\")\n" +
	"and, when more remain, the --offset of the next page; the total is always\n" +
	"the whole answer's. --json prints the page, with \"total\" and \"offset\"."

// pageFlags are the paging flags of a command whose answer is a list.
type pageFlags struct{ offset, limit int }

func registerPage(fs *flag.FlagSet) *pageFlags {
	var p pageFlags
	fs.IntVar(&p.offset, "offset", 0, "print the answer from this 0-based entry on")
	fs.IntVar(&p.limit, "limit", 0, "print at most this many entries (0: all from --offset on)")
	return &p
}

// navigate runs req with the page asked for; a paged result prints whole
// (--max does not cut it) and says how to get the next page.
func (p *pageFlags) navigate(ctx context.Context, s *navSession, req lsp.NavRequest) (lsp.NavResult, error) {
	if p.offset < 0 || p.limit < 0 {
		return nil, usageError("--offset and --limit must not be negative")
	}
	req.Offset, req.Limit = p.offset, p.limit
	res, err := s.navigate(ctx, req)
	if err != nil {
		return nil, err
	}
	return p.wrap(res), nil
}

// wrap is res as printed: a page when one was asked for.
func (p *pageFlags) wrap(res lsp.NavResult) lsp.NavResult {
	if p.offset == 0 && p.limit == 0 {
		return res
	}
	return pagedResult{res}
}

// pagedResult is a page of a result: rendered whole, with the offset of
// the next page; in JSON, the page as the lsp package writes it.
type pagedResult struct{ lsp.NavResult }

// Render writes the page and, when more remain, how to get them.
func (r pagedResult) Render(opts *lsp.NavRenderOptions) string {
	o := lsp.NavRenderOptions{MaxLocations: -1}
	if opts != nil {
		o.ProjectDir = opts.ProjectDir
	}
	text := r.NavResult.Render(&o)
	if p, ok := lsp.PageOf(r.NavResult); ok && p.Rest() > 0 {
		text += fmt.Sprintf("(%d more: run again with --offset %d for the next ones.)\n", p.Rest(), p.Offset+p.Returned)
	}
	return text
}

// MarshalJSON writes the page itself.
func (r pagedResult) MarshalJSON() ([]byte, error) { return json.Marshal(r.NavResult) }

// usageError is a mistake in the arguments: exit status 64.
type usageErr struct{ msg string }

func (e *usageErr) Error() string { return e.msg }

func usageError(format string, args ...any) error {
	return &usageErr{fmt.Sprintf(format, args...)}
}

// onePos is the argument check of the commands that take one POS.
func onePos(run func(ctx context.Context, s *navSession, p lsp.Pos) (any, error)) func([]string) (navRun, error) {
	return func(args []string) (navRun, error) {
		if len(args) != 1 {
			return nil, usageError("want one POS (FILE:LINE:COL or FILE:LINE:SYMBOL), got %d arguments", len(args))
		}
		p, err := lsp.ParsePos(args[0])
		if err != nil {
			return nil, usageError("%v", err)
		}
		return func(ctx context.Context, s *navSession) (any, error) {
			p.Path = absIn(s.wd, p.Path)
			return run(ctx, s, p)
		}, nil
	}
}

// navResults is several results printed one after the other (calls in
// and out); in JSON, an array.
type navResults []lsp.NavResult

func registerNav(c navCommand) {
	name := "idebridge lsp " + c.name
	register(&command{
		Name:    "lsp " + c.name,
		Usage:   c.usage + " [--json] [--timeout D] [--load-wait D] [--max N] [--config FILE] [--plugin-dir DIR] [--marketplace DIR] [--no-plugins] [--no-runtime] [-q]",
		Summary: c.summary,
		Help:    c.help + "\n\n" + posHelp + "\n\n" + sourcesHelp + "\n\n" + navRuntimeHelp + "\n\n" + progressHelp + "\n\n" + navExitHelp,
		Setup: func(fs *flag.FlagSet) runFunc {
			var o navFlags
			o.register(fs)
			check := c.setup(fs)
			return func(ctx context.Context, inv *invocation, args []string) int {
				if o.timeout <= 0 || o.loadWait < 0 || o.max < 0 {
					fmt.Fprintf(inv.Stderr, "%s: --timeout must be positive, --load-wait and --max not negative\n", name)
					return exitUsage
				}
				run, err := check(args)
				if err != nil {
					fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
					return exitUsage
				}
				return runNav(ctx, inv, name, &o, args, run)
			}
		},
	})
}

// runNav starts the servers, runs the operation and prints its result.
func runNav(ctx context.Context, inv *invocation, name string, o *navFlags, args []string, run navRun) int {
	wd, err := inv.Getwd()
	if err != nil {
		fmt.Fprintf(inv.Stderr, "%s: working directory: %v\n", name, err)
		return exitFailure
	}
	var files []string
	for _, a := range args {
		if p, err := lsp.ParsePos(a); err == nil {
			files = append(files, p.Path)
		} else {
			files = append(files, a)
		}
	}
	set := loadServers(inv, wd, &o.src, files)
	set.printWarnings(inv.Stderr, name)
	if o.src.explicit() && set.fromFlags() == 0 {
		fmt.Fprintf(inv.Stderr, "%s: the servers named by --config, --plugin-dir and --marketplace did not load\n", name)
		return exitUnavailable
	}
	loadWait := o.loadWait
	if loadWait == 0 {
		loadWait = -1 // ask at once
	}
	progress := newProgressLine(inv, o.quiet)
	defer progress.Close()
	var m *lsp.Manager
	sess := &navSession{inv: inv, wd: wd, o: o, interrupted: ctx}
	sess.local = func() (*lsp.Manager, error) {
		if m != nil {
			return m, nil
		}
		// Roots: wd, the project, so that `lsp rename --apply` never
		// writes outside it.
		var err error
		m, err = lsp.NewManager(set.configs, &lsp.ManagerOptions{ProjectDir: wd, Roots: []string{wd}, Env: inv.environ(), LoadWait: loadWait, OnEvent: progress.onEvent()})
		return m, err
	}
	defer func() {
		if m == nil {
			return
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = m.Shutdown(sctx)
	}()
	sess.name = name
	if useNavRuntime(inv, o) {
		if sess.rt, err = newNavRuntime(inv, wd, set); err != nil && !o.quiet {
			fmt.Fprintf(inv.Stderr, "%s: note: no runtime (%v); running in this process\n", name, err)
		}
	}
	if sess.rt == nil {
		if _, err := sess.local(); err != nil {
			fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
			return exitFailure
		}
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()

	res, err := run(ctx, sess)
	progress.Close()
	if err != nil {
		var ue *usageErr
		if errors.As(err, &ue) {
			fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
			return exitUsage
		}
		fmt.Fprintf(inv.Stderr, "%s: %s\n", name, set.advice(err))
		if errors.Is(err, lsp.ErrNoServer) {
			return exitUnavailable
		}
		return exitFailure
	}
	ropts := &lsp.NavRenderOptions{ProjectDir: wd, MaxLocations: o.max}
	if o.max == 0 {
		ropts.MaxLocations = -1
	}
	code := exitOK
	if incomplete(res) {
		code = exitIncomplete
	}
	if o.asJSON {
		if !inv.writeJSON(name, res) {
			return exitFailure
		}
		return code
	}
	fmt.Fprint(inv.Stdout, render(res, ropts))
	if r, ok := res.(*renameOutput); ok && r.failed {
		code = exitFailure
	}
	return code
}

// incomplete reports whether a result may be incomplete.
func incomplete(res any) bool {
	switch r := res.(type) {
	case lsp.NavResult:
		return r.Info().Incomplete
	case navResults:
		for _, x := range r {
			if x.Info().Incomplete {
				return true
			}
		}
	case *renameOutput:
		return r.Proposal.Incomplete
	}
	return false
}

func render(res any, opts *lsp.NavRenderOptions) string {
	switch r := res.(type) {
	case lsp.NavResult:
		return r.Render(opts)
	case navResults:
		parts := make([]string, len(r))
		for i, x := range r {
			parts[i] = x.Render(opts)
		}
		return strings.Join(parts, "\n")
	case *renameOutput:
		out := r.Proposal.Render(opts)
		if r.note != "" {
			out += "\n" + r.note + "\n"
		}
		if r.Applied != nil {
			out += "\n" + r.Applied.Render(opts)
		}
		return out
	}
	return fmt.Sprint(res)
}

// renameOutput is what `lsp rename` prints: the proposal, and what became
// of each file with --apply.
type renameOutput struct {
	Proposal *lsp.RenameProposal `json:"proposal"`
	Applied  *lsp.RenameApplied  `json:"applied"`
	// ViaIDE names the IDE that reviewed the files, if one did.
	ViaIDE string `json:"viaIDE,omitempty"`
	note   string
	failed bool // a file could not be written (conflict or error)
}

func runRename(ctx context.Context, s *navSession, p lsp.Pos, newName string, apply, noIDE bool, port int) (any, error) {
	const name = "idebridge lsp rename"
	m, err := s.local()
	if err != nil {
		return nil, err
	}
	prop, err := m.Rename(ctx, p, newName)
	if err != nil {
		return nil, err
	}
	out := &renameOutput{Proposal: prop}
	if !apply || len(prop.Files) == 0 {
		if len(prop.Files) > 0 {
			out.note = "Run again with --apply to write it (through the IDE's diff review when an IDE is connected)."
		}
		return out, nil
	}
	var propose lsp.ProposeFunc
	if !noIDE {
		client, cand, why := renameIDE(ctx, s, port)
		switch {
		case client != nil:
			defer client.Close()
			out.ViaIDE = fmt.Sprintf("%s (port %d)", cand.IDEName, cand.Port)
			var stop func() bool
			propose, stop = reviewInIDE(s.interrupted, client)
			defer stop()
			fmt.Fprintf(s.inv.Stderr, "%s: showing each file in %s's diff viewer\n", name, out.ViaIDE)
		case port != 0:
			return nil, fmt.Errorf("no IDE on port %d: %s", port, why)
		default:
			fmt.Fprintf(s.inv.Stderr, "%s: no IDE connected (%s): writing the files directly\n", name, why)
		}
	}
	// The review ends by interruption (CancelAll), not by ctx, so that an
	// interrupted review reads as cancelled.
	applied, err := m.ApplyRename(context.WithoutCancel(ctx), prop, propose)
	if err != nil {
		return nil, err
	}
	out.Applied = applied
	for _, f := range applied.Files {
		if f.Status == lsp.ApplyConflict || f.Status == lsp.ApplyFailed {
			out.failed = true
		}
	}
	return out, nil
}

// renameIDE finds the IDE to review a rename in: the one on port, or the
// one usable IDE for the working directory. It returns why there is none.
func renameIDE(ctx context.Context, s *navSession, port int) (*idebridge.Client, *idebridge.Candidate, string) {
	return findIDE(ctx, s.wd, s.inv.environ(), port)
}

// findIDE finds the IDE to review edits in: the one on port, or the one
// usable IDE for the working directory wd. It returns why there is none.
func findIDE(ctx context.Context, wd string, env []string, port int) (*idebridge.Client, *idebridge.Candidate, string) {
	dopts := &idebridge.DiscoverOptions{Cwd: wd, Env: env}
	var cand *idebridge.Candidate
	if port != 0 {
		cands, _ := idebridge.Discover(ctx, dopts)
		for i := range cands {
			if cands[i].Port == port && cands[i].Lockfile != nil {
				cand = &cands[i]
			}
		}
		if cand == nil {
			return nil, nil, fmt.Sprintf("no IDE lockfile for port %d in %s", port, strings.Join(idebridge.LockfileDirs(dopts), ", "))
		}
	} else {
		c, _, err := idebridge.WaitForIDE(ctx, &idebridge.AutoConnectOptions{Discover: dopts, Wait: -1})
		if err != nil {
			return nil, nil, err.Error()
		}
		cand = c
	}
	client, err := idebridge.Connect(ctx, *cand, nil)
	if err != nil {
		return nil, nil, err.Error()
	}
	return client, cand, ""
}

// reviewInIDE is the ProposeFunc of an IDE: each file through
// Reviewer.ProposeEdit, its base the file's state when the rename was
// computed. When interrupted ends (Ctrl-C), the review is cancelled as ESC
// does (CancelAll). stop ends that watch.
func reviewInIDE(interrupted context.Context, client *idebridge.Client) (propose lsp.ProposeFunc, stop func() bool) {
	rev := idebridge.NewReviewer(client, nil)
	stop = context.AfterFunc(interrupted, func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = rev.CancelAll(cctx)
	})
	return func(rctx context.Context, e *lsp.FileEdit) (lsp.ApplyStatus, error) {
		if interrupted.Err() != nil {
			return lsp.ApplyCancelled, nil
		}
		res, err := rev.ProposeEdit(rctx, idebridge.EditRequest{Path: e.Path, NewText: e.NewText, Base: e.Base})
		return mcpserver.ReviewStatus(rctx, res, err)
	}, stop
}
