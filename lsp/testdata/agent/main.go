// Command agent plays an agent for package lsp's process-tree tests: it
// reads a JSON spec on stdin, starts the configured language servers
// through an lsp.Manager, opens the files and waits for their
// diagnostics, prints "READY" and the servers' statuses as one JSON line,
// and then does nothing until it is killed. The test kills it with
// SIGKILL and checks that nothing the servers started survives it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/idebridge/idebridge/lsp"
)

type spec struct {
	ProjectDir string             `json:"projectDir"`
	Env        []string           `json:"env"`
	Configs    []lsp.ServerConfig `json:"configs"`
	Open       []string           `json:"open"`
}

func main() {
	var s spec
	if err := json.NewDecoder(os.Stdin).Decode(&s); err != nil {
		fail(err)
	}
	m, err := lsp.NewManager(s.Configs, &lsp.ManagerOptions{ProjectDir: s.ProjectDir, Env: s.Env, SettleTimeout: time.Minute})
	if err != nil {
		fail(err)
	}
	if p := m.Problems(); len(p) > 0 {
		fail(fmt.Errorf("configuration: %v", p))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, f := range s.Open {
		if err := m.Open(ctx, f); err != nil {
			fail(err)
		}
	}
	for _, f := range s.Open {
		if _, err := m.Settle(ctx, f); err != nil {
			fail(err)
		}
	}
	out, _ := json.Marshal(m.Servers())
	fmt.Printf("READY %s\n", out)
	for {
		time.Sleep(time.Hour) // until killed
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "agent:", err)
	os.Exit(1)
}
