package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcpserver"
)

// A Go program that serves its working directory's code intelligence to
// an MCP client over stdio, as `idebridge mcp` does: register it with
// `claude mcp add mine -- ./mine`.
func Example() {
	srv, err := mcpserver.New(&mcpserver.Options{
		ServerName: "mine",
		// Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)), // silent by default
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	if err := srv.ServeStream(context.Background(), os.Stdin, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// An agent calls the tools in-process (or mounts them on its own
// ideserver.Server with Register): hover on a constant, with gopls, and
// the structured result beside the text.
func ExampleServer_Tools() {
	dir, _ := os.MkdirTemp("", "project")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\n// Answer is the answer.\nconst Answer = 42\n\nfunc main() {}\n"), 0o644)

	srv, err := mcpserver.New(&mcpserver.Options{ProjectDir: dir, NoIDE: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	for _, tool := range srv.Tools() {
		if tool.Name != "hover" {
			continue
		}
		res, _ := tool.Handler(context.Background(), &ideserver.ToolCall{
			Name: "hover", Arguments: json.RawMessage(`{"file":"main.go","line":4,"symbol":"Answer"}`)})
		var st struct {
			Status   string `json:"status"`
			Markdown string `json:"markdown"`
		}
		json.Unmarshal(res.StructuredContent, &st)
		fmt.Println(st.Status)
		fmt.Println(strings.Split(st.Markdown, "\n")[1]) // the signature, after "```go"
	}
	// Output:
	// complete
	// const Answer untyped int = 42
}
