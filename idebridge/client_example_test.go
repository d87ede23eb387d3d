package idebridge_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// exampleIDE starts a headless IDE (the server kit) on a temporary
// workspace, standing in for the user's editor.
func exampleIDE(policy ideserver.DiffPolicy) (srv *ideserver.Server, dir string, cleanup func()) {
	dir, err := os.MkdirTemp("", "idebridge-example")
	if err != nil {
		log.Fatal(err)
	}
	srv, err = ideserver.New(&ideserver.Options{WorkspaceFolders: []string{dir}, NoLockfile: true, DiffPolicy: policy})
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		log.Fatal(err)
	}
	return srv, dir, func() {
		srv.Close()
		os.RemoveAll(dir)
	}
}

// Show a proposed edit in the IDE's diff viewer and write the file only
// when the user accepts it (this IDE accepts everything).
func ExampleClient_OpenDiff() {
	srv, dir, cleanup := exampleIDE(ideserver.AcceptDiffs)
	defer cleanup()
	ctx := context.Background()

	// An agent would use Connect with a discovered Candidate; DialURL is
	// the same with the URL and token spelled out.
	client, err := idebridge.DialURL(ctx, srv.URL(), srv.AuthToken(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	path := filepath.Join(dir, "main.go")
	out, err := client.OpenDiff(ctx, idebridge.OpenDiffArgs{OldPath: path, NewContents: "package main\n"})
	if err != nil {
		log.Fatal(err)
	}
	if out.Accepted() {
		if err := os.WriteFile(path, []byte(out.FinalText), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	_ = client.CloseTab(ctx, out.TabName) // an error here changes nothing
	fmt.Println(out.Status, out.Accepted())
	fmt.Printf("%q\n", out.FinalText)
	// Output:
	// accepted true
	// "package main\n"
}

// Call any tool by name; a tool failure is a *ToolError with the IDE's
// message.
func ExampleClient_CallTool() {
	srv, _, cleanup := exampleIDE(nil)
	defer cleanup()
	srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: "greet"}, Handler: func(_ context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
		var args struct {
			Name string `json:"name"`
		}
		if err := call.Bind(&args); err != nil {
			return nil, err
		}
		if args.Name == "" {
			return mcp.ErrorResult("who?"), nil
		}
		return mcp.TextResult("hello, " + args.Name), nil
	}})
	ctx := context.Background()
	client, err := idebridge.DialURL(ctx, srv.URL(), srv.AuthToken(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	res, err := client.CallTool(ctx, "greet", map[string]string{"name": "editor"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())

	_, err = client.CallTool(ctx, "greet", nil)
	var te *mcp.ToolError
	if errors.As(err, &te) {
		fmt.Println("tool error:", te.Message)
	}
	// Output:
	// hello, editor
	// tool error: who?
}

// Follow the user's selection: notifications arrive on a channel that is
// closed when the connection ends.
func ExampleNotification_SelectionChanged() {
	srv, _, cleanup := exampleIDE(nil)
	defer cleanup()
	ctx := context.Background()
	client, err := idebridge.DialURL(ctx, srv.URL(), srv.AuthToken(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	srv.Notify(mcp.MethodSelectionChanged, map[string]any{
		"text": "func main()", "filePath": "/home/dev/proj/main.go",
		"selection": map[string]any{"start": map[string]int{"line": 2, "character": 0}, "end": map[string]int{"line": 2, "character": 11}, "isEmpty": false},
	})
	select {
	case n := <-client.Notifications():
		sel, err := n.SelectionChanged()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s line %d: %q\n", sel.FilePath, sel.Selection.Start.Line, sel.Text)
	case <-time.After(10 * time.Second):
		fmt.Println("no notification")
	}
	// Output:
	// /home/dev/proj/main.go line 2: "func main()"
}
