// Package mcp is the Model Context Protocol vocabulary that IDE extensions
// and Claude Code speak, shared by the client (packages mcpclient and
// idebridge) and the IDE-side server kit (package idebridge/ideserver): the
// protocol versions, the auth header, the method and IDE tool names, the
// words of openDiff's answer, and the messages' types (Tool, Content,
// ToolResult, ...). It holds no connection and starts no goroutine; every
// value in it is safe for concurrent use once built.
//
// A tools/call result comes back as raw JSON; DecodeToolResult turns it
// into a *ToolResult, or a *ToolError for each of the three ways deployed
// IDEs report a failure:
//
//	res, err := mcp.DecodeToolResult(mcp.ToolOpenFile, raw)
//	var te *mcp.ToolError
//	if errors.As(err, &te) {
//		// the IDE said no: te.Message
//	}
//	fmt.Println(res.Text())
//
// The wire facts behind these names are in docs/PROTOCOL.md (MCP
// handshake; IDE tools and quirks); the exact messages Claude Code and the
// Neovim plugin exchange are in idebridge/testdata/mcp.
package mcp
