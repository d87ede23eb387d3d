package lsp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// copyDir copies the tree at src to dst.
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(data))
}

// installation is a Claude Code configuration directory built by a test,
// with both marketplace fixtures known and plugins installed from them.
type installation struct {
	config, project, other string
}

// cachePath is where Claude Code copies an installed plugin.
func (in *installation) cachePath(marketplace, plugin, version string) string {
	return filepath.Join(in.config, "plugins", "cache", marketplace, plugin, version)
}

func newInstallation(t testing.TB) *installation {
	t.Helper()
	base := t.TempDir()
	in := &installation{config: filepath.Join(base, "config"), project: filepath.Join(base, "project"), other: filepath.Join(base, "other")}
	for _, d := range []string{in.project, in.other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	official := filepath.Join(in.config, "plugins", "marketplaces", "claude-plugins-official")
	copyDir(t, officialDir, official)
	// The community marketplace lives where known_marketplaces.json says,
	// not in the default place.
	community := filepath.Join(base, "elsewhere", "example-lsps")
	copyDir(t, communityDir, community)
	writeJSON(t, filepath.Join(in.config, "plugins", "known_marketplaces.json"), map[string]any{
		"claude-plugins-official": map[string]any{"source": map[string]string{"source": "github", "repo": "anthropics/claude-plugins-official"},
			"installLocation": official, "lastUpdated": "2026-08-21T00:00:00.000Z"},
		"example-lsps": map[string]any{"source": map[string]string{"source": "directory", "path": community}, "installLocation": community},
	})
	for _, p := range []string{"pyright-lsp", "gopls-lsp", "typescript-lsp", "clangd-lsp"} {
		copyDir(t, filepath.Join(officialDir, "plugins", p), in.cachePath("claude-plugins-official", p, "1.0.0"))
	}
	for _, p := range []string{"pyright", "gopls"} {
		copyDir(t, filepath.Join(communityDir, p), in.cachePath("example-lsps", p, "0.1.0"))
	}
	rec := func(scope, project, path, version string) map[string]any {
		r := map[string]any{"scope": scope, "installPath": path, "version": version,
			"installedAt": "2026-08-21T10:00:00.000Z", "lastUpdated": "2026-08-21T10:00:00.000Z", "gitCommitSha": "0123abcd"}
		if project != "" {
			r["projectPath"] = project
		}
		return r
	}
	off := func(p string) string { return in.cachePath("claude-plugins-official", p, "1.0.0") }
	writeFile(t, filepath.Join(in.config, "plugins", "installed_plugins.json"), `{"version": 2, "plugins": {
	  "pyright-lsp@claude-plugins-official": `+mustJSON(t, []any{rec("user", "", off("pyright-lsp"), "1.0.0")})+`,
	  "gopls-lsp@claude-plugins-official": `+mustJSON(t, []any{rec("project", in.other, off("gopls-lsp"), "0.9.0"), rec("project", in.project, off("gopls-lsp"), "1.0.0")})+`,
	  "typescript-lsp@claude-plugins-official": `+mustJSON(t, []any{rec("project", in.other, off("typescript-lsp"), "1.0.0")})+`,
	  "clangd-lsp@claude-plugins-official": `+mustJSON(t, []any{rec("user", "", off("clangd-lsp"), "0.9.0"), rec("local", in.project, off("clangd-lsp"), "1.0.0")})+`,
	  "pyright@example-lsps": `+mustJSON(t, []any{rec("user", "", in.cachePath("example-lsps", "pyright", "0.1.0"), "0.1.0")})+`,
	  "gopls@example-lsps": `+mustJSON(t, []any{rec("user", "", in.cachePath("example-lsps", "gopls", "0.1.0"), "0.1.0")})+`,
	  "rust-analyzer-lsp@claude-plugins-official": `+mustJSON(t, []any{rec("user", "", off("rust-analyzer-lsp"), "1.0.0")})+`,
	  "lonely@example-lsps": `+mustJSON(t, []any{rec("user", "", in.cachePath("example-lsps", "lonely", "1"), "1")})+`
	}}`)
	// The three scopes, each overriding the ones before.
	writeJSON(t, filepath.Join(in.config, "settings.json"), map[string]any{
		"model": "whatever", "enabledPlugins": map[string]any{
			"pyright-lsp@claude-plugins-official": true,
			"pyright@example-lsps":                true,
			"clangd-lsp@claude-plugins-official":  false,
			"ghost@claude-plugins-official":       true,
		}})
	writeJSON(t, filepath.Join(in.project, ".claude", "settings.json"), map[string]any{
		"enabledPlugins": map[string]any{
			"gopls-lsp@claude-plugins-official":         true,
			"pyright@example-lsps":                      false,
			"rust-analyzer-lsp@claude-plugins-official": true,
			"gopls@example-lsps":                        true,
		}})
	writeJSON(t, filepath.Join(in.project, ".claude", "settings.local.json"), map[string]any{
		"enabledPlugins": map[string]any{
			"clangd-lsp@claude-plugins-official":     true,
			"typescript-lsp@claude-plugins-official": true,
		}})
	trustProject(t, in.config, in.project, true)
	return in
}

// trustProject records in configDir/.claude.json, as Claude Code does when
// the user accepts its trust dialog, whether dir is trusted.
func trustProject(t testing.TB, configDir, dir string, accepted bool) {
	t.Helper()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	writeJSON(t, filepath.Join(configDir, ".claude.json"), map[string]any{"numStartups": 3,
		"projects": map[string]any{filepath.ToSlash(dir): map[string]any{"allowedTools": []string{}, "hasTrustDialogAccepted": accepted}}})
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestLoadClaudeCode(t *testing.T) {
	in := newInstallation(t)
	got := LoadClaudeCode(&ClaudeCodeOptions{ProjectDir: in.project, Env: []string{"HOME=/nowhere", "CLAUDE_CONFIG_DIR=" + in.config}})
	if got.ConfigDir != in.config || got.ProjectDir != in.project {
		t.Errorf("dirs %s %s", got.ConfigDir, got.ProjectDir)
	}

	off := func(p string) string { return in.cachePath("claude-plugins-official", p, "1.0.0") }
	offFile := filepath.Join(in.config, "plugins", "marketplaces", "claude-plugins-official", ".claude-plugin", "marketplace.json")
	wantServers := []serverSummary{
		{Name: "plugin:pyright-lsp:pyright", Plugin: "pyright-lsp", Marketplace: "claude-plugins-official", Root: off("pyright-lsp"), File: offFile,
			Command: "pyright-langserver", Args: []string{"--stdio"}, Exts: map[string]string{".py": "python", ".pyi": "python"}},
		{Name: "plugin:gopls-lsp:gopls", Plugin: "gopls-lsp", Marketplace: "claude-plugins-official", Root: off("gopls-lsp"), File: offFile,
			Command: "gopls", Exts: map[string]string{".go": "go"}},
		{Name: "plugin:clangd-lsp:clangd", Plugin: "clangd-lsp", Marketplace: "claude-plugins-official", Root: off("clangd-lsp"), File: offFile,
			Command: "clangd", Args: []string{"--background-index"},
			Exts: map[string]string{".c": "c", ".h": "c", ".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hxx": "cpp", ".C": "cpp", ".H": "cpp"}},
	}
	if diff := cmp.Diff(wantServers, summarize(got.Servers)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	for _, c := range got.Servers {
		if want := filepath.Join(in.config, "plugins", "data", c.Plugin+"-claude-plugins-official"); c.DataDir != want || c.ProjectDir != in.project {
			t.Errorf("%s: data dir %s project %s", c.Name, c.DataDir, c.ProjectDir)
		}
	}

	user := filepath.Join(in.config, "settings.json")
	project := filepath.Join(in.project, ".claude", "settings.json")
	local := filepath.Join(in.project, ".claude", "settings.local.json")
	type status struct {
		ID, Scope, File string
		Enabled         bool
		Installed       bool
		InstallScope    string
		Version         string
		Servers, Exts   []string
		Reason          string
	}
	var gotStatus []status
	for _, p := range got.Plugins {
		gotStatus = append(gotStatus, status{p.ID, p.EnabledScope, p.EnabledFile, p.Enabled, p.Installed, p.InstallScope, p.Version, p.Servers, p.Extensions, p.Reason})
	}
	wantStatus := []status{
		{"pyright-lsp@claude-plugins-official", "user", user, true, true, "user", "1.0.0", []string{"plugin:pyright-lsp:pyright"}, []string{".py", ".pyi"}, ""},
		{"gopls-lsp@claude-plugins-official", "project", project, true, true, "project", "1.0.0", []string{"plugin:gopls-lsp:gopls"}, []string{".go"}, ""},
		{"typescript-lsp@claude-plugins-official", "local", local, true, false, "project", "1.0.0", []string{},
			[]string{".cjs", ".cts", ".js", ".jsx", ".mjs", ".mts", ".ts", ".tsx"}, "installed with project scope for " + in.other + " only"},
		{"clangd-lsp@claude-plugins-official", "local", local, true, true, "local", "1.0.0", []string{"plugin:clangd-lsp:clangd"},
			[]string{".C", ".H", ".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".hxx"}, ""},
		{"pyright@example-lsps", "project", project, false, true, "user", "0.1.0", []string{}, []string{".py", ".pyi", ".pyw"},
			"disabled in project settings (" + project + ")"},
		{"gopls@example-lsps", "project", project, true, true, "user", "0.1.0", []string{}, []string{".go"},
			"enabled, but none of its servers loaded (see the errors)"},
		{"rust-analyzer-lsp@claude-plugins-official", "project", project, true, true, "user", "1.0.0", []string{}, []string{},
			"enabled, but none of its servers loaded (see the errors)"},
		{"lonely@example-lsps", "", "", false, true, "user", "1", []string{}, []string{}, "installed, but no settings file enables it (enabledPlugins)"},
		{"ghost@claude-plugins-official", "user", user, true, false, "", "", []string{}, []string{},
			"enabled in user settings (" + user + "), but not installed"},
	}
	if diff := cmp.Diff(wantStatus, gotStatus); diff != "" {
		t.Errorf("plugins (-want +got):\n%s", diff)
	}

	// Errors: the broken install, and gopls@example-lsps losing .go to
	// gopls-lsp, which is installed first. The disabled pyright@example-lsps
	// would redefine its server; as it is not loaded, that is not reported.
	if len(got.Errors) != 2 {
		t.Fatalf("errors %v, want 2", got.Errors)
	}
	if !errors.Is(got.Errors[0], os.ErrNotExist) || !strings.Contains(got.Errors[0].Error(), "plugin rust-analyzer-lsp: "+off("rust-analyzer-lsp")) {
		t.Errorf("first error %v", got.Errors[0])
	}
	var ce *ExtensionConflictError
	if !errors.As(got.Errors[1], &ce) || *ce != (ExtensionConflictError{Extension: ".go", Server: "plugin:gopls:go", Winner: "plugin:gopls-lsp:gopls"}) {
		t.Errorf("second error %v", got.Errors[1])
	}
}

// A project inside the project of a project-scoped install gets it; a
// sibling whose name extends the project's does not.
func TestLoadClaudeCodeProjectScope(t *testing.T) {
	in := newInstallation(t)
	sub := filepath.Join(in.project, "pkg", "sub")
	sibling := in.project + "-2"
	for _, d := range []string{sub, sibling} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for dir, want := range map[string]bool{sub: true, sibling: false} {
		// gopls-lsp is enabled only in the project's settings; enable it for
		// the user so that only the install decides.
		cfg := t.TempDir()
		copyDir(t, in.config, cfg)
		writeJSON(t, filepath.Join(cfg, "settings.json"), map[string]any{"enabledPlugins": map[string]bool{"gopls-lsp@claude-plugins-official": true}})
		got := LoadClaudeCode(&ClaudeCodeOptions{ProjectDir: dir, ConfigDir: cfg, TrustProject: true})
		var st *PluginStatus
		for i := range got.Plugins {
			if got.Plugins[i].ID == "gopls-lsp@claude-plugins-official" {
				st = &got.Plugins[i]
			}
		}
		if st == nil || st.Installed != want || (len(st.Servers) == 1) != want {
			t.Errorf("project %s: %+v", dir, st)
		}
	}
}

func TestLoadClaudeCodeNothingInstalled(t *testing.T) {
	dir := t.TempDir()
	got := LoadClaudeCode(&ClaudeCodeOptions{ProjectDir: dir, Env: []string{"HOME=" + dir}})
	if got.ConfigDir != filepath.Join(dir, ".claude") || len(got.Servers) != 0 || len(got.Plugins) != 0 || len(got.Errors) != 0 {
		t.Errorf("%+v", got)
	}
	got = LoadClaudeCode(&ClaudeCodeOptions{ProjectDir: dir, Env: []string{}})
	if got.ConfigDir != "" || len(got.Errors) != 1 || !strings.Contains(got.Errors[0].Error(), "neither CLAUDE_CONFIG_DIR nor HOME") {
		t.Errorf("no home: %+v", got)
	}
	if d := ClaudeConfigDir([]string{"HOME=/h", "CLAUDE_CONFIG_DIR="}); d != filepath.Join("/h", ".claude") {
		t.Errorf("empty CLAUDE_CONFIG_DIR: %s", d)
	}
}

func TestLoadClaudeCodeBrokenFiles(t *testing.T) {
	in := newInstallation(t)
	writeFile(t, filepath.Join(in.config, "settings.json"), `{"enabledPlugins": {"pyright-lsp@claude-plugins-official": "yes"}}`)
	writeFile(t, filepath.Join(in.project, ".claude", "settings.json"), `{not json`)
	writeFile(t, filepath.Join(in.config, "plugins", "known_marketplaces.json"), `[]`)
	got := LoadClaudeCode(&ClaudeCodeOptions{ProjectDir: in.project, ConfigDir: in.config})
	var files []string
	for _, ce := range configErrors(got.Errors) {
		files = append(files, filepath.Base(ce.File)+":"+ce.Field)
	}
	// The bad value and the unparsable project settings are reported, and
	// so is the unreadable known_marketplaces.json. What remains enabled is
	// the local settings' clangd-lsp (its marketplace is found in the
	// default place) and typescript-lsp, installed for another project.
	want := []string{"settings.json:enabledPlugins.pyright-lsp@claude-plugins-official", "settings.json:", "known_marketplaces.json:"}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("errors (-want +got):\n%s\n%v", diff, got.Errors)
	}
	if names := sortedNames(got.Servers); cmp.Diff([]string{"plugin:clangd-lsp:clangd"}, names) != "" {
		t.Errorf("servers %v", names)
	}
}

func TestParseInstalledPlugins(t *testing.T) {
	file, dir := "/c/plugins/installed_plugins.json", "/c/plugins"
	order, got, errs := parseInstalledPlugins([]byte(`{"version": 1, "plugins": {
	  "a@m": {"installPath": "/x/a", "version": "1"},
	  "b@m": {"installPath": "cache/m/b/2", "scope": "local"},
	  "c@m": [{"installPath": "/x/c"}]
	}}`), file, dir)
	if diff := cmp.Diff([]string{"a@m"}, order); diff != "" {
		t.Errorf("v1 order (-want +got):\n%s", diff)
	}
	if got["a@m"][0] != (install{scope: "user", path: "/x/a", version: "1"}) || len(errs) != 2 {
		t.Errorf("v1 %+v errs %v", got, errs)
	}

	order, got, errs = parseInstalledPlugins([]byte(`{"version": 2, "plugins": {
	  "z@m": [{"scope": "user", "installPath": "cache/m/z/1"}, {"scope": "project", "installPath": "/p"}, {"scope": "weird", "installPath": "/w"}],
	  "noat": [],
	  "y@m": {"scope": "user"},
	  "x@m": [{"scope": "local", "projectPath": "/proj", "installPath": "/x", "version": 3}]
	}}`), file, dir)
	if diff := cmp.Diff([]string{"z@m"}, order); diff != "" {
		t.Errorf("v2 order (-want +got):\n%s", diff)
	}
	if len(got["z@m"]) != 1 || got["z@m"][0].path != filepath.Join(dir, "cache", "m", "z", "1") {
		t.Errorf("v2 %+v", got)
	}
	var fields []string
	for _, ce := range configErrors(errs) {
		fields = append(fields, ce.Field)
	}
	if diff := cmp.Diff([]string{"plugins.z@m[1]", "plugins.z@m[2]", "plugins.noat", "plugins.y@m", "plugins.x@m[0]"}, fields); diff != "" {
		t.Errorf("v2 errors (-want +got):\n%s\n%v", diff, errs)
	}
	for _, bad := range []string{`{"version": 3, "plugins": {}}`, `{"plugins": {}}`, `[]`, `{"version": 2, "plugins": []}`, `{`} {
		if _, _, errs := parseInstalledPlugins([]byte(bad), file, dir); len(errs) != 1 {
			t.Errorf("%s: %v", bad, errs)
		}
	}
}

func TestPickInstall(t *testing.T) {
	recs := []install{
		{scope: "user", path: "/u"},
		{scope: "project", projectPath: "/w/a", path: "/pa"},
		{scope: "project", projectPath: "/w/a/b", path: "/pab"},
		{scope: "local", projectPath: "/w/c", path: "/lc"},
	}
	for project, want := range map[string]string{"/w/a": "/pa", "/w/a/b/c": "/pab", "/w/c": "/lc", "/w/cd": "/u", "/elsewhere": "/u"} {
		if got, ok := pickInstall(recs, project); !ok || got.path != want {
			t.Errorf("pickInstall(%s) = %+v, %v; want %s", project, got, ok, want)
		}
	}
	if _, ok := pickInstall(recs[1:2], "/elsewhere"); ok {
		t.Error("a project install applied to another project")
	}
}

func TestPluginIDs(t *testing.T) {
	for id, want := range map[string][2]string{
		"pyright-lsp@claude-plugins-official": {"pyright-lsp", "claude-plugins-official"},
		"@scope/pkg@m":                        {"@scope/pkg", "m"},
		"noat":                                {"noat", ""},
	} {
		if n, m := splitPluginID(id); n != want[0] || m != want[1] {
			t.Errorf("splitPluginID(%q) = %q, %q", id, n, m)
		}
	}
	if got := sanitizeID("formatter@my-marketplace"); got != "formatter-my-marketplace" {
		t.Errorf("sanitizeID = %q", got)
	}
	if got := sanitizeID("a.b@c_d/é"); got != "a-b-c_d---" {
		t.Errorf("sanitizeID = %q", got)
	}
}

// A plugin enabled but not installed still says what it would serve, from
// its marketplace's copy, so that `lsp list` can say why a file has no
// server.
func TestLoadClaudeCodeEnabledNotInstalled(t *testing.T) {
	cfg, project := t.TempDir(), t.TempDir()
	copyDir(t, officialDir, filepath.Join(cfg, "plugins", "marketplaces", "claude-plugins-official"))
	writeJSON(t, filepath.Join(cfg, "settings.json"), map[string]any{"enabledPlugins": map[string]bool{"pyright-lsp@claude-plugins-official": true}})
	got := LoadClaudeCode(&ClaudeCodeOptions{ProjectDir: project, ConfigDir: cfg})
	if len(got.Servers) != 0 || len(got.Errors) != 0 || len(got.Plugins) != 1 {
		t.Fatalf("%+v", got)
	}
	p := got.Plugins[0]
	if p.Installed || !p.Enabled || fmt.Sprint(p.Extensions) != "[.py .pyi]" || !strings.HasSuffix(p.Reason, "but not installed") {
		t.Errorf("%+v", p)
	}
}

// hugeSettings writes user settings that enable pyright-lsp and n plugins
// that are not installed.
func hugeSettings(t testing.TB, file string, n int) {
	var b strings.Builder
	b.WriteString(`{"enabledPlugins": {"pyright-lsp@claude-plugins-official": true`)
	for i := range n {
		fmt.Fprintf(&b, `, "g%d@m": true`, i)
	}
	b.WriteString("}}")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Settings that name a great many plugins that are not installed cost work
// bounded by what is installed: the first few get a status, the rest are
// counted.
func TestLoadClaudeCodeHugeSettings(t *testing.T) {
	in := newInstallation(t)
	const n = 200_000
	hugeSettings(t, filepath.Join(in.config, "settings.json"), n)
	got := LoadClaudeCode(&ClaudeCodeOptions{ProjectDir: in.project, ConfigDir: in.config})
	uninstalled := 0
	for _, p := range got.Plugins {
		if p.InstallScope == "" {
			uninstalled++
		}
	}
	if uninstalled != MaxUninstalledStatuses || got.Unlisted != n-MaxUninstalledStatuses {
		t.Errorf("%d plugins (%d not installed), %d unlisted", len(got.Plugins), uninstalled, got.Unlisted)
	}
	if p := pluginByID(t, got, "pyright-lsp@claude-plugins-official"); !p.Enabled || len(p.Servers) != 1 {
		t.Errorf("pyright-lsp %+v", p)
	}
	if p := pluginByID(t, got, "g0@m"); !p.Enabled || p.Installed {
		t.Errorf("g0@m %+v", p)
	}
}

// BenchmarkLoadClaudeCodeHugeSettings loads settings near the read cap: a
// million enabledPlugins entries naming plugins that are not installed.
func BenchmarkLoadClaudeCodeHugeSettings(b *testing.B) {
	in := newInstallation(b)
	hugeSettings(b, filepath.Join(in.config, "settings.json"), 800_000)
	b.ResetTimer()
	for b.Loop() {
		LoadClaudeCode(&ClaudeCodeOptions{ProjectDir: in.project, ConfigDir: in.config})
	}
}
