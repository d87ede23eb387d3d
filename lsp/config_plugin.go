package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/internal/safefile"
)

// Plugin locates one plugin on disk.
type Plugin struct {
	// Name is the plugin's name; empty means the manifest's "name", else
	// the directory's base name.
	Name string
	// Root is the plugin directory.
	Root string
	// DataDir is the plugin's data directory (CLAUDE_PLUGIN_DATA).
	DataDir string
	// Marketplace is the name of the marketplace the plugin comes from,
	// if any; it is recorded in each ServerConfig.
	Marketplace string
	// Entry is the plugin's entry in that marketplace, if known. A strict
	// entry (the default) supplements the plugin's own configuration with
	// its lspServers; a non-strict one is the plugin's whole manifest.
	Entry *MarketplaceEntry
}

// Where a plugin's manifest and root LSP configuration live, relative to
// its root. Community marketplaces also put the manifest at
// RootManifestPath; ManifestPath is read first.
const (
	ManifestPath     = ".claude-plugin/plugin.json"
	RootManifestPath = "plugin.json"
	ConfigFileName   = ".lsp.json"
)

// RedefinedError reports a server that two places of one plugin define
// differently: the plugin's .lsp.json and its manifest, or the plugin's own
// files and its marketplace entry. The server loads once, with the
// definition in Kept. It matches ErrRedefined; identical definitions are
// not reported.
type RedefinedError struct {
	Plugin  string
	Server  string
	Kept    string // the file whose definition is used
	Dropped string // the file whose definition is ignored
	Reason  string // why Kept wins
}

func (e *RedefinedError) Error() string {
	return fmt.Sprintf("plugin %s: server %q is defined differently in %s and %s; using the one in %s (%s)",
		e.Plugin, e.Server, e.Kept, e.Dropped, e.Kept, e.Reason)
}

// Is makes every RedefinedError match ErrRedefined.
func (e *RedefinedError) Is(target error) bool { return target == ErrRedefined }

// LoadPlugins loads every plugin's servers (see LoadPlugin) in order and
// resolves conflicts across them with ResolveConflicts: the first server
// registered for an extension keeps it, and each later claim is an
// *ExtensionConflictError (the losing server keeps its other extensions;
// one left with none is dropped).
func LoadPlugins(plugins []Plugin, opts *LoadOptions) ([]ServerConfig, []error) {
	var all []ServerConfig
	var errs []error
	for _, p := range plugins {
		cfgs, es := LoadPlugin(p, opts)
		all = append(all, cfgs...)
		errs = append(errs, es...)
	}
	all, es := ResolveConflicts(all)
	return all, append(errs, es...)
}

// LoadPlugin loads one plugin's servers, in this order:
//
//  1. the root .lsp.json;
//  2. the manifest's lspServers (a path relative to the plugin root, an
//     inline map, or a list of those), replacing servers of the same name.
//     The manifest is .claude-plugin/plugin.json, else plugin.json at the
//     root; for a non-strict marketplace entry it is the entry itself, and
//     lspServers in the plugin's own manifest are reported and ignored;
//  3. for a strict marketplace entry, the entry's lspServers, which add
//     servers but never replace the plugin's own.
//
// A server defined twice loads once, and a *RedefinedError says which
// definition won when they differ. Paths may not lead outside the plugin
// directory, through ".." or symbolic links. Problems are *ConfigError
// values; valid entries load regardless. A plugin with no configuration
// has no servers and no errors.
func LoadPlugin(p Plugin, opts *LoadOptions) ([]ServerConfig, []error) {
	root, err := filepath.Abs(p.Root)
	if err != nil {
		return nil, []error{&ConfigError{Plugin: p.Name, File: p.Root, Err: err}}
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, []error{&ConfigError{Plugin: p.Name, File: root, Err: fmt.Errorf("plugin directory: %w", bareErr(err))}}
	}
	l := &pluginLoader{root: root, opts: opts, byName: map[string]ServerConfig{}}
	manifest, mpath := l.readManifest()
	l.name = p.Name
	if l.name == "" {
		l.name = manifestName(manifest, filepath.Base(root))
	}
	for _, err := range l.errs {
		err.(*ConfigError).Plugin = l.name
	}
	l.src = Source{Plugin: l.name, Marketplace: p.Marketplace, Root: root, DataDir: p.DataDir}

	l.loadFile(filepath.Join(root, ConfigFileName), true, replace)
	entry := p.Entry
	if entry != nil && !entry.Strict {
		if _, ok := manifest["lspServers"]; ok {
			l.errs = append(l.errs, &ConfigError{Plugin: l.name, File: mpath, Field: "lspServers",
				Err: fmt.Errorf("ignored: the marketplace entry in %s is \"strict\": false, so it alone declares the plugin's components", entry.File)})
		}
		l.loadValue(entry.LSPServers, entry.File, "lspServers", replace)
		return l.result()
	}
	if raw, ok := manifest["lspServers"]; ok {
		l.loadValue(raw, mpath, "lspServers", replace)
	}
	if entry != nil {
		l.loadValue(entry.LSPServers, entry.File, "lspServers", supplement)
	}
	return l.result()
}

// manifestName returns the manifest's "name", else def.
func manifestName(manifest map[string]json.RawMessage, def string) string {
	var n string
	if raw, ok := manifest["name"]; ok && json.Unmarshal(raw, &n) == nil && n != "" {
		return n
	}
	return def
}

// merge says what a definition does to an earlier one of the same name.
type merge int

const (
	replace    merge = iota // the later definition wins
	supplement              // the earlier definition wins
)

// pluginLoader collects one plugin's servers from its configuration
// layers.
type pluginLoader struct {
	root string // absolute
	name string
	src  Source // File is set per document
	opts *LoadOptions

	order  []string // server keys in first-seen order
	byName map[string]ServerConfig
	errs   []error
}

// readManifest reads the manifest; a missing one is nil without error.
func (l *pluginLoader) readManifest() (map[string]json.RawMessage, string) {
	var path string
	var data []byte
	for _, rel := range []string{ManifestPath, RootManifestPath} {
		path = filepath.Join(l.root, filepath.FromSlash(rel))
		d, err := readContained(l.root, path)
		if err == nil {
			data = d
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			l.errs = append(l.errs, &ConfigError{File: path, Err: err})
			return nil, path
		}
	}
	if data == nil {
		return nil, filepath.Join(l.root, filepath.FromSlash(ManifestPath))
	}
	var manifest map[string]json.RawMessage
	if err := json.Unmarshal(data, &manifest); err != nil {
		l.errs = append(l.errs, &ConfigError{File: path, Err: fmt.Errorf("parsing manifest: %w", err)})
		return nil, path
	}
	return manifest, path
}

// loadFile loads a configuration document inside the plugin; optional
// means a missing file is no error.
func (l *pluginLoader) loadFile(path string, optional bool, how merge) {
	data, err := readContained(l.root, path)
	if err != nil {
		if !optional || !errors.Is(err, os.ErrNotExist) {
			l.errs = append(l.errs, &ConfigError{Plugin: l.name, File: path, Err: err})
		}
		return
	}
	l.loadDoc(data, path, how)
}

// loadDoc parses a configuration document and merges its servers.
func (l *pluginLoader) loadDoc(data []byte, file string, how merge) {
	src := l.src
	src.File = file
	cfgs, errs := ParseServers(data, src, l.opts)
	l.errs = append(l.errs, errs...)
	for _, c := range cfgs {
		l.add(c, how)
	}
}

// loadValue loads an lspServers value found in file: a path, an inline
// map, or a list of those.
func (l *pluginLoader) loadValue(raw json.RawMessage, file, field string, how merge) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || jsonrpc.Kind(raw) == "null" {
		return
	}
	items := []json.RawMessage{raw}
	list := jsonrpc.Kind(raw) == "array"
	if list {
		items = nil
		_ = json.Unmarshal(raw, &items) // valid JSON: it was decoded before
	}
	for i, it := range items {
		it = bytes.TrimSpace(it)
		f := field
		if list {
			f += "[" + strconv.Itoa(i) + "]"
		}
		switch jsonrpc.Kind(it) {
		case "string":
			var rel string
			_ = json.Unmarshal(it, &rel)
			path, err := containedPath(l.root, rel)
			if err != nil {
				l.errs = append(l.errs, &ConfigError{Plugin: l.name, File: file, Field: f, Err: err})
				continue
			}
			l.loadFile(path, false, how)
		case "object":
			l.loadDoc(it, file, how)
		default:
			l.errs = append(l.errs, &ConfigError{Plugin: l.name, File: file, Field: f,
				Err: fmt.Errorf("%s, not a path, a map of servers or a list of those", jsonrpc.WithArticle(jsonrpc.Kind(it)))})
		}
	}
}

// add merges one server, reporting a differing redefinition.
func (l *pluginLoader) add(c ServerConfig, how merge) {
	old, seen := l.byName[c.Server]
	if !seen {
		l.order = append(l.order, c.Server)
		l.byName[c.Server] = c
		return
	}
	kept, dropped := c, old
	reason := "a manifest's lspServers replace the servers of .lsp.json"
	if how == supplement {
		kept, dropped = old, c
		reason = "the plugin's own files win over its strict marketplace entry"
	}
	if !kept.Equal(&dropped) {
		if kept.File == dropped.File {
			reason = "the last definition in a file wins"
		}
		l.errs = append(l.errs, &RedefinedError{Plugin: l.name, Server: c.Server, Kept: kept.File, Dropped: dropped.File, Reason: reason})
	}
	l.byName[c.Server] = kept
}

func (l *pluginLoader) result() ([]ServerConfig, []error) {
	out := make([]ServerConfig, 0, len(l.order))
	for _, n := range l.order {
		out = append(out, l.byName[n])
	}
	return out, l.errs
}

// containedPath resolves rel against root and checks that the result
// stays inside root (symbolic links are checked when the file is read).
func containedPath(root, rel string) (string, error) {
	if rel == "" {
		return "", errors.New("empty path")
	}
	p := rel
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, filepath.FromSlash(rel))
	}
	p = filepath.Clean(p)
	if !within(root, p) {
		return "", fmt.Errorf("%q: %w", rel, ErrPathEscape)
	}
	return p, nil
}

// readContained reads path after checking that, with symbolic links
// followed, it lies inside root.
func readContained(root, path string) ([]byte, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	if !within(realRoot, real) {
		return nil, fmt.Errorf("%s resolves to %s: %w", path, real, ErrPathEscape)
	}
	return readConfigFile(real)
}

// maxConfigBytes bounds a configuration file read: settings, manifests,
// marketplaces and .lsp.json files are a few kilobytes.
const maxConfigBytes = 16 << 20

// readConfigFile reads a configuration file that must be a regular file:
// a FIFO or a device under its name is refused, not waited on, and at
// most maxConfigBytes are read.
func readConfigFile(path string) ([]byte, error) {
	data, _, err := safefile.ReadFile(path, maxConfigBytes, nil)
	return data, err
}

// bareErr drops the operation and path of a *fs.PathError, for messages
// that name the path already; errors.Is still sees the cause.
func bareErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// within reports whether p is root or lies beneath it (both clean).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}
