package mcpclient_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
	"github.com/idebridge/idebridge/mcpclient"
)

// A Conn over the WebSocket transport, against the server kit's headless
// IDE: one JSON-RPC call, its result still raw JSON.
func Example() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	srv, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{dir}, NoLockfile: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if err := srv.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	t, err := mcpclient.DialWebSocket(ctx, srv.URL(), &mcpclient.WebSocketOptions{AuthToken: srv.AuthToken()})
	if err != nil {
		fmt.Println(err)
		return
	}
	conn, err := mcpclient.New(t, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	raw, err := conn.Call(ctx, mcp.MethodCallTool, func(m *mcpclient.Message) error {
		return m.AppendJSON(mcp.CallToolParams{Name: mcp.ToolCloseAllDiffTabs})
	}, 10*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := mcp.DecodeToolResult(mcp.ToolCloseAllDiffTabs, raw)
	fmt.Println(res.Text(), err)
	// Output: CLOSED_0_DIFF_TABS <nil>
}
