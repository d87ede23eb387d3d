package lsp

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// officialDir and communityDir are the marketplace fixtures (see
// testdata/plugins/README.md).
var (
	officialDir  = filepath.Join("testdata", "plugins", "claude-plugins-official")
	communityDir = filepath.Join("testdata", "plugins", "root-manifest-style")
)

func absPath(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// serverSummary is what the marketplace tests compare of a server.
type serverSummary struct {
	Name, Plugin, Marketplace, Root, File, Command string
	Args                                           []string
	Exts                                           map[string]string
	Settings, Init                                 string
	MaxRestarts                                    int
}

func summarize(cfgs []ServerConfig) []serverSummary {
	var out []serverSummary
	for _, c := range cfgs {
		out = append(out, serverSummary{c.Name, c.Plugin, c.Marketplace, c.Root, c.File, c.Command, c.Args,
			c.ExtensionToLanguage, string(c.Settings), string(c.InitializationOptions), c.MaxRestarts})
	}
	return out
}

// The official marketplace, unchanged: its LSP plugins are strict: false
// entries whose servers are inline; four plugin folders exist, the other
// local entries' folders do not, and most entries are remote.
func TestLoadMarketplaceOfficial(t *testing.T) {
	dir := absPath(t, officialDir)
	file := filepath.Join(dir, ".claude-plugin", "marketplace.json")
	cfgs, errs := LoadMarketplace(officialDir, &LoadOptions{ProjectDir: "/proj"})

	root := func(p string) string { return filepath.Join(dir, "plugins", p) }
	want := []serverSummary{
		{Name: "plugin:clangd-lsp:clangd", Plugin: "clangd-lsp", Marketplace: "claude-plugins-official", Root: root("clangd-lsp"), File: file,
			Command: "clangd", Args: []string{"--background-index"},
			Exts: map[string]string{".c": "c", ".h": "c", ".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hxx": "cpp", ".C": "cpp", ".H": "cpp"}},
		{Name: "plugin:gopls-lsp:gopls", Plugin: "gopls-lsp", Marketplace: "claude-plugins-official", Root: root("gopls-lsp"), File: file,
			Command: "gopls", Exts: map[string]string{".go": "go"}},
		{Name: "plugin:pyright-lsp:pyright", Plugin: "pyright-lsp", Marketplace: "claude-plugins-official", Root: root("pyright-lsp"), File: file,
			Command: "pyright-langserver", Args: []string{"--stdio"}, Exts: map[string]string{".py": "python", ".pyi": "python"}},
		{Name: "plugin:typescript-lsp:typescript", Plugin: "typescript-lsp", Marketplace: "claude-plugins-official", Root: root("typescript-lsp"), File: file,
			Command: "typescript-language-server", Args: []string{"--stdio"},
			Exts: map[string]string{".ts": "typescript", ".tsx": "typescriptreact", ".js": "javascript", ".jsx": "javascriptreact",
				".mts": "typescript", ".cts": "typescript", ".mjs": "javascript", ".cjs": "javascript"}},
	}
	if diff := cmp.Diff(want, summarize(cfgs)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}

	// The errors agree with a simple reading of the file: one
	// *RemoteSourceError per object source, one missing-directory error
	// per local source whose folder is absent, nothing else.
	var doc struct {
		Plugins []struct {
			Name   string          `json:"name"`
			Source json.RawMessage `json:"source"`
		} `json:"plugins"`
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var wantRemote, wantMissing []string
	for _, p := range doc.Plugins {
		var rel string
		if json.Unmarshal(p.Source, &rel) != nil {
			wantRemote = append(wantRemote, p.Name)
		} else if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
			wantMissing = append(wantMissing, p.Name)
		}
	}
	var gotRemote, gotMissing []string
	for _, err := range errs {
		var re *RemoteSourceError
		var ce *ConfigError
		switch {
		case errors.As(err, &re):
			if !errors.Is(err, ErrRemoteSource) || re.Marketplace != "claude-plugins-official" || re.Source == "" {
				t.Errorf("remote source error %+v", re)
			}
			gotRemote = append(gotRemote, re.Plugin)
		case errors.As(err, &ce) && errors.Is(err, os.ErrNotExist) && ce.Field == "":
			gotMissing = append(gotMissing, ce.Plugin)
		default:
			t.Errorf("unexpected error %v", err)
		}
	}
	if len(wantRemote) < 200 || len(wantMissing) < 40 {
		t.Fatalf("the fixture changed: %d remote, %d missing", len(wantRemote), len(wantMissing))
	}
	if diff := cmp.Diff(wantRemote, gotRemote); diff != "" {
		t.Errorf("remote plugins (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantMissing, gotMissing); diff != "" {
		t.Errorf("plugins with missing folders (-want +got):\n%s", diff)
	}
}

// The community layout: plugin.json at the plugin's root, a .lsp.json, and
// an entry that repeats pyright's server differently (the plugin's own
// definition wins, and the error says so) or names only the source.
func TestLoadMarketplaceCommunity(t *testing.T) {
	dir := absPath(t, communityDir)
	file := filepath.Join(dir, ".claude-plugin", "marketplace.json")
	m, errs := ReadMarketplace(communityDir)
	if len(errs) != 0 || m.Name != "example-lsps" || len(m.Entries) != 2 {
		t.Fatalf("marketplace %+v errs %v", m, errs)
	}
	if e := m.Entries[0]; e.Name != "pyright" || !e.Strict || e.Dir != filepath.Join(dir, "pyright") || e.Source != "./pyright" || e.Version != "0.1.0" {
		t.Errorf("entry %+v", e)
	}

	cfgs, errs := LoadMarketplace(communityDir, &LoadOptions{ProjectDir: "/proj"})
	want := []serverSummary{
		{Name: "plugin:pyright:python", Plugin: "pyright", Marketplace: "example-lsps", Root: filepath.Join(dir, "pyright"),
			File: filepath.Join(dir, "pyright", ".lsp.json"), Command: "pyright-langserver", Args: []string{"--stdio"},
			Exts: map[string]string{".py": "python", ".pyi": "python", ".pyw": "python"}, Settings: "{}", Init: "{}", MaxRestarts: 3},
		{Name: "plugin:gopls:go", Plugin: "gopls", Marketplace: "example-lsps", Root: filepath.Join(dir, "gopls"),
			File: filepath.Join(dir, "gopls", ".lsp.json"), Command: "gopls", Args: []string{"serve"},
			Exts: map[string]string{".go": "go"}, Settings: "{}", Init: "{}", MaxRestarts: 3},
	}
	if diff := cmp.Diff(want, summarize(cfgs)); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	var re *RedefinedError
	if len(errs) != 1 || !errors.As(errs[0], &re) {
		t.Fatalf("errors %v, want one *RedefinedError", errs)
	}
	wantRe := RedefinedError{Plugin: "pyright", Server: "python", Kept: filepath.Join(dir, "pyright", ".lsp.json"), Dropped: file,
		Reason: "the plugin's own files win over its strict marketplace entry"}
	if diff := cmp.Diff(wantRe, *re); diff != "" {
		t.Errorf("redefinition (-want +got):\n%s", diff)
	}
}

func TestReadMarketplaceEntries(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".claude-plugin", "marketplace.json"), `{
	  "name": "m",
	  "metadata": {"pluginRoot": "./plugins"},
	  "plugins": [
	    {"name": "bare", "source": "bare"},
	    {"name": "dotted", "source": "./elsewhere/dotted", "strict": false, "lspServers": "servers.json"},
	    {"name": "escape", "source": "../outside"},
	    {"name": "git", "source": {"source": "github", "repo": "o/r"}},
	    {"name": "url", "source": {"source": "git-subdir", "url": "https://example.invalid/r.git", "path": "p"}},
	    {"source": "./x"},
	    {"name": "badstrict", "source": "./x", "strict": "no"},
	    {"name": "nosource"},
	    "not an entry",
	    {"name": "bare", "source": "./again"}
	  ]
	}`)
	m, errs := ReadMarketplace(dir)
	if m == nil {
		t.Fatal(errs)
	}
	var got []string
	for _, e := range m.Entries {
		rel := "(remote)"
		if e.Dir != "" {
			rel, _ = filepath.Rel(dir, e.Dir)
		}
		got = append(got, e.Name+"|"+e.Source+"|"+filepath.ToSlash(rel))
	}
	want := []string{"bare|bare|plugins/bare", "dotted|./elsewhere/dotted|elsewhere/dotted", "git|github o/r|(remote)",
		"url|git-subdir https://example.invalid/r.git (p)|(remote)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if m.Entries[1].Strict || string(m.Entries[1].LSPServers) != `"servers.json"` {
		t.Errorf("entries %+v", m.Entries)
	}
	var fields []string
	for _, ce := range configErrors(errs) {
		fields = append(fields, ce.Field)
	}
	wantFields := []string{"plugins[2].source", "plugins[5].name", "plugins[6].strict", "plugins[7].source", "plugins[8]", "plugins[9]"}
	if diff := cmp.Diff(wantFields, fields); diff != "" || len(errs) != len(wantFields) {
		t.Errorf("error fields (-want +got):\n%s\n%v", diff, errs)
	}
	if !errors.Is(errs[0], ErrPathEscape) {
		t.Errorf("escape: %v", errs[0])
	}

	for _, bad := range []string{`[]`, `{"plugins": {}}`, `{`, ``} {
		writeFile(t, filepath.Join(dir, ".claude-plugin", "marketplace.json"), bad)
		if m, errs := ReadMarketplace(dir); m != nil || len(errs) != 1 {
			t.Errorf("%q: %+v %v", bad, m, errs)
		}
	}
	if m, errs := ReadMarketplace(t.TempDir()); m != nil || len(errs) != 1 || !errors.Is(errs[0], os.ErrNotExist) {
		t.Errorf("no marketplace: %+v %v", m, errs)
	}
}

// A non-strict entry is the plugin's whole manifest: the plugin.json's
// lspServers are reported and ignored, the root .lsp.json still loads,
// and the entry's servers replace same-named ones.
func TestLoadPluginNonStrictEntry(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, ".lsp.json"), `{
	  "same": {"command": "same", "extensionToLanguage": {".s": "s"}},
	  "differs": {"command": "old", "extensionToLanguage": {".d": "d"}},
	  "own": {"command": "own", "extensionToLanguage": {".o": "o"}}
	}`)
	writeFile(t, filepath.Join(root, "plugin.json"), `{"name": "p", "lspServers": {"ignored": {"command": "x", "extensionToLanguage": {".i": "i"}}}}`)
	writeFile(t, filepath.Join(root, "lsp", "entry.json"), `{"fromfile": {"command": "f", "extensionToLanguage": {".f": "f"}}}`)
	entry := &MarketplaceEntry{Name: "p", File: "/m/.claude-plugin/marketplace.json", Strict: false,
		LSPServers: json.RawMessage(`[{"same": {"command": "same", "extensionToLanguage": {".s": "s"}},
		                             "differs": {"command": "new", "extensionToLanguage": {".d": "d"}}}, "lsp/entry.json"]`)}
	cfgs, errs := LoadPlugin(Plugin{Name: "p", Root: root, Marketplace: "m", Entry: entry}, nil)
	var got []string
	for _, c := range cfgs {
		got = append(got, c.Name+"="+c.Command+"@"+filepath.Base(c.File)+"/"+c.Marketplace)
	}
	want := []string{"plugin:p:same=same@marketplace.json/m", "plugin:p:differs=new@marketplace.json/m",
		"plugin:p:own=own@.lsp.json/m", "plugin:p:fromfile=f@entry.json/m"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if len(errs) != 2 {
		t.Fatalf("errors %v, want 2", errs)
	}
	if ce := configErrors(errs); len(ce) != 1 || ce[0].Field != "lspServers" || ce[0].File != filepath.Join(root, "plugin.json") ||
		!strings.Contains(ce[0].Error(), `"strict": false`) {
		t.Errorf("ignored manifest lspServers: %v", errs)
	}
	var re *RedefinedError
	if !errors.As(errs[1], &re) || re.Server != "differs" || re.Kept != entry.File || re.Dropped != filepath.Join(root, ".lsp.json") {
		t.Errorf("redefinition: %v", errs[1])
	}
}

func TestLoadPluginMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	cfgs, errs := LoadPlugin(Plugin{Name: "p", Root: dir}, nil)
	if len(cfgs) != 0 || len(errs) != 1 || !errors.Is(errs[0], os.ErrNotExist) || !errors.Is(errs[0], ErrConfig) {
		t.Errorf("cfgs %+v errs %v", cfgs, errs)
	}
	if msg := errs[0].Error(); msg != "plugin p: "+dir+": plugin directory: no such file or directory" {
		t.Errorf("message %q", msg)
	}
}

func sortedNames(cfgs []ServerConfig) []string {
	var out []string
	for _, c := range cfgs {
		out = append(out, c.Name)
	}
	sort.Strings(out)
	return out
}
