package lsp_test

import (
	"fmt"

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
