// Command ideserve is the headless IDE the libidebridge binding tests talk
// to: a real ideserver (WebSocket MCP server, lockfile, default tools)
// driven through its standard input.
//
// It prints one JSON line when it is listening:
//
//	{"port":N,"lockfile":"...","url":"ws://127.0.0.1:N/","authToken":"..."}
//
// then reads commands, one per line, answering each with one line:
//
//	notify METHOD PARAMS_JSON   send a notification to every client -> "ok"
//	clients                     -> the number of initialized clients
//
// It shuts down (removing its lockfile) when its standard input closes or
// it receives SIGINT or SIGTERM, so a test that dies never leaves it behind.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/idebridge/idebridge/idebridge/ideserver"
)

func main() {
	workspace := flag.String("workspace", ".", "the workspace folder")
	lockDir := flag.String("lockfile-dir", "", "where to write the lockfile (default: $CLAUDE_CONFIG_DIR/ide)")
	transport := flag.String("transport", "ws", "ws or sse")
	diff := flag.String("diff", "accept", "accept or reject openDiff calls")
	flag.Parse()
	if err := run(*workspace, *lockDir, *transport, *diff); err != nil {
		fmt.Fprintln(os.Stderr, "ideserve:", err)
		os.Exit(1)
	}
}

func run(workspace, lockDir, transport, diff string) error {
	policy := ideserver.RejectDiffs
	if diff == "accept" {
		policy = ideserver.AcceptDiffs
	}
	srv, err := ideserver.New(&ideserver.Options{
		WorkspaceFolders: []string{workspace},
		LockfileDir:      lockDir,
		Transport:        transport,
		DiffPolicy:       policy,
		IDEName:          "ideserve",
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Start(ctx); err != nil {
		return err
	}
	defer srv.Close()
	status, _ := json.Marshal(map[string]any{
		"port": srv.Port(), "lockfile": srv.LockfilePath(), "url": srv.URL(), "authToken": srv.AuthToken(),
	})
	fmt.Printf("%s\n", status)

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok {
				return nil
			}
			fmt.Println(command(srv, line))
		}
	}
}

func command(srv *ideserver.Server, line string) string {
	verb, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch verb {
	case "notify":
		method, params, _ := strings.Cut(rest, " ")
		var p any
		if params != "" {
			if err := json.Unmarshal([]byte(params), &p); err != nil {
				return "error: " + err.Error()
			}
		}
		if err := srv.Notify(method, p); err != nil {
			return "error: " + err.Error()
		}
		return "ok"
	case "clients":
		return fmt.Sprint(len(srv.Clients()))
	}
	return "error: unknown command " + verb
}
