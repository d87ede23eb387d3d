package mcpclient

import (
	"errors"
	"fmt"
)

// Errors of a connection. Test for them with errors.Is; the error returned
// wraps the sentinel with what was being done.
var (
	// ErrConnectionLost is wrapped by every error that ends a connection
	// the client did not close itself: the server closed it, the network
	// failed, the keep-alive went unanswered (a half-open connection), or a
	// message could not be read. Every call pending at that moment fails at
	// once with it.
	ErrConnectionLost = errors.New("connection to the IDE lost")

	// ErrAuthFailed means the server refused the auth token: HTTP 400, 401
	// or 403 at the WebSocket upgrade or the SSE request, or close code
	// 1008 (policy violation) right after the upgrade.
	ErrAuthFailed = errors.New("IDE authentication failed")

	// ErrClosed is returned by calls made after Close, and by calls that
	// were pending when Close was called.
	ErrClosed = errors.New("MCP client closed")
)

// connLost wraps cause so that it matches both ErrConnectionLost and cause.
func connLost(cause error) error {
	if cause == nil {
		return ErrConnectionLost
	}
	if errors.Is(cause, ErrConnectionLost) {
		return cause
	}
	return fmt.Errorf("%w: %w", ErrConnectionLost, cause)
}

// MessageTooLargeError reports a message larger than the limit. An outgoing
// message that is too large is refused before anything is sent and the
// connection stays usable; an incoming one ends the connection (the error
// then also matches ErrConnectionLost), because the reply it carried can no
// longer be matched to its call.
type MessageTooLargeError struct {
	// Size is the message's size in bytes; 0 when the transport stopped
	// reading before learning it.
	Size int64
	// Limit is the maximum size in bytes.
	Limit int64
	// Incoming is true for a message received from the server.
	Incoming bool
}

// Error says which direction, the size when known, and the limit.
func (e *MessageTooLargeError) Error() string {
	dir := "outgoing"
	if e.Incoming {
		dir = "incoming"
	}
	if e.Size > 0 {
		return fmt.Sprintf("%s message of %d bytes exceeds the %d-byte limit", dir, e.Size, e.Limit)
	}
	return fmt.Sprintf("%s message exceeds the %d-byte limit", dir, e.Limit)
}
