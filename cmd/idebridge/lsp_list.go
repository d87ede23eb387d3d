package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/idebridge/idebridge/lsp"
)

func init() {
	register(&command{
		Name:    "lsp list",
		Usage:   "[--json] [--config FILE] [--plugin-dir DIR] [--marketplace DIR] [--no-plugins] [--trust-project] [FILE...]",
		Summary: "list the language servers diag would use, where each comes from, and what is wrong",
		Help: "The first thing to run when diagnostics do not appear. For every server: where\n" +
			"it comes from (plugin, marketplace, file), its extensions, and whether its\n" +
			"command is found on PATH (and where), with a hint of how such servers are\n" +
			"installed when it is not; then the extensions lost to another server, the\n" +
			"plugins that are installed or enabled but not loaded and why, and every\n" +
			"problem found in the configuration. With FILE arguments: which server would\n" +
			"handle each file, or why none. Nothing is started.\n\n" + sourcesHelp + "\n\n" +
			"Exit status: 0 when the listing ran; 2 when a FILE does not exist, has no\n" +
			"server, or its server's command is not found; 64 bad usage.",
		Setup: func(fs *flag.FlagSet) runFunc {
			var src serverSources
			src.register(fs)
			asJSON := fs.Bool("json", false, "print one JSON object: projectDir, claudeConfigDir, servers, plugins, conflicts,\nerrors, files")
			return func(ctx context.Context, inv *invocation, args []string) int {
				return lspList(inv, &src, *asJSON, args)
			}
		},
	})
}

// listServer is one server as `lsp list` shows it.
type listServer struct {
	Name        string            `json:"name"`
	Origin      string            `json:"origin"`
	Plugin      string            `json:"plugin,omitempty"`
	Marketplace string            `json:"marketplace,omitempty"`
	File        string            `json:"file,omitempty"`
	Extensions  map[string]string `json:"extensions"`
	Command     string            `json:"command"`
	Args        []string          `json:"args"`
	// Resolved is the executable found for Command; empty when none.
	Resolved     string `json:"resolved,omitempty"`
	CommandError string `json:"commandError,omitempty"`
	InstallHint  string `json:"installHint,omitempty"`
}

// listProblem is one configuration problem.
type listProblem struct {
	Kind    string `json:"kind"` // "config", "redefined", "remote-source", "other"
	Message string `json:"message"`
	Plugin  string `json:"plugin,omitempty"`
	File    string `json:"file,omitempty"`
	Server  string `json:"server,omitempty"`
	Field   string `json:"field,omitempty"`
}

// listConflict is an extension a server lost.
type listConflict struct {
	Extension string `json:"extension"`
	Server    string `json:"server"`
	Winner    string `json:"winner"`
}

// listFile says which server would handle a file.
type listFile struct {
	Path     string `json:"path"`
	Server   string `json:"server,omitempty"`
	Language string `json:"language,omitempty"`
	Error    string `json:"error,omitempty"`
}

type listing struct {
	ProjectDir      string             `json:"projectDir"`
	ClaudeConfigDir string             `json:"claudeConfigDir,omitempty"`
	Servers         []listServer       `json:"servers"`
	Plugins         []lsp.PluginStatus `json:"plugins"`
	// Trust says whether the project's own settings counted; nil with
	// --no-plugins. Unlisted counts enabledPlugins entries naming no
	// installed plugin that Plugins does not list.
	Trust     *lsp.ProjectTrust `json:"trust,omitempty"`
	Unlisted  int               `json:"unlisted,omitempty"`
	Conflicts []listConflict    `json:"conflicts"`
	Errors    []listProblem     `json:"errors"`
	Files     []listFile        `json:"files,omitempty"`
}

func lspList(inv *invocation, src *serverSources, asJSON bool, files []string) int {
	wd, err := inv.Getwd()
	if err != nil {
		fmt.Fprintf(inv.Stderr, "idebridge lsp list: %v\n", err)
		return exitFailure
	}
	set := loadServers(inv, wd, src, files)
	l := listing{ProjectDir: wd, Servers: []listServer{}, Plugins: []lsp.PluginStatus{}, Conflicts: []listConflict{}, Errors: []listProblem{}}
	if set.claude != nil {
		l.ClaudeConfigDir = set.claude.ConfigDir
		l.Plugins = append(l.Plugins, set.claude.Plugins...)
		l.Trust, l.Unlisted = &set.claude.Trust, set.claude.Unlisted
	}
	environ := inv.environ()
	byName := map[string]*lsp.ServerConfig{}
	for i := range set.configs {
		c := &set.configs[i]
		byName[c.Name] = c
		s := listServer{Name: c.Name, Origin: set.origins[c.Name], Plugin: c.Plugin, Marketplace: c.Marketplace, File: c.File,
			Extensions: c.ExtensionToLanguage, Command: c.Command, Args: c.Args}
		if s.Args == nil {
			s.Args = []string{}
		}
		if p, err := c.ResolveCommand(environ); err != nil {
			s.CommandError = err.Error()
			s.InstallHint = installHint(c)
		} else {
			s.Resolved = p
		}
		l.Servers = append(l.Servers, s)
	}
	for _, err := range set.errors {
		var ce *lsp.ExtensionConflictError
		if errors.As(err, &ce) {
			l.Conflicts = append(l.Conflicts, listConflict{ce.Extension, ce.Server, ce.Winner})
			continue
		}
		l.Errors = append(l.Errors, problemOf(err))
	}

	code := exitOK
	if len(files) > 0 {
		m, err := lsp.NewManager(set.configs, &lsp.ManagerOptions{ProjectDir: wd, Env: environ})
		if err != nil {
			fmt.Fprintf(inv.Stderr, "idebridge lsp list: %v\n", err)
			return exitFailure
		}
		for _, f := range files {
			path := absIn(wd, f)
			lf := listFile{Path: path}
			name, err := m.ServerFor(path)
			missing := ""
			if _, serr := os.Stat(path); serr != nil {
				missing = "the file does not exist"
				if !errors.Is(serr, os.ErrNotExist) {
					missing = fmt.Sprintf("the file cannot be read: %v", serr)
				}
				code = exitUnavailable
			}
			switch {
			case err != nil && missing != "":
				lf.Error = missing + ", and " + set.adviceFor(err, false)
			case err != nil:
				lf.Error = set.adviceFor(err, false)
				code = exitUnavailable
			default:
				lf.Server = name
				lf.Language = languageOf(byName[name], path)
				var problems []string
				if missing != "" {
					problems = append(problems, missing)
				}
				if _, err := byName[name].ResolveCommand(environ); err != nil {
					problems = append(problems, fmt.Sprintf("its command is not found: %v", err))
					code = exitUnavailable
				}
				lf.Error = strings.Join(problems, ", and ")
			}
			l.Files = append(l.Files, lf)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		m.Shutdown(ctx) // nothing was started
		cancel()
	}

	if asJSON {
		if !inv.writeJSON("idebridge lsp list", l) {
			return exitFailure
		}
		return code
	}
	printListing(inv.Stdout, &l, set)
	return code
}

// installHint says how to install a server's missing command: the
// well-known way, and the plugin's README when it has one.
func installHint(c *lsp.ServerConfig) string {
	hint := lsp.InstallHint(c.Command)
	readme := ""
	if c.Root != "" && c.Plugin != "" {
		if p := filepath.Join(c.Root, "README.md"); fileExists(p) {
			readme = p
		}
	}
	switch {
	case hint != "" && readme != "":
		return hint + " (see also " + readme + ")"
	case hint != "":
		return hint
	case readme != "":
		return "see " + readme
	}
	return "install it with your package manager or the language's tools (npm install -g, pip install, go install), or set PATH to find it"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// languageOf returns the language id the server's configuration gives
// path: the longest of its extensions that ends the file's name.
func languageOf(c *lsp.ServerConfig, path string) string {
	if c == nil {
		return ""
	}
	base := strings.ToLower(filepath.Base(path))
	best, lang := "", ""
	for e, l := range c.ExtensionToLanguage {
		if strings.HasSuffix(base, strings.ToLower(e)) && len(e) > len(best) {
			best, lang = e, l
		}
	}
	return lang
}

// problemOf turns a load error into its listing form.
func problemOf(err error) listProblem {
	p := listProblem{Kind: "other", Message: err.Error()}
	var ce *lsp.ConfigError
	var re *lsp.RedefinedError
	var rs *lsp.RemoteSourceError
	switch {
	case errors.As(err, &re):
		p.Kind, p.Plugin, p.Server, p.File = "redefined", re.Plugin, re.Server, re.Dropped
	case errors.As(err, &rs):
		p.Kind, p.Plugin = "remote-source", rs.Plugin
	case errors.As(err, &ce):
		p.Kind, p.Plugin, p.File, p.Server, p.Field = "config", ce.Plugin, ce.File, ce.Server, ce.Field
	}
	return p
}

func printListing(w io.Writer, l *listing, set *serverSet) {
	where := l.ClaudeConfigDir
	if where == "" {
		where = "not read (--no-plugins)"
	}
	fmt.Fprintf(w, "Project: %s\nClaude Code configuration: %s\n", l.ProjectDir, where)
	if len(l.Servers) == 0 {
		fmt.Fprintln(w, "\nNo language servers.")
	} else {
		fmt.Fprintln(w, "\nLanguage servers:")
	}
	for _, s := range l.Servers {
		fmt.Fprintf(w, "  %s\n", s.Name)
		fmt.Fprintf(w, "    from:       %s\n", s.Origin)
		if s.File != "" {
			fmt.Fprintf(w, "    defined in: %s\n", s.File)
		}
		fmt.Fprintf(w, "    extensions: %s\n", strings.Join(sortedKeys(s.Extensions), " "))
		fmt.Fprintf(w, "    command:    %s\n", strings.Join(append([]string{s.Command}, s.Args...), " "))
		if s.Resolved != "" {
			fmt.Fprintf(w, "    found:      %s\n", s.Resolved)
		} else {
			fmt.Fprintf(w, "    NOT FOUND:  %s\n", s.CommandError)
			fmt.Fprintf(w, "    install:    %s\n", s.InstallHint)
		}
	}
	if set.goplsErr != nil && !claims(set.configs, ".go") {
		fmt.Fprintf(w, "  (no server for .go: %v)\n", set.goplsErr)
	}
	if len(l.Conflicts) > 0 {
		fmt.Fprintln(w, "\nExtension conflicts (the first server registered keeps the extension):")
		for _, c := range l.Conflicts {
			fmt.Fprintf(w, "  %s: %s keeps it; %s does not get it\n", c.Extension, c.Winner, c.Server)
		}
	}
	var idle []lsp.PluginStatus
	for _, p := range l.Plugins {
		if p.Reason != "" {
			idle = append(idle, p)
		}
	}
	if len(idle) > 0 {
		fmt.Fprintln(w, "\nPlugins not loaded:")
		for _, p := range idle {
			exts := ""
			if len(p.Extensions) > 0 {
				exts = " (" + strings.Join(p.Extensions, " ") + ")"
			}
			fmt.Fprintf(w, "  %s%s: %s\n", p.ID, exts, p.Reason)
		}
	}
	if l.Unlisted > 0 {
		if len(idle) == 0 {
			fmt.Fprintln(w, "\nPlugins not loaded:")
		}
		fmt.Fprintf(w, "  %d more enabledPlugins entries name no installed plugin (counted, not listed)\n", l.Unlisted)
	}
	if t := l.Trust; t != nil && (len(t.Ignored) > 0 || len(t.IgnoredInstalls) > 0) {
		fmt.Fprintln(w, "\nIgnored, because the project is not trusted:")
		for _, ig := range t.Ignored {
			fmt.Fprintf(w, "  %s (%s settings): %d enabledPlugins entries\n", ig.File, ig.Scope, ig.Entries)
		}
		for _, id := range t.IgnoredInstalls {
			fmt.Fprintf(w, "  the install of %s for the project\n", id)
		}
		fmt.Fprintf(w, "  Why: %s\n", t.Reason)
	}
	remote := 0
	var shown []listProblem
	for _, p := range l.Errors {
		if p.Kind == "remote-source" {
			remote++
			continue
		}
		shown = append(shown, p)
	}
	if len(shown) > 0 || remote > 0 {
		fmt.Fprintln(w, "\nProblems:")
		for _, p := range shown {
			fmt.Fprintf(w, "  %s\n", p.Message)
		}
		if remote > 0 {
			fmt.Fprintf(w, "  %d marketplace plugins have remote sources and are not fetched (--json lists them)\n", remote)
		}
	}
	if len(l.Files) > 0 {
		fmt.Fprintln(w, "\nFiles:")
		for _, f := range l.Files {
			switch {
			case f.Server == "":
				fmt.Fprintf(w, "  %s: %s\n", f.Path, f.Error)
			case f.Error != "":
				fmt.Fprintf(w, "  %s: %s (%s), but %s\n", f.Path, f.Server, f.Language, f.Error)
			default:
				fmt.Fprintf(w, "  %s: %s (%s)\n", f.Path, f.Server, f.Language)
			}
		}
	}
}

// sortedKeys returns a map's keys in order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
