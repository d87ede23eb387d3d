// Package mcpserver checks `idebridge mcp`, the MCP server over stdio,
// with an independent MCP client: the official Go MCP SDK
// (github.com/modelcontextprotocol/go-sdk), over its command transport,
// exactly as an MCP client such as Codex or goose starts a server. The
// test builds the idebridge command, starts a headless IDE (`idebridge ide
// serve`, its lockfile in a temporary CLAUDE_CONFIG_DIR), lets the SDK
// start `idebridge mcp` on a small Go module, lists the tools and calls
// each one, with the IDE accepting the proposed edits, then restarted to
// reject them. It needs gopls ($GOPLS, PATH or $(go env GOPATH)/bin).
//
// Run
//
//	cd benchmarks && go test ./mcpserver
package mcpserver
