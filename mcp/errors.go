package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/idebridge/idebridge/internal/jsonrpc"
)

// Error is a JSON-RPC error object: what an error response carries. It
// implements error, and errors.Is(err, &Error{Code: c}) matches any Error
// with code c (and, when the target has one, the same message), so a wire
// error keeps its identity by code.
type Error = jsonrpc.Error

// JSON-RPC error codes, standard and the ones IDE extensions use.
const (
	CodeParseError     = jsonrpc.CodeParseError
	CodeInvalidRequest = jsonrpc.CodeInvalidRequest
	CodeMethodNotFound = jsonrpc.CodeMethodNotFound
	CodeInvalidParams  = jsonrpc.CodeInvalidParams
	CodeInternalError  = jsonrpc.CodeInternalError
	// CodeServerError is the generic implementation-defined server error
	// (the Neovim plugin's "Buffer operation error").
	CodeServerError = jsonrpc.CodeServerError
	// CodeFileNotOpen is the Neovim plugin's answer to getDiagnostics for
	// a file it has not opened.
	CodeFileNotOpen = jsonrpc.CodeFileNotOpen
	// CodeRequestCancelled is MCP's and LSP's "request cancelled".
	CodeRequestCancelled = jsonrpc.CodeRequestCancelled
)

// ToolError is a tool failure reported by the server. It covers the three
// ways deployed IDEs report one: a JSON-RPC error response (Code is its
// code), a result with isError set (Code is 0, Message is the result's
// text, Result holds it), and the Neovim quirk of a result that holds an
// error object (code and message) and no content.
type ToolError struct {
	// Tool is the tool that was called.
	Tool string
	// Code is the JSON-RPC error code, or 0 for an isError result.
	Code int64
	// Message is the server's message.
	Message string
	// Data is the error's data member, if any.
	Data json.RawMessage
	// Result is the isError result; nil for error responses.
	Result *ToolResult
}

// Error names the tool, the code when there is one, and the server's
// message.
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
