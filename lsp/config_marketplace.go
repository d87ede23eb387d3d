package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/idebridge/idebridge/internal/jsonrpc"
)

// MarketplaceFile is where a marketplace lists its plugins, relative to the
// marketplace's root directory.
const MarketplaceFile = ".claude-plugin/marketplace.json"

// Marketplace is a plugin marketplace on disk: a directory holding
// MarketplaceFile, as Claude Code clones them under
// <config>/plugins/marketplaces/<name>/.
type Marketplace struct {
	// Name is the marketplace's "name", else its directory's base name.
	Name string
	// Dir is the marketplace's root directory (absolute).
	Dir string
	// File is the path of its marketplace.json.
	File string
	// Entries are its plugins, in the file's order; invalid entries are
	// left out (and reported).
	Entries []MarketplaceEntry
}

// MarketplaceEntry is one plugin as a marketplace lists it.
type MarketplaceEntry struct {
	// Name is the plugin's name.
	Name string
	// Marketplace is the name of the marketplace listing it.
	Marketplace string
	// File is the marketplace.json the entry is in, and Index its position
	// in the "plugins" array.
	File  string
	Index int
	// Source is the entry's "source": a path relative to the marketplace
	// for a local plugin, else a description of the remote source.
	Source string
	// Dir is the plugin's directory for a local source; empty for a
	// remote one, which is not on disk until Claude Code installs it.
	Dir string
	// Strict is the entry's "strict" (default true): the plugin's own
	// manifest is the authority, and the entry's components supplement it.
	// A non-strict entry is the plugin's whole manifest.
	Strict bool
	// LSPServers is the entry's "lspServers" (a path, an inline map of
	// servers, or a list of those), nil when it has none.
	LSPServers json.RawMessage
	// Version is the entry's "version", if any.
	Version string
}

// RemoteSourceError reports a marketplace plugin whose source is remote (a
// git repository, a URL, a package) and so not on disk: it is not fetched,
// and its servers are not loaded. It matches ErrRemoteSource.
type RemoteSourceError struct {
	Plugin      string
	Marketplace string
	Source      string
}

func (e *RemoteSourceError) Error() string {
	return fmt.Sprintf("plugin %s of marketplace %s: source %s is not on disk and is not fetched (install the plugin with Claude Code to use it)",
		e.Plugin, e.Marketplace, e.Source)
}

// Is makes every RemoteSourceError match ErrRemoteSource.
func (e *RemoteSourceError) Is(target error) bool { return target == ErrRemoteSource }

// ReadMarketplace reads the marketplace whose root directory is dir.
// Problems with the file or with single entries are *ConfigError values;
// valid entries are returned regardless. A nil *Marketplace means the file
// could not be read at all.
func ReadMarketplace(dir string) (*Marketplace, []error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, []error{&ConfigError{File: dir, Err: err}}
	}
	file := filepath.Join(abs, filepath.FromSlash(MarketplaceFile))
	data, err := readContained(abs, file)
	if err != nil {
		return nil, []error{&ConfigError{File: file, Err: fmt.Errorf("reading marketplace: %w", bareErr(err))}}
	}
	return parseMarketplace(data, abs, file)
}

// parseMarketplace parses a marketplace.json found at file in the
// marketplace directory dir.
func parseMarketplace(data []byte, dir, file string) (*Marketplace, []error) {
	doc, err := objectFields(data)
	if err != nil {
		return nil, []error{&ConfigError{File: file, Err: fmt.Errorf("marketplace: %w", err)}}
	}
	var plugins []json.RawMessage
	if raw, ok := doc["plugins"]; ok && jsonrpc.Kind(raw) != "null" {
		if jsonrpc.Kind(raw) != "array" {
			return nil, []error{&ConfigError{File: file, Field: "plugins", Err: fmt.Errorf("%s, not an array", jsonrpc.WithArticle(jsonrpc.Kind(raw)))}}
		}
		_ = json.Unmarshal(raw, &plugins)
	}
	m := &Marketplace{Name: filepath.Base(dir), Dir: dir, File: file}
	var errs []error
	if n, ok := jsonString(doc["name"]); ok && n != "" {
		m.Name = n
	}
	pluginRoot := ""
	if meta, err := objectFields(doc["metadata"]); err == nil {
		pluginRoot, _ = jsonString(meta["pluginRoot"])
	}
	seen := map[string]bool{}
	for i, raw := range plugins {
		e, err := m.parseEntry(i, raw, pluginRoot)
		if err == nil && seen[e.Name] {
			err = &ConfigError{Plugin: e.Name, File: file, Field: fmt.Sprintf("plugins[%d]", i),
				Err: errors.New("a plugin of this name is listed before; the first entry is used")}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		seen[e.Name] = true
		m.Entries = append(m.Entries, e)
	}
	return m, errs
}

// parseEntry parses the index-th plugin entry.
func (m *Marketplace) parseEntry(index int, raw json.RawMessage, pluginRoot string) (MarketplaceEntry, error) {
	field := "plugins[" + strconv.Itoa(index) + "]"
	e := MarketplaceEntry{Marketplace: m.Name, File: m.File, Index: index, Strict: true}
	fail := func(f string, err error) (MarketplaceEntry, error) {
		return MarketplaceEntry{}, &ConfigError{Plugin: e.Name, File: m.File, Field: field + f, Err: err}
	}
	fields, err := objectFields(raw)
	if err != nil {
		return fail("", fmt.Errorf("%w: not a plugin entry", err))
	}
	name, ok := jsonString(fields["name"])
	if !ok || name == "" {
		return fail(".name", errors.New("required: the plugin's name"))
	}
	e.Name = name
	if v, ok := fields["strict"]; ok && jsonrpc.Kind(v) != "null" {
		if jsonrpc.Kind(v) != "boolean" {
			return fail(".strict", fmt.Errorf("%s, not a boolean", jsonrpc.WithArticle(jsonrpc.Kind(v))))
		}
		e.Strict = v[0] == 't'
	}
	if v, ok := fields["lspServers"]; ok && jsonrpc.Kind(v) != "null" {
		e.LSPServers = v
	}
	e.Version, _ = jsonString(fields["version"])
	src := fields["source"]
	switch jsonrpc.Kind(src) {
	case "string":
		rel, _ := jsonString(src)
		e.Source = rel
		if pluginRoot != "" && !strings.HasPrefix(rel, "./") && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel) {
			rel = pluginRoot + "/" + rel
		}
		dir, err := containedPath(m.Dir, rel)
		if err != nil {
			if errors.Is(err, ErrPathEscape) {
				err = fmt.Errorf("%q leads outside the marketplace directory: %w", e.Source, ErrPathEscape)
			}
			return fail(".source", err)
		}
		e.Dir = dir
	case "object":
		e.Source = describeRemote(src)
	default:
		return fail(".source", fmt.Errorf("%s, not a relative path or a source object", jsonrpc.WithArticle(jsonrpc.Kind(src))))
	}
	return e, nil
}

// describeRemote describes a remote source object for messages:
// "github owner/repo", a URL, "npm package", else its JSON.
func describeRemote(src json.RawMessage) string {
	var s map[string]json.RawMessage
	_ = json.Unmarshal(src, &s)
	get := func(k string) string { v, _ := jsonString(s[k]); return v }
	kind := get("source")
	for _, k := range []string{"repo", "url", "package"} {
		if v := get(k); v != "" {
			if p := get("path"); p != "" {
				v += " (" + p + ")"
			}
			return strings.TrimSpace(kind + " " + v)
		}
	}
	var b bytes.Buffer
	_ = json.Compact(&b, src)
	return clip(b.String())
}

// objectFields decodes a JSON object into its members, with their values
// surrounding space trimmed. Keys are matched exactly, as Claude Code's
// JSON.parse does (encoding/json would also fill a struct field from a key
// in another letter case); of a repeated key the last value counts.
func objectFields(data []byte) (map[string]json.RawMessage, error) {
	data = bytes.TrimSpace(data)
	var fields map[string]json.RawMessage
	if jsonrpc.Kind(data) != "object" {
		return nil, fmt.Errorf("%s, not an object", jsonrpc.WithArticle(jsonrpc.Kind(data)))
	}
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, fmt.Errorf("parsing: %w", err)
	}
	for k, v := range fields {
		fields[k] = bytes.TrimSpace(v)
	}
	return fields, nil
}

// jsonString decodes a JSON string; ok is false for anything else.
func jsonString(v json.RawMessage) (string, bool) {
	var s string
	if jsonrpc.Kind(bytes.TrimSpace(v)) != "string" || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// LoadMarketplace loads the servers of every plugin a marketplace
// directory lists, in the file's order, as LoadPlugins does: each local
// plugin with its entry (see LoadPlugin), extension conflicts resolved. A
// plugin with a remote source is reported as a *RemoteSourceError.
func LoadMarketplace(dir string, opts *LoadOptions) ([]ServerConfig, []error) {
	m, errs := ReadMarketplace(dir)
	if m == nil {
		return nil, errs
	}
	plugins, es := m.Plugins()
	cfgs, es2 := LoadPlugins(plugins, opts)
	return cfgs, append(append(errs, es...), es2...)
}

// Plugins returns the local plugins of the marketplace, each with its
// entry, and a *RemoteSourceError for each remote one.
func (m *Marketplace) Plugins() ([]Plugin, []error) {
	var out []Plugin
	var errs []error
	for i := range m.Entries {
		e := &m.Entries[i]
		if e.Dir == "" {
			errs = append(errs, &RemoteSourceError{Plugin: e.Name, Marketplace: m.Name, Source: e.Source})
			continue
		}
		out = append(out, Plugin{Name: e.Name, Root: e.Dir, Marketplace: m.Name, Entry: e})
	}
	return out, errs
}

// Entry returns the entry of the plugin named name.
func (m *Marketplace) Entry(name string) (*MarketplaceEntry, bool) {
	for i := range m.Entries {
		if m.Entries[i].Name == name {
			return &m.Entries[i], true
		}
	}
	return nil, false
}
