package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
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
	// DefaultMaxRestarts is how many times a crashed server is restarted
	// when its configuration says nothing (MaxRestarts 0).
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
// it, after variable expansion.
//
// The zero value of every field is the documented default, so a
// ServerConfig written as a Go literal behaves like the .lsp.json entry
// with the same fields: only Name (or Server), Command and
// ExtensionToLanguage are needed. The one mapping to know: the .lsp.json
// field "maxRestarts": 0 (no restarts) loads as MaxRestarts -1, because
// MaxRestarts 0 means the default.
type ServerConfig struct {
	// Name identifies the server: "plugin:<plugin>:<server>" for a plugin's
	// server, the bare server name for a standalone .lsp.json. Empty means
	// Server.
	Name string
	// Plugin is the plugin's name; empty for a standalone file.
	Plugin string
	// Marketplace is the marketplace the plugin was installed from or
	// listed in; empty when it came from neither.
	Marketplace string
	// Server is the server's key in its configuration.
	Server string
	// Root is the plugin directory (CLAUDE_PLUGIN_ROOT); for a standalone
	// file, the directory holding it.
	Root string
	// DataDir is the plugin's data directory (CLAUDE_PLUGIN_DATA), if any.
	DataDir string
	// ProjectDir is the project directory (CLAUDE_PROJECT_DIR); empty
	// means the manager's.
	ProjectDir string
	// File is the configuration file the entry came from: a .lsp.json, a
	// plugin manifest or a marketplace.json.
	File string

	// Command is the executable to run (required). A bare name ("gopls")
	// is looked up in the PATH of the server's environment, whose relative
	// entries ("." or an empty one) are never used; a relative path
	// ("bin/srv") is taken relative to Root, the plugin's own directory,
	// never the project or the current directory, and needs Root.
	Command string
	// Args are the command's arguments.
	Args []string
	// Transport is TransportStdio or TransportSocket; empty means stdio.
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
	// WorkspaceFolder is the folder the server works on (its rootUri,
	// rootPath and only workspace folder); empty means ProjectDir.
	// Relative paths are resolved against ProjectDir when loading.
	WorkspaceFolder string
	// StartupTimeout bounds starting and initializing the server; 0 means
	// the manager's default. Negative is invalid.
	StartupTimeout time.Duration
	// ShutdownTimeout bounds a graceful shutdown; 0 means the manager's
	// default. Negative is invalid.
	ShutdownTimeout time.Duration
	// NoRestartOnCrash leaves a crashed server stopped (the .lsp.json
	// field "restartOnCrash": false). By default the next use restarts it.
	NoRestartOnCrash bool
	// MaxRestarts bounds the restarts after crashes: 0 means
	// DefaultMaxRestarts, a negative value none at all.
	MaxRestarts int
	// NoDiagnostics keeps the server running for requests but injects none
	// of its diagnostics (the .lsp.json field "diagnostics": false).
	NoDiagnostics bool
}

// NewServerConfig returns a configuration for command serving the given
// extensions, named name, with every other field at its default. It is a
// shorthand for the literal with Name, Server, Command, Args and
// ExtensionToLanguage set.
func NewServerConfig(name, command string, args []string, extensionToLanguage map[string]string) ServerConfig {
	return ServerConfig{Name: name, Server: name, Command: command, Args: args, ExtensionToLanguage: extensionToLanguage}
}

// restartLimit is how many restarts after crashes the configuration
// allows.
func (c *ServerConfig) restartLimit() int {
	switch {
	case c.NoRestartOnCrash || c.MaxRestarts < 0:
		return 0
	case c.MaxRestarts == 0:
		return DefaultMaxRestarts
	}
	return c.MaxRestarts
}

// displayName is Name, or Server when Name is empty.
func (c *ServerConfig) displayName() string {
	if c.Name != "" {
		return c.Name
	}
	return c.Server
}

// Equal reports whether two configurations start the same server the same
// way; Reload keeps a running server whose configuration is Equal. Fields
// at their default compare equal to the default spelled out (Transport ""
// and "stdio", MaxRestarts 0 and 3).
func (c *ServerConfig) Equal(o *ServerConfig) bool {
	a, _ := json.Marshal(configKey(c))
	b, _ := json.Marshal(configKey(o))
	return bytes.Equal(a, b)
}

func configKey(c *ServerConfig) any {
	type key struct {
		Name, Root, DataDir, ProjectDir string
		Transport                       string
		Restarts                        int
		W                               wireConfig
	}
	w := toWire(c)
	w.Transport, w.MaxRestarts, w.RestartOnCrash = "", nil, nil
	transport := c.Transport
	if transport == "" {
		transport = TransportStdio
	}
	return key{c.displayName(), c.Root, c.DataDir, c.ProjectDir, transport, c.restartLimit(), w}
}

// Validate checks what loading a .lsp.json checks, for a configuration
// built in Go: a name, a command (a relative path only with a Root), at
// least one extension like ".go" with a language id, a known transport and
// no negative timeout. The error is a
// *ConfigError naming the field.
func (c *ServerConfig) Validate() error {
	bad := func(field string, err error) error {
		return &ConfigError{Plugin: c.Plugin, File: c.File, Server: c.displayName(), Field: field, Err: err}
	}
	switch {
	case c.displayName() == "":
		return bad("", errors.New("empty server name"))
	case c.Command == "":
		return bad("command", errors.New("required"))
	case c.Root == "" && !filepath.IsAbs(c.Command) && strings.ContainsAny(c.Command, `/\`):
		return bad("command", fmt.Errorf("%q is a relative path, and there is no Root (the plugin directory) to take it from", c.Command))
	case len(c.ExtensionToLanguage) == 0:
		return bad("extensionToLanguage", errors.New("required: at least one extension"))
	case c.Transport != "" && c.Transport != TransportStdio && c.Transport != TransportSocket:
		return bad("transport", fmt.Errorf("%q, not %q or %q", c.Transport, TransportStdio, TransportSocket))
	case c.StartupTimeout < 0:
		return bad("startupTimeout", fmt.Errorf("%v is negative", c.StartupTimeout))
	case c.ShutdownTimeout < 0:
		return bad("shutdownTimeout", fmt.Errorf("%v is negative", c.ShutdownTimeout))
	}
	exts := make([]string, 0, len(c.ExtensionToLanguage))
	for e := range c.ExtensionToLanguage {
		exts = append(exts, e)
	}
	sort.Strings(exts)
	for _, e := range exts {
		if err := checkExtension(e, c.ExtensionToLanguage[e]); err != nil {
			return bad("extensionToLanguage", err)
		}
	}
	return nil
}

// checkExtension checks one extensionToLanguage pair.
func checkExtension(ext, lang string) error {
	if len(ext) < 2 || ext[0] != '.' || strings.ContainsAny(ext, `/\`) {
		return fmt.Errorf("%q is not an extension like \".go\"", ext)
	}
	if lang == "" {
		return fmt.Errorf("%s: empty language id", ext)
	}
	return nil
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

// resolve returns a copy of o (nil: the defaults) with ProjectDir filled
// in.
func (o *LoadOptions) resolve() LoadOptions {
	var r LoadOptions
	if o != nil {
		r = *o
	}
	if r.ProjectDir == "" {
		if wd, err := os.Getwd(); err == nil {
			r.ProjectDir = wd
		}
	}
	return r
}

// Source says where a configuration document came from.
type Source struct {
	// Plugin is the plugin's name; empty for a standalone file.
	Plugin string
	// Marketplace is the plugin's marketplace, if known.
	Marketplace string
	// Root is the plugin directory, or the standalone file's directory.
	Root string
	// DataDir is the plugin's data directory; empty when it has none.
	DataDir string
	// File is the path of the document, for error messages.
	File string
}

// Configuration errors. Every *ConfigError matches ErrConfig; its Err
// says more and may match one of the others. The other error types match
// their own sentinel: they report a choice made, not an entry lost.
var (
	ErrConfig            = errors.New("invalid LSP server configuration")
	ErrMissingVariable   = errors.New("missing variable")
	ErrPathEscape        = errors.New("path leads outside the plugin directory")
	ErrExtensionConflict = errors.New("extension already served")
	ErrRedefined         = errors.New("server defined twice, differently")
	ErrRemoteSource      = errors.New("plugin source is not on disk")
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

// ExtensionConflictError reports an extension claimed by a server after
// another server claimed it; the first server keeps it. It matches
// ErrExtensionConflict.
type ExtensionConflictError struct {
	Extension string
	Server    string // the server that lost the extension
	Winner    string // the server that keeps it
}

func (e *ExtensionConflictError) Error() string {
	return fmt.Sprintf("extension %s of %s is already served by %s", e.Extension, e.Server, e.Winner)
}

// Is makes every ExtensionConflictError match ErrExtensionConflict.
func (e *ExtensionConflictError) Is(target error) bool { return target == ErrExtensionConflict }

// MissingVariableError lists the variables a value referenced that have no
// value. It matches ErrMissingVariable.
type MissingVariableError struct{ Names []string }

func (e *MissingVariableError) Error() string {
	return "missing variable ${" + strings.Join(e.Names, "}, ${") + "}"
}

// Is makes every MissingVariableError match ErrMissingVariable.
func (e *MissingVariableError) Is(target error) bool { return target == ErrMissingVariable }

// ResolveConflicts checks a set of configurations as a manager needs them:
// each invalid one (see Validate) is reported and left out; of several
// with one name, the first is kept and the others reported; and each
// extension (compared without regard to case) goes to the first server
// that claims it, every later claim being removed from its server and
// reported as an *ExtensionConflictError. A server left without
// extensions is dropped. A relative command path is made absolute against
// Root. The input is not modified.
func ResolveConflicts(cfgs []ServerConfig) ([]ServerConfig, []error) {
	owner := map[string]string{}
	names := map[string]bool{}
	var errs []error
	out := make([]ServerConfig, 0, len(cfgs))
	for _, c := range cfgs {
		if err := c.Validate(); err != nil {
			errs = append(errs, err)
			continue
		}
		if c.Name == "" {
			c.Name = c.Server
		}
		c.Command = commandIn(c.Root, c.Command)
		if names[c.Name] {
			errs = append(errs, &ConfigError{Plugin: c.Plugin, File: c.File, Server: c.Server,
				Err: fmt.Errorf("duplicate server name %s; the first one is kept", c.Name)})
			continue
		}
		exts := make([]string, 0, len(c.ExtensionToLanguage))
		for e := range c.ExtensionToLanguage {
			exts = append(exts, e)
		}
		sort.Strings(exts)
		kept := make(map[string]string, len(exts))
		for _, e := range exts {
			k := strings.ToLower(e)
			if w, ok := owner[k]; ok && w != c.Name { // ".c" and ".C" of one server are no conflict
				errs = append(errs, &ExtensionConflictError{Extension: e, Server: c.Name, Winner: w})
				continue
			}
			owner[k] = c.Name
			kept[e] = c.ExtensionToLanguage[e]
		}
		if len(kept) == 0 {
			continue
		}
		names[c.Name] = true
		c.ExtensionToLanguage = kept
		out = append(out, c)
	}
	return out, errs
}

// LoadFile loads a standalone .lsp.json that belongs to no plugin, as the
// command line uses it. Servers are named by their keys; ${CLAUDE_PLUGIN_ROOT}
// is the file's directory. Conflicts are resolved as by ResolveConflicts.
//
// The errors are a list, not one error, because loading is partial: an
// invalid entry (a *ConfigError) or an extension lost to another server (an
// *ExtensionConflictError) is left out while the other servers load, so a
// caller can start what loaded and show each problem on its own line (as
// `idebridge lsp list` does). A file that cannot be read or parsed gives no
// servers and one *ConfigError. errors.Join(errs...) makes one error of them.
func LoadFile(path string, opts *LoadOptions) ([]ServerConfig, []error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, []error{&ConfigError{File: path, Err: err}}
	}
	data, err := readConfigFile(abs)
	if err != nil {
		return nil, []error{&ConfigError{File: path, Err: err}}
	}
	cfgs, errs := ParseServers(data, Source{Root: filepath.Dir(abs), File: path}, opts)
	cfgs, es := ResolveConflicts(cfgs)
	return cfgs, append(errs, es...)
}

// ParseServers parses one LSP configuration document: a JSON object whose
// keys are server names and whose values are server configurations.
// Entries are returned in document order (a repeated key keeps its first
// position and its last value); invalid entries are reported as
// *ConfigError values and left out. It never panics.
func ParseServers(data []byte, src Source, opts *LoadOptions) ([]ServerConfig, []error) {
	keys, vals, err := orderedObject(data)
	if err != nil {
		return nil, []error{&ConfigError{Plugin: src.Plugin, File: src.File, Err: err}}
	}
	o := opts.resolve()
	var out []ServerConfig
	var errs []error
	for i, k := range keys {
		c, err := parseEntry(k, vals[i], src, &o)
		if err != nil {
			errs = append(errs, err)
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
		return nil, nil, fmt.Errorf("%s, not an object", jsonrpc.WithArticle(jsonrpc.Kind(bytes.TrimSpace(data))))
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
// it: the fields at their default are left out.
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
	RestartOnCrash        *bool             `json:"restartOnCrash,omitempty"`
	MaxRestarts           *int              `json:"maxRestarts,omitempty"`
	Diagnostics           *bool             `json:"diagnostics,omitempty"`
}

func toWire(c *ServerConfig) wireConfig {
	esc := func(s string) string { return strings.ReplaceAll(s, "${", "$${") }
	no := false
	w := wireConfig{
		Command:               esc(c.Command),
		Transport:             c.Transport,
		ExtensionToLanguage:   c.ExtensionToLanguage,
		InitializationOptions: c.InitializationOptions,
		Settings:              c.Settings,
		WorkspaceFolder:       esc(c.WorkspaceFolder),
		StartupTimeout:        c.StartupTimeout.Milliseconds(),
		ShutdownTimeout:       c.ShutdownTimeout.Milliseconds(),
	}
	if c.NoRestartOnCrash {
		w.RestartOnCrash = &no
	}
	if c.NoDiagnostics {
		w.Diagnostics = &no
	}
	if c.MaxRestarts != 0 {
		n := max(c.MaxRestarts, 0)
		w.MaxRestarts = &n
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
// by each ServerConfig's Server name, in order, leaving out the fields at
// their default. Expanded values are written with "${" escaped as "$${",
// so loading the result with the same options gives the same
// configurations.
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
