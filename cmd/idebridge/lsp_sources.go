package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/idebridge/idebridge/lsp"
)

// serverSources are the flags that choose language servers, shared by
// `diag` and `lsp list`. By default the servers are those of the Claude
// Code plugins installed for the project and enabled in its settings,
// then gopls for .go files when no plugin serves .go. Each flag adds
// servers, which come first and so win an extension over the installed
// plugins; --no-plugins leaves the installation out.
type serverSources struct {
	config       string
	pluginDirs   stringList
	marketplaces stringList
	noPlugins    bool
	trustProject bool
}

// sourcesHelp explains the defaults and the flags, for the commands' -h.
const sourcesHelp = "Servers come from the Claude Code plugins installed for the project (the\n" +
	"working directory) and enabled in its settings: plugins/installed_plugins.json\n" +
	"and the marketplaces in $CLAUDE_CONFIG_DIR or ~/.claude, and enabledPlugins in\n" +
	"the user, project and local settings files. gopls serves .go files when no\n" +
	"plugin does (found through $GOPLS, PATH or $(go env GOPATH)/bin). --config,\n" +
	"--plugin-dir and --marketplace add servers, which win an extension over the\n" +
	"installed plugins; --no-plugins leaves the installed plugins out.\n\n" +
	"The project's own settings (.claude/settings.json, .claude/settings.local.json)\n" +
	"and plugins installed for the project count only in a project trusted in\n" +
	"Claude Code (its folder-trust dialog accepted there, as recorded in\n" +
	"~/.claude.json); `lsp list` shows what was ignored. --trust-project accepts\n" +
	"them for one run."

func (s *serverSources) register(fs *flag.FlagSet) {
	fs.StringVar(&s.config, "config", "", "add the servers of a .lsp.json file (a map from server name to configuration)")
	fs.Var(&s.pluginDirs, "plugin-dir", "add the servers of the plugin in `DIR` (repeatable)")
	fs.Var(&s.marketplaces, "marketplace", "add the servers of every plugin of the marketplace in `DIR` (repeatable)")
	fs.BoolVar(&s.noPlugins, "no-plugins", false, "do not load the plugins of the Claude Code installation")
	fs.BoolVar(&s.trustProject, "trust-project", false, "let the project's own settings and project-scoped plugin installs count for this run,\nas if the project were trusted in Claude Code")
}

// explicit reports whether a flag named servers.
func (s *serverSources) explicit() bool {
	return s.config != "" || len(s.pluginDirs) > 0 || len(s.marketplaces) > 0
}

// serverSet is the servers the flags chose, with where each came from and
// what was left out and why.
type serverSet struct {
	projectDir string
	configs    []lsp.ServerConfig
	// origins describes where each server came from, by name.
	origins map[string]string
	// claude is what the installation gave; nil with --no-plugins.
	claude *lsp.ClaudeCodeConfig
	// errors are the problems found, conflicts included, in load order.
	errors []error
	// flagged are the names of the servers the flags added.
	flagged map[string]bool
	// goplsErr is why there is no built-in gopls when no plugin serves
	// .go; nil when gopls was added or was not needed.
	goplsErr error
}

// loadServers loads the servers the flags choose for the project wd. A
// built-in gopls works on the module of the first .go file in files.
func loadServers(inv *invocation, wd string, src *serverSources, files []string) *serverSet {
	set := &serverSet{projectDir: wd, origins: map[string]string{}, flagged: map[string]bool{}}
	opts := &lsp.LoadOptions{ProjectDir: wd}
	var all []lsp.ServerConfig
	add := func(origin string, cfgs []lsp.ServerConfig, errs []error) {
		for _, c := range cfgs {
			if _, ok := set.origins[c.Name]; !ok {
				set.origins[c.Name] = origin
			}
		}
		all = append(all, cfgs...)
		set.errors = append(set.errors, errs...)
	}
	if src.config != "" {
		path := absIn(wd, src.config)
		cfgs, errs := lsp.LoadFile(path, opts)
		add("file "+path, cfgs, errs)
	}
	for _, d := range src.pluginDirs {
		path := absIn(wd, d)
		cfgs, errs := lsp.LoadPlugin(lsp.Plugin{Root: path}, opts)
		add("plugin directory "+path, cfgs, errs)
	}
	for _, d := range src.marketplaces {
		path := absIn(wd, d)
		m, errs := lsp.ReadMarketplace(path)
		if m == nil {
			add("", nil, errs)
			continue
		}
		plugins, es := m.Plugins()
		errs = append(errs, es...)
		for _, p := range plugins {
			cfgs, es := lsp.LoadPlugin(p, opts)
			add(fmt.Sprintf("plugin %s of marketplace %s (%s)", p.Name, m.Name, path), cfgs, es)
		}
		add("", nil, errs)
	}
	for _, c := range all {
		set.flagged[c.Name] = true
	}
	if !src.noPlugins {
		set.claude = lsp.LoadClaudeCode(&lsp.ClaudeCodeOptions{ProjectDir: wd, Env: inv.environ(), TrustProject: src.trustProject})
		for _, c := range set.claude.Servers {
			origin := "plugin " + c.Plugin + "@" + c.Marketplace
			for _, p := range set.claude.Plugins {
				if p.Name == c.Plugin && p.Marketplace == c.Marketplace {
					origin = fmt.Sprintf("plugin %s (installed with %s scope, enabled in %s settings)", p.ID, p.InstallScope, p.EnabledScope)
				}
			}
			add(origin, []lsp.ServerConfig{c}, nil)
		}
		set.errors = append(set.errors, set.claude.Errors...)
	}
	if !claims(all, ".go") {
		if gopls, err := lsp.FindGopls(inv.Getenv); err != nil {
			set.goplsErr = err
		} else {
			cfg := lsp.GoplsConfig(gopls, wd)
			for _, f := range files {
				if strings.EqualFold(filepath.Ext(f), ".go") {
					cfg.WorkspaceFolder = moduleRoot(filepath.Dir(absIn(wd, f)), wd)
					break
				}
			}
			add("built in (no plugin serves .go)", []lsp.ServerConfig{cfg}, nil)
		}
	}
	var errs []error
	set.configs, errs = lsp.ResolveConflicts(all)
	set.errors = append(set.errors, errs...)
	return set
}

// absIn makes p absolute against dir.
func absIn(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// claims reports whether any configuration serves ext.
func claims(cfgs []lsp.ServerConfig, ext string) bool {
	for _, c := range cfgs {
		for e := range c.ExtensionToLanguage {
			if strings.EqualFold(e, ext) {
				return true
			}
		}
	}
	return false
}

// fromFlags counts the servers the flags added that survived the
// conflicts.
func (set *serverSet) fromFlags() int {
	n := 0
	for _, c := range set.configs {
		if set.flagged[c.Name] {
			n++
		}
	}
	return n
}

// printWarnings writes the load problems, one a line, with the remote
// plugins of marketplaces counted in one line rather than listed.
func (set *serverSet) printWarnings(w io.Writer, prefix string) {
	remote := 0
	for _, err := range set.errors {
		if errors.Is(err, lsp.ErrRemoteSource) {
			remote++
			continue
		}
		fmt.Fprintf(w, "%s: warning: %v\n", prefix, err)
	}
	if remote > 0 {
		fmt.Fprintf(w, "%s: warning: %d marketplace plugins have remote sources; they are not fetched, so their servers (if any) are not loaded\n", prefix, remote)
	}
	if msg := set.untrustedNote(); msg != "" {
		fmt.Fprintf(w, "%s: warning: %s\n", prefix, msg)
	}
}

// untrustedNote says what of the project's own configuration was ignored
// because the project is not trusted, and why; empty when nothing was.
func (set *serverSet) untrustedNote() string {
	if set.claude == nil {
		return ""
	}
	t := &set.claude.Trust
	if len(t.Ignored) == 0 && len(t.IgnoredInstalls) == 0 {
		return ""
	}
	var what []string
	for _, ig := range t.Ignored {
		what = append(what, fmt.Sprintf("%d enabledPlugins entries of %s", ig.Entries, ig.File))
	}
	if n := len(t.IgnoredInstalls); n > 0 {
		what = append(what, fmt.Sprintf("%d plugin installs for the project (%s)", n, strings.Join(t.IgnoredInstalls, ", ")))
	}
	return fmt.Sprintf("ignored %s: %s", strings.Join(what, " and "), t.Reason)
}

// notLoaded returns the plugins of the installation that declare ext but
// contribute no server, with why.
func (set *serverSet) notLoaded(ext string) []lsp.PluginStatus {
	if set.claude == nil {
		return nil
	}
	var out []lsp.PluginStatus
	for _, p := range set.claude.Plugins {
		if p.Reason == "" {
			continue
		}
		for _, e := range p.Extensions {
			if strings.EqualFold(e, ext) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// advice explains an error of a file and, where it can, what to do.
func (set *serverSet) advice(err error) string { return set.adviceFor(err, true) }

// adviceFor is advice; listHint adds that `idebridge lsp list` shows what
// is configured (not for lsp list itself).
func (set *serverSet) adviceFor(err error, listHint bool) string {
	var ne *lsp.NoServerError
	if !errors.As(err, &ne) {
		return err.Error()
	}
	if strings.EqualFold(ne.Extension, ".go") && set.goplsErr != nil {
		return fmt.Sprintf("no language server for %s: %v", ne.Path, set.goplsErr)
	}
	var why []string
	for _, p := range set.notLoaded(ne.Extension) {
		why = append(why, fmt.Sprintf("plugin %s would serve %s but is not loaded: %s", p.ID, ne.Extension, p.Reason))
	}
	if len(why) > 0 {
		return fmt.Sprintf("no language server for %s: %s", ne.Path, strings.Join(why, "; "))
	}
	hint := "install and enable a Claude Code plugin for it, or pass --config, --plugin-dir or --marketplace"
	if !listHint {
		return fmt.Sprintf("%v; %s", err, hint)
	}
	return fmt.Sprintf("%v; %s (`idebridge lsp list` shows what is configured)", err, hint)
}
