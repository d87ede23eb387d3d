package fuzz

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/idebridge/idebridge/mcp"
)

// toolResultModel decodes a tools/call result with encoding/json alone, the
// plain way, into what DecodeToolResult must return.
func toolResultModel(data []byte) (*mcp.ToolResult, *mcp.ToolError, bool) {
	var m struct {
		Content           []mcp.Content   `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
		Code              *int64          `json:"code"`
		Message           *string         `json:"message"`
		Data              json.RawMessage `json:"data"`
	}
	if json.Unmarshal(data, &m) != nil {
		return nil, nil, false
	}
	if m.Content == nil && m.Code != nil && m.Message != nil {
		return nil, &mcp.ToolError{Tool: "t", Code: *m.Code, Message: *m.Message, Data: m.Data}, true
	}
	r := &mcp.ToolResult{Content: m.Content, StructuredContent: m.StructuredContent, IsError: m.IsError, Raw: data}
	if m.IsError {
		var texts []string
		for _, c := range m.Content {
			if c.Type == "text" {
				texts = append(texts, c.Text)
			}
		}
		return nil, &mcp.ToolError{Tool: "t", Message: strings.Join(texts, "\n"), Result: r}, true
	}
	return r, nil, true
}

// FuzzToolResult checks DecodeToolResult, which decodes every tools/call
// result in one pass, against the plain encoding/json model: the same
// result, the same *ToolError (isError, and the Neovim quirk of an error
// object inside result), and an error exactly when the model fails.
func FuzzToolResult(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := mcp.DecodeToolResult("t", data)
		want, wantTE, ok := toolResultModel(data)
		if !ok {
			var te *mcp.ToolError
			if err == nil || errors.As(err, &te) {
				t.Fatalf("DecodeToolResult(%q) = %+v, %v; the model cannot decode it", data, got, err)
			}
			return
		}
		if wantTE != nil {
			var te *mcp.ToolError
			if !errors.As(err, &te) || !reflect.DeepEqual(te, wantTE) {
				t.Fatalf("DecodeToolResult(%q) error %#v, want %#v", data, err, wantTE)
			}
			return
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("DecodeToolResult(%q) = %+v, %v; want %+v", data, got, err, want)
		}
	})
}
