package lsp_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/lsp"
)

// The agent loop with plugin servers: load the plugins' configuration,
// then for each file the agent edits, send the new text, wait until its
// diagnostics are fresh, and hand the model what is new. (Not run: it
// needs the plugins' language servers.)
func ExampleManager() {
	cfgs, problems := lsp.LoadPlugins([]lsp.Plugin{{Root: "/home/me/.claude/plugins/gopls"}},
		&lsp.LoadOptions{ProjectDir: "/home/me/project"})
	for _, p := range problems {
		log.Print(p) // invalid entries; the valid ones still load
	}
	m, err := lsp.NewManager(cfgs, &lsp.ManagerOptions{ProjectDir: "/home/me/project"})
	if err != nil {
		log.Fatal(err) // a negative option
	}
	defer m.Shutdown(context.Background())

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	path := "/home/me/project/main.go"
	if err := m.Change(ctx, path, "package main\n\nfunc main() { x := 1 }\n"); err != nil {
		log.Fatal(err) // *lsp.NoServerError, *lsp.ServerError, ...
	}
	res, err := m.Settle(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("fresh:", res.Freshness, res.Reason) // published, pulled, progress-ended, quiet or timed-out, and how
	if att, ok := m.Drain(); ok {
		fmt.Println(att.Render(&diag.RenderOptions{ProjectDir: "/home/me/project"}))
	}
}
