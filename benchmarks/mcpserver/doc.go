// Package mcpserver checks `idebridge mcp`, the MCP server over stdio,
// and measures it over stdio and Streamable HTTP,
// with an independent MCP client: the official Go MCP SDK
// (github.com/modelcontextprotocol/go-sdk), over its command transport,
// exactly as an MCP client such as Codex or goose starts a server. The
// test builds the idebridge command, starts a headless IDE (`idebridge ide
// serve`, its lockfile in a temporary CLAUDE_CONFIG_DIR), lets the SDK
// start `idebridge mcp` on a small Go module, lists the tools and calls
// each one, with the IDE accepting the proposed edits, then restarted to
// reject them. It needs gopls ($GOPLS, PATH or $(go env GOPATH)/bin).
//
// BenchmarkToolCallStdioVsHTTP compares a warm tool call on gopls over
// stdio and over Streamable HTTP (`idebridge mcp --http`), the SDK's
// client on both, and a plain net/http client on HTTP.
//
// BenchmarkRuntimeVsInProcess compares a warm tool call through
// `idebridge mcp --no-runtime` and through the shared runtime (the
// default); BenchmarkRuntimeMemory the total memory of four clients each
// way; BenchmarkFirstAnswer a new client's wait for its first answer on
// this repository; BenchmarkCLIRefs `idebridge lsp refs` on this
// repository through a warm runtime and in its own process.
//
// Run
//
//	cd benchmarks && go test ./mcpserver
//	cd benchmarks && go test ./mcpserver -run '^$' -bench ToolCallStdioVsHTTP -benchtime 200x -count 3
//	cd benchmarks && go test ./mcpserver -run '^$' -bench RuntimeVsInProcess -benchtime 200x -count 3
//	cd benchmarks && go test ./mcpserver -run '^$' -bench RuntimeMemory -benchtime 1x -count 3
//	cd benchmarks && go test ./mcpserver -run '^$' -bench FirstAnswer -benchtime 5x -count 3
//	cd benchmarks && go test ./mcpserver -run '^$' -bench CLIRefs -benchtime 10x -count 3
package mcpserver
