package warm_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"path/filepath"
	"time"

	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/warm"
)

// An agent asks for the references of a function through the user's
// runtime, sharing the project's gopls (already warm) with every other
// client, and falls back to language servers of its own when no runtime
// can be reached. The rest of the agent is written against
// warm.Navigator, which both satisfy.
func ExampleDial() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir, _ := filepath.Abs(".")
	configs := []lsp.ServerConfig{lsp.GoplsConfig("gopls", dir)}

	var nav warm.Navigator
	// The runtime of the idebridge command in PATH (started if none runs).
	opts, err := warm.CommandOptions("")
	if err == nil {
		var r *warm.Remote
		r, err = warm.Dial(ctx, opts, &warm.Project{Dir: dir, Configs: configs, NoIDE: true})
		if err == nil {
			defer r.Close()
			nav = r
		}
	}
	if err != nil {
		log.Printf("no runtime (%v): servers of our own", err)
		m, err := lsp.NewManager(configs, &lsp.ManagerOptions{ProjectDir: dir})
		if err != nil {
			log.Fatal(err)
		}
		defer m.Shutdown(context.Background())
		nav = m
	}

	refs, err := nav.References(ctx, lsp.Pos{Path: filepath.Join(dir, "main.go"), Line: 10, Symbol: "run"}, true)
	switch {
	case errors.Is(err, lsp.ErrNoServer):
		log.Fatal("no language server for Go files")
	case err != nil:
		log.Fatal(err)
	}
	fmt.Print(refs.Render(&lsp.NavRenderOptions{ProjectDir: nav.ProjectDir()}))
}
