package lsp

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func configErrors(errs []error) []*ConfigError {
	var out []*ConfigError
	for _, err := range errs {
		var ce *ConfigError
		if errors.As(err, &ce) {
			out = append(out, ce)
		}
	}
	return out
}

func TestParseServersDefaultsAndFields(t *testing.T) {
	doc := `{
	  "minimal": {"command": "gopls", "extensionToLanguage": {".go": "go"}},
	  "full": {
	    "command": "${CLAUDE_PLUGIN_ROOT}/bin/ls",
	    "args": ["--stdio", "--data=${CLAUDE_PLUGIN_DATA}", "--mode=${user_config.mode}", "--opt=${UNSET:-fallback}", "--lit=$${CLAUDE_PLUGIN_ROOT}"],
	    "transport": "stdio",
	    "env": {"PYTHONPATH": "${CLAUDE_PLUGIN_ROOT}/lib", "PROJECT": "${CLAUDE_PROJECT_DIR}"},
	    "extensionToLanguage": {".py": "python", ".PYI": "python"},
	    "initializationOptions": {"a": [1, 2]},
	    "settings": {"python": {"analysis": {"mode": "strict"}}},
	    "workspaceFolder": "sub",
	    "startupTimeout": 1500,
	    "shutdownTimeout": 2000,
	    "restartOnCrash": false,
	    "maxRestarts": 7,
	    "diagnostics": false,
	    "someFutureField": true
	  }
	}`
	src := Source{Plugin: "py", Root: "/plugins/py", DataDir: "/data/py", File: "/plugins/py/.lsp.json"}
	cfgs, errs := ParseServers([]byte(doc), src, &LoadOptions{ProjectDir: "/proj", UserConfig: map[string]string{"mode": "fast"}})
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	want := []ServerConfig{
		{
			Name: "plugin:py:minimal", Plugin: "py", Server: "minimal", Root: "/plugins/py", DataDir: "/data/py",
			ProjectDir: "/proj", File: src.File, Command: "gopls",
			ExtensionToLanguage: map[string]string{".go": "go"},
		},
		{
			Name: "plugin:py:full", Plugin: "py", Server: "full", Root: "/plugins/py", DataDir: "/data/py",
			ProjectDir: "/proj", File: src.File,
			Command:               "/plugins/py/bin/ls",
			Args:                  []string{"--stdio", "--data=/data/py", "--mode=fast", "--opt=fallback", "--lit=${CLAUDE_PLUGIN_ROOT}"},
			Transport:             "stdio",
			Env:                   map[string]string{"PYTHONPATH": "/plugins/py/lib", "PROJECT": "/proj"},
			ExtensionToLanguage:   map[string]string{".py": "python", ".PYI": "python"},
			InitializationOptions: json.RawMessage(`{"a":[1,2]}`),
			Settings:              json.RawMessage(`{"python":{"analysis":{"mode":"strict"}}}`),
			WorkspaceFolder:       "/proj/sub",
			StartupTimeout:        1500 * time.Millisecond, ShutdownTimeout: 2 * time.Second,
			NoRestartOnCrash: true, MaxRestarts: 7, NoDiagnostics: true,
		},
	}
	if diff := cmp.Diff(want, cfgs); diff != "" {
		t.Errorf("configs (-want +got):\n%s", diff)
	}
}

// A ServerConfig literal means what the .lsp.json entry with the same
// fields means: the zero values are the documented defaults, and the one
// field whose JSON zero differs from Go's, maxRestarts, maps 0 to -1.
func TestServerConfigZeroValueIsTheDefault(t *testing.T) {
	doc := `{
	  "plain": {"command": "ls", "extensionToLanguage": {".x": "x"}},
	  "spelled": {"command": "ls", "extensionToLanguage": {".x": "x"}, "transport": "stdio",
	              "restartOnCrash": true, "maxRestarts": 3, "diagnostics": true},
	  "none": {"command": "ls", "extensionToLanguage": {".x": "x"}, "maxRestarts": 0},
	  "off": {"command": "ls", "extensionToLanguage": {".x": "x"}, "restartOnCrash": false, "diagnostics": false}
	}`
	cfgs, errs := ParseServers([]byte(doc), Source{Root: "/r"}, &LoadOptions{ProjectDir: "/p"})
	if len(errs) != 0 || len(cfgs) != 4 {
		t.Fatalf("cfgs %+v errs %v", cfgs, errs)
	}
	lit := func(name string) ServerConfig {
		return ServerConfig{Name: name, Server: name, Root: "/r", ProjectDir: "/p", Command: "ls", ExtensionToLanguage: map[string]string{".x": "x"}}
	}
	plain := lit("plain")
	if diff := cmp.Diff(plain, cfgs[0]); diff != "" {
		t.Errorf("plain entry vs literal (-literal +parsed):\n%s", diff)
	}
	spelled := lit("spelled")
	if !spelled.Equal(&cfgs[1]) {
		t.Errorf("defaults spelled out are not Equal to the literal: %+v", cfgs[1])
	}
	if cfgs[2].MaxRestarts != -1 || cfgs[2].restartLimit() != 0 {
		t.Errorf(`"maxRestarts": 0 loads as %d (limit %d), want -1 (none)`, cfgs[2].MaxRestarts, cfgs[2].restartLimit())
	}
	if !cfgs[3].NoRestartOnCrash || !cfgs[3].NoDiagnostics || cfgs[3].restartLimit() != 0 {
		t.Errorf("off: %+v", cfgs[3])
	}
	for _, tc := range []struct {
		c    ServerConfig
		want int
	}{{ServerConfig{}, 3}, {ServerConfig{MaxRestarts: 5}, 5}, {ServerConfig{MaxRestarts: -7}, 0}, {ServerConfig{MaxRestarts: 5, NoRestartOnCrash: true}, 0}} {
		if got := tc.c.restartLimit(); got != tc.want {
			t.Errorf("restartLimit(%+v) = %d, want %d", tc.c, got, tc.want)
		}
	}
}

func TestResolveConflictsValidatesLiterals(t *testing.T) {
	ok := NewServerConfig("ok", "ls", nil, map[string]string{".a": "a"})
	cfgs, errs := ResolveConflicts([]ServerConfig{
		ok,
		{Name: "nocmd", ExtensionToLanguage: map[string]string{".b": "b"}},
		{Name: "noext", Command: "x"},
		{Name: "badext", Command: "x", ExtensionToLanguage: map[string]string{"b": "b"}},
		{Name: "badtransport", Command: "x", Transport: "pigeon", ExtensionToLanguage: map[string]string{".c": "c"}},
		{Name: "negative", Command: "x", StartupTimeout: -1, ExtensionToLanguage: map[string]string{".d": "d"}},
		{Command: "x", ExtensionToLanguage: map[string]string{".e": "e"}},
		{Server: "byserver", Command: "x", ExtensionToLanguage: map[string]string{".f": "f"}},
		NewServerConfig("ok", "other", nil, map[string]string{".g": "g"}),
		NewServerConfig("cased", "x", nil, map[string]string{".h": "c", ".H": "cpp"}),
	})
	var names []string
	for _, c := range cfgs {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"ok", "byserver", "cased"}, names); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	var fields []string
	for _, ce := range configErrors(errs) {
		fields = append(fields, ce.Server+":"+ce.Field)
	}
	want := []string{"nocmd:command", "noext:extensionToLanguage", "badext:extensionToLanguage", "badtransport:transport",
		"negative:startupTimeout", ":", "ok:"}
	if diff := cmp.Diff(want, fields); diff != "" || len(errs) != len(want) {
		t.Errorf("errors (-want +got):\n%s\n%v", diff, errs)
	}
	if !strings.Contains(errs[len(errs)-1].Error(), "duplicate server name ok") {
		t.Errorf("last error %v", errs[len(errs)-1])
	}
}

func TestParseServersErrorsKeepValidEntries(t *testing.T) {
	doc := `{
	  "ok": {"command": "x", "extensionToLanguage": {".x": "x"}},
	  "nocmd": {"extensionToLanguage": {".a": "a"}},
	  "noext": {"command": "x"},
	  "badext": {"command": "x", "extensionToLanguage": {"go": "go"}},
	  "badarg": {"command": "x", "args": ["ok", 3], "extensionToLanguage": {".b": "b"}},
	  "badtransport": {"command": "x", "transport": "pigeon", "extensionToLanguage": {".c": "c"}},
	  "badtimeout": {"command": "x", "startupTimeout": -1, "extensionToLanguage": {".d": "d"}},
	  "badbool": {"command": "x", "diagnostics": "yes", "extensionToLanguage": {".e": "e"}},
	  "missingvar": {"command": "${CLAUDE_PLUGIN_DATA}/x", "args": ["${NOPE}", "${ALSO_NOPE}"], "extensionToLanguage": {".f": "f"}},
	  "notobject": 42,
	  "badsettings": {"command": "x", "settings": [1], "extensionToLanguage": {".g": "g"}}
	}`
	cfgs, errs := ParseServers([]byte(doc), Source{Root: "/r", File: "f.json"}, &LoadOptions{ProjectDir: "/p"})
	if len(cfgs) != 1 || cfgs[0].Name != "ok" {
		t.Fatalf("configs = %+v, want only ok", cfgs)
	}
	ces := configErrors(errs)
	got := map[string]string{}
	for _, ce := range ces {
		if !errors.Is(ce, ErrConfig) {
			t.Errorf("%v does not match ErrConfig", ce)
		}
		got[ce.Server] = ce.Field + ": " + ce.Err.Error()
	}
	wantFields := map[string]string{
		"nocmd": "command", "noext": "extensionToLanguage", "badext": "extensionToLanguage",
		"badarg": "args[1]", "badtransport": "transport", "badtimeout": "startupTimeout",
		"badbool": "diagnostics", "missingvar": "command", "notobject": "", "badsettings": "settings",
	}
	if len(got) != len(wantFields) {
		t.Errorf("got errors for %v, want %v", got, wantFields)
	}
	for server, field := range wantFields {
		if msg, ok := got[server]; !ok || !strings.HasPrefix(msg, field+": ") {
			t.Errorf("server %s: error %q, want field %q", server, msg, field)
		}
	}
	// A missing variable names it and matches ErrMissingVariable.
	for _, ce := range ces {
		if ce.Server == "missingvar" {
			var mv *MissingVariableError
			if !errors.As(ce, &mv) || !errors.Is(ce, ErrMissingVariable) || mv.Names[0] != VarPluginData {
				t.Errorf("missingvar: %v", ce)
			}
		}
	}
}

func TestParseServersFileErrors(t *testing.T) {
	for _, doc := range []string{`[]`, `{`, `{"a": {}} {}`, ``, `null`} {
		cfgs, errs := ParseServers([]byte(doc), Source{File: "x"}, nil)
		if len(cfgs) != 0 || len(errs) != 1 {
			t.Errorf("%q: %d configs, errors %v; want one file error", doc, len(cfgs), errs)
		}
	}
}

func TestExpandVars(t *testing.T) {
	vars := map[string]string{"A": "1", "B": "${A}", "E": ""}
	tests := []struct{ in, want, err string }{
		{"plain $ sign", "plain $ sign", ""},
		{"${A}/${A}", "1/1", ""},
		{"${B}", "${A}", ""}, // values are not expanded again
		{"$${A}", "${A}", ""},
		{"$$${A}", "$${A}", ""}, // "$" then the escape
		{"${E}", "", "missing variable ${E}"},
		{"${E:-d}", "d", ""},
		{"${X:-}", "", ""},
		{"${X} ${Y}", "", "missing variable ${X}, ${Y}"},
		{"${A", "", "unterminated"},
		{"${}", "", "empty variable name"},
	}
	for _, tt := range tests {
		got, err := expandVars(tt.in, vars)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("expandVars(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("expandVars(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestLoadPluginMergesFiles(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, ".lsp.json"), `{
	  "go": {"command": "gopls", "extensionToLanguage": {".go": "go"}},
	  "py": {"command": "pyright-old", "extensionToLanguage": {".py": "python"}}
	}`)
	writeFile(t, filepath.Join(root, "lsp", "more.json"), `{"ts": {"command": "tsls", "extensionToLanguage": {".ts": "typescript"}}}`)
	writeFile(t, filepath.Join(root, ".claude-plugin", "plugin.json"), `{
	  "name": "langs",
	  "lspServers": ["./lsp/more.json", {"py": {"command": "pyright", "extensionToLanguage": {".py": "python"}}}]
	}`)
	cfgs, errs := LoadPlugin(Plugin{Root: root, DataDir: "/data"}, &LoadOptions{ProjectDir: "/proj"})
	// py is defined twice, differently: the manifest's definition wins,
	// and the error says so.
	var re *RedefinedError
	if len(errs) != 1 || !errors.As(errs[0], &re) || !errors.Is(errs[0], ErrRedefined) {
		t.Fatalf("errors: %v, want one *RedefinedError", errs)
	}
	if re.Server != "py" || re.Kept != filepath.Join(root, ".claude-plugin", "plugin.json") || re.Dropped != filepath.Join(root, ".lsp.json") {
		t.Errorf("redefinition %+v", re)
	}
	var got []string
	for _, c := range cfgs {
		got = append(got, c.Name+"="+c.Command)
	}
	want := []string{"plugin:langs:go=gopls", "plugin:langs:py=pyright", "plugin:langs:ts=tsls"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}

func TestLoadPluginManifestForms(t *testing.T) {
	t.Run("path", func(t *testing.T) {
		root := t.TempDir()
		writeFile(t, filepath.Join(root, "servers.json"), `{"a": {"command": "a", "extensionToLanguage": {".a": "a"}}}`)
		writeFile(t, filepath.Join(root, ".claude-plugin", "plugin.json"), `{"lspServers": "servers.json"}`)
		cfgs, errs := LoadPlugin(Plugin{Name: "given", Root: root}, nil)
		if len(errs) != 0 || len(cfgs) != 1 || cfgs[0].Name != "plugin:given:a" {
			t.Errorf("cfgs %+v errs %v", cfgs, errs)
		}
	})
	t.Run("inline map, name from directory", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "dirname")
		writeFile(t, filepath.Join(root, ".claude-plugin", "plugin.json"), `{"lspServers": {"a": {"command": "a", "extensionToLanguage": {".a": "a"}}}}`)
		cfgs, errs := LoadPlugin(Plugin{Root: root}, nil)
		if len(errs) != 0 || len(cfgs) != 1 || cfgs[0].Name != "plugin:dirname:a" {
			t.Errorf("cfgs %+v errs %v", cfgs, errs)
		}
	})
	t.Run("manifest at the root, as community marketplaces write it", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "dirname")
		writeFile(t, filepath.Join(root, "plugin.json"), `{"name": "rooted", "lspServers": {"a": {"command": "a", "extensionToLanguage": {".a": "a"}}}}`)
		cfgs, errs := LoadPlugin(Plugin{Root: root}, nil)
		if len(errs) != 0 || len(cfgs) != 1 || cfgs[0].Name != "plugin:rooted:a" || cfgs[0].File != filepath.Join(root, "plugin.json") {
			t.Errorf("cfgs %+v errs %v", cfgs, errs)
		}
		// .claude-plugin/plugin.json is read first when both exist.
		writeFile(t, filepath.Join(root, ".claude-plugin", "plugin.json"), `{"name": "dotted"}`)
		cfgs, errs = LoadPlugin(Plugin{Root: root}, nil)
		if len(errs) != 0 || len(cfgs) != 0 {
			t.Errorf("both manifests: cfgs %+v errs %v", cfgs, errs)
		}
	})
	t.Run("wrong type", func(t *testing.T) {
		root := t.TempDir()
		writeFile(t, filepath.Join(root, ".claude-plugin", "plugin.json"), `{"name": "p", "lspServers": 5}`)
		_, errs := LoadPlugin(Plugin{Root: root}, nil)
		if ces := configErrors(errs); len(ces) != 1 || ces[0].Field != "lspServers" || ces[0].Plugin != "p" {
			t.Errorf("errs %v", errs)
		}
	})
	t.Run("no configuration at all", func(t *testing.T) {
		cfgs, errs := LoadPlugin(Plugin{Root: t.TempDir()}, nil)
		if len(cfgs) != 0 || len(errs) != 0 {
			t.Errorf("cfgs %+v errs %v", cfgs, errs)
		}
	})
}

func TestLoadPluginRejectsEscapes(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "plugin")
	outside := filepath.Join(base, "outside.json")
	writeFile(t, outside, `{"evil": {"command": "evil", "extensionToLanguage": {".e": "e"}}}`)
	writeFile(t, filepath.Join(root, "inside.json"), `{"good": {"command": "good", "extensionToLanguage": {".g": "g"}}}`)
	if err := os.Symlink(outside, filepath.Join(root, "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(base, filepath.Join(root, "up")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, ".claude-plugin", "plugin.json"),
		`{"name": "p", "lspServers": ["../outside.json", "link.json", "up/outside.json", "inside.json", "/etc/passwd"]}`)
	cfgs, errs := LoadPlugin(Plugin{Root: root}, nil)
	if len(cfgs) != 1 || cfgs[0].Name != "plugin:p:good" {
		t.Errorf("cfgs = %+v, want only good", cfgs)
	}
	if len(errs) != 4 {
		t.Fatalf("errs = %v, want 4", errs)
	}
	for _, err := range errs {
		if !errors.Is(err, ErrPathEscape) || !errors.Is(err, ErrConfig) {
			t.Errorf("%v does not match ErrPathEscape and ErrConfig", err)
		}
	}

	// A root .lsp.json that is a symlink out is rejected too.
	root2 := filepath.Join(base, "plugin2")
	if err := os.MkdirAll(root2, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root2, ".lsp.json")); err != nil {
		t.Fatal(err)
	}
	cfgs, errs = LoadPlugin(Plugin{Root: root2}, nil)
	if len(cfgs) != 0 || len(errs) != 1 || !errors.Is(errs[0], ErrPathEscape) {
		t.Errorf("symlinked .lsp.json: cfgs %+v errs %v", cfgs, errs)
	}
}

func TestLoadPluginsConflicts(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(a, ".lsp.json"), `{"gopls": {"command": "gopls", "extensionToLanguage": {".go": "go", ".mod": "go.mod"}}}`)
	writeFile(t, filepath.Join(b, ".lsp.json"), `{
	  "other": {"command": "other", "extensionToLanguage": {".GO": "go", ".x": "x"}},
	  "only": {"command": "only", "extensionToLanguage": {".mod": "go.mod"}}
	}`)
	cfgs, errs := LoadPlugins([]Plugin{{Name: "a", Root: a}, {Name: "b", Root: b}}, nil)
	var names []string
	for _, c := range cfgs {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"plugin:a:gopls", "plugin:b:other"}, names); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if got := cfgs[1].ExtensionToLanguage; len(got) != 1 || got[".x"] != "x" {
		t.Errorf("other keeps %v, want only .x", got)
	}
	if len(errs) != 2 {
		t.Fatalf("errs = %v, want 2 conflicts", errs)
	}
	var ce *ExtensionConflictError
	if !errors.As(errs[0], &ce) || ce.Extension != ".GO" || ce.Winner != "plugin:a:gopls" || !errors.Is(errs[0], ErrExtensionConflict) {
		t.Errorf("first conflict = %v", errs[0])
	}
}

func TestLoadFileStandalone(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lsp.json")
	writeFile(t, path, `{"gopls": {"command": "${CLAUDE_PLUGIN_ROOT}/gopls", "extensionToLanguage": {".go": "go"}}}`)
	cfgs, errs := LoadFile(path, &LoadOptions{ProjectDir: dir})
	if len(errs) != 0 || len(cfgs) != 1 {
		t.Fatalf("cfgs %+v errs %v", cfgs, errs)
	}
	if c := cfgs[0]; c.Name != "gopls" || c.Command != filepath.Join(dir, "gopls") || c.Plugin != "" {
		t.Errorf("config = %+v", c)
	}
	if _, errs := LoadFile(filepath.Join(dir, "missing.json"), nil); len(errs) != 1 || !errors.Is(errs[0], os.ErrNotExist) {
		t.Errorf("missing file: %v", errs)
	}
}

func TestMarshalServersRoundTrip(t *testing.T) {
	doc := `{
	  "b": {"command": "${CLAUDE_PLUGIN_ROOT}/b", "args": ["$${literal}", "x"], "env": {"K": "$${V}"},
	        "extensionToLanguage": {".b": "b"}, "settings": {"z": 1, "a": {"b": null}}, "workspaceFolder": "w",
	        "startupTimeout": 10, "restartOnCrash": false, "maxRestarts": 0, "diagnostics": false},
	  "a": {"command": "a", "extensionToLanguage": {".a": "a", ".aa": "a"}, "initializationOptions": {}}
	}`
	src := Source{Plugin: "p", Root: "/root", File: "f"}
	opts := &LoadOptions{ProjectDir: "/proj"}
	first, errs := ParseServers([]byte(doc), src, opts)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	data, err := MarshalServers(first)
	if err != nil {
		t.Fatal(err)
	}
	second, errs := ParseServers(data, src, opts)
	if len(errs) != 0 {
		t.Fatalf("reloading %s: %v", data, errs)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("round trip (-first +second):\n%s\n%s", diff, data)
	}
	if first[0].Args[0] != "${literal}" {
		t.Errorf("escaped literal = %q", first[0].Args[0])
	}
	for i := range first {
		if !first[i].Equal(&second[i]) {
			t.Errorf("Equal(%s) is false after a round trip", first[i].Name)
		}
	}
	changed := first[1]
	changed.Args = []string{"--new"}
	if changed.Equal(&first[1]) {
		t.Error("Equal ignores args")
	}
}
