package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/idebridge/idebridge/warm"
)

// The runtime's Streamable HTTP endpoints (warm.HTTPOptions): MCP clients
// that speak only HTTP reach the shared runtime directly.

const runtimeHTTPHelp = "MCP clients that speak Streamable HTTP reach the runtime directly, the project\n" +
	"named in the URL: http://localhost/mcp?project=/abs/dir on the unix socket\n" +
	"BUILD.http beside the runtime's (this user only, no token), and with --http\n" +
	"on a loopback TCP address, each request with \"Authorization: Bearer TOKEN\", the\n" +
	"token kept 0600 in http.token in the runtime directory. A project's servers are\n" +
	"those `idebridge mcp` would load in its directory, so HTTP and stdio clients share\n" +
	"them. An HTTP session with no request for --http-session-idle ends.\n" +
	"`idebridge runtime http` prints a client's configuration."

type runtimeHTTPFlags struct {
	addr string
	idle time.Duration
}

func (h *runtimeHTTPFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&h.addr, "http", "", "serve MCP's Streamable HTTP on this loopback `address` too (127.0.0.1:PORT), with a bearer token")
	fs.DurationVar(&h.idle, "http-session-idle", 0, "end an HTTP session after this long with no request (default 60s, at most 30m)")
}

// options are the runtime's HTTP options: a project's servers are those
// `idebridge mcp` loads with no flag in its directory (the Claude Code
// plugins enabled for it, the project's own settings only when it is
// trusted; else gopls), never a configuration the request brings.
func (h *runtimeHTTPFlags) options(inv *invocation) warm.HTTPOptions {
	return warm.HTTPOptions{
		Addr:        h.addr,
		SessionIdle: h.idle,
		Project: func(dir string) (*warm.Project, error) {
			set := loadServers(inv, dir, &serverSources{}, nil)
			tuneBuiltinGopls(set.configs, set.origins)
			return runtimeProject(dir, set.configs), nil
		},
	}
}

func printRuntimeHTTP(inv *invocation, h *warm.HTTPStatus) {
	if h == nil {
		return
	}
	fmt.Fprintf(inv.Stdout, "Streamable HTTP on unix socket %s", h.Socket)
	if h.URL != "" {
		fmt.Fprintf(inv.Stdout, " and %s (bearer token in %s)", h.URL, h.TokenFile)
	}
	fmt.Fprintf(inv.Stdout, "; sessions end after %s with no request\n", h.SessionIdle)
}

func describeHTTPSession(s warm.SessionStatus) string {
	who := s.Client
	if who == "" {
		who = "(one request)"
	}
	pid := ""
	if s.PID > 0 {
		pid = fmt.Sprintf(" pid %d", s.PID)
	}
	return fmt.Sprintf("#%d %s %s%s since %s", s.ID, s.Transport, who, pid, s.Since.Format(time.TimeOnly))
}

func init() {
	register(&command{
		Name:    "runtime http",
		Usage:   "[--project DIR] [--json]",
		Summary: "print how an MCP client reaches the shared runtime over Streamable HTTP",
		Help: "Prints the runtime's endpoints for the project (default the working directory)\n" +
			"and a configuration to paste into an MCP client's .mcp.json (the TCP endpoint's,\n" +
			"with its bearer token, when the runtime serves one: `idebridge runtime serve\n" +
			"--http 127.0.0.1:PORT`). --json prints the endpoints and the token as JSON.\n" +
			"Exit status 2 when no runtime of this build runs.\n\n" + runtimeHTTPHelp,
		Setup: func(fs *flag.FlagSet) runFunc {
			project := fs.String("project", "", "the project `directory` (default the working directory)")
			asJSON := fs.Bool("json", false, "print the endpoints as JSON")
			return func(ctx context.Context, inv *invocation, args []string) int {
				const name = "idebridge runtime http"
				if len(args) > 0 {
					fmt.Fprintf(inv.Stderr, "%s: unexpected argument %q\n", name, args[0])
					return exitUsage
				}
				wd, err := inv.Getwd()
				if err != nil {
					fmt.Fprintf(inv.Stderr, "%s: working directory: %v\n", name, err)
					return exitFailure
				}
				dir := wd
				if *project != "" {
					dir = absIn(wd, *project)
				}
				if st, err := os.Stat(dir); err != nil || !st.IsDir() {
					fmt.Fprintf(inv.Stderr, "%s: --project %s is not a directory\n", name, dir)
					return exitUsage
				}
				ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				st, err := warm.GetStatus(ctx, &warm.Options{Env: inv.environ()})
				if err != nil {
					fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
					if errors.Is(err, warm.ErrNotRunning) || errors.Is(err, warm.ErrVersionSkew) {
						return exitUnavailable
					}
					return exitFailure
				}
				if st.HTTP == nil {
					fmt.Fprintf(inv.Stderr, "%s: the runtime (pid %d) serves no HTTP\n", name, st.PID)
					return exitUnavailable
				}
				out := runtimeHTTPOut{Project: dir, Socket: st.HTTP.Socket, SocketURL: warm.HTTPURL("http://localhost"+warm.HTTPPath, dir)}
				if st.HTTP.URL != "" {
					tok, err := warm.ReadHTTPToken(st.HTTP.TokenFile)
					if err != nil {
						fmt.Fprintf(inv.Stderr, "%s: %v\n", name, err)
						return exitFailure
					}
					out.URL, out.Token, out.TokenFile = warm.HTTPURL(st.HTTP.URL, dir), tok, st.HTTP.TokenFile
				}
				if *asJSON {
					if !inv.writeJSON(name, out) {
						return exitFailure
					}
					return exitOK
				}
				fmt.Fprintf(inv.Stdout, "project %s\n", dir)
				fmt.Fprintf(inv.Stdout, "unix socket %s: POST %s (this user only, no token)\n", out.Socket, out.SocketURL)
				if out.URL == "" {
					fmt.Fprintf(inv.Stdout, "no TCP endpoint: the runtime (pid %d) was started without --http; run `idebridge runtime stop`, then `idebridge runtime serve --http 127.0.0.1:PORT`\n", st.PID)
					return exitOK
				}
				fmt.Fprintf(inv.Stdout, "TCP: %s with \"Authorization: Bearer <the token in %s>\"\n\n", out.URL, out.TokenFile)
				cfg := map[string]any{"mcpServers": map[string]any{"idebridge": map[string]any{
					"type": "http", "url": out.URL, "headers": map[string]string{"Authorization": "Bearer " + out.Token}}}}
				b, _ := json.MarshalIndent(cfg, "", "  ")
				fmt.Fprintf(inv.Stdout, "An MCP client's configuration (.mcp.json):\n%s\n", b)
				return exitOK
			}
		},
	})
}

// runtimeHTTPOut is what `runtime http --json` prints.
type runtimeHTTPOut struct {
	Project   string `json:"project"`
	Socket    string `json:"socket"`
	SocketURL string `json:"socketURL"`
	URL       string `json:"url,omitempty"`
	Token     string `json:"token,omitempty"`
	TokenFile string `json:"tokenFile,omitempty"`
}
