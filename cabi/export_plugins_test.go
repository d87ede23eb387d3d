package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// claudeInstall builds a Claude Code configuration directory with one
// plugin, go-tools@local, whose .lsp.json runs gopls, installed for the
// user and enabled in the user settings; a second plugin is installed but
// disabled.
func claudeInstall(t *testing.T, gopls string) string {
	t.Helper()
	cfg := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(cfg, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cache := filepath.Join(cfg, "plugins", "cache", "local")
	write("plugins/marketplaces/local/.claude-plugin/marketplace.json",
		`{"name": "local", "plugins": [{"name": "go-tools", "source": "./go-tools"}, {"name": "off", "source": "./off"}]}`)
	write("plugins/cache/local/go-tools/1/.lsp.json", fmt.Sprintf(`{"gopls": {"command": %q, "extensionToLanguage": {".go": "go"}}}`, gopls))
	write("plugins/cache/local/off/1/.lsp.json", `{"x": {"command": "x", "extensionToLanguage": {".x": "x"}}}`)
	write("plugins/installed_plugins.json", fmt.Sprintf(`{"version": 2, "plugins": {
	  "go-tools@local": [{"scope": "user", "installPath": %q, "version": "1"}],
	  "off@local": [{"scope": "user", "installPath": %q, "version": "1"}]}}`,
		filepath.Join(cache, "go-tools", "1"), filepath.Join(cache, "off", "1")))
	write("settings.json", `{"enabledPlugins": {"go-tools@local": true, "off@local": false}}`)
	return cfg
}

// The zero-configuration export: a manager created empty gets the servers
// of the enabled plugins, and they work.
func TestLSPLoadClaudeCode(t *testing.T) {
	lockThread(t)
	noLeak(t)
	dir, mainGo := goModule(t, brokenMain)
	cfg := claudeInstall(t, goplsPath(t))
	var h C_uint64
	wantStatus(t, idb_lsp_new(cstr(t, "{}"), cstr(t, dir), nil, &h), 0, "idb_lsp_new")
	defer idb_lsp_shutdown(h, 10000)

	var out *C_char
	wantStatus(t, idb_lsp_load_claude_code(h, cstr(t, fmt.Sprintf(`{"env": {"CLAUDE_CONFIG_DIR": %q}}`, cfg)), 0, &out), 0, "idb_lsp_load_claude_code")
	var rep struct {
		ConfigDir, ProjectDir string
		Servers               []struct{ Name, Plugin, Marketplace, Resolved string }
		Plugins               []struct {
			ID      string
			Enabled bool
			Servers []string
			Reason  string
		}
		Errors []string
	}
	report := take(out)
	if err := json.Unmarshal([]byte(report), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.ConfigDir != cfg || rep.ProjectDir != dir || len(rep.Servers) != 1 || rep.Servers[0].Name != "plugin:go-tools:gopls" ||
		rep.Servers[0].Marketplace != "local" || rep.Servers[0].Resolved != goplsPath(t) || len(rep.Errors) != 0 {
		t.Fatalf("report %s", report)
	}
	if len(rep.Plugins) != 2 || rep.Plugins[1].ID != "off@local" || rep.Plugins[1].Enabled || !strings.HasPrefix(rep.Plugins[1].Reason, "disabled in user settings") {
		t.Errorf("plugins %+v", rep.Plugins)
	}
	wantStatus(t, idb_lsp_open(h, cstr(t, mainGo), 0), 0, "idb_lsp_open")
	if att := settleAndDrain(t, h, mainGo, "undefined: undefinedThing"); !strings.Contains(att, `"servers":["plugin:go-tools:gopls"]`) {
		t.Errorf("drain %s", att)
	}

	wantStatus(t, idb_lsp_load_claude_code(h, cstr(t, `{"bogus": 1}`), 0, &out), 5, "idb_lsp_load_claude_code")

	// The project's own settings count only with trustProject (there is no
	// record of the user trusting it).
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte(`{"enabledPlugins": {"off@local": true}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, trust := range []bool{false, true} {
		opts := fmt.Sprintf(`{"env": {"CLAUDE_CONFIG_DIR": %q}, "trustProject": %v}`, cfg, trust)
		wantStatus(t, idb_lsp_load_claude_code(h, cstr(t, opts), 10000, &out), 0, "idb_lsp_load_claude_code")
		var rep struct {
			Plugins []struct {
				ID      string
				Enabled bool
			}
			Trust struct {
				Trusted bool
				Source  string
				Ignored []struct{ Entries int }
			}
		}
		report := take(out)
		if err := json.Unmarshal([]byte(report), &rep); err != nil {
			t.Fatal(err)
		}
		ignored := 0
		if len(rep.Trust.Ignored) == 1 {
			ignored = rep.Trust.Ignored[0].Entries
		}
		if rep.Trust.Trusted != trust || (ignored == 1) == trust || len(rep.Plugins) != 2 || rep.Plugins[1].Enabled != trust {
			t.Errorf("trustProject %v: %s", trust, report)
		}
	}
}
