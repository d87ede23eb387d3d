package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

// The tools of `idebridge mcp` answer every failure a model can do
// something about as an isError result with one sentence saying what went
// wrong and what to do; JSON-RPC errors are left for protocol faults.

// callTimeout bounds a tool call that does not wait for the user; one
// that runs out answers an isError result saying so.
const callTimeout = 2 * time.Minute

// toolSpec describes a tool: its name, title, description, input and
// output schemas and behaviour hints.
type toolSpec struct {
	name, title, description string
	input, output            string
	// readOnly, destructive and idempotent are the annotations' hints;
	// every tool here works on the local project (openWorldHint false).
	readOnly, destructive, idempotent bool
	// user: the tool waits for the user's decision, as long as they take
	// (the client may still cancel the call); else it is bounded by
	// callTimeout.
	user bool
}

// defineTool builds the tool of spec whose arguments decode into A.
// Arguments that do not decode are answered as an isError result naming
// the problem, so that a model can correct its call. A result without
// structured content gets the failure shape ({status, reason}).
func defineTool[A any](spec toolSpec, run func(ctx context.Context, a *A) *mcp.ToolResult) ideserver.Tool {
	f := false
	ann := &mcp.ToolAnnotations{Title: spec.title, ReadOnlyHint: &spec.readOnly, OpenWorldHint: &f}
	if !spec.readOnly {
		ann.DestructiveHint, ann.IdempotentHint = &spec.destructive, &spec.idempotent
	} else {
		t := true
		ann.IdempotentHint = &t
	}
	limit := callTimeout
	if spec.user {
		limit = 0
	}
	name := spec.name
	names := nameArgs[A]()
	return ideserver.Tool{
		Tool: mcp.Tool{
			Name:         name,
			Title:        spec.title,
			Description:  spec.description,
			InputSchema:  json.RawMessage(withMaxLength(spec.input, names)),
			OutputSchema: json.RawMessage(spec.output),
			Annotations:  ann.Encode(),
		},
		// The server's own call timeout is off: the tools bound
		// themselves, so that running out is a sentence, not a protocol
		// error.
		Timeout: -1,
		Handler: func(ctx context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
			res := overlongName(name, names, call.Arguments)
			if res == nil {
				res = runTool(ctx, name, limit, call.Arguments, run)
			}
			if res.StructuredContent == nil {
				res.StructuredContent = failure(statusUnknown, clip(res.Text()))
			}
			return res, nil
		},
	}
}

func runTool[A any](ctx context.Context, name string, limit time.Duration, args json.RawMessage, run func(ctx context.Context, a *A) *mcp.ToolResult) *mcp.ToolResult {
	var a A
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return mcp.ErrorResult(fmt.Sprintf("The arguments of %s do not fit its input schema (%v); call it again with the arguments its schema describes.", name, clip(argError(err))))
	}
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	res := run(ctx, &a)
	if limit > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) && !res.IsError {
		out := errorf("%s did not finish within %v; its answer may be incomplete:\n%s", name, limit, res.Text())
		out.StructuredContent = failure(statusUnknown, fmt.Sprintf("%s did not finish within %v", name, limit))
		return out
	}
	return res
}

// maxNameArg bounds a string argument that names something: a path, a
// symbol's new name, a direction. No file name is that long, so such an
// argument is refused before it is decoded (decoding, cleaning and quoting
// it would copy it several times). A name argument is a plain string
// field of a tool's argument type; text a tool writes (content,
// old_string, new_string) is a *string field, bounded only by the
// message size.
const maxNameArg = 64 << 10

// nameArgs returns the JSON names, lower-cased, of A's name arguments
// (see maxNameArg).
func nameArgs[A any]() map[string]bool {
	names := map[string]bool{}
	t := reflect.TypeFor[A]()
	if t.Kind() != reflect.Struct {
		return names
	}
	for _, f := range reflect.VisibleFields(t) { // an embedded struct's too, as encoding/json
		if f.Type.Kind() != reflect.String || !f.IsExported() || f.Anonymous {
			continue
		}
		n, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if n == "-" {
			continue
		}
		if n == "" {
			n = f.Name
		}
		names[strings.ToLower(n)] = true
	}
	return names
}

// withMaxLength returns the object schema with a maxLength of maxNameArg
// added to each of its string properties that is a name argument (names,
// lower-cased) and has none: a client sees the bound, and the server
// refuses a far longer value while the message is still being read,
// without holding it (see ideserver's Tool).
func withMaxLength(schema string, names map[string]bool) string {
	data := []byte(schema)
	var at []int // where to insert: before each such property's closing brace
	jsonrpc.ScanObject(data, func(key, props []byte) bool {
		if string(key) != "properties" || len(props) == 0 || props[0] != '{' {
			return true
		}
		jsonrpc.ScanObject(props, func(name, p []byte) bool {
			n, ok := jsonrpc.UnquoteString(append(append([]byte{'"'}, name...), '"'))
			if !ok || !names[strings.ToLower(n)] || p[0] != '{' {
				return true
			}
			var ps struct {
				Type      string          `json:"type"`
				MaxLength json.RawMessage `json:"maxLength"`
			}
			if json.Unmarshal(p, &ps) == nil && ps.Type == "string" && ps.MaxLength == nil {
				at = append(at, cap(data)-cap(p)+len(p)-1)
			}
			return true
		})
		return true
	})
	if len(at) == 0 {
		return schema
	}
	var b strings.Builder
	prev := 0
	for _, i := range at {
		b.WriteString(schema[prev:i])
		fmt.Fprintf(&b, `,"maxLength":%d`, maxNameArg)
		prev = i
	}
	b.WriteString(schema[prev:])
	return b.String()
}

// overlongName returns the isError result refusing a name argument, or an
// argument's name, longer than maxNameArg, quoting its start, or nil when
// there is none. It reads
// the raw arguments without decoding them: nothing of the size of the
// argument is allocated.
func overlongName(tool string, names map[string]bool, args []byte) *mcp.ToolResult {
	if len(args) <= maxNameArg {
		return nil
	}
	var res *mcp.ToolResult
	jsonrpc.ScanObject(args, func(key, value []byte) bool {
		if len(key) > maxNameArg {
			res = errorf("%s has no argument named %s: call it again with the arguments its schema describes.",
				tool, quoteStart(key))
			return false
		}
		if len(value) <= maxNameArg+2 || value[0] != '"' {
			return true
		}
		k, ok := jsonrpc.UnquoteString(append(append([]byte{'"'}, key...), '"'))
		if !ok || !names[strings.ToLower(k)] {
			return true
		}
		res = errorf("The argument %s of %s is %d bytes long (%s); no name is longer than %d bytes: call it again with the path or name meant.",
			k, tool, len(value)-2, quoteStart(value[1:len(value)-1]), maxNameArg)
		return false
	})
	return res
}

// quoteStart returns the start of raw, the text between the quotes of a
// valid JSON string literal, decoded and clipped as clip does, copying
// only that start.
func quoteStart(raw []byte) string {
	i := 0
	for i < len(raw) && i < maxQuoted {
		switch {
		case raw[i] != '\\':
			i++
		case raw[i+1] == 'u':
			i += 6
		default:
			i += 2
		}
	}
	i = min(i, len(raw))
	for i > 0 && i < len(raw) && raw[i]&0xC0 == 0x80 {
		i-- // not inside a UTF-8 sequence
	}
	start := make([]byte, 0, i+2)
	start = append(append(append(start, '"'), raw[:i]...), '"')
	s, ok := jsonrpc.UnquoteString(start)
	if !ok {
		s = "?"
	}
	return fmt.Sprintf("%s… (%d bytes in all)", s, len(raw))
}

// argError says what was wrong with arguments in the words of a model's
// call, not Go's.
func argError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s must be %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "there is no argument " + f
	}
	return strings.TrimPrefix(msg, "json: ")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "int", "int64", "int32", "uint", "uint64":
		return "an integer"
	case "bool":
		return "a boolean"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return goKind
}

// errorf is an isError result.
func errorf(format string, args ...any) *mcp.ToolResult {
	return mcp.ErrorResult(fmt.Sprintf(format, args...))
}

// textf is a result of one text block.
func textf(format string, args ...any) *mcp.ToolResult {
	return mcp.TextResult(fmt.Sprintf(format, args...))
}

// objectSchema writes a JSON Schema object with the given properties (in
// order: name, then its schema) and required names.
func objectSchema(props []prop, required ...string) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i, p := range props {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(p.name)
		b.Write(name)
		b.WriteByte(':')
		b.WriteString(p.schema)
	}
	b.WriteString(`}`)
	if len(required) > 0 {
		req, _ := json.Marshal(required)
		b.WriteString(`,"required":`)
		b.Write(req)
	}
	b.WriteString(`,"additionalProperties":false}`)
	return b.String()
}

type prop struct{ name, schema string }

// typed returns a property schema of a JSON type with a description.
func typed(typ, description string) string {
	d, _ := json.Marshal(description)
	return `{"type":"` + typ + `","description":` + string(d) + `}`
}

// rel displays path relative to the project when it lies inside it.
func (p project) rel(path string) string {
	r, err := filepath.Rel(p.dir, path)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return path
	}
	return filepath.ToSlash(r)
}
