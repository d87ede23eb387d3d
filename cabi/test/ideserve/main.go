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
//	tabs                        -> {"opened": [...], "closed": [...]}: the diff
//	                               tabs openDiff opened and close_tab closed
//	diagnostics PATH JSON       getDiagnostics answers JSON (an array of LSP
//	                            diagnostics) for PATH from now on -> "ok"
//
// -diff decides openDiff: accept saves the proposal, reject rejects it,
// hold waits until the tab is closed (by close_tab, closeAllDiffTabs or the
// client cancelling), as a user who has not decided yet.
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
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

func main() {
	workspace := flag.String("workspace", ".", "the workspace folder")
	lockDir := flag.String("lockfile-dir", "", "where to write the lockfile (default: $CLAUDE_CONFIG_DIR/ide)")
	transport := flag.String("transport", "ws", "ws or sse")
	diff := flag.String("diff", "accept", "accept, reject or hold openDiff calls")
	flag.Parse()
	if err := run(*workspace, *lockDir, *transport, *diff); err != nil {
		fmt.Fprintln(os.Stderr, "ideserve:", err)
		os.Exit(1)
	}
}

// ide is the test IDE's state behind its tools and commands.
type ide struct {
	mu     sync.Mutex
	opened []string
	closed []string
	diags  map[string]json.RawMessage // path -> diagnostics
}

func run(workspace, lockDir, transport, diff string) error {
	st := &ide{opened: []string{}, closed: []string{}, diags: map[string]json.RawMessage{}}
	decide := map[string]ideserver.DiffPolicy{"accept": ideserver.AcceptDiffs, "reject": ideserver.RejectDiffs}[diff]
	if diff == "hold" {
		decide = ideserver.DiffPolicyFunc(func(ctx context.Context, _ *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
			<-ctx.Done()
			return ideserver.DiffDecision{Action: ideserver.DiffReject}, nil
		})
	}
	if decide == nil {
		return fmt.Errorf("-diff must be accept, reject or hold, not %q", diff)
	}
	policy := ideserver.DiffPolicyFunc(func(ctx context.Context, req *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
		st.mu.Lock()
		st.opened = append(st.opened, req.TabName)
		st.mu.Unlock()
		return decide.Decide(ctx, req)
	})
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
	if err := st.registerTools(srv); err != nil {
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
			fmt.Println(st.command(srv, line))
		}
	}
}

// registerTools replaces close_tab with one that records the tabs it
// closes, and adds getDiagnostics answered from the diagnostics command.
func (st *ide) registerTools(srv *ideserver.Server) error {
	closeTab := ideserver.Tool{Tool: mcp.Tool{Name: "close_tab"}, Hidden: true, Handler: func(_ context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
		var a struct {
			TabName string `json:"tab_name"`
		}
		if err := call.Bind(&a); err != nil {
			return nil, err
		}
		st.mu.Lock()
		st.closed = append(st.closed, a.TabName)
		st.mu.Unlock()
		return mcp.TextResult("TAB_CLOSED"), nil
	}}
	getDiagnostics := ideserver.Tool{Tool: mcp.Tool{Name: "getDiagnostics"}, Handler: func(_ context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
		var a struct {
			URI string `json:"uri"`
		}
		if err := call.Bind(&a); err != nil {
			return nil, err
		}
		type file struct {
			URI         string          `json:"uri"`
			Diagnostics json.RawMessage `json:"diagnostics"`
		}
		st.mu.Lock()
		defer st.mu.Unlock()
		out := []file{}
		for p, d := range st.diags {
			u := (&url.URL{Scheme: "file", Path: p}).String()
			if a.URI == "" || a.URI == u {
				out = append(out, file{u, d})
			}
		}
		return ideserver.JSONResult(out)
	}}
	if err := srv.RegisterTool(closeTab); err != nil {
		return err
	}
	return srv.RegisterTool(getDiagnostics)
}

func (st *ide) command(srv *ideserver.Server, line string) string {
	verb, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch verb {
	case "tabs":
		st.mu.Lock()
		defer st.mu.Unlock()
		b, _ := json.Marshal(map[string][]string{"opened": st.opened, "closed": st.closed})
		return string(b)
	case "diagnostics":
		path, d, _ := strings.Cut(rest, " ")
		if !json.Valid([]byte(d)) {
			return "error: diagnostics: not JSON"
		}
		st.mu.Lock()
		st.diags[path] = json.RawMessage(d)
		st.mu.Unlock()
		return "ok"
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
