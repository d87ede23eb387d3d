package mcp_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/idebridge/idebridge/mcp"
)

// The three answers an IDE gives to tools/call: a result, a result flagged
// isError, and the Neovim plugin's error object inside result.
func ExampleDecodeToolResult() {
	for _, raw := range []string{
		`{"content":[{"type":"text","text":"FILE_SAVED"},{"type":"text","text":"package main\n"}]}`,
		`{"content":[{"type":"text","text":"no editor is active"}],"isError":true}`,
		`{"code":-32000,"message":"Buffer operation error","data":"Failed"}`,
	} {
		res, err := mcp.DecodeToolResult(mcp.ToolOpenDiff, json.RawMessage(raw))
		var te *mcp.ToolError
		if errors.As(err, &te) {
			fmt.Printf("tool error, code %d: %s\n", te.Code, te.Message)
			continue
		}
		fmt.Printf("first text %q of %d blocks\n", res.Content[0].Text, len(res.Content))
	}
	// Output:
	// first text "FILE_SAVED" of 2 blocks
	// tool error, code 0: no editor is active
	// tool error, code -32000: Buffer operation error
}

func ExampleParseClosedDiffTabs() {
	n, ok := mcp.ParseClosedDiffTabs(mcp.ClosedDiffTabs(2))
	fmt.Println(n, ok)
	// Output: 2 true
}
