package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The marketplace fixtures of package lsp (see lsp/testdata/plugins).
var (
	officialMarketplace  = filepath.Join("..", "..", "lsp", "testdata", "plugins", "claude-plugins-official")
	communityMarketplace = filepath.Join("..", "..", "lsp", "testdata", "plugins", "root-manifest-style")
)

func copyTree(t *testing.T, src, dst string) {
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

func writeText(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// lspBin is the directory of the servers `make lsp-servers` installs.
func lspBin(t *testing.T, server string) string {
	t.Helper()
	for _, d := range []string{os.Getenv("LSP_BIN"), filepath.Join("..", "..", "tools", "lsp", "node_modules", ".bin")} {
		if d == "" {
			continue
		}
		if abs, err := filepath.Abs(d); err == nil {
			if _, err := os.Stat(filepath.Join(abs, server)); err == nil {
				return abs
			}
		}
	}
	t.Fatalf("%s not found in $LSP_BIN or tools/lsp/node_modules/.bin: run `make lsp-servers`", server)
	return ""
}

// installOfficialPyright builds a Claude Code configuration directory in
// which the official marketplace is known and its pyright-lsp plugin is
// installed for the user and enabled in the user settings, as `claude
// plugin install pyright-lsp@claude-plugins-official` leaves it.
func installOfficialPyright(t *testing.T) string {
	t.Helper()
	cfg := t.TempDir()
	market := filepath.Join(cfg, "plugins", "marketplaces", "claude-plugins-official")
	copyTree(t, officialMarketplace, market)
	install := filepath.Join(cfg, "plugins", "cache", "claude-plugins-official", "pyright-lsp", "1.0.0")
	copyTree(t, filepath.Join(officialMarketplace, "plugins", "pyright-lsp"), install)
	known, _ := json.Marshal(map[string]any{"claude-plugins-official": map[string]any{
		"source": map[string]string{"source": "github", "repo": "anthropics/claude-plugins-official"}, "installLocation": market}})
	writeText(t, filepath.Join(cfg, "plugins", "known_marketplaces.json"), string(known))
	installed, _ := json.Marshal(map[string]any{"version": 2, "plugins": map[string]any{
		"pyright-lsp@claude-plugins-official": []map[string]string{{"scope": "user", "installPath": install, "version": "1.0.0",
			"installedAt": "2026-08-21T10:00:00.000Z", "lastUpdated": "2026-08-21T10:00:00.000Z"}}}})
	writeText(t, filepath.Join(cfg, "plugins", "installed_plugins.json"), string(installed))
	writeText(t, filepath.Join(cfg, "settings.json"), `{"enabledPlugins": {"pyright-lsp@claude-plugins-official": true}}`)
	return cfg
}

// The zero-configuration promise: in a project whose Claude Code has the
// official pyright plugin installed and enabled, with pyright-langserver
// on PATH, `idebridge diag broken.py` prints pyright's diagnostics with no
// flags, and `idebridge lsp list` shows the plugin, where its server is
// defined and the command it found. Disabled in the project's local
// settings, neither uses it, and both say why.
func TestZeroConfigurationPyright(t *testing.T) {
	bin := lspBin(t, "pyright-langserver")
	cfg := installOfficialPyright(t)
	project := t.TempDir()
	writeText(t, filepath.Join(project, "broken.py"), "def f(name: str) -> int:\n    print(undefined_name)\n    return name\n")
	env := diagEnv(t, "CLAUDE_CONFIG_DIR="+cfg, "HOME="+t.TempDir(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	code, out, errOut := runIn(t, project, env, "diag", "broken.py")
	if code != exitOK {
		t.Fatalf("diag: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"<new-diagnostics>", "broken.py:", `"undefined_name" is not defined`, "(Pyright)", "plugin:pyright-lsp:pyright"} {
		if !strings.Contains(out, want) {
			t.Errorf("diag output does not contain %q:\n%s", want, out)
		}
	}
	if errOut != "" {
		t.Errorf("diag stderr: %s", errOut)
	}

	code, out, _ = runIn(t, project, env, "lsp", "list", "broken.py")
	market := filepath.Join(cfg, "plugins", "marketplaces", "claude-plugins-official", ".claude-plugin", "marketplace.json")
	for _, want := range []string{
		"  plugin:pyright-lsp:pyright\n",
		"from:       plugin pyright-lsp@claude-plugins-official (installed with user scope, enabled in user settings)",
		"defined in: " + market,
		"extensions: .py .pyi",
		"command:    pyright-langserver --stdio",
		"found:      " + filepath.Join(bin, "pyright-langserver"),
		filepath.Join(project, "broken.py") + ": plugin:pyright-lsp:pyright (python)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lsp list output does not contain %q:\n%s", want, out)
		}
	}
	if code != exitOK {
		t.Errorf("lsp list: exit %d", code)
	}

	// The project's own settings count once it is trusted in Claude Code.
	local := filepath.Join(project, ".claude", "settings.local.json")
	writeText(t, local, `{"enabledPlugins": {"pyright-lsp@claude-plugins-official": false}}`)
	key, _ := filepath.EvalSymlinks(project)
	writeText(t, filepath.Join(cfg, ".claude.json"), `{"projects": {"`+filepath.ToSlash(key)+`": {"hasTrustDialogAccepted": true}}}`)
	code, out, errOut = runIn(t, project, env, "diag", "broken.py")
	why := "plugin pyright-lsp@claude-plugins-official would serve .py but is not loaded: disabled in local settings (" + local + ")"
	if code != exitUnavailable || out != "" || !strings.Contains(errOut, why) {
		t.Errorf("diag with the plugin disabled: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	code, out, _ = runIn(t, project, env, "lsp", "list", "broken.py")
	if code != exitUnavailable || strings.Contains(out, "plugin:pyright-lsp:pyright\n") ||
		!strings.Contains(out, "Plugins not loaded:\n  pyright-lsp@claude-plugins-official (.py .pyi): disabled in local settings ("+local+")") ||
		!strings.Contains(out, why) {
		t.Errorf("lsp list with the plugin disabled: exit %d\n%s", code, out)
	}
}

// lsp list --json with servers from every source: a plugin directory, a
// marketplace, the installation, the built-in gopls; conflicts, missing
// commands with install hints, problems, and files.
func TestLSPListJSON(t *testing.T) {
	scriptls := buildScriptls(t)
	dir := t.TempDir()
	plugin := filepath.Join(dir, "myplugin")
	writeText(t, filepath.Join(plugin, ".claude-plugin", "plugin.json"), `{"name": "mine"}`)
	writeText(t, filepath.Join(plugin, ".lsp.json"), `{
	  "script": {"command": "`+scriptls+`", "extensionToLanguage": {".s": "script", ".go": "go"}},
	  "ghost": {"command": "no-such-server", "extensionToLanguage": {".g": "g"}},
	  "broken": {"command": 5, "extensionToLanguage": {".b": "b"}}
	}`)
	writeText(t, filepath.Join(plugin, "README.md"), "how to install\n")
	project := filepath.Join(dir, "project")
	writeText(t, filepath.Join(project, "a.s"), "")
	// PATH without gopls and pyright: their commands are not found.
	env := map[string]string{"CLAUDE_CONFIG_DIR": installOfficialPyright(t), "HOME": dir, "PATH": "/usr/bin:/bin",
		"GOPLS": filepath.Join(dir, "no-gopls")}
	absMarket, _ := filepath.Abs(communityMarketplace)
	code, out, errOut := runIn(t, project, env, "lsp", "list", "--json", "--plugin-dir", plugin,
		"--marketplace", absMarket, "a.s", "x.py", "notes.txt")
	if code != exitUnavailable {
		t.Errorf("exit %d, want 2 (x.py's command is missing, notes.txt has no server); stderr %s", code, errOut)
	}
	var l listing
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	type row struct{ Name, Origin, Resolved, Hint string }
	var got []row
	for _, s := range l.Servers {
		got = append(got, row{s.Name, s.Origin, s.Resolved, s.InstallHint})
	}
	// The flags' servers come first and win: the marketplace's pyright
	// takes .py and .pyi from the installed pyright-lsp, which is left
	// with nothing, and mine takes .go from the marketplace's gopls.
	want := []row{
		{"plugin:mine:script", "plugin directory " + plugin, scriptls, ""},
		{"plugin:mine:ghost", "plugin directory " + plugin, "", "see " + filepath.Join(plugin, "README.md")},
		{"plugin:pyright:python", "plugin pyright of marketplace example-lsps (" + absMarket + ")", "", "npm install -g pyright (or pip install pyright)"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	wantConflicts := []listConflict{
		{".go", "plugin:gopls:go", "plugin:mine:script"},
		{".py", "plugin:pyright-lsp:pyright", "plugin:pyright:python"},
		{".pyi", "plugin:pyright-lsp:pyright", "plugin:pyright:python"},
	}
	if diff := cmp.Diff(wantConflicts, l.Conflicts); diff != "" {
		t.Errorf("conflicts (-want +got):\n%s", diff)
	}
	var kinds []string
	for _, p := range l.Errors {
		kinds = append(kinds, p.Kind+":"+p.Server)
	}
	if diff := cmp.Diff([]string{"config:broken", "redefined:python"}, kinds); diff != "" {
		t.Errorf("errors (-want +got):\n%s\n%+v", diff, l.Errors)
	}
	if len(l.Plugins) != 1 || l.Plugins[0].ID != "pyright-lsp@claude-plugins-official" {
		t.Errorf("plugins %+v", l.Plugins)
	}
	if len(l.Files) != 3 || l.Files[0].Server != "plugin:mine:script" || l.Files[0].Language != "script" || l.Files[0].Error != "" ||
		l.Files[1].Server != "plugin:pyright:python" || !strings.Contains(l.Files[1].Error, "its command is not found") ||
		l.Files[2].Server != "" || !strings.Contains(l.Files[2].Error, "extension .txt is not configured") {
		t.Errorf("files %+v", l.Files)
	}

	// --no-plugins leaves the installation out; text output.
	code, out, _ = runIn(t, project, env, "lsp", "list", "--no-plugins", "--plugin-dir", plugin)
	for _, want := range []string{"Claude Code configuration: not read (--no-plugins)", "  plugin:mine:script\n",
		"    NOT FOUND:  exec: \"no-such-server\": executable file not found in $PATH\n    install:    see " + filepath.Join(plugin, "README.md"),
		"Problems:\n  plugin mine: " + filepath.Join(plugin, ".lsp.json") + `: server "broken": command: a number, not a string`} {
		if !strings.Contains(out, want) {
			t.Errorf("text output does not contain %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "pyright") || code != exitOK {
		t.Errorf("--no-plugins: exit %d\n%s", code, out)
	}
}

func TestLSPListUsage(t *testing.T) {
	if code, out, _ := runIn(t, t.TempDir(), nil, "lsp", "list", "-h"); code != exitOK ||
		!strings.Contains(out, "--no-plugins") || !strings.Contains(out, "win an extension over the") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
	if code, _, _ := runIn(t, t.TempDir(), nil, "lsp", "list", "--bogus"); code != exitUsage {
		t.Errorf("bad flag: exit %d", code)
	}
}

// `lsp list FILE...` says which files do not exist, whether a server
// would serve them or not, and never tells the user to run lsp list.
func TestLSPListMissingFiles(t *testing.T) {
	project := t.TempDir()
	writeText(t, filepath.Join(project, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	writeText(t, filepath.Join(project, "main.go"), "package main\n\nfunc main() {}\n")
	env := diagEnv(t, "CLAUDE_CONFIG_DIR="+t.TempDir(), "HOME="+t.TempDir())
	code, out, _ := runIn(t, project, env, "lsp", "list", "main.go", "foo.py", "gone.go")
	for _, want := range []string{
		filepath.Join(project, "main.go") + ": gopls (go)\n",
		filepath.Join(project, "foo.py") + ": the file does not exist, and no language server for",
		filepath.Join(project, "gone.go") + ": gopls (go), but the file does not exist\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lsp list output does not contain %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "idebridge lsp list") {
		t.Errorf("lsp list tells the user to run lsp list:\n%s", out)
	}
	if code != exitUnavailable {
		t.Errorf("exit %d, want %d", code, exitUnavailable)
	}
}
