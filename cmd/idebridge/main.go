// Command idebridge is the command-line face of the idebridge library: list
// the IDEs an agent can see, call their tools, run a headless IDE, and print
// LSP diagnostics. Run `idebridge help` for the commands.
//
// # Adding a command
//
// Each command lives in its own file and registers itself from init; nothing
// in this file changes when a command is added:
//
//	func init() {
//		register(&command{
//			Name:    "ide tools",          // the words that select it
//			Usage:   "[--port N] [--json]", // synopsis after the name
//			Summary: "print the IDE's tool list",     // one line
//			Help:    "Longer text for -h (optional).",
//			Setup: func(fs *flag.FlagSet) runFunc {
//				port := fs.Int("port", 0, "the IDE's port (default: auto-detect)")
//				return func(ctx context.Context, inv *invocation, args []string) int {
//					// args are the positional arguments; flags are parsed.
//					fmt.Fprintln(inv.Stdout, *port)
//					return exitOK
//				}
//			},
//		})
//	}
//
// Setup runs once per invocation on a fresh FlagSet, so flag values never
// leak between runs (tests call run many times in one process). Flags may
// come before, between or after positional arguments (`ide call
// getDiagnostics '{}' --port 1234`); `--` ends flag parsing. `-h`/`--help`
// prints the command's usage and exits 0; a bad flag or a usage error exits
// 64. A command reads the environment, the working directory and standard
// streams only through its *invocation, never from os directly, so tests
// drive it in-process with a fake environment.
//
// Exit statuses, the same for every command (printHelp lists them): 0
// success, 1 the tool or server reported an error, 2 no usable IDE or
// server (say why and what to do), 64 bad usage.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// Exit statuses shared by every command.
const (
	exitOK          = 0  // success
	exitFailure     = 1  // the tool or server reported an error
	exitUnavailable = 2  // no usable IDE or server
	exitUsage       = 64 // bad usage (as sysexits' EX_USAGE)
)

// invocation is everything a command may use from the outside world.
type invocation struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Env is the environment as a map; never nil.
	Env map[string]string
	// Getwd returns the working directory.
	Getwd func() (string, error)
}

// Getenv returns the value of the environment variable key, or "".
func (inv *invocation) Getenv(key string) string { return inv.Env[key] }

// environ returns Env in os.Environ form, sorted: what the library's Env
// options take. It is never nil, so the library never falls back to the
// process's own environment.
func (inv *invocation) environ() []string {
	out := make([]string, 0, len(inv.Env))
	for k, v := range inv.Env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// writeJSON writes v to Stdout as indented JSON, the form of every
// command's --json output. When that fails it says so on Stderr after
// name (e.g. "idebridge lsp list") and returns false.
func (inv *invocation) writeJSON(name string, v any) bool {
	enc := json.NewEncoder(inv.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
		return false
	}
	return true
}

// runFunc runs a command once its flags are parsed; args are the positional
// arguments. It returns the exit status.
type runFunc func(ctx context.Context, inv *invocation, args []string) int

// command is one registered subcommand.
type command struct {
	// Name is the space-separated words that select the command ("ide list").
	Name string
	// Usage is the synopsis printed after the name ("[--json] [--cwd DIR]").
	Usage string
	// Summary is one line for `idebridge help`.
	Summary string
	// Help is an optional longer description printed by -h after Summary.
	Help string
	// Setup defines the command's flags on fs and returns its run function.
	Setup func(fs *flag.FlagSet) runFunc
}

// commands is the registry, keyed by Name. Files add to it from init.
var commands = map[string]*command{}

// register adds c to the registry; a duplicate name is a programming error.
func register(c *command) {
	if _, dup := commands[c.Name]; dup {
		panic("idebridge: command registered twice: " + c.Name)
	}
	if c.Setup == nil {
		panic("idebridge: command without Setup: " + c.Name)
	}
	commands[c.Name] = c
}

func main() {
	// Ctrl-C, SIGTERM and SIGHUP cancel the command's context; once that
	// happened the default behaviour is back, so a second signal kills a
	// command that does not stop.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		<-ctx.Done()
		stop()
	}()
	inv := &invocation{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Env:    environMap(os.Environ()),
		Getwd:  os.Getwd,
	}
	code := run(ctx, os.Args[1:], inv)
	stop()
	os.Exit(code)
}

// environMap turns KEY=VALUE pairs into a map; the first occurrence of a key
// wins, as with getenv.
func environMap(kv []string) map[string]string {
	m := make(map[string]string, len(kv))
	for _, e := range kv {
		k, v, ok := strings.Cut(e, "=")
		if !ok || k == "" {
			continue
		}
		if _, seen := m[k]; !seen {
			m[k] = v
		}
	}
	return m
}

// run dispatches args (without the program name) to a command and returns
// the exit status. It recovers a panicking command as exit status 1 so that
// a bug prints a message rather than a stack trace to users.
func run(ctx context.Context, args []string, inv *invocation) (code int) {
	if inv.Env == nil {
		inv.Env = map[string]string{}
	}
	if inv.Getwd == nil {
		inv.Getwd = os.Getwd
	}
	if inv.Stdin == nil {
		inv.Stdin = strings.NewReader("")
	}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(inv.Stderr, "idebridge: internal error: %v\n", r)
			code = exitFailure
		}
	}()

	if len(args) == 0 {
		printHelp(inv.Stderr, "")
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		topic := strings.Join(args[1:], " ")
		if c := commands[topic]; c != nil {
			fs := newFlagSet(c, inv.Stdout)
			c.Setup(fs)
			fs.SetOutput(inv.Stdout)
			fs.Usage()
			return exitOK
		}
		if topic != "" && !hasGroup(topic) {
			fmt.Fprintf(inv.Stderr, "idebridge: no help for %q\n", topic)
			printHelp(inv.Stderr, "")
			return exitUsage
		}
		printHelp(inv.Stdout, topic)
		return exitOK
	}

	c, rest := lookup(args)
	if c == nil {
		// A group alone ("idebridge ide") or with an unknown word lists the
		// group's commands.
		words := leadingWords(args)
		for n := len(words); n > 0; n-- {
			group := strings.Join(words[:n], " ")
			if !hasGroup(group) {
				continue
			}
			next := args[n:]
			switch {
			case len(next) > 0 && isHelp(next[0]):
				printHelp(inv.Stdout, group)
				return exitOK
			case len(next) > 0:
				fmt.Fprintf(inv.Stderr, "idebridge: unknown command %q\n\n", group+" "+next[0])
			default:
				fmt.Fprintf(inv.Stderr, "idebridge: %q needs a subcommand\n\n", group)
			}
			printHelp(inv.Stderr, group)
			return exitUsage
		}
		fmt.Fprintf(inv.Stderr, "idebridge: unknown command %q\n\n", args[0])
		printHelp(inv.Stderr, "")
		return exitUsage
	}

	fs := newFlagSet(c, inv.Stderr)
	runCmd := c.Setup(fs)
	// The flag package prints its error to fs.Output and calls fs.Usage on
	// any error, -h included; the usage is printed here instead, once, to
	// the stream the rule (printHelp) says.
	usage := fs.Usage
	fs.Usage = func() {}
	positional, err := parseInterspersed(fs, rest)
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(inv.Stdout)
		fs.Usage()
		return exitOK
	}
	if err != nil {
		// The flag package has printed the error; the usage follows it.
		fs.Usage()
		return exitUsage
	}
	return runCmd(ctx, inv, positional)
}

func isHelp(s string) bool { return s == "-h" || s == "-help" || s == "--help" }

// lookup finds the command named by the longest run of leading words of args.
func lookup(args []string) (*command, []string) {
	words := leadingWords(args)
	for n := len(words); n > 0; n-- {
		if c := commands[strings.Join(words[:n], " ")]; c != nil {
			return c, args[n:]
		}
	}
	return nil, nil
}

// leadingWords returns the leading arguments that can be command words (not
// flags), at most as many as the longest registered name has.
func leadingWords(args []string) []string {
	maxWords := 0
	for name := range commands {
		maxWords = max(maxWords, len(strings.Fields(name)))
	}
	var words []string
	for _, a := range args {
		if len(words) == maxWords || a == "" || strings.HasPrefix(a, "-") {
			break
		}
		words = append(words, a)
	}
	return words
}

// hasGroup reports whether some command's name starts with the words of
// prefix followed by more words.
func hasGroup(prefix string) bool {
	for name := range commands {
		if strings.HasPrefix(name, prefix+" ") {
			return true
		}
	}
	return false
}

func newFlagSet(c *command, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("idebridge "+c.Name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: %s\n\n%s\n", wrap("idebridge "+c.Name+" "+c.Usage, helpWidth, "         ", len("usage: ")), wrap(c.Summary, helpWidth, "", 0))
		if c.Help != "" {
			fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.Help, "\n"))
		}
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(w, "\nflags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseInterspersed parses flags wherever they appear among the positional
// arguments and returns the positional ones in order. "--" ends flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		before := args
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		// The flag package consumes a "--" terminator: everything after it
		// is positional.
		if consumed := len(before) - len(args); consumed > 0 && before[consumed-1] == "--" {
			return append(positional, args...), nil
		}
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// helpWidth is the width `idebridge help` wraps at.
const helpWidth = 80

// groupTitles title the sections of `idebridge help`; a command is in the
// section of its first word (a one-word command in its own, unless named
// here). Sections follow the order of this list; others come after.
var groupTitles = []struct{ word, title string }{
	{"ide", "The editor (the MCP server of the user's IDE, found by its lockfile):"},
	{"diag", "Language servers (the project's, from its Claude Code plugins, or gopls):"},
	{"lsp", ""},  // with diag
	{"edit", ""}, // with diag
	{"mcp", "For MCP clients (Claude Code, Codex, Gemini CLI, goose...):"},
}

// printHelp lists the commands, or those under group when it is not empty:
// each with its positional arguments and its one-line summary, grouped and
// wrapped at helpWidth columns. Flags are left to `idebridge help CMD`.
//
// Help asked for (help, -h, --help, `help CMD`, `CMD -h`) goes to standard
// output with exit status 0; help printed because of a usage error goes to
// standard error after the error, with exit status 64.
func printHelp(w io.Writer, group string) {
	names := make([]string, 0, len(commands))
	for name := range commands {
		if group == "" || strings.HasPrefix(name, group+" ") {
			names = append(names, name)
		}
	}
	rank := func(name string) int {
		first, _, _ := strings.Cut(name, " ")
		for i, g := range groupTitles {
			if g.word == first {
				return i
			}
		}
		return len(groupTitles)
	}
	sort.Slice(names, func(i, j int) bool {
		if ri, rj := rank(names[i]), rank(names[j]); ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	left := make(map[string]string, len(names))
	col := 0
	for _, name := range names {
		l := strings.TrimSpace(name + " " + positionalUsage(commands[name].Usage))
		left[name] = l
		if len(l) <= 28 {
			col = max(col, len(l))
		}
	}
	fmt.Fprintln(w, "usage: idebridge <command> [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "idebridge finds the editor a coding agent runs in, talks to its MCP")
	fmt.Fprintln(w, "server, and reports language-server diagnostics and navigation.")
	title := "-"
	for _, name := range names {
		if t := groupTitle(name); t != title {
			title = t
			fmt.Fprintln(w)
			fmt.Fprintln(w, title)
		}
		indent := 2 + col + 2
		l := left[name]
		if len(l) > col {
			fmt.Fprintf(w, "  %s\n%s", l, strings.Repeat(" ", indent))
		} else {
			fmt.Fprintf(w, "  %-*s  ", col, l)
		}
		fmt.Fprintln(w, wrap(commands[name].Summary, helpWidth, strings.Repeat(" ", indent), indent))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run `idebridge help <command>` or `idebridge <command> -h` for a command's")
	fmt.Fprintln(w, "flags and details. Help asked for goes to standard output; help after a")
	fmt.Fprintln(w, "usage error goes to standard error.")
	fmt.Fprintln(w, "Exit status: 0 ok, 1 the tool or server reported an error, 2 no usable")
	fmt.Fprintln(w, "IDE or server, 64 bad usage.")
}

// groupTitle is the title of the section name belongs to.
func groupTitle(name string) string {
	first, _, _ := strings.Cut(name, " ")
	title := ""
	for _, g := range groupTitles {
		if g.title != "" {
			title = g.title
		}
		if g.word == first {
			return title
		}
	}
	return "Other commands:"
}

// positionalUsage is usage without its flags: every bracketed group that
// starts with a dash ("[--json]", "[--in | --out]", "[--workspace DIR]...")
// is left out, so "[--port N] TOOL [ARGS_JSON|-]" is "TOOL [ARGS_JSON|-]".
func positionalUsage(usage string) string {
	var b strings.Builder
	for i := 0; i < len(usage); i++ {
		if usage[i] == '[' && i+1 < len(usage) && usage[i+1] == '-' {
			depth := 0
			for ; i < len(usage); i++ {
				if usage[i] == '[' {
					depth++
				} else if usage[i] == ']' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			i += len(usage[min(i+1, len(usage)):]) - len(strings.TrimPrefix(usage[min(i+1, len(usage)):], "..."))
			continue
		}
		b.WriteByte(usage[i])
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// wrap breaks text at spaces into lines of at most width columns (a word
// longer than that stays whole): the first line starts at column start,
// the others with indent.
func wrap(text string, width int, indent string, start int) string {
	var b strings.Builder
	n, empty := start, true
	for _, word := range strings.Fields(text) {
		if !empty && n+1+len(word) > width {
			b.WriteString("\n" + indent)
			n = len(indent)
		} else if !empty {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
		empty = false
	}
	return b.String()
}
