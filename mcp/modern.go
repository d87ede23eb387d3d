package mcp

// The modern era (protocol revision 2026-07-28 and later) has no
// initialize handshake: every request carries its protocol version and the
// client's capabilities in params._meta, servers answer server/discover,
// and every result carries a resultType. A dual-era server also answers
// initialize for legacy clients (revisions up to 2025-11-25).
const (
	// ModernProtocolVersion is the stateless revision: per-request _meta,
	// server/discover, resultType.
	ModernProtocolVersion = "2026-07-28"

	// MethodDiscover asks a server for its supported versions,
	// capabilities and identity (modern era; servers must answer it).
	MethodDiscover = "server/discover"
	// MethodProgress is the server's notification about a request that
	// carried a progress token in params._meta.
	MethodProgress = "notifications/progress"
)

// Keys of params._meta and result._meta.
const (
	// MetaProtocolVersion is the protocol version of one modern request
	// (required).
	MetaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	// MetaClientCapabilities is the client's capabilities object for one
	// modern request (required).
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	// MetaClientInfo names the client of one modern request (optional).
	MetaClientInfo = "io.modelcontextprotocol/clientInfo"
	// MetaServerInfo names the server in a modern result's _meta.
	MetaServerInfo = "io.modelcontextprotocol/serverInfo"
	// MetaProgressToken opts a request into notifications/progress (both
	// eras).
	MetaProgressToken = "progressToken"
)

// ResultTypeComplete is the resultType of an ordinary modern result.
const ResultTypeComplete = "complete"

// Cache scopes of a modern cacheable result (tools/list,
// server/discover): whether shared intermediaries may cache it.
const (
	CacheScopePublic  = "public"
	CacheScopePrivate = "private"
)

// Error codes the MCP specification defines (2026-07-28; the range -32020
// to -32099 is reserved to it).
const (
	// CodeHeaderMismatch: Streamable HTTP headers (MCP-Protocol-Version,
	// Mcp-Method, Mcp-Name) missing or not matching the body.
	CodeHeaderMismatch = -32020
	// CodeMissingRequiredClientCapability: the request needs a capability
	// the client did not declare; data.requiredCapabilities lists them.
	CodeMissingRequiredClientCapability = -32021
	// CodeUnsupportedProtocolVersion: the request's protocol version is
	// not served; data is {"supported": [...], "requested": "..."}.
	CodeUnsupportedProtocolVersion = -32022
)

// Streamable HTTP headers.
const (
	// HeaderProtocolVersion carries the request's protocol version on
	// every POST (legacy clients from 2025-06-18 on, after initialize).
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	// HeaderSessionID carries a legacy Streamable HTTP session's id, minted
	// by the server in its answer to initialize.
	HeaderSessionID = "Mcp-Session-Id"
	// HeaderMethod mirrors the JSON-RPC method (modern era).
	HeaderMethod = "Mcp-Method"
	// HeaderName mirrors params.name of tools/call (modern era).
	HeaderName = "Mcp-Name"
)
