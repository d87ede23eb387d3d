package ideserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/gorilla/websocket"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// A headless IDE for a directory: agents find it through its lockfile and
// connect over WebSocket.
func Example() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	lockDir, _ := os.MkdirTemp("", "ide")
	defer os.RemoveAll(lockDir)

	srv, err := ideserver.New(&ideserver.Options{
		WorkspaceFolders: []string{dir},
		LockfileDir:      lockDir, // default: ~/.claude/ide
		DiffPolicy:       ideserver.AcceptDiffs,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := srv.Start(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	fmt.Println(strings.HasPrefix(srv.URL(), "ws://127.0.0.1:"))
	fmt.Println(filepath.Base(srv.LockfilePath()) == fmt.Sprint(srv.Port())+".lock")
	for _, t := range srv.Tools() {
		if !t.Hidden {
			fmt.Print(t.Name, " ")
		}
	}
	fmt.Println()
	// Output:
	// true
	// true
	// openFile openDiff closeAllDiffTabs getWorkspaceFolders getOpenEditors checkDocumentDirty saveDocument getCurrentSelection getLatestSelection
}

// What an agent sees: the MCP handshake and an openDiff, over a plain
// WebSocket.
func Example_wire() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	srv, _ := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{dir}, NoLockfile: true, DiffPolicy: ideserver.RejectDiffs})
	srv.Start(context.Background())
	defer srv.Close()

	h := http.Header{mcp.AuthHeader: {srv.AuthToken()}}
	d := websocket.Dialer{Subprotocols: []string{"mcp"}}
	conn, _, err := d.Dial(srv.URL(), h)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	roundTrip := func(msg string) string {
		conn.WriteMessage(websocket.TextMessage, []byte(msg))
		_, reply, _ := conn.ReadMessage()
		return string(reply)
	}
	var init struct {
		Result struct{ ProtocolVersion string }
	}
	json.Unmarshal([]byte(roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"demo","version":"1"}}}`)), &init)
	fmt.Println(init.Result.ProtocolVersion)
	fmt.Println(roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"openDiff","arguments":{"old_file_path":"x.txt","new_file_path":"x.txt","new_file_contents":"hi\n","tab_name":"x-1"}}}`))
	// Output:
	// 2024-11-05
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"DIFF_REJECTED"},{"type":"text","text":"x-1"}]}}
}

// Plug in a tool, here getDiagnostics as an editor with language servers
// would answer it.
func ExampleServer_RegisterTool() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	srv, _ := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{dir}, NoLockfile: true})
	err := srv.RegisterTool(ideserver.Tool{
		Tool: mcp.Tool{
			Name:        "getDiagnostics",
			Description: "Diagnostics for a file, or for every open file",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"uri":{"type":"string"}}}`),
		},
		Handler: func(ctx context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
			var args struct {
				URI string `json:"uri"`
			}
			if err := call.Bind(&args); err != nil {
				return nil, err // answered -32602
			}
			return ideserver.JSONResult([]any{})
		},
	})
	fmt.Println(err, len(srv.Tools()))
	// Output: <nil> 11
}

// A callback policy decides each proposed edit; it may block until a user
// answers, and must return when ctx ends.
func ExampleDiffPolicyFunc() {
	onlyGo := ideserver.DiffPolicyFunc(func(ctx context.Context, req *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
		if !strings.HasSuffix(req.NewPath, ".go") {
			return ideserver.DiffDecision{Action: ideserver.DiffReject}, nil
		}
		return ideserver.SaveDiff(req.NewContents), nil
	})
	for _, path := range []string{"/w/main.go", "/w/secrets.env"} {
		d, _ := onlyGo.Decide(context.Background(), &ideserver.DiffRequest{NewPath: path, NewContents: "x"})
		fmt.Println(path, d.Action)
	}
	// Output:
	// /w/main.go save
	// /w/secrets.env reject
}

func ExampleUnifiedDiff() {
	fmt.Print(ideserver.UnifiedDiff("a/main.go", "b/main.go",
		"package main\nfunc main() {}\n",
		"package main\nfunc main() { println(1) }\n"))
	// Output:
	// --- a/main.go
	// +++ b/main.go
	// @@ -1,2 +1,2 @@
	//  package main
	// -func main() {}
	// +func main() { println(1) }
}
