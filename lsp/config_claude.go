package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/idebridge/idebridge/internal/env"
	"github.com/idebridge/idebridge/internal/jsonrpc"
)

// Settings scopes, from the lowest precedence to the highest: a later
// scope's enabledPlugins entry overrides an earlier one's.
const (
	ScopeUser    = "user"    // <config>/settings.json
	ScopeProject = "project" // <project>/.claude/settings.json
	ScopeLocal   = "local"   // <project>/.claude/settings.local.json
)

// Where Claude Code keeps its plugins, relative to its configuration
// directory.
const (
	InstalledPluginsFile  = "plugins/installed_plugins.json"
	KnownMarketplacesFile = "plugins/known_marketplaces.json"
	MarketplacesDir       = "plugins/marketplaces"
	PluginDataDir         = "plugins/data"
)

// ClaudeCodeOptions says whose Claude Code installation LoadClaudeCode
// reads, and for which project. The nil *ClaudeCodeOptions means the
// current directory and the process's environment.
type ClaudeCodeOptions struct {
	// ProjectDir is the project the agent works on: it selects the
	// project and local settings and the project-scoped installs, and is
	// CLAUDE_PROJECT_DIR. Empty means the current directory.
	ProjectDir string
	// ConfigDir is Claude Code's configuration directory. Empty means
	// $CLAUDE_CONFIG_DIR when set and non-empty, else ~/.claude (the home
	// directory from $HOME, or %USERPROFILE% on Windows).
	ConfigDir string
	// Env is the environment read for those variables, in os.Environ form;
	// nil means the process's own.
	Env []string
	// UserConfig holds non-sensitive plugin user options for
	// ${user_config.KEY}, for every plugin. Never put secrets here.
	UserConfig map[string]string
	// TrustProject makes the project's own configuration count for this
	// load even when Claude Code has no record of the user trusting the
	// project (see ProjectTrust), as the command line's --trust-project
	// does. By default it counts only in a trusted project.
	TrustProject bool
}

// ClaudeCodeConfig is what Claude Code would load for a project: the
// language servers of the plugins installed for it and enabled in its
// settings.
type ClaudeCodeConfig struct {
	// ConfigDir and ProjectDir are the directories that were read.
	ConfigDir  string
	ProjectDir string
	// Servers are the enabled plugins' servers, extension conflicts
	// resolved (see ResolveConflicts), ready for NewManager.
	Servers []ServerConfig
	// Plugins describes every plugin the installation or the settings
	// mention, loaded or not, in installation order.
	Plugins []PluginStatus
	// Errors are the problems found: *ConfigError (unreadable files,
	// invalid entries), *ExtensionConflictError, *RedefinedError.
	Errors []error
	// Trust says whether the project's own settings and project-scoped
	// installs counted, and what was ignored because they did not.
	Trust ProjectTrust
	// Unlisted counts the enabledPlugins entries that name no installed
	// plugin and have no entry in Plugins: past the first
	// MaxUninstalledStatuses such plugins, entries are counted rather than
	// each described, so that the work stays bounded by what is installed.
	Unlisted int
}

// MaxUninstalledStatuses bounds the plugins that settings enable or
// disable without an install that get a PluginStatus of their own.
const MaxUninstalledStatuses = 64

// PluginStatus is one plugin of a Claude Code installation, and whether
// and why it contributes servers.
type PluginStatus struct {
	// ID is "<plugin>@<marketplace>", as settings and installed_plugins.json
	// name it.
	ID          string `json:"id"`
	Name        string `json:"name"`
	Marketplace string `json:"marketplace"`
	// Enabled is the plugin's enabledPlugins value after all scopes;
	// EnabledScope and EnabledFile name the settings file that decided
	// it, empty when no settings file mentions the plugin.
	Enabled      bool   `json:"enabled"`
	EnabledScope string `json:"enabledScope,omitempty"`
	EnabledFile  string `json:"enabledFile,omitempty"`
	// Installed says an install of the plugin applies to the project: a
	// user-scoped one, or a project- or local-scoped one whose project is
	// the project or contains it.
	Installed bool `json:"installed"`
	// InstallScope, ProjectPath, Root and Version describe that install
	// (or, when none applies, the first one recorded).
	InstallScope string `json:"installScope,omitempty"`
	ProjectPath  string `json:"projectPath,omitempty"`
	Root         string `json:"root,omitempty"`
	Version      string `json:"version,omitempty"`
	// Servers are the names of the servers the plugin contributes, after
	// conflicts; Extensions are those its configuration declares, loaded
	// or not, so that a disabled plugin still says what it would serve.
	Servers    []string `json:"servers"`
	Extensions []string `json:"extensions"`
	// Reason says why the plugin contributes no servers; empty when it
	// does.
	Reason string `json:"reason,omitempty"`
	// IgnoredFile is the settings file of the untrusted project whose
	// enabledPlugins entry for the plugin did not count (see
	// ClaudeCodeConfig.Trust); IgnoredEnabled is that entry's value.
	IgnoredFile    string `json:"ignoredFile,omitempty"`
	IgnoredEnabled bool   `json:"ignoredEnabled,omitempty"`
}

// LoadClaudeCode loads what Claude Code would load for a project: the
// servers of every plugin that has an install for the project in
// plugins/installed_plugins.json (format version 2, or 1) and is enabled by
// enabledPlugins in the user, project and local settings, later scopes
// winning. Each plugin loads from its install path with its entry in its
// marketplace (plugins/known_marketplaces.json, else
// plugins/marketplaces/<name>/), as LoadPlugin describes; its data
// directory is plugins/data/<id>, with every character of the id other
// than letters, digits, "_" and "-" replaced by "-". Servers are named
// "plugin:<plugin>:<server>".
//
// A missing configuration directory or file means nothing is installed or
// enabled, not an error. It never fails as a whole: every problem is one of
// Errors, and every plugin is in Plugins with its reason.
func LoadClaudeCode(opts *ClaudeCodeOptions) *ClaudeCodeConfig {
	var o ClaudeCodeOptions
	if opts != nil {
		o = *opts
	}
	if o.ProjectDir == "" {
		o.ProjectDir, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(o.ProjectDir); err == nil {
		o.ProjectDir = abs
	}
	if o.ConfigDir == "" {
		o.ConfigDir = ClaudeConfigDir(o.Env)
	}
	recordFile := ClaudeGlobalConfigFile(o.Env)
	if opts != nil && opts.ConfigDir != "" && filepath.Clean(opts.ConfigDir) != filepath.Clean(ClaudeConfigDir(o.Env)) {
		// A configuration directory of the caller's choosing is taken as
		// CLAUDE_CONFIG_DIR would be.
		recordFile = filepath.Join(opts.ConfigDir, ".claude.json")
	}
	l := &claudeLoader{
		recordFile:   recordFile,
		opts:         o,
		out:          &ClaudeCodeConfig{ConfigDir: o.ConfigDir, ProjectDir: o.ProjectDir},
		marketplaces: map[string]*Marketplace{},
	}
	l.load()
	return l.out
}

// ClaudeConfigDir returns Claude Code's configuration directory for an
// environment (nil: the process's): $CLAUDE_CONFIG_DIR when set and
// non-empty, else .claude in the home directory; empty when neither is
// known.
func ClaudeConfigDir(environ []string) string {
	if d := env.Get(environ, "CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	home := homeDir(environ)
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".claude")
}

// claudeLoader carries one LoadClaudeCode.
type claudeLoader struct {
	recordFile   string
	opts         ClaudeCodeOptions
	out          *ClaudeCodeConfig
	trusted      bool                    // the project's own configuration counts
	ignored      map[string]enablement   // untrusted project settings' entries, by id
	marketplaces map[string]*Marketplace // by name; nil value: not found
	known        map[string]string       // known_marketplaces.json: name -> installLocation
}

func (l *claudeLoader) errorf(err error) { l.out.Errors = append(l.out.Errors, err) }

func (l *claudeLoader) load() {
	if l.opts.ConfigDir == "" {
		l.errorf(&ConfigError{Err: errors.New("no Claude Code configuration directory: neither CLAUDE_CONFIG_DIR nor HOME is set")})
	}
	var installs map[string][]install
	var order []string
	if l.opts.ConfigDir != "" {
		file := filepath.Join(l.opts.ConfigDir, filepath.FromSlash(InstalledPluginsFile))
		if data, err := readConfigFile(file); err == nil {
			var errs []error
			order, installs, errs = parseInstalledPlugins(data, file, filepath.Join(l.opts.ConfigDir, "plugins"))
			for _, err := range errs {
				l.errorf(err)
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			l.errorf(&ConfigError{File: file, Err: bareErr(err)})
		}
	}
	l.out.Trust = projectTrust(&l.opts, l.recordFile)
	l.trusted = l.out.Trust.Trusted

	// Only entries that name an installed plugin are kept, and the first
	// MaxUninstalledStatuses others; the rest are counted.
	enabled := map[string]enablement{}
	ignored := map[string]enablement{}
	var enabledOrder []string
	uninstalled := map[string]bool{}
	for _, s := range l.settingsFiles() {
		data, err := readConfigFile(s.file)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				l.errorf(&ConfigError{File: s.file, Err: bareErr(err)})
			}
			continue
		}
		fresh := map[string]bool{}
		entries, errs := scanEnabledPlugins(data, s.file, func(id []byte) bool {
			if installs[string(id)] != nil || uninstalled[string(id)] || fresh[string(id)] {
				return true
			}
			if len(uninstalled)+len(fresh) < MaxUninstalledStatuses {
				fresh[string(id)] = true
				return true
			}
			return false
		})
		for _, err := range errs {
			l.errorf(err)
		}
		untrusted := s.scope != ScopeUser && !l.trusted
		if untrusted {
			if entries.total > 0 {
				l.out.Trust.Ignored = append(l.out.Trust.Ignored, IgnoredSettings{Scope: s.scope, File: s.file, Entries: entries.total})
			}
			for i, id := range entries.ids {
				if installs[id] != nil {
					ignored[id] = enablement{on: entries.on[i], scope: s.scope, file: s.file}
				}
			}
			continue
		}
		l.out.Unlisted += entries.dropped
		for id := range fresh {
			uninstalled[id] = true
		}
		for i, id := range entries.ids {
			if _, ok := enabled[id]; !ok {
				enabledOrder = append(enabledOrder, id)
			}
			enabled[id] = enablement{on: entries.on[i], scope: s.scope, file: s.file}
		}
	}
	for _, id := range enabledOrder {
		if _, ok := installs[id]; !ok {
			order = append(order, id)
		}
	}
	l.ignored = ignored

	var servers []ServerConfig
	for _, id := range order {
		st, cfgs := l.plugin(id, installs[id], enabled[id])
		servers = append(servers, cfgs...)
		l.out.Plugins = append(l.out.Plugins, st)
	}
	resolved, errs := ResolveConflicts(servers)
	l.out.Servers = resolved
	l.out.Errors = append(l.out.Errors, errs...)
	kept := map[string]bool{}
	for _, c := range resolved {
		kept[c.Name] = true
	}
	for i := range l.out.Plugins {
		st := &l.out.Plugins[i]
		var names []string
		for _, n := range st.Servers {
			if kept[n] {
				names = append(names, n)
			}
		}
		st.Servers = names
		if st.Reason == "" && len(names) == 0 {
			st.Reason = "enabled, but none of its servers loaded (see the errors)"
		}
		if st.Servers == nil {
			st.Servers = []string{}
		}
		if st.Extensions == nil {
			st.Extensions = []string{}
		}
	}
}

// enablement is the decisive enabledPlugins entry of a plugin.
type enablement struct {
	on          bool
	scope, file string
}

type settingsFile struct{ scope, file string }

// settingsFiles lists the settings files in increasing precedence.
func (l *claudeLoader) settingsFiles() []settingsFile {
	var out []settingsFile
	if l.opts.ConfigDir != "" {
		out = append(out, settingsFile{ScopeUser, filepath.Join(l.opts.ConfigDir, "settings.json")})
	}
	return append(out,
		settingsFile{ScopeProject, filepath.Join(l.opts.ProjectDir, ".claude", "settings.json")},
		settingsFile{ScopeLocal, filepath.Join(l.opts.ProjectDir, ".claude", "settings.local.json")})
}

// plugin decides one plugin's status and loads its servers when it is
// installed for the project and enabled.
func (l *claudeLoader) plugin(id string, records []install, en enablement) (PluginStatus, []ServerConfig) {
	name, market := splitPluginID(id)
	st := PluginStatus{ID: id, Name: name, Marketplace: market, Enabled: en.on, EnabledScope: en.scope, EnabledFile: en.file}
	if ig, ok := l.ignored[id]; ok {
		st.IgnoredFile, st.IgnoredEnabled = ig.file, ig.on
	}
	usable := records
	if !l.trusted {
		usable = nil
		for _, r := range records {
			if r.scope != ScopeProject && r.scope != ScopeLocal {
				usable = append(usable, r)
			}
		}
	}
	inst, ok := pickInstall(usable, l.opts.ProjectDir)
	projectInst, projectOK := pickInstall(records, l.opts.ProjectDir)
	untrustedInstall := !l.trusted && projectOK && (!ok || projectInst != inst)
	if untrustedInstall {
		l.out.Trust.IgnoredInstalls = append(l.out.Trust.IgnoredInstalls, id)
	}
	if ok {
		st.Installed = true
	} else if untrustedInstall {
		inst = projectInst
	} else if len(records) > 0 {
		inst = records[0]
	}
	st.InstallScope, st.ProjectPath, st.Root, st.Version = inst.scope, inst.projectPath, inst.path, inst.version

	switch {
	case len(records) == 0 && en.on:
		st.Reason = fmt.Sprintf("enabled in %s settings (%s), but not installed", en.scope, en.file)
	case len(records) == 0:
		st.Reason = fmt.Sprintf("disabled in %s settings (%s), and not installed", en.scope, en.file)
	case !st.Installed && untrustedInstall:
		st.Reason = fmt.Sprintf("installed with %s scope for %s, which counts only in a trusted project: %s", inst.scope, inst.projectPath, l.out.Trust.Reason)
	case !st.Installed:
		st.Reason = fmt.Sprintf("installed with %s scope for %s only", inst.scope, inst.projectPath)
	case en.file == "" && st.IgnoredFile != "":
		st.Reason = fmt.Sprintf("%s in the project's own settings (%s), which count only in a trusted project: %s",
			map[bool]string{true: "enabled", false: "disabled"}[st.IgnoredEnabled], st.IgnoredFile, l.out.Trust.Reason)
	case en.file == "":
		st.Reason = "installed, but no settings file enables it (enabledPlugins)"
	case !en.on && st.IgnoredFile != "" && st.IgnoredEnabled:
		st.Reason = fmt.Sprintf("disabled in %s settings (%s); the project's own settings (%s) enable it, but count only in a trusted project: %s",
			en.scope, en.file, st.IgnoredFile, l.out.Trust.Reason)
	case !en.on:
		st.Reason = fmt.Sprintf("disabled in %s settings (%s)", en.scope, en.file)
	}
	p := Plugin{Name: name, Root: st.Root, Marketplace: market,
		DataDir: filepath.Join(l.opts.ConfigDir, filepath.FromSlash(PluginDataDir), sanitizeID(id))}
	if m := l.marketplace(market, st.Reason == ""); m != nil {
		if e, ok := m.Entry(name); ok {
			p.Entry = e
			if p.Root == "" {
				p.Root = e.Dir // not installed: what it would serve, from the marketplace's copy
			}
		} else if st.Reason == "" {
			l.errorf(&ConfigError{Plugin: name, File: m.File,
				Err: fmt.Errorf("marketplace %s does not list the plugin; only its own files are read", market)})
		}
	}
	if p.Root == "" {
		return st, nil
	}
	cfgs, errs := LoadPlugin(p, &LoadOptions{ProjectDir: l.opts.ProjectDir, UserConfig: l.opts.UserConfig})
	exts := map[string]bool{}
	for _, c := range cfgs {
		for e := range c.ExtensionToLanguage {
			exts[e] = true
		}
	}
	st.Extensions = sortedKeys(exts)
	if st.Reason != "" {
		return st, nil // what it would serve is known; its problems are not ours
	}
	for _, err := range errs {
		l.errorf(err)
	}
	for _, c := range cfgs {
		st.Servers = append(st.Servers, c.Name)
	}
	return st, cfgs
}

// marketplace returns the named marketplace, read once; nil when it cannot
// be read (reported when report is set).
func (l *claudeLoader) marketplace(name string, report bool) *Marketplace {
	if m, ok := l.marketplaces[name]; ok {
		return m
	}
	if l.known == nil {
		l.known = l.readKnownMarketplaces()
	}
	dirs := []string{}
	if loc := l.known[name]; loc != "" {
		dirs = append(dirs, loc)
	}
	if name != "" && !strings.ContainsAny(name, `/\`) && name != "." && name != ".." {
		dirs = append(dirs, filepath.Join(l.opts.ConfigDir, filepath.FromSlash(MarketplacesDir), name))
	}
	var m *Marketplace
	var errs []error
	for _, d := range dirs {
		if !fileExists(filepath.Join(d, filepath.FromSlash(MarketplaceFile))) {
			continue
		}
		m, errs = ReadMarketplace(d)
		break
	}
	if m != nil {
		m.Name = name // installed_plugins.json and settings know it by this name
		for i := range m.Entries {
			m.Entries[i].Marketplace = name
		}
	}
	if report {
		for _, err := range errs {
			l.errorf(err)
		}
		if m == nil && len(errs) == 0 {
			l.errorf(&ConfigError{Err: fmt.Errorf("marketplace %s not found (looked in %s); its plugins load from their own files only",
				name, strings.Join(dirs, ", "))})
		}
	}
	l.marketplaces[name] = m
	return m
}

// readKnownMarketplaces reads the install locations of
// known_marketplaces.json; a missing or unreadable file gives none (the
// default location is tried anyway).
func (l *claudeLoader) readKnownMarketplaces() map[string]string {
	out := map[string]string{}
	if l.opts.ConfigDir == "" {
		return out
	}
	file := filepath.Join(l.opts.ConfigDir, filepath.FromSlash(KnownMarketplacesFile))
	data, err := readConfigFile(file)
	if err != nil {
		return out
	}
	doc, err := objectFields(data)
	if err != nil {
		l.errorf(&ConfigError{File: file, Err: err})
		return out
	}
	for name, raw := range doc {
		if m, err := objectFields(raw); err == nil {
			if loc, ok := jsonString(m["installLocation"]); ok && loc != "" {
				out[name] = loc
			}
		}
	}
	return out
}

// splitPluginID splits "<plugin>@<marketplace>" at its last "@".
func splitPluginID(id string) (name, marketplace string) {
	if i := strings.LastIndexByte(id, '@'); i > 0 {
		return id[:i], id[i+1:]
	}
	return id, ""
}

// sanitizeID turns a plugin id into the name of its data directory.
func sanitizeID(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	return string(b)
}

// install is one record of installed_plugins.json.
type install struct {
	scope, projectPath, path, version string
}

// pickInstall returns the install that applies to project: the
// local-scoped one of the innermost project containing it, else a
// project-scoped one, else the user-scoped one.
func pickInstall(records []install, project string) (install, bool) {
	rank := map[string]int{ScopeUser: 1, "managed": 1, ScopeProject: 2, ScopeLocal: 3}
	best, bestRank := install{}, 0
	for _, r := range records {
		n := rank[r.scope]
		if n == 0 {
			continue
		}
		if n > 1 && (r.projectPath == "" || !samePathOrWithin(r.projectPath, project)) {
			continue
		}
		if n > bestRank || n == bestRank && len(r.projectPath) > len(best.projectPath) {
			best, bestRank = r, n
		}
	}
	return best, bestRank > 0
}

// samePathOrWithin reports whether p is dir or lies beneath it, comparing
// cleaned absolute paths and, failing that, the paths with symbolic links
// resolved.
func samePathOrWithin(dir, p string) bool {
	dir, p = filepath.Clean(dir), filepath.Clean(p)
	if within(dir, p) {
		return true
	}
	rd, err1 := filepath.EvalSymlinks(dir)
	rp, err2 := filepath.EvalSymlinks(p)
	return err1 == nil && err2 == nil && within(rd, rp)
}

// parseInstalledPlugins parses installed_plugins.json: version 2 maps
// each plugin id to a list of installs, version 1 to one user-scoped
// install. Relative install paths are taken relative to pluginsDir. Ids
// come in document order.
func parseInstalledPlugins(data []byte, file, pluginsDir string) ([]string, map[string][]install, []error) {
	fail := func(field string, err error) error { return &ConfigError{File: file, Field: field, Err: err} }
	doc, err := objectFields(data)
	if err != nil {
		return nil, nil, []error{fail("", err)}
	}
	version := string(doc["version"])
	if version != "1" && version != "2" {
		return nil, nil, []error{fail("version", fmt.Errorf("%s: only versions 1 and 2 are known", clip(version)))}
	}
	plugins := doc["plugins"]
	if len(plugins) == 0 || jsonrpc.Kind(plugins) == "null" {
		return nil, nil, nil
	}
	ids, vals, err := orderedObject(plugins)
	if err != nil {
		return nil, nil, []error{fail("plugins", err)}
	}
	var order []string
	out := map[string][]install{}
	var errs []error
	for i, id := range ids {
		field := "plugins." + id
		name, _ := splitPluginID(id)
		if name == "" || !strings.Contains(id, "@") {
			errs = append(errs, fail(field, errors.New(`not a "<plugin>@<marketplace>" id`)))
			continue
		}
		raw := bytes.TrimSpace(vals[i])
		var items []json.RawMessage
		switch {
		case version == "2" && jsonrpc.Kind(raw) == "array":
			_ = json.Unmarshal(raw, &items)
		case version == "1" && jsonrpc.Kind(raw) == "object":
			items = []json.RawMessage{raw}
		default:
			want := "an array of installs"
			if version == "1" {
				want = "an install object"
			}
			errs = append(errs, fail(field, fmt.Errorf("%s, not %s", jsonrpc.WithArticle(jsonrpc.Kind(raw)), want)))
			continue
		}
		var recs []install
		for j, it := range items {
			f := field
			if version == "2" {
				f = fmt.Sprintf("%s[%d]", field, j)
			}
			r, err := parseInstall(it, version == "1", pluginsDir)
			if err != nil {
				e := fail(f, err).(*ConfigError)
				e.Plugin = name
				errs = append(errs, e)
				continue
			}
			recs = append(recs, r)
		}
		if len(recs) > 0 {
			order = append(order, id)
			out[id] = recs
		}
	}
	return order, out, errs
}

// parseInstall parses one install record.
func parseInstall(raw json.RawMessage, v1 bool, pluginsDir string) (install, error) {
	var rec map[string]json.RawMessage
	if jsonrpc.Kind(bytes.TrimSpace(raw)) != "object" || json.Unmarshal(raw, &rec) != nil {
		return install{}, fmt.Errorf("%s, not an install object", jsonrpc.WithArticle(jsonrpc.Kind(bytes.TrimSpace(raw))))
	}
	str := func(k string) (string, error) {
		v, ok := rec[k]
		if !ok || jsonrpc.Kind(bytes.TrimSpace(v)) == "null" {
			return "", nil
		}
		s, ok := jsonString(v)
		if !ok {
			return "", fmt.Errorf("%s: %s, not a string", k, jsonrpc.WithArticle(jsonrpc.Kind(bytes.TrimSpace(v))))
		}
		return s, nil
	}
	var r install
	var err error
	for _, f := range []struct {
		key string
		dst *string
	}{{"scope", &r.scope}, {"projectPath", &r.projectPath}, {"installPath", &r.path}, {"version", &r.version}} {
		if *f.dst, err = str(f.key); err != nil {
			return install{}, err
		}
	}
	if r.scope == "" && v1 {
		r.scope = ScopeUser
	}
	switch r.scope {
	case ScopeUser, "managed":
	case ScopeProject, ScopeLocal:
		if r.projectPath == "" {
			return install{}, fmt.Errorf("projectPath: required for %s scope", r.scope)
		}
	default:
		return install{}, fmt.Errorf("scope: %q, not %q, %q or %q", r.scope, ScopeUser, ScopeProject, ScopeLocal)
	}
	if r.path == "" {
		return install{}, errors.New("installPath: required")
	}
	if !filepath.IsAbs(r.path) {
		r.path = filepath.Join(pluginsDir, filepath.FromSlash(r.path))
	}
	return r, nil
}

// parseEnabledPlugins returns every enabledPlugins entry of a settings
// file, in document order (see scanEnabledPlugins).
func parseEnabledPlugins(data []byte, file string) ([]string, []bool, []error) {
	e, errs := scanEnabledPlugins(data, file, func([]byte) bool { return true })
	return e.ids, e.on, errs
}

// maxEntryErrors bounds the entries of one settings file reported one by
// one as not booleans; the rest are counted in one more error.
const maxEntryErrors = 8

// enabledEntries is what the enabledPlugins of one settings file hold.
type enabledEntries struct {
	// ids and on are the entries kept, in first-seen order with their
	// last value.
	ids []string
	on  []bool
	// total counts the boolean entries, dropped those keep refused.
	total, dropped int
}

// scanEnabledPlugins reads the enabledPlugins of a settings file, keeping
// only the boolean entries keep accepts, so that a huge file costs memory
// for what is kept, not for each entry it holds. An entry whose value is
// not a boolean is reported and left out. A file without the key enables
// nothing; a file that does not parse as a whole gives an error and no
// entries. Repeated keys keep their first position and their last value.
func scanEnabledPlugins(data []byte, file string, keep func(id []byte) bool) (enabledEntries, []error) {
	data = bytes.TrimSpace(data)
	if jsonrpc.Kind(data) != "object" || !json.Valid(data) {
		_, err := objectFields(data) // for its error
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return enabledEntries{}, []error{&ConfigError{File: file, Err: fmt.Errorf("settings: %w", err)}}
	}
	var raw []byte
	eachMember(data, func(key, v []byte) {
		if string(key) == "enabledPlugins" {
			raw = v // the last one wins, as in a plain decode
		}
	})
	switch k := jsonrpc.Kind(raw); k {
	case "", "null":
		return enabledEntries{}, nil
	case "object":
		return scanEntries(raw, file, keep)
	default:
		return enabledEntries{}, []error{&ConfigError{File: file, Field: "enabledPlugins", Err: fmt.Errorf("%s, not an object", jsonrpc.WithArticle(k))}}
	}
}

// scanEntries reads the entries of an enabledPlugins object, which must be
// valid JSON.
func scanEntries(raw []byte, file string, keep func(id []byte) bool) (enabledEntries, []error) {
	var out enabledEntries
	var errs []error
	var dead []bool // the entry's last value was not a boolean
	pos := map[string]int{}
	bad := 0
	eachMember(raw, func(key, v []byte) {
		at, seen := pos[string(key)]
		if k := jsonrpc.Kind(v); k != "boolean" {
			if bad++; bad <= maxEntryErrors {
				errs = append(errs, &ConfigError{File: file, Field: "enabledPlugins." + string(key),
					Err: fmt.Errorf("%s, not a boolean", jsonrpc.WithArticle(k))})
			}
			if seen {
				dead[at] = true
			}
			return
		}
		out.total++
		switch {
		case seen:
			out.on[at], dead[at] = v[0] == 't', false
		case keep(key):
			id := string(key)
			pos[id] = len(out.ids)
			out.ids = append(out.ids, id)
			out.on = append(out.on, v[0] == 't')
			dead = append(dead, false)
		default:
			out.dropped++
		}
	})
	if bad > maxEntryErrors {
		errs = append(errs, &ConfigError{File: file, Field: "enabledPlugins",
			Err: fmt.Errorf("%d more entries are not booleans", bad-maxEntryErrors)})
	}
	n := 0
	for i := range out.ids {
		if !dead[i] {
			out.ids[n], out.on[n] = out.ids[i], out.on[i]
			n++
		}
	}
	out.ids, out.on = out.ids[:n], out.on[:n]
	return out, errs
}

// eachMember calls fn with each member of obj, a valid JSON object, in
// document order: its key decoded (the bytes of obj when it has no escape)
// and its value as it is written. It scans with a scanner of its own: the
// encoding/json decoder takes microseconds a member, too slow for the
// million entries a settings file at the read cap can hold.
func eachMember(obj []byte, fn func(key, v []byte)) {
	i := skipSpace(obj, 1) // past '{'
	for i < len(obj) && obj[i] != '}' {
		kend := skipValue(obj, i)
		key := obj[i+1 : kend-1]
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
			var s string
			_ = json.Unmarshal(obj[i:kend], &s) // valid JSON: decodes
			key = []byte(s)
		}
		j := skipSpace(obj, skipSpace(obj, kend)+1) // past ':'
		vend := skipValue(obj, j)
		fn(key, obj[j:vend])
		i = skipSpace(obj, vend)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index just past the valid JSON value at b[i].
func skipValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			i++
			for i < len(b) && b[i] != '"' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case c == '{' || c == '[':
			depth++
			i++
		case c == '}' || c == ']':
			if depth == 0 {
				return i // the end of the enclosing object or array
			}
			depth--
			i++
		case depth == 0 && (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return i
		default:
			i++
		}
		if depth == 0 && (c == '"' || c == '}' || c == ']') {
			return i
		}
	}
	return i
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fileExists reports whether path names an existing file or directory.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
