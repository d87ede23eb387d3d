package ideserver

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/idebridge/idebridge/mcp"
)

// maxQuoted bounds how much of a client's input an error text quotes: a
// name or id of megabytes is shown by its start and its size, so that an
// answer never grows with the input.
const maxQuoted = 200

// clip returns s whole when it is at most n bytes, else its first n bytes
// (cut on a rune boundary) followed by the total size.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "... (" + strconv.Itoa(len(s)) + " bytes)"
}

// Bounds of what the server sends about a failure, whatever the handler
// put in it: a tool that quotes its input (a path, an argument's name)
// must not answer megabytes because it was given megabytes.
const (
	// maxErrorText bounds each text block of an isError tool result.
	maxErrorText = 4096
	// maxErrorMessage bounds a JSON-RPC error's message and data.
	maxErrorMessage = 1024
	// argsBudgetFloor: calls whose arguments are at most this many bytes
	// are never refused for the argument budget (see callTool).
	argsBudgetFloor = 64 << 10
)

// clipErrorResult returns res with every text block clipped to
// maxErrorText (res itself when none is longer).
func clipErrorResult(res *mcp.ToolResult) *mcp.ToolResult {
	long := false
	for _, c := range res.Content {
		long = long || len(c.Text) > maxErrorText
	}
	if !long {
		return res
	}
	out := *res
	out.Content = make([]mcp.Content, len(res.Content))
	for i, c := range res.Content {
		c.Text = clip(c.Text, maxErrorText)
		out.Content[i] = c
	}
	return &out
}

// clipError returns e with its message and data bounded.
func clipError(e *mcp.Error) *mcp.Error {
	if len(e.Message) <= maxErrorMessage && len(e.Data) <= maxErrorMessage {
		return e
	}
	c := *e
	c.Message = clip(e.Message, maxErrorMessage)
	if len(e.Data) > maxErrorMessage {
		var s string
		if json.Unmarshal(e.Data, &s) == nil {
			c.Data = mustJSON(clip(s, maxErrorMessage))
		} else {
			c.Data = mustJSON("(" + strconv.Itoa(len(e.Data)) + " bytes of data left out)")
		}
	}
	return &c
}
