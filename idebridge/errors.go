package idebridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Errors of the MCP client. Test for them with errors.Is; the error returned
// wraps the sentinel with what was being done.
var (
	// ErrConnectionLost is wrapped by every error that ends a connection
	// the client did not close itself: the IDE closed it, the network
	// failed, the keep-alive went unanswered (a half-open connection), or a
	// message could not be read. Every call pending at that moment fails at
	// once with it.
	ErrConnectionLost = errors.New("connection to the IDE lost")

	// ErrAuthFailed means the IDE refused the auth token: HTTP 400, 401 or
	// 403 at the WebSocket upgrade or the SSE request, or close code 1008
	// (policy violation) right after the upgrade.
	ErrAuthFailed = errors.New("IDE authentication failed")

	// ErrUnsupportedProtocol means the IDE answered initialize with an MCP
	// protocol version this client does not speak; the error names it.
	ErrUnsupportedProtocol = errors.New("unsupported MCP protocol version")

	// ErrClosed is returned by calls made after Close, and by calls that
	// were pending when Close was called.
	ErrClosed = errors.New("MCP client closed")
)

// connLost wraps cause so that it matches both ErrConnectionLost and cause.
func connLost(cause error) error {
	if cause == nil || errors.Is(cause, ErrConnectionLost) {
		if cause == nil {
			return ErrConnectionLost
		}
		return cause
	}
	return fmt.Errorf("%w: %w", ErrConnectionLost, cause)
}

// ToolError is a tool failure reported by the IDE. It covers the three ways
// deployed IDEs report one: a JSON-RPC error response (Code is its code), a
// result with isError set (Code is 0, Message is the result's text, Result
// holds it), and the Neovim quirk of a result that holds an error object
// (code and message) and no content.
type ToolError struct {
	// Tool is the tool that was called.
	Tool string
	// Code is the JSON-RPC error code, or 0 for an isError result.
	Code int64
	// Message is the IDE's message.
	Message string
	// Data is the error's data member, if any.
	Data json.RawMessage
	// Result is the isError result; nil for error responses.
	Result *ToolResult
}

// Error names the tool, the code when there is one, and the IDE's message.
func (e *ToolError) Error() string {
	var b strings.Builder
	b.WriteString("IDE tool ")
	b.WriteString(e.Tool)
	b.WriteString(" failed")
	if e.Code != 0 {
		fmt.Fprintf(&b, " (code %d)", e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if d := dataText(e.Data); d != "" && d != e.Message {
		b.WriteString(" (")
		b.WriteString(d)
		b.WriteString(")")
	}
	return b.String()
}

// dataText renders an error's data member for a message: a JSON string
// unquoted, anything else as JSON, long data shortened.
func dataText(data json.RawMessage) string {
	if len(data) == 0 || string(data) == "null" {
		return ""
	}
	s := string(data)
	var str string
	if json.Unmarshal(data, &str) == nil {
		s = str
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// MessageTooLargeError reports a message larger than
// ClientOptions.MaxMessageSize. An outgoing message that is too large is
// refused before anything is sent and the connection stays usable; an
// incoming one ends the connection (the error then also matches
// ErrConnectionLost), because the reply it carried can no longer be matched
// to its call.
type MessageTooLargeError struct {
	// Size is the message's size in bytes; 0 when the transport stopped
	// reading before learning it.
	Size int64
	// Limit is the maximum size in bytes.
	Limit int64
	// Incoming is true for a message received from the IDE.
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
