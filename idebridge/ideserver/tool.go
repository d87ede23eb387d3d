package ideserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/idebridge/idebridge/mcp"
)

// A ToolHandler runs one tools/call. It must return once ctx is done; ctx
// ends when the client cancels the call (cause ErrRequestCancelled: no answer
// is sent), the client disconnects (ErrClientGone) or the server shuts down
// (ErrServerClosed).
//
// Errors and results, matching deployed IDEs:
//   - a returned error becomes a JSON-RPC error response: an *mcp.Error (or an
//     error wrapping one) is sent as is, as the Neovim plugin does for
//     "File not open" (-32001); any other error is sent as -32000 with the
//     error's text (-32800 when it wraps context.Canceled);
//   - a tool failure the model should read goes in a result with IsError
//     set (see mcp.ErrorResult);
//   - a nil result with a nil error is an empty content list.
//
// A panic in a handler is recovered and answered -32603.
type ToolHandler func(ctx context.Context, call *ToolCall) (*mcp.ToolResult, error)

// Tool is one tool the server serves: its description, as tools/list sends
// it, and the handler that runs it.
type Tool struct {
	// Tool describes the tool. Name is required; a nil InputSchema means
	// {"type":"object"}. OutputSchema, when set, must be an object schema
	// ("type": "object"): the tool's results then carry StructuredContent
	// that fits it. Annotations, when set, must be a JSON object (see
	// mcp.ToolAnnotations). tools/list sends all of them as given
	// (compacted); a tool that sets none is listed as before. A
	// maxLength the input schema gives a top-level string property is
	// also a bound while a long message is read (see ServeStream): a
	// value of more than 12 bytes a character over it is refused without
	// being held, and so is a string of more than 64 KiB for an argument
	// a schema with "additionalProperties": false does not take; shorter
	// values are the handler's to check.
	mcp.Tool
	// Handler runs the tool. Required.
	Handler ToolHandler
	// Hidden tools are callable but left out of tools/list, as deployed
	// IDEs do with close_tab.
	Hidden bool
	// Inline runs the handler on the connection's read goroutine instead
	// of a goroutine of its own, which saves a goroutine handoff per call
	// (several microseconds). Only for handlers that return at once and
	// never wait (no network, no user, no locks held by other calls):
	// while an inline handler runs, its client's further messages,
	// notifications/cancelled included, wait.
	Inline bool
	// Timeout bounds each call: the handler's context ends then and the
	// call is answered with an error, whether the handler has returned or
	// not. Zero means Options.CallTimeout; negative means no bound but
	// the client's and the server's life (the default openDiff, which
	// waits for the user). Inline tools are not bounded.
	Timeout time.Duration
}

// ToolCall is one tools/call request.
type ToolCall struct {
	// Name is the tool's name.
	Name string
	// Arguments is the raw arguments object ({} when the client sent none).
	Arguments json.RawMessage
	// Client is the calling client.
	Client ClientInfo
}

// Bind decodes the arguments into v. A decoding failure wraps an *mcp.Error with
// code -32602, so returning it from a handler answers "invalid params".
func (c *ToolCall) Bind(v any) error {
	if err := json.Unmarshal(c.Arguments, v); err != nil {
		return fmt.Errorf("decoding %s arguments: %w", c.Name, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "Invalid params", Data: mustJSON(err.Error())})
	}
	return nil
}

// JSONResult returns a result whose only text block is v encoded as JSON the
// way deployed IDEs write it: slashes escaped ("\/home\/dev"), HTML
// characters not escaped.
func JSONResult(v any) (*mcp.ToolResult, error) {
	b, err := jsonText(v)
	if err != nil {
		return nil, err
	}
	return mcp.TextResult(string(b)), nil
}

func jsonText(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding tool result: %w", err)
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	// A '/' can only occur inside JSON strings, where "\/" is a valid escape.
	return bytes.ReplaceAll(b, []byte("/"), []byte(`\/`)), nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

var defaultSchema = json.RawMessage(`{"type":"object"}`)

// registry holds tools in registration order.
type registry struct {
	mu    sync.RWMutex
	order []string
	tools map[string]*Tool
	// args holds, by tool, what its input schema says of its arguments
	// (see argLimit).
	args map[string]schemaArgs
}

func newRegistry() *registry {
	return &registry{tools: map[string]*Tool{}, args: map[string]schemaArgs{}}
}

// schemaArgs is what an input schema says of the length of the arguments
// it takes.
type schemaArgs struct {
	// maxLength of each top-level property, by its name lower-cased
	// (encoding/json matches names so); -1 for a property without one.
	maxLength map[string]int
	// closed: additionalProperties is false, no other argument is taken.
	closed bool
}

// parseSchemaArgs reads an input schema's properties' maxLength.
func parseSchemaArgs(schema json.RawMessage) schemaArgs {
	var s struct {
		Properties map[string]struct {
			MaxLength *float64 `json:"maxLength"`
		} `json:"properties"`
		AdditionalProperties json.RawMessage `json:"additionalProperties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return schemaArgs{}
	}
	a := schemaArgs{maxLength: map[string]int{}, closed: string(s.AdditionalProperties) == "false"}
	for name, p := range s.Properties {
		n := -1
		if p.MaxLength != nil && *p.MaxLength >= 0 && *p.MaxLength <= 1<<40 {
			n = max(int(*p.MaxLength), 1)
		}
		a.maxLength[strings.ToLower(name)] = n
	}
	return a
}

// limit returns the maxLength of the argument arg (lower-cased), -1 when
// it may be any length, 0 when it is not taken.
func (a schemaArgs) limit(arg string) int {
	if n, ok := a.maxLength[arg]; ok {
		return n
	}
	if a.closed {
		return 0
	}
	return -1
}

// argLimit returns the bound, in characters, of the string value of
// tool's argument arg, from the tool's input schema: its maxLength, or
// maxString when the schema takes no such argument; 0 when it may be of
// any length (bounded by the message size only). For tool "" (the call's
// name not read yet), the bound is the largest any tool gives the
// argument, and 0 unless all of them bound it.
func (r *registry) argLimit(tool, arg string) int {
	arg = strings.ToLower(arg)
	r.mu.RLock()
	defer r.mu.RUnlock()
	lim := func(a schemaArgs) int {
		switch n := a.limit(arg); n {
		case 0:
			return maxString
		case -1:
			return 0
		default:
			return n
		}
	}
	if tool != "" {
		a, ok := r.args[tool]
		if !ok {
			return 0
		}
		return lim(a)
	}
	bound := 0
	for _, a := range r.args {
		n := lim(a)
		if n == 0 {
			return 0
		}
		bound = max(bound, n)
	}
	return bound
}

func validateTool(t Tool) error {
	if t.Name == "" {
		return errors.New("ideserver: registering a tool: empty name")
	}
	if t.Handler == nil {
		return fmt.Errorf("ideserver: registering tool %s: nil handler", t.Name)
	}
	if t.InputSchema != nil {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(t.InputSchema, &obj); err != nil {
			return fmt.Errorf("ideserver: registering tool %s: input schema is not a JSON object: %w", t.Name, err)
		}
	}
	if t.OutputSchema != nil {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(t.OutputSchema, &obj); err != nil {
			return fmt.Errorf("ideserver: registering tool %s: output schema is not a JSON object: %w", t.Name, err)
		}
		if string(obj["type"]) != `"object"` {
			return fmt.Errorf("ideserver: registering tool %s: output schema's type is %s, not \"object\" (MCP's structured content is an object)", t.Name, cmp.Or(string(obj["type"]), "missing"))
		}
	}
	if t.Annotations != nil {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(t.Annotations, &obj); err != nil {
			return fmt.Errorf("ideserver: registering tool %s: annotations are not a JSON object: %w", t.Name, err)
		}
	}
	return nil
}

// compact returns raw JSON without insignificant space (nil stays nil).
func compact(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if raw == nil || json.Compact(&buf, raw) != nil {
		return raw
	}
	return buf.Bytes()
}

// put adds or replaces t; a replaced tool keeps its place in the order.
func (r *registry) put(t Tool) {
	if t.InputSchema == nil {
		t.InputSchema = defaultSchema
	} else {
		t.InputSchema = compact(t.InputSchema)
	}
	t.OutputSchema = compact(t.OutputSchema)
	t.Annotations = compact(t.Annotations)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[t.Name]; !ok {
		r.order = append(r.order, t.Name)
	}
	r.tools[t.Name] = &t
	r.args[t.Name] = parseSchemaArgs(t.InputSchema)
}

func (r *registry) remove(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[name]; !ok {
		return false
	}
	delete(r.tools, name)
	delete(r.args, name)
	for i, n := range r.order {
		if n == name {
			r.order = append(r.order[:i:i], r.order[i+1:]...)
			break
		}
	}
	return true
}

func (r *registry) get(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

func (r *registry) list() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Tool, len(r.order))
	for i, n := range r.order {
		out[i] = *r.tools[n]
	}
	return out
}

// page returns the tools/list result for cursor, pageSize tools at a time
// (all when pageSize is 0). The cursor is an opaque encoding of an offset.
func (r *registry) page(cursor string, pageSize int) (*mcp.ListToolsResult, error) {
	start := 0
	if cursor != "" {
		n, ok := decodeCursor(cursor)
		if !ok {
			return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "Invalid cursor", Data: mustJSON(cursor)}
		}
		start = n
	}
	tools := slices.DeleteFunc(r.list(), func(t Tool) bool { return t.Hidden })
	if start > len(tools) {
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "Invalid cursor", Data: mustJSON(cursor)}
	}
	end := len(tools)
	if pageSize > 0 && start+pageSize < end {
		end = start + pageSize
	}
	res := &mcp.ListToolsResult{Tools: make([]mcp.Tool, 0, end-start)}
	for _, t := range tools[start:end] {
		res.Tools = append(res.Tools, t.Tool)
	}
	if end < len(tools) {
		res.NextCursor = encodeCursor(end)
	}
	return res, nil
}

const cursorPrefix = "offset:"

func encodeCursor(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(n)))
}

func decodeCursor(s string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, false
	}
	digits, ok := bytes.CutPrefix(b, []byte(cursorPrefix))
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(string(digits))
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}
