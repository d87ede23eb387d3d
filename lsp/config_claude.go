package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

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
}

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
	l := &claudeLoader{
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
	home := env.Get(environ, "HOME")
	if runtime.GOOS == "windows" {
		if p := env.Get(environ, "USERPROFILE"); p != "" {
			home = p
		}
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".claude")
}

// claudeLoader carries one LoadClaudeCode.
type claudeLoader struct {
	opts         ClaudeCodeOptions
	out          *ClaudeCodeConfig
	marketplaces map[string]*Marketplace // by name; nil value: not found
	known        map[string]string       // known_marketplaces.json: name -> installLocation
}

func (l *claudeLoader) errorf(err error) { l.out.Errors = append(l.out.Errors, err) }

func (l *claudeLoader) load() {
	enabled := map[string]enablement{}
	var enabledOrder []string
	if l.opts.ConfigDir == "" {
		l.errorf(&ConfigError{Err: errors.New("no Claude Code configuration directory: neither CLAUDE_CONFIG_DIR nor HOME is set")})
	}
	for _, s := range l.settingsFiles() {
		data, err := readConfigFile(s.file)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				l.errorf(&ConfigError{File: s.file, Err: bareErr(err)})
			}
			continue
		}
		ids, values, errs := parseEnabledPlugins(data, s.file)
		for _, err := range errs {
			l.errorf(err)
		}
		for i, id := range ids {
			if _, ok := enabled[id]; !ok {
				enabledOrder = append(enabledOrder, id)
			}
			enabled[id] = enablement{on: values[i], scope: s.scope, file: s.file}
		}
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
	for _, id := range enabledOrder {
		if _, ok := installs[id]; !ok {
			order = append(order, id)
		}
	}

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
	inst, ok := pickInstall(records, l.opts.ProjectDir)
	if ok {
		st.Installed = true
	} else if len(records) > 0 {
		inst = records[0]
	}
	st.InstallScope, st.ProjectPath, st.Root, st.Version = inst.scope, inst.projectPath, inst.path, inst.version

	switch {
	case len(records) == 0 && en.on:
		st.Reason = fmt.Sprintf("enabled in %s settings (%s), but not installed", en.scope, en.file)
	case len(records) == 0:
		st.Reason = fmt.Sprintf("disabled in %s settings (%s), and not installed", en.scope, en.file)
	case !st.Installed:
		st.Reason = fmt.Sprintf("installed with %s scope for %s only", inst.scope, inst.projectPath)
	case en.file == "":
		st.Reason = "installed, but no settings file enables it (enabledPlugins)"
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

// parseEnabledPlugins returns the enabledPlugins of a settings file, in
// document order; an entry whose value is not a boolean is reported and
// left out. A file without the key enables nothing.
func parseEnabledPlugins(data []byte, file string) ([]string, []bool, []error) {
	doc, err := objectFields(data)
	if err != nil {
		return nil, nil, []error{&ConfigError{File: file, Err: fmt.Errorf("settings: %w", err)}}
	}
	raw := doc["enabledPlugins"]
	if len(raw) == 0 || jsonrpc.Kind(raw) == "null" {
		return nil, nil, nil
	}
	keys, vals, err := orderedObject(raw)
	if err != nil {
		return nil, nil, []error{&ConfigError{File: file, Field: "enabledPlugins", Err: err}}
	}
	var ids []string
	var on []bool
	var errs []error
	for i, k := range keys {
		v := bytes.TrimSpace(vals[i])
		if jsonrpc.Kind(v) != "boolean" {
			errs = append(errs, &ConfigError{File: file, Field: "enabledPlugins." + k,
				Err: fmt.Errorf("%s, not a boolean", jsonrpc.WithArticle(jsonrpc.Kind(v)))})
			continue
		}
		ids = append(ids, k)
		on = append(on, v[0] == 't')
	}
	return ids, on, errs
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
