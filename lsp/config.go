package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/idebridge/idebridge/internal/jsonrpc"
)

// Transports a server configuration may name.
const (
	TransportStdio  = "stdio"
	TransportSocket = "socket"
)

// Defaults applied to fields a configuration leaves out.
const (
	DefaultMaxRestarts = 3
)

// Variables that command, args, env and workspaceFolder may use as
// ${NAME}, and that every server process gets in its environment.
const (
	VarPluginRoot = "CLAUDE_PLUGIN_ROOT"
	VarPluginData = "CLAUDE_PLUGIN_DATA"
	VarProjectDir = "CLAUDE_PROJECT_DIR"
)

// userConfigPrefix introduces a plugin user option in a variable reference:
// ${user_config.KEY}.
const userConfigPrefix = "user_config."

// ServerConfig is one language server as plugin configuration describes
// it, after variable expansion. ParseServers and the Load functions fill in
// the documented defaults; a ServerConfig built in Go should start from
// NewServerConfig, which does the same.
type ServerConfig struct {
	// Name identifies the server: "plugin:<plugin>:<server>" for a plugin's
	// server, the bare server name for a standalone .lsp.json.
	Name string
	// Plugin is the plugin's name; empty for a standalone file.
	Plugin string
	// Server is the server's key in its configuration.
	Server string
	// Root is the plugin directory (CLAUDE_PLUGIN_ROOT); for a standalone
	// file, the directory holding it.
	Root string
	// DataDir is the plugin's data directory (CLAUDE_PLUGIN_DATA), if any.
	DataDir string
	// ProjectDir is the project directory (CLAUDE_PROJECT_DIR).
	ProjectDir string
	// File is the configuration file the entry came from.
	File string

	// Command is the executable to run (required). A bare name is looked
	// up in PATH; a relative path is taken relative to WorkspaceFolder.
	Command string
	// Args are the command's arguments.
	Args []string
	// Transport is TransportStdio (the default) or TransportSocket.
	Transport string
	// Env holds variables added to the server's environment.
	Env map[string]string
	// ExtensionToLanguage maps file extensions (".go") to LSP language ids
	// (required, at least one). Extensions are matched without regard to
	// case.
	ExtensionToLanguage map[string]string
	// InitializationOptions is sent in initialize; nil for none.
	InitializationOptions json.RawMessage
	// Settings is pushed with workspace/didChangeConfiguration and serves
	// workspace/configuration requests by dotted section; nil for none.
	Settings json.RawMessage
	// WorkspaceFolder is the folder the server works on; empty means
	// ProjectDir. Relative paths are resolved against ProjectDir.
	WorkspaceFolder string
	// StartupTimeout bounds starting and initializing the server; 0 means
	// the manager's default.
	StartupTimeout time.Duration
	// ShutdownTimeout bounds a graceful shutdown; 0 means the manager's
	// default.
	ShutdownTimeout time.Duration
	// RestartOnCrash lets the next use restart a crashed server (default
	// true).
	RestartOnCrash bool
	// MaxRestarts bounds those restarts (default 3).
	MaxRestarts int
	// Diagnostics false keeps the server running for requests but injects
	// none of its diagnostics (default true).
	Diagnostics bool
}

// NewServerConfig returns a configuration with the documented defaults:
// stdio transport, restartOnCrash true, maxRestarts 3, diagnostics true.
func NewServerConfig(name, command string, args []string, extensionToLanguage map[string]string) ServerConfig {
	return ServerConfig{
		Name: name, Server: name, Command: command, Args: args,
		ExtensionToLanguage: extensionToLanguage,
		Transport:           TransportStdio, RestartOnCrash: true, MaxRestarts: DefaultMaxRestarts, Diagnostics: true,
	}
}

// Equal reports whether two configurations start the same server the same
// way; Reload keeps a running server whose configuration is Equal.
func (c *ServerConfig) Equal(o *ServerConfig) bool {
	a, _ := json.Marshal(configKey(c))
	b, _ := json.Marshal(configKey(o))
	return bytes.Equal(a, b)
}

func configKey(c *ServerConfig) any {
	type key struct {
		Name, Root, DataDir, ProjectDir string
		W                               wireConfig
	}
	return key{c.Name, c.Root, c.DataDir, c.ProjectDir, toWire(c)}
}

// LoadOptions says where the variables that configurations use come from.
// The nil *LoadOptions means the current directory as project and no user
// options.
type LoadOptions struct {
	// ProjectDir is CLAUDE_PROJECT_DIR and the default workspace folder;
	// empty means the current directory.
	ProjectDir string
	// UserConfig holds the plugin's non-sensitive user options, referenced
	// as ${user_config.KEY}. Never put secrets here.
	UserConfig map[string]string
}

// Source says where a configuration document came from.
type Source struct {
	// Plugin is the plugin's name; empty for a standalone file.
	Plugin string
	// Root is the plugin directory, or the standalone file's directory.
	Root string
	// DataDir is the plugin's data directory; empty when it has none.
	DataDir string
	// File is the path of the document, for error messages.
	File string
}

// Configuration errors. Every *ConfigError matches ErrConfig; its Err
// says more and may match one of the others.
var (
	ErrConfig            = errors.New("invalid LSP server configuration")
	ErrMissingVariable   = errors.New("missing variable")
	ErrPathEscape        = errors.New("path leads outside the plugin directory")
	ErrExtensionConflict = errors.New("extension already served")
)

// ConfigError is one problem found while loading configuration: a file
// that cannot be read or parsed, or one invalid server entry. Other entries
// still load.
type ConfigError struct {
	// Plugin is the plugin's name; empty for a standalone file.
	Plugin string
	// File is the configuration file involved.
	File string
	// Server is the entry's key; empty for a problem with the whole file.
	Server string
	// Field locates the problem in the entry, e.g. "args[1]"; may be empty.
	Field string
	// Err is the problem.
	Err error
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	if e.Plugin != "" {
		fmt.Fprintf(&b, "plugin %s: ", e.Plugin)
	}
	if e.File != "" {
		fmt.Fprintf(&b, "%s: ", e.File)
	}
	if e.Server != "" {
		fmt.Fprintf(&b, "server %q: ", e.Server)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, "%s: ", e.Field)
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying problem.
func (e *ConfigError) Unwrap() error { return e.Err }

// Is makes every ConfigError match ErrConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

// ConflictError reports an extension claimed by a server after another
// server claimed it; the first server keeps it. It matches
// ErrExtensionConflict.
type ConflictError struct {
	Extension string
	Server    string // the server that lost the extension
	Winner    string // the server that keeps it
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("extension %s of %s is already served by %s", e.Extension, e.Server, e.Winner)
}

// Is makes every ConflictError match ErrExtensionConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrExtensionConflict }

// MissingVariableError lists the variables a value referenced that have no
// value. It matches ErrMissingVariable.
type MissingVariableError struct{ Names []string }

func (e *MissingVariableError) Error() string {
	return "missing variable ${" + strings.Join(e.Names, "}, ${") + "}"
}

// Is makes every MissingVariableError match ErrMissingVariable.
func (e *MissingVariableError) Is(target error) bool { return target == ErrMissingVariable }

// Plugin locates one installed plugin.
type Plugin struct {
	// Name is the plugin's name; empty means the manifest's "name", else
	// the directory's base name.
	Name string
	// Root is the plugin directory.
	Root string
	// DataDir is the plugin's data directory (CLAUDE_PLUGIN_DATA).
	DataDir string
}

// ManifestPath is where a plugin's manifest lives, relative to its root.
const ManifestPath = ".claude-plugin/plugin.json"

// ConfigFileName is the name of a plugin's root LSP configuration.
const ConfigFileName = ".lsp.json"

// LoadPlugins loads every plugin's servers (see LoadPlugin) in order and
// resolves extension conflicts across them: the first server registered
// for an extension keeps it, and each later claim is a *ConflictError (the
// losing server keeps its other extensions; one left with none is dropped).
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

// LoadPlugin loads one plugin's servers: the root .lsp.json, then the
// manifest's lspServers (a path relative to the plugin root, an inline map,
// or a list of those), later entries replacing earlier ones of the same
// name. Paths may not lead outside the plugin directory, through ".." or
// symbolic links. Problems are *ConfigError values; valid entries load
// regardless. A plugin with neither file has no servers and no errors.
func LoadPlugin(p Plugin, opts *LoadOptions) ([]ServerConfig, []error) {
	root, err := filepath.Abs(p.Root)
	if err != nil {
		return nil, []error{&ConfigError{Plugin: p.Name, File: p.Root, Err: err}}
	}
	name := p.Name
	var errs []error
	var manifest map[string]json.RawMessage
	mpath := filepath.Join(root, filepath.FromSlash(ManifestPath))
	if data, err := readContained(root, mpath); err == nil {
		if err := json.Unmarshal(data, &manifest); err != nil {
			errs = append(errs, &ConfigError{Plugin: name, File: mpath, Err: fmt.Errorf("parsing manifest: %w", err)})
			manifest = nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, &ConfigError{Plugin: name, File: mpath, Err: err})
	}
	if name == "" {
		var n string
		if raw, ok := manifest["name"]; ok && json.Unmarshal(raw, &n) == nil && n != "" {
			name = n
		} else {
			name = filepath.Base(root)
		}
	}
	for i := range errs {
		errs[i].(*ConfigError).Plugin = name
	}
	src := Source{Plugin: name, Root: root, DataDir: p.DataDir}

	var order []string
	byName := map[string]ServerConfig{}
	add := func(cfgs []ServerConfig) {
		for _, c := range cfgs {
			if _, ok := byName[c.Server]; !ok {
				order = append(order, c.Server)
			}
			byName[c.Server] = c
		}
	}
	loadFile := func(path string) {
		data, err := readContained(root, path)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) || path != filepath.Join(root, ConfigFileName) {
				errs = append(errs, &ConfigError{Plugin: name, File: path, Err: err})
			}
			return
		}
		s := src
		s.File = path
		cfgs, es := ParseServers(data, s, opts)
		add(cfgs)
		errs = append(errs, es...)
	}
	loadFile(filepath.Join(root, ConfigFileName))

	if raw, ok := manifest["lspServers"]; ok {
		var items []json.RawMessage
		if kind := jsonrpc.Kind(bytes.TrimSpace(raw)); kind == "array" {
			_ = json.Unmarshal(raw, &items)
		} else {
			items = []json.RawMessage{raw}
		}
		for i, it := range items {
			it = bytes.TrimSpace(it)
			field := "lspServers"
			if len(items) > 1 || jsonrpc.Kind(bytes.TrimSpace(raw)) == "array" {
				field = "lspServers[" + strconv.Itoa(i) + "]"
			}
			switch jsonrpc.Kind(it) {
			case "string":
				var rel string
				_ = json.Unmarshal(it, &rel)
				path, err := containedPath(root, rel)
				if err != nil {
					errs = append(errs, &ConfigError{Plugin: name, File: mpath, Field: field, Err: err})
					continue
				}
				loadFile(path)
			case "object":
				s := src
				s.File = mpath
				cfgs, es := ParseServers(it, s, opts)
				add(cfgs)
				errs = append(errs, es...)
			default:
				errs = append(errs, &ConfigError{Plugin: name, File: mpath, Field: field,
					Err: fmt.Errorf("%s, not a path, a map of servers or a list of those", jsonrpc.WithArticle(jsonrpc.Kind(it)))})
			}
		}
	}
	out := make([]ServerConfig, 0, len(order))
	for _, n := range order {
		out = append(out, byName[n])
	}
	return out, errs
}

// LoadFile loads a standalone .lsp.json that belongs to no plugin, as the
// command line uses it. Servers are named by their keys; ${CLAUDE_PLUGIN_ROOT}
// is the file's directory. Extension conflicts are resolved as in
// LoadPlugins.
func LoadFile(path string, opts *LoadOptions) ([]ServerConfig, []error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, []error{&ConfigError{File: path, Err: err}}
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, []error{&ConfigError{File: path, Err: err}}
	}
	cfgs, errs := ParseServers(data, Source{Root: filepath.Dir(abs), File: path}, opts)
	cfgs, es := ResolveConflicts(cfgs)
	return cfgs, append(errs, es...)
}

// ResolveConflicts gives each extension (compared without regard to case)
// to the first server that claims it. Every later claim is removed from its
// server and reported as a *ConflictError; a server left without
// extensions is dropped. The input is not modified.
func ResolveConflicts(cfgs []ServerConfig) ([]ServerConfig, []error) {
	owner := map[string]string{}
	var errs []error
	out := make([]ServerConfig, 0, len(cfgs))
	for _, c := range cfgs {
		exts := make([]string, 0, len(c.ExtensionToLanguage))
		for e := range c.ExtensionToLanguage {
			exts = append(exts, e)
		}
		sort.Strings(exts)
		kept := make(map[string]string, len(exts))
		for _, e := range exts {
			k := strings.ToLower(e)
			if w, ok := owner[k]; ok && w != c.Name {
				errs = append(errs, &ConflictError{Extension: e, Server: c.Name, Winner: w})
				continue
			}
			owner[k] = c.Name
			kept[e] = c.ExtensionToLanguage[e]
		}
		if len(kept) == 0 {
			continue
		}
		c.ExtensionToLanguage = kept
		out = append(out, c)
	}
	return out, errs
}

// ParseServers parses one LSP configuration document: a JSON object whose
// keys are server names and whose values are server configurations.
// Entries are returned in document order (a repeated key keeps its first
// position and its last value); invalid entries are reported as
// *ConfigError values and left out. It never panics.
func ParseServers(data []byte, src Source, opts *LoadOptions) ([]ServerConfig, []error) {
	fileErr := func(err error) []error {
		return []error{&ConfigError{Plugin: src.Plugin, File: src.File, Err: err}}
	}
	keys, vals, err := orderedObject(data)
	if err != nil {
		return nil, fileErr(err)
	}
	var o LoadOptions
	if opts != nil {
		o = *opts
	}
	if o.ProjectDir == "" {
		if wd, err := os.Getwd(); err == nil {
			o.ProjectDir = wd
		}
	}
	var out []ServerConfig
	var errs []error
	for i, k := range keys {
		c, field, err := parseEntry(k, vals[i], src, &o)
		if err != nil {
			errs = append(errs, &ConfigError{Plugin: src.Plugin, File: src.File, Server: k, Field: field, Err: err})
			continue
		}
		out = append(out, c)
	}
	return out, errs
}

// orderedObject splits a JSON object into keys in first-seen order and
// their last values.
func orderedObject(data []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, fmt.Errorf("parsing: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("%s, not an object of servers", jsonrpc.WithArticle(jsonrpc.Kind(bytes.TrimSpace(data))))
	}
	var keys []string
	var vals []json.RawMessage
	pos := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("parsing: %w", err)
		}
		k := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("parsing %q: %w", k, err)
		}
		if i, ok := pos[k]; ok {
			vals[i] = v
			continue
		}
		pos[k] = len(keys)
		keys = append(keys, k)
		vals = append(vals, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, fmt.Errorf("parsing: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errors.New("parsing: data after the top-level object")
	}
	return keys, vals, nil
}

// wireConfig is the JSON form of a server entry, as MarshalServers writes
// it.
type wireConfig struct {
	Command               string            `json:"command"`
	Args                  []string          `json:"args,omitempty"`
	Transport             string            `json:"transport,omitempty"`
	Env                   map[string]string `json:"env,omitempty"`
	ExtensionToLanguage   map[string]string `json:"extensionToLanguage"`
	InitializationOptions json.RawMessage   `json:"initializationOptions,omitempty"`
	Settings              json.RawMessage   `json:"settings,omitempty"`
	WorkspaceFolder       string            `json:"workspaceFolder,omitempty"`
	StartupTimeout        int64             `json:"startupTimeout,omitempty"`
	ShutdownTimeout       int64             `json:"shutdownTimeout,omitempty"`
	RestartOnCrash        bool              `json:"restartOnCrash"`
	MaxRestarts           int               `json:"maxRestarts"`
	Diagnostics           bool              `json:"diagnostics"`
}

func toWire(c *ServerConfig) wireConfig {
	esc := func(s string) string { return strings.ReplaceAll(s, "${", "$${") }
	w := wireConfig{
		Command:               esc(c.Command),
		Transport:             c.Transport,
		ExtensionToLanguage:   c.ExtensionToLanguage,
		InitializationOptions: c.InitializationOptions,
		Settings:              c.Settings,
		WorkspaceFolder:       esc(c.WorkspaceFolder),
		StartupTimeout:        c.StartupTimeout.Milliseconds(),
		ShutdownTimeout:       c.ShutdownTimeout.Milliseconds(),
		RestartOnCrash:        c.RestartOnCrash,
		MaxRestarts:           c.MaxRestarts,
		Diagnostics:           c.Diagnostics,
	}
	for _, a := range c.Args {
		w.Args = append(w.Args, esc(a))
	}
	if len(c.Env) > 0 {
		w.Env = make(map[string]string, len(c.Env))
		for k, v := range c.Env {
			w.Env[k] = esc(v)
		}
	}
	return w
}

// MarshalServers writes configurations back as one .lsp.json document keyed
// by each ServerConfig's Server name, in order, with every default written
// out. Expanded values are written with "${" escaped as "$${", so loading
// the result with the same options gives the same configurations.
func MarshalServers(cfgs []ServerConfig) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{")
	for i := range cfgs {
		if i > 0 {
			b.WriteString(",")
		}
		k, err := marshalNoEscape(cfgs[i].Server)
		if err != nil {
			return nil, err
		}
		v, err := marshalNoEscape(toWire(&cfgs[i]))
		if err != nil {
			return nil, fmt.Errorf("writing server %q: %w", cfgs[i].Server, err)
		}
		b.WriteString("\n  ")
		b.Write(k)
		b.WriteString(": ")
		b.Write(v)
	}
	b.WriteString("\n}\n")
	return b.Bytes(), nil
}

// marshalNoEscape is json.Marshal without HTML escaping, so that settings
// and options written back are byte for byte what was read ("&" stays "&",
// not "\u0026"; FuzzLSPConfig found the difference).
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func parseEntry(key string, raw json.RawMessage, src Source, o *LoadOptions) (ServerConfig, string, error) {
	raw = bytes.TrimSpace(raw)
	if k := jsonrpc.Kind(raw); k != "object" {
		return ServerConfig{}, "", fmt.Errorf("%s, not an object", jsonrpc.WithArticle(k))
	}
	if key == "" {
		return ServerConfig{}, "", errors.New("empty server name")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return ServerConfig{}, "", err
	}
	for k, v := range fields {
		fields[k] = bytes.TrimSpace(v)
	}
	name := key
	if src.Plugin != "" {
		name = "plugin:" + src.Plugin + ":" + key
	}
	c := ServerConfig{
		Name: name, Plugin: src.Plugin, Server: key, Root: src.Root, DataDir: src.DataDir,
		ProjectDir: o.ProjectDir, File: src.File,
		Transport: TransportStdio, RestartOnCrash: true, MaxRestarts: DefaultMaxRestarts, Diagnostics: true,
	}
	vars := map[string]string{VarPluginRoot: src.Root, VarProjectDir: o.ProjectDir}
	if src.DataDir != "" {
		vars[VarPluginData] = src.DataDir
	}
	for k, v := range o.UserConfig {
		vars[userConfigPrefix+k] = v
	}
	expand := func(field, s string) (string, error) {
		v, err := expandVars(s, vars)
		if err != nil {
			return "", fieldErr{field, err}
		}
		return v, nil
	}
	str := func(field string) (string, bool, error) {
		v, ok := fields[field]
		if !ok || jsonrpc.Kind(v) == "null" {
			return "", false, nil
		}
		if jsonrpc.Kind(v) != "string" {
			return "", false, fieldErr{field, fmt.Errorf("%s, not a string", jsonrpc.WithArticle(jsonrpc.Kind(v)))}
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", false, fieldErr{field, err}
		}
		return s, true, nil
	}
	err := func() error {
		cmd, ok, err := str("command")
		if err != nil {
			return err
		}
		if !ok || cmd == "" {
			return fieldErr{"command", errors.New("required")}
		}
		if c.Command, err = expand("command", cmd); err != nil {
			return err
		}
		if v, ok := fields["args"]; ok && jsonrpc.Kind(v) != "null" {
			var items []json.RawMessage
			if jsonrpc.Kind(v) != "array" || json.Unmarshal(v, &items) != nil {
				return fieldErr{"args", fmt.Errorf("%s, not an array of strings", jsonrpc.WithArticle(jsonrpc.Kind(v)))}
			}
			c.Args = make([]string, 0, len(items))
			for i, it := range items {
				f := "args[" + strconv.Itoa(i) + "]"
				var s string
				if jsonrpc.Kind(bytes.TrimSpace(it)) != "string" || json.Unmarshal(it, &s) != nil {
					return fieldErr{f, fmt.Errorf("%s, not a string", jsonrpc.WithArticle(jsonrpc.Kind(bytes.TrimSpace(it))))}
				}
				if s, err = expand(f, s); err != nil {
					return err
				}
				c.Args = append(c.Args, s)
			}
			if len(c.Args) == 0 {
				c.Args = nil
			}
		}
		if t, ok, err := str("transport"); err != nil {
			return err
		} else if ok {
			if t != TransportStdio && t != TransportSocket {
				return fieldErr{"transport", fmt.Errorf("%q, not %q or %q", t, TransportStdio, TransportSocket)}
			}
			c.Transport = t
		}
		if c.Env, err = stringMap(fields, "env", func(k, v string) (string, error) {
			return expand("env."+k, v)
		}); err != nil {
			return err
		}
		if c.ExtensionToLanguage, err = stringMap(fields, "extensionToLanguage", func(k, v string) (string, error) {
			if len(k) < 2 || k[0] != '.' || strings.ContainsAny(k, `/\`) {
				return "", fieldErr{"extensionToLanguage", fmt.Errorf("%q is not an extension like \".go\"", k)}
			}
			if v == "" {
				return "", fieldErr{"extensionToLanguage." + k, errors.New("empty language id")}
			}
			return v, nil
		}); err != nil {
			return err
		}
		if len(c.ExtensionToLanguage) == 0 {
			return fieldErr{"extensionToLanguage", errors.New("required: at least one extension")}
		}
		for _, f := range []string{"initializationOptions", "settings"} {
			v, ok := fields[f]
			if !ok || jsonrpc.Kind(v) == "null" {
				continue
			}
			if jsonrpc.Kind(v) != "object" {
				return fieldErr{f, fmt.Errorf("%s, not an object", jsonrpc.WithArticle(jsonrpc.Kind(v)))}
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, v); err != nil {
				return fieldErr{f, err}
			}
			if f == "settings" {
				c.Settings = buf.Bytes()
			} else {
				c.InitializationOptions = buf.Bytes()
			}
		}
		if wf, ok, err := str("workspaceFolder"); err != nil {
			return err
		} else if ok && wf != "" {
			if wf, err = expand("workspaceFolder", wf); err != nil {
				return err
			}
			if !filepath.IsAbs(wf) && o.ProjectDir != "" {
				wf = filepath.Join(o.ProjectDir, wf)
			}
			c.WorkspaceFolder = wf
		}
		for _, f := range []struct {
			name string
			dst  *time.Duration
		}{{"startupTimeout", &c.StartupTimeout}, {"shutdownTimeout", &c.ShutdownTimeout}} {
			v, ok := fields[f.name]
			if !ok || jsonrpc.Kind(v) == "null" {
				continue
			}
			n, err := nonNegInt(v)
			if err != nil {
				return fieldErr{f.name, fmt.Errorf("%w (milliseconds)", err)}
			}
			if n > math.MaxInt64/int64(time.Millisecond) {
				return fieldErr{f.name, errors.New("too large")}
			}
			*f.dst = time.Duration(n) * time.Millisecond
		}
		for _, f := range []struct {
			name string
			dst  *bool
		}{{"restartOnCrash", &c.RestartOnCrash}, {"diagnostics", &c.Diagnostics}} {
			v, ok := fields[f.name]
			if !ok || jsonrpc.Kind(v) == "null" {
				continue
			}
			if jsonrpc.Kind(v) != "boolean" {
				return fieldErr{f.name, fmt.Errorf("%s, not a boolean", jsonrpc.WithArticle(jsonrpc.Kind(v)))}
			}
			*f.dst = v[0] == 't'
		}
		if v, ok := fields["maxRestarts"]; ok && jsonrpc.Kind(v) != "null" {
			n, err := nonNegInt(v)
			if err != nil {
				return fieldErr{"maxRestarts", err}
			}
			if n > math.MaxInt32 {
				return fieldErr{"maxRestarts", errors.New("too large")}
			}
			c.MaxRestarts = int(n)
		}
		return nil
	}()
	if err != nil {
		var fe fieldErr
		if errors.As(err, &fe) {
			return ServerConfig{}, fe.field, fe.err
		}
		return ServerConfig{}, "", err
	}
	return c, "", nil
}

type fieldErr struct {
	field string
	err   error
}

func (e fieldErr) Error() string { return e.field + ": " + e.err.Error() }

func nonNegInt(v json.RawMessage) (int64, error) {
	if jsonrpc.Kind(v) != "number" {
		return 0, fmt.Errorf("%s, not a number", jsonrpc.WithArticle(jsonrpc.Kind(v)))
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(string(v), 64)
		if ferr != nil || f != math.Trunc(f) || f < 0 || f > math.MaxInt64/2 {
			return 0, fmt.Errorf("%s is not a non-negative integer", clip(string(v)))
		}
		n = int64(f)
	}
	if n < 0 {
		return 0, fmt.Errorf("%d is negative", n)
	}
	return n, nil
}

// stringMap decodes fields[name] as an object of strings, passing each
// through check.
func stringMap(fields map[string]json.RawMessage, name string, check func(k, v string) (string, error)) (map[string]string, error) {
	v, ok := fields[name]
	if !ok || jsonrpc.Kind(v) == "null" {
		return nil, nil
	}
	var raw map[string]json.RawMessage
	if jsonrpc.Kind(v) != "object" || json.Unmarshal(v, &raw) != nil {
		return nil, fieldErr{name, fmt.Errorf("%s, not an object of strings", jsonrpc.WithArticle(jsonrpc.Kind(v)))}
	}
	if len(raw) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(raw))
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		item := bytes.TrimSpace(raw[k])
		var s string
		if jsonrpc.Kind(item) != "string" || json.Unmarshal(item, &s) != nil {
			return nil, fieldErr{name + "." + k, fmt.Errorf("%s, not a string", jsonrpc.WithArticle(jsonrpc.Kind(item)))}
		}
		s, err := check(k, s)
		if err != nil {
			return nil, err
		}
		out[k] = s
	}
	return out, nil
}

// expandVars replaces ${NAME} and ${NAME:-default} with values from vars.
// "$${" stands for a literal "${". Every referenced name without a value
// and without a default is reported in one *MissingVariableError.
func expandVars(s string, vars map[string]string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	var missing []string
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			b.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", fmt.Errorf("unterminated ${ in %q", clip(s))
			}
			ref := s[i+2 : i+2+end]
			name, def, hasDef := strings.Cut(ref, ":-")
			if name == "" {
				return "", fmt.Errorf("empty variable name in %q", clip(s))
			}
			if v, ok := vars[name]; ok && v != "" {
				b.WriteString(v)
			} else if hasDef {
				b.WriteString(def)
			} else {
				missing = append(missing, name)
			}
			i += 2 + end + 1
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	if len(missing) > 0 {
		return "", &MissingVariableError{Names: missing}
	}
	return b.String(), nil
}

// containedPath resolves rel against root and checks that the result, with
// symbolic links followed, stays inside root.
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
	return os.ReadFile(real)
}

// within reports whether p is root or lies beneath it (both clean).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}
