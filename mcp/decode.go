package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/idebridge/idebridge/internal/jsonrpc"
)

// DecodeToolResult decodes the result of a tools/call of tool. A result with
// isError set, and a result that holds an error object (code and message)
// but no content (the Neovim quirk), come back as a *ToolError; JSON that is
// not a result object is an error of its own. result is kept as Raw (not
// copied). It agrees with encoding/json on every input (package fuzz checks
// it) and decodes the usual result in one pass.
func DecodeToolResult(tool string, result json.RawMessage) (*ToolResult, error) {
	r, ok := decodeToolResultFast(result)
	if !ok {
		var res struct {
			ToolResult
			// The Neovim quirk: an error object inside result.
			Code    *int64          `json:"code"`
			Message *string         `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(result, &res); err != nil {
			return nil, fmt.Errorf("decoding result of IDE tool %s: %w", tool, err)
		}
		if res.Content == nil && res.Code != nil && res.Message != nil {
			return nil, &ToolError{Tool: tool, Code: *res.Code, Message: *res.Message, Data: res.Data}
		}
		r = &res.ToolResult
	}
	r.Raw = result
	if r.IsError {
		return nil, &ToolError{Tool: tool, Message: r.Text(), Result: r}
	}
	return r, nil
}

// decodeToolResultFast decodes the usual result in one validating pass; ok
// is false whenever encoding/json must decide (invalid JSON, the Neovim
// quirk, case-folded or escaped or duplicated keys, unexpected types), so
// that the two never disagree.
func decodeToolResultFast(raw []byte) (*ToolResult, bool) {
	r := &ToolResult{}
	var seen int
	ok := jsonrpc.ScanObject(raw, func(key, v []byte) bool {
		var bit int
		switch string(key) {
		case "content":
			bit = 1
			if v[0] == 'n' {
				break
			}
			if v[0] != '[' {
				return false
			}
			r.Content = make([]Content, 0, 2)
			if !jsonrpc.EachElement(v, func(elem []byte) bool {
				c, ok := decodeContentFast(elem)
				r.Content = append(r.Content, c)
				return ok
			}) {
				return false
			}
		case "isError":
			bit = 2
			switch string(v) {
			case "true":
				r.IsError = true
			case "false", "null":
			default:
				return false
			}
		case "structuredContent":
			bit = 4
			r.StructuredContent = bytes.Clone(v)
		case "code", "message", "data":
			return false // maybe the Neovim quirk: the slow path knows
		default:
			return plainUnknownKey(key, "content", "isError", "structuredContent", "code", "message", "data")
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
	return r, ok
}

func decodeContentFast(elem []byte) (Content, bool) {
	var c Content
	if elem[0] != '{' {
		return c, false
	}
	var seen int
	ok := jsonrpc.EachMember(elem, func(key, v []byte) bool {
		var dst *string
		var bit int
		switch string(key) {
		case "type":
			dst, bit = &c.Type, 1
		case "text":
			dst, bit = &c.Text, 2
		case "data":
			dst, bit = &c.Data, 4
		case "mimeType":
			dst, bit = &c.MimeType, 8
		case "uri":
			dst, bit = &c.URI, 16
		case "name":
			dst, bit = &c.Name, 32
		case "resource":
			bit = 64
			c.Resource = bytes.Clone(v)
		default:
			return plainUnknownKey(key, "type", "text", "data", "mimeType", "uri", "name", "resource")
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		if dst != nil {
			switch v[0] {
			case 'n':
			case '"':
				*dst = jsonrpc.UnquoteValid(v)
			default:
				return false
			}
		}
		return true
	})
	return c, ok
}

// plainUnknownKey reports whether encoding/json would also ignore key: it
// does not match any of known by case folding, and has no escapes.
func plainUnknownKey(key []byte, known ...string) bool {
	for _, c := range key {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	for _, k := range known {
		if bytes.EqualFold(key, []byte(k)) {
			return false
		}
	}
	return true
}
