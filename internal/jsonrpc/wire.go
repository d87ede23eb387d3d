// Package jsonrpc holds the JSON-RPC 2.0 wire types shared by the MCP client
// (package idebridge) and the IDE-side server kit (package ideserver).
//
// A Message is decoded once from the wire; params and results stay raw JSON
// until a typed wrapper decodes them.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Version is the only JSON-RPC version spoken.
const Version = "2.0"

// Standard and MCP-relevant error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeServerError is the generic implementation-defined server error
	// (the Neovim plugin uses it for "Buffer operation error").
	CodeServerError = -32000
	// CodeFileNotOpen is what the Neovim plugin answers getDiagnostics with
	// for a file it has not opened.
	CodeFileNotOpen = -32001
	// CodeRequestCancelled is LSP's and MCP's "request cancelled".
	CodeRequestCancelled = -32800
)

// Message is one JSON-RPC 2.0 message: a request (ID and Method), a
// notification (Method, no ID), or a response (ID and Result or Error).
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// IsRequest reports whether m is a request (has a method and an id).
func (m *Message) IsRequest() bool { return m.Method != "" && hasID(m.ID) }

// IsNotification reports whether m is a notification (a method, no id).
func (m *Message) IsNotification() bool { return m.Method != "" && !hasID(m.ID) }

// IsResponse reports whether m is a response (an id, no method).
func (m *Message) IsResponse() bool { return m.Method == "" && hasID(m.ID) }

func hasID(id json.RawMessage) bool {
	return len(id) > 0 && !bytes.Equal(id, []byte("null"))
}

// Error is a JSON-RPC error object. It implements error.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	if len(e.Data) > 0 && !bytes.Equal(e.Data, []byte("null")) {
		return fmt.Sprintf("jsonrpc error %d: %s (data: %s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// Is makes errors.Is(err, &Error{Code: c}) match any Error with code c, so a
// wire error keeps its identity by code.
func (e *Error) Is(target error) bool {
	var t *Error
	if errors.As(target, &t) {
		return t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
	}
	return false
}

// ErrInvalidMessage is wrapped by Decode for input that is not a JSON-RPC
// message.
var ErrInvalidMessage = errors.New("invalid JSON-RPC message")

// Decode parses one JSON-RPC message. It rejects input that is not a JSON
// object, a message that is neither request, notification nor response, and
// an id that is not a string or number. It never panics. Its result is the
// same as DecodeStd's on every input; ordinary messages take a single-pass
// path (scan.go).
func Decode(data []byte) (*Message, error) {
	if m, ok := decodeFast(data); ok {
		return validate(m)
	}
	return DecodeStd(data)
}

// DecodeStd is Decode done with encoding/json alone: the reference Decode
// must agree with, and its fallback for unusual input.
func DecodeStd(data []byte) (*Message, error) {
	var m Message
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidMessage, err)
	}
	return validate(&m)
}

func validate(m *Message) (*Message, error) {
	if len(m.ID) > 0 {
		switch m.ID[0] {
		case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'n':
		default:
			return nil, fmt.Errorf("%w: id must be a string or number, got %s", ErrInvalidMessage, truncate(m.ID))
		}
	}
	if m.Method == "" && !hasID(m.ID) {
		return nil, fmt.Errorf("%w: neither a method nor an id", ErrInvalidMessage)
	}
	if m.Method == "" && m.Result == nil && m.Error == nil {
		return nil, fmt.Errorf("%w: response %s has neither result nor error", ErrInvalidMessage, truncate(m.ID))
	}
	return m, nil
}

func truncate(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}
