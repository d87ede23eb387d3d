package idebridge_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// An agent proposes an edit; the IDE shows it in its diff viewer and the
// user accepts it (here a headless IDE that accepts everything); the file
// is written.
func ExampleReviewer_ProposeEdit() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "main.go")
	os.WriteFile(path, []byte("package main\n"), 0o644)

	ide, _ := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{dir}, NoLockfile: true, DiffPolicy: ideserver.AcceptDiffs})
	ide.Start(ctx)
	defer ide.Close()

	client, err := idebridge.DialURL(ctx, ide.URL(), ide.AuthToken(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	r := idebridge.NewReviewer(client, nil)
	res, err := r.ProposeEdit(ctx, idebridge.EditRequest{Path: path, NewText: "package main\n\nfunc main() {}\n"})
	if err != nil {
		fmt.Println(err)
		return
	}
	text, _ := os.ReadFile(path)
	fmt.Println(res.Status, res.Written)
	fmt.Print(string(text))
	// Output:
	// accepted true
	// package main
	//
	// func main() {}
}

// Without an IDE, the same edit is written directly, and the result says
// so.
func ExampleApplyEdit() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "notes.txt")
	res, err := idebridge.ApplyEdit(idebridge.EditRequest{Path: path, NewText: "hello\n"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.ViaIDE, res.Created)
	// Output: applied false true
}

// An IDE extension older than the minimum is warned about, not refused.
func ExampleCheckServerVersion() {
	vc := idebridge.CheckServerVersion(mcp.Implementation{Name: "claudecode-neovim", Version: "0.2.0"}, "0.3.0")
	fmt.Println(vc.Older)
	fmt.Println(vc.Message)
	// Output:
	// true
	// claudecode-neovim 0.2.0 is older than 0.3.0: update the IDE extension; features it lacks will fail
}

// Around an edit, the diagnostics it introduced, rendered for the model
// with paths relative to the project (here the IDE's getDiagnostics is a
// stand-in that reports one error once the edit is made).
func ExampleDiagnosticsSnapshot_NewDiagnostics() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "main.go")
	os.WriteFile(path, []byte("package main\n\nfunc main() {\n}\n"), 0o644)

	ide, _ := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{dir}, NoLockfile: true})
	answer := "[]"
	ide.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: "getDiagnostics"}, Handler: func(context.Context, *ideserver.ToolCall) (*mcp.ToolResult, error) {
		return mcp.TextResult(answer), nil
	}})
	ide.Start(ctx)
	defer ide.Close()
	client, err := idebridge.DialURL(ctx, ide.URL(), ide.AuthToken(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	snap, err := idebridge.SnapshotDiagnostics(ctx, client, path)
	if err != nil {
		fmt.Println(err)
		return
	}
	os.WriteFile(path, []byte("package main\n\nfunc main() {\n\tundefinedName()\n}\n"), 0o644)
	answer = `[{"uri":"file://` + path + `","diagnostics":[{"message":"undefined: undefinedName","severity":"Error","source":"compiler",` +
		`"range":{"start":{"line":3,"character":1},"end":{"line":3,"character":14}}}]}]`
	news, err := snap.NewDiagnostics(ctx, client)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(news.Render(&diag.RenderOptions{ProjectDir: dir}))
	// Output:
	// <new-diagnostics>
	// The following new diagnostic issues were detected:
	//
	// main.go:
	//   ✘ [Line 4:2] undefined: undefinedName (compiler)
	// </new-diagnostics>
}
