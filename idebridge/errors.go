package idebridge

import (
	"errors"

	"github.com/idebridge/idebridge/mcpclient"
)

// Errors of the MCP client. Test for them with errors.Is; the error returned
// wraps the sentinel with what was being done. The connection's own three
// are package mcpclient's, under the names agents know: either name
// matches.
var (
	// ErrConnectionLost is wrapped by every error that ends a connection
	// the client did not close itself: the IDE closed it, the network
	// failed, the keep-alive went unanswered (a half-open connection), or a
	// message could not be read. Every call pending at that moment fails at
	// once with it.
	ErrConnectionLost = mcpclient.ErrConnectionLost

	// ErrAuthFailed means the IDE refused the auth token: HTTP 400, 401 or
	// 403 at the WebSocket upgrade or the SSE request, or close code 1008
	// (policy violation) right after the upgrade.
	ErrAuthFailed = mcpclient.ErrAuthFailed

	// ErrClosed is returned by calls made after Close, and by calls that
	// were pending when Close was called.
	ErrClosed = mcpclient.ErrClosed

	// ErrUnsupportedProtocol means the IDE answered initialize with an MCP
	// protocol version this client does not speak; the error names it.
	ErrUnsupportedProtocol = errors.New("unsupported MCP protocol version")
)
