package mcp

import (
	"encoding/json"
	"strings"
)

// Implementation names a client or a server: initialize's clientInfo and
// its answer's serverInfo.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Title   string `json:"title,omitempty"`
}

// InitializeParams are the params of initialize.
type InitializeParams struct {
	// ProtocolVersion is the version the client asks for
	// (ProtocolVersion).
	ProtocolVersion string `json:"protocolVersion"`
	// Capabilities is the client's capabilities object, as sent; Claude
	// Code sends {} or {"roots":{},"elicitation":{}}.
	Capabilities json.RawMessage `json:"capabilities"`
	// ClientInfo names the client.
	ClientInfo Implementation `json:"clientInfo"`
}

// InitializeResult is the answer to initialize.
type InitializeResult struct {
	// ProtocolVersion is the version the server speaks; a client checks it
	// with IsSupportedProtocolVersion.
	ProtocolVersion string `json:"protocolVersion"`
	// Capabilities is the server's capabilities object, as received.
	Capabilities json.RawMessage `json:"capabilities"`
	// ServerInfo names the server.
	ServerInfo Implementation `json:"serverInfo"`
	// Instructions is the server's advice to the model, if any.
	Instructions string `json:"instructions,omitempty"`
}

// Tool describes one tool, as tools/list lists it.
type Tool struct {
	// Name is what tools/call names.
	Name string `json:"name"`
	// Title is a display name.
	Title string `json:"title,omitempty"`
	// Description is shown to the model.
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the arguments object.
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// OutputSchema is the JSON Schema (an object schema) of the result's
	// StructuredContent, for a tool that sends one; passed through as
	// received.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Annotations are hints about the tool's behaviour (see
	// ToolAnnotations and its Encode); passed through as received.
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// ToolAnnotations are MCP's hints about a tool, for clients that decide
// what to approve without asking (a read-only tool) or what to confirm (a
// destructive one). They are hints: a client must not trust them from a
// server it does not trust. A nil hint is left out, and means the
// specification's default (readOnly false, destructive true, idempotent
// false, openWorld true).
type ToolAnnotations struct {
	// Title is a display name.
	Title string `json:"title,omitempty"`
	// ReadOnlyHint: the tool changes nothing.
	ReadOnlyHint *bool `json:"readOnlyHint,omitempty"`
	// DestructiveHint: a tool that changes things may overwrite or delete
	// (meaningful when not read-only).
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	// IdempotentHint: calling again with the same arguments changes
	// nothing more.
	IdempotentHint *bool `json:"idempotentHint,omitempty"`
	// OpenWorldHint: the tool reaches outside a closed domain (the web,
	// say), not only the local project.
	OpenWorldHint *bool `json:"openWorldHint,omitempty"`
}

// Encode returns the annotations as Tool.Annotations carries them.
func (a *ToolAnnotations) Encode() json.RawMessage {
	b, err := json.Marshal(a)
	if err != nil {
		return nil // a struct of strings and bools always encodes
	}
	return b
}

// ListToolsParams are the params of tools/list.
type ListToolsParams struct {
	// Cursor is the previous page's NextCursor; empty for the first page.
	Cursor string `json:"cursor,omitempty"`
}

// ListToolsResult is one page of tools/list.
type ListToolsResult struct {
	Tools []Tool `json:"tools"`
	// NextCursor, when not empty, asks for another page.
	NextCursor string `json:"nextCursor,omitempty"`
}

// CallToolParams are the params of tools/call.
type CallToolParams struct {
	Name string `json:"name"`
	// Arguments is the arguments object; absent or null means {}.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Content is one content block of a tool result.
type Content struct {
	// Type is "text", "image", "audio", "resource_link" or "resource".
	Type string `json:"type"`
	// Text is a text block's text.
	Text string `json:"text,omitempty"`
	// Data is an image or audio block's base64 data.
	Data string `json:"data,omitempty"`
	// MimeType is an image, audio or resource block's type.
	MimeType string `json:"mimeType,omitempty"`
	// URI and Name describe a resource_link.
	URI  string `json:"uri,omitempty"`
	Name string `json:"name,omitempty"`
	// Resource is an embedded resource, as received.
	Resource json.RawMessage `json:"resource,omitempty"`
}

// ToolResult is a tools/call result.
type ToolResult struct {
	// Content are the result's content blocks, in order.
	Content []Content `json:"content"`
	// StructuredContent is the result as a JSON object, for a tool with an
	// OutputSchema it fits; passed through as received.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// IsError is true when the tool reported a failure as a result (a
	// decoded one comes back inside a *ToolError).
	IsError bool `json:"isError,omitempty"`
	// Raw is the whole result as received (DecodeToolResult); it is never
	// sent.
	Raw json.RawMessage `json:"-"`
}

// Text returns the text blocks of the result joined with newlines.
func (r *ToolResult) Text() string {
	only, n := -1, 0
	for i, c := range r.Content {
		if c.Type == "text" {
			only, n = i, n+1
		}
	}
	switch n {
	case 0:
		return ""
	case 1:
		return r.Content[only].Text
	}
	var b strings.Builder
	n = 0
	for _, c := range r.Content {
		if c.Type != "text" {
			continue
		}
		if n > 0 {
			b.WriteByte('\n')
		}
		n++
		b.WriteString(c.Text)
	}
	return b.String()
}

// TextResult returns a result with one text block per argument, in order.
func TextResult(texts ...string) *ToolResult {
	r := &ToolResult{Content: make([]Content, len(texts))}
	for i, t := range texts {
		r.Content[i] = Content{Type: "text", Text: t}
	}
	return r
}

// ErrorResult returns a result with IsError set and msg as its only text:
// a tool failure the model should read.
func ErrorResult(msg string) *ToolResult {
	r := TextResult(msg)
	r.IsError = true
	return r
}
