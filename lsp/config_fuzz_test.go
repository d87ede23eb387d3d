package lsp

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// The parsers of a Claude Code installation's files, fuzzed against the
// properties their callers rely on. Seeds are in testdata/fuzz/FuzzX/.

func allConfigErrors(t *testing.T, errs []error) {
	t.Helper()
	for _, err := range errs {
		var ce *ConfigError
		if !errors.As(err, &ce) || !errors.Is(err, ErrConfig) {
			t.Fatalf("error %v is not a *ConfigError", err)
		}
	}
}

// FuzzMarketplace: every entry returned has a name, no name twice, a
// directory inside the marketplace or none (remote); and when the
// document decodes, each of its plugins is either an entry or one error.
func FuzzMarketplace(f *testing.F) {
	dir := filepath.FromSlash("/m/market")
	file := filepath.Join(dir, ".claude-plugin", "marketplace.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		m, errs := parseMarketplace(data, dir, file)
		allConfigErrors(t, errs)
		if m == nil {
			if len(errs) != 1 {
				t.Fatalf("no marketplace and %d errors", len(errs))
			}
			return
		}
		names := map[string]bool{}
		for _, e := range m.Entries {
			if e.Name == "" || names[e.Name] {
				t.Fatalf("entry name %q empty or repeated", e.Name)
			}
			names[e.Name] = true
			if e.Dir != "" && !within(dir, e.Dir) {
				t.Fatalf("entry %s: directory %s outside %s", e.Name, e.Dir, dir)
			}
			if e.Marketplace != m.Name || e.File != file {
				t.Fatalf("entry %+v of %s", e, m.Name)
			}
		}
		// The model: a plain decode with exact keys, as JSON.parse reads
		// the file. (A struct decode would also take "Plugins".)
		var top map[string]json.RawMessage
		var plugins []json.RawMessage
		if json.Unmarshal(data, &top) == nil && json.Unmarshal(top["plugins"], &plugins) == nil &&
			len(m.Entries)+len(errs) != len(plugins) {
			t.Fatalf("%d plugins in the document, %d entries and %d errors", len(plugins), len(m.Entries), len(errs))
		}
	})
}

// FuzzInstalledPlugins: every install returned has a known scope, an
// absolute install path, and a project path when its scope needs one;
// the order lists each returned id once.
func FuzzInstalledPlugins(f *testing.F) {
	pluginsDir := filepath.FromSlash("/c/plugins")
	f.Fuzz(func(t *testing.T, data []byte) {
		order, installs, errs := parseInstalledPlugins(data, "installed_plugins.json", pluginsDir)
		allConfigErrors(t, errs)
		if len(order) != len(installs) {
			t.Fatalf("order %v for %d plugins", order, len(installs))
		}
		for _, id := range order {
			recs, ok := installs[id]
			if !ok || len(recs) == 0 || !strings.Contains(id, "@") {
				t.Fatalf("id %q: %v", id, recs)
			}
			for _, r := range recs {
				switch {
				case !filepath.IsAbs(r.path):
					t.Fatalf("%s: relative install path %q", id, r.path)
				case r.scope == ScopeProject || r.scope == ScopeLocal:
					if r.projectPath == "" {
						t.Fatalf("%s: %s scope without project", id, r.scope)
					}
				case r.scope != ScopeUser && r.scope != "managed":
					t.Fatalf("%s: scope %q", id, r.scope)
				}
			}
		}
	})
}

// FuzzEnabledPlugins agrees with a plain decode: every id returned maps to
// the boolean a plain decode of the document gives it, and every boolean
// of the plain decode is returned.
func FuzzEnabledPlugins(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		ids, on, errs := parseEnabledPlugins(data, "settings.json")
		allConfigErrors(t, errs)
		if len(ids) != len(on) {
			t.Fatalf("%d ids, %d values", len(ids), len(on))
		}
		// The model: a plain decode with exact keys, as JSON.parse reads
		// settings.
		var top map[string]json.RawMessage
		var model struct{ EnabledPlugins map[string]any }
		if json.Unmarshal(data, &top) != nil || json.Unmarshal(top["enabledPlugins"], &model.EnabledPlugins) != nil {
			return
		}
		got := map[string]bool{}
		for i, id := range ids {
			if _, dup := got[id]; dup {
				t.Fatalf("id %q returned twice", id)
			}
			got[id] = on[i]
			if b, ok := model.EnabledPlugins[id].(bool); !ok || b != on[i] {
				t.Fatalf("%q: got %v, a plain decode says %v", id, on[i], model.EnabledPlugins[id])
			}
		}
		for id, v := range model.EnabledPlugins {
			if _, isBool := v.(bool); isBool {
				if _, ok := got[id]; !ok {
					t.Fatalf("%q: %v left out", id, v)
				}
			}
		}
	})
}
