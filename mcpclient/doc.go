// Package mcpclient is the MCP client under package idebridge: a JSON-RPC
// multiplexer (Conn) over a Transport that moves whole messages, and the two
// transports IDE extensions serve, WebSocket (DialWebSocket) and legacy SSE
// (DialSSE). Most agents use idebridge.Client, which adds the MCP
// handshake, typed IDE tools and notifications on top; this package is for
// what it does not cover and for other MCP servers of the same kind.
//
//	t, err := mcpclient.DialWebSocket(ctx, "ws://127.0.0.1:41234/", &mcpclient.WebSocketOptions{AuthToken: token})
//	if err != nil { ... }
//	conn, err := mcpclient.New(t, nil)
//	if err != nil { ... }
//	defer conn.Close()
//	result, err := conn.Call(ctx, mcp.MethodListTools, nil, 30*time.Second)
//
// A Conn is safe for concurrent use; so is every Transport (see the
// interface for who may call what). Every blocking call takes a context or
// a deadline, a dead connection fails every pending call at once with an
// error matching ErrConnectionLost, and Close is idempotent and returns
// once every goroutine of the Conn and its transport has ended.
//
// Speed: on loopback, and more so in a sandbox, a system call or a
// goroutine wake-up costs more than all of the client's JSON work. So the
// goroutine that waits for a reply reads the connection itself (no hand-off
// on the common path; see Conn), a WebSocket message leaves as one frame
// built in place and written with one write, and over SSE each POST is one
// write on a kept-alive connection whose answer is read after the reply.
// Neither transport goes through net/http or an HTTP proxy.
package mcpclient
