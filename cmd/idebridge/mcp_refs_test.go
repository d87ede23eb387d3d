package main

import (
	"regexp"
	"slices"
	"testing"
)

// references answers the same locations over MCP, without
// include_declaration, as `idebridge lsp refs` without --no-decl: the
// declaration included on both surfaces.
func TestReferencesDefaultAgrees(t *testing.T) {
	dir := navModule(t)
	env := navEnv(t)
	code, out, errOut := runIn(t, dir, env, "lsp", "refs", "use.go:7:total#2", "--no-plugins")
	if code != exitOK {
		t.Fatalf("lsp refs: exit %d, stderr:\n%s", code, errOut)
	}
	r := startMCP(t, dir, mcpEnv(t), "--no-plugins", "--no-ide")
	text := r.ok("references", map[string]any{"file": "use.go", "line": 7, "symbol": "total", "occurrence": 2})
	locs := regexp.MustCompile(`(?m)^use\.go:\d+:\d+:`)
	cli, mcp := locs.FindAllString(out, -1), locs.FindAllString(text, -1)
	if !slices.Equal(cli, mcp) || !slices.Contains(mcp, "use.go:5:2:") {
		t.Errorf("lsp refs lists %v, MCP references %v; want the same, the declaration (use.go:5:2) included\nCLI:\n%s\nMCP:\n%s", cli, mcp, out, text)
	}
}
