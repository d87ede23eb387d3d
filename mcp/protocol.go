package mcp

import "slices"

// Protocol versions.
const (
	// ProtocolVersion is the version a client asks for in initialize.
	ProtocolVersion = "2025-11-25"
	// LegacyProtocolVersion is the oldest version spoken, and the one
	// every deployed IDE extension answers.
	LegacyProtocolVersion = "2024-11-05"
)

// supportedProtocolVersions are the versions a client accepts in an
// initialize answer, oldest first.
var supportedProtocolVersions = []string{LegacyProtocolVersion, "2025-03-26", "2025-06-18", ProtocolVersion}

// SupportedProtocolVersions returns the protocol versions a client accepts
// in an initialize answer, oldest first. The slice is the caller's.
func SupportedProtocolVersions() []string { return slices.Clone(supportedProtocolVersions) }

// IsSupportedProtocolVersion reports whether v is one of
// SupportedProtocolVersions.
func IsSupportedProtocolVersion(v string) bool { return slices.Contains(supportedProtocolVersions, v) }

// AuthHeader is the HTTP request header that carries the lockfile's auth
// token, on the WebSocket upgrade and on every SSE request.
const AuthHeader = "X-Claude-Code-Ide-Authorization"

// Subprotocol is the WebSocket subprotocol (Sec-WebSocket-Protocol) of an
// IDE's MCP server.
const Subprotocol = "mcp"

// Method names: MCP's own, and the notifications IDE extensions add.
const (
	// MethodInitialize is the first request of a session.
	MethodInitialize = "initialize"
	// MethodInitialized is the client's notification that follows the
	// initialize answer.
	MethodInitialized = "notifications/initialized"
	// MethodPing is MCP's ping request; some IDEs answer it with -32601
	// (keep-alive there is WebSocket ping/pong).
	MethodPing = "ping"
	// MethodListTools lists the server's tools, a page at a time
	// (ListToolsParams, ListToolsResult).
	MethodListTools = "tools/list"
	// MethodCallTool calls a tool (CallToolParams, ToolResult).
	MethodCallTool = "tools/call"
	// MethodCancelled tells the other side a request is no longer wanted.
	MethodCancelled = "notifications/cancelled"
	// MethodToolsListChanged tells the client its tool list is stale.
	MethodToolsListChanged = "notifications/tools/list_changed"

	// MethodIDEConnected is the client's notification, after
	// notifications/initialized, that carries the agent's pid:
	// {"pid": N}.
	MethodIDEConnected = "ide_connected"
	// MethodSelectionChanged: the user's selection or cursor moved:
	// {text?, filePath?, fileUrl?, selection: {start, end, isEmpty} | null}.
	MethodSelectionChanged = "selection_changed"
	// MethodAtMentioned: the user sent a file, or lines of it, to the
	// agent: {filePath, lineStart?, lineEnd?} (zero-based lines).
	MethodAtMentioned = "at_mentioned"
	// MethodLogEvent is the IDE extension's telemetry; params vary.
	MethodLogEvent = "log_event"
)
