package lsp_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/idebridge/idebridge/lsp"
)

// A plugin's .lsp.json, loaded: servers are named after their plugin,
// variables are expanded, defaults filled in, and an invalid entry is
// reported while the valid one loads.
func ExampleParseServers() {
	doc := []byte(`{
	  "pyright": {
	    "command": "${CLAUDE_PLUGIN_ROOT}/node_modules/.bin/pyright-langserver",
	    "args": ["--stdio"],
	    "extensionToLanguage": {".py": "python"},
	    "settings": {"python": {"analysis": {"typeCheckingMode": "strict"}}}
	  },
	  "broken": {"command": "x", "extensionToLanguage": {"py": "python"}}
	}`)
	src := lsp.Source{Plugin: "python-tools", Root: "/plugins/python-tools", File: ".lsp.json"}
	cfgs, errs := lsp.ParseServers(doc, src, &lsp.LoadOptions{ProjectDir: "/work/app"})
	for _, c := range cfgs {
		fmt.Println(c.Name, c.Command, c.Args)
	}
	for _, err := range errs {
		fmt.Println("error:", err)
	}
	// Output:
	// plugin:python-tools:pyright /plugins/python-tools/node_modules/.bin/pyright-langserver [--stdio]
	// error: plugin python-tools: .lsp.json: server "broken": extensionToLanguage: "py" is not an extension like ".go"
}

// What Claude Code would load for a project: a plugin installed from a
// marketplace whose entry declares its server inline (as the official
// marketplace does), enabled in the user's settings, and disabled again
// in the project's local settings, which count only once the project is
// trusted (in Claude Code, or by the caller with TrustProject).
func ExampleLoadClaudeCode() {
	base, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(base)
	config, project := filepath.Join(base, "config"), filepath.Join(base, "project")
	write := func(path, text string) {
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, []byte(text), 0o644)
	}
	write(filepath.Join(config, "plugins", "marketplaces", "tools", ".claude-plugin", "marketplace.json"), `{"name": "tools", "plugins": [
	  {"name": "python-lsp", "source": "./python-lsp", "strict": false,
	   "lspServers": {"pyright": {"command": "pyright-langserver", "args": ["--stdio"], "extensionToLanguage": {".py": "python"}}}}]}`)
	install := filepath.Join(config, "plugins", "cache", "tools", "python-lsp", "1.0.0")
	os.MkdirAll(install, 0o755)
	write(filepath.Join(config, "plugins", "installed_plugins.json"),
		`{"version": 2, "plugins": {"python-lsp@tools": [{"scope": "user", "installPath": "`+filepath.ToSlash(install)+`", "version": "1.0.0"}]}}`)
	write(filepath.Join(config, "settings.json"), `{"enabledPlugins": {"python-lsp@tools": true}}`)

	cc := lsp.LoadClaudeCode(&lsp.ClaudeCodeOptions{ProjectDir: project, Env: []string{"CLAUDE_CONFIG_DIR=" + config}})
	for _, c := range cc.Servers {
		fmt.Println(c.Name, c.Command, c.Args)
	}
	write(filepath.Join(project, ".claude", "settings.local.json"), `{"enabledPlugins": {"python-lsp@tools": false}}`)
	cc = lsp.LoadClaudeCode(&lsp.ClaudeCodeOptions{ProjectDir: project, Env: []string{"CLAUDE_CONFIG_DIR=" + config}})
	fmt.Println(len(cc.Servers), "servers; trusted:", cc.Trust.Trusted, "; ignored:", cc.Trust.Ignored[0].Scope, "settings")
	cc = lsp.LoadClaudeCode(&lsp.ClaudeCodeOptions{ProjectDir: project, Env: []string{"CLAUDE_CONFIG_DIR=" + config}, TrustProject: true})
	p := cc.Plugins[0]
	fmt.Println(len(cc.Servers), "servers;", p.ID, "enabled:", p.Enabled, "in", p.EnabledScope, "settings; would serve", p.Extensions)
	// Output:
	// plugin:python-lsp:pyright pyright-langserver [--stdio]
	// 1 servers; trusted: false ; ignored: local settings
	// 0 servers; python-lsp@tools enabled: false in local settings; would serve [.py]
}
