package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/idebridge/idebridge/idebridge/ideserver"
)

// mcpHTTPFlags serve `idebridge mcp` over MCP's Streamable HTTP transport
// instead of stdio: --http on a loopback TCP address, --socket on a unix
// socket (both may be given). The bearer token goes in a 0600 file whose
// path the first log line names.
type mcpHTTPFlags struct {
	addr      string
	socket    string
	tokenFile string

	lns  []net.Listener
	urls []string
	file string
}

func (f *mcpHTTPFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.addr, "http", "", "serve MCP's Streamable HTTP transport on this loopback `address` (127.0.0.1:PORT; port 0 picks one) instead of stdio")
	fs.StringVar(&f.socket, "socket", "", "serve MCP's Streamable HTTP transport on a unix socket at `path` instead of stdio")
	fs.StringVar(&f.tokenFile, "token-file", "", "with --http or --socket: where to write the URL and bearer token, mode 0600 (default $XDG_RUNTIME_DIR/idebridge/mcp-PID.json, or the user cache directory)")
}

func (f *mcpHTTPFlags) enabled() bool { return f.addr != "" || f.socket != "" }

// start listens and writes the token file; note is what the first log line
// says about it ("" for stdio).
func (f *mcpHTTPFlags) start(inv *invocation, dir string, srv *ideserver.Server) (note string, code int) {
	if !f.enabled() {
		if f.tokenFile != "" {
			fmt.Fprintln(inv.Stderr, "idebridge mcp: --token-file needs --http or --socket")
			return "", exitUsage
		}
		return "", exitOK
	}
	if f.addr != "" {
		host, _, err := net.SplitHostPort(f.addr)
		ip := net.ParseIP(strings.Trim(host, "[]"))
		if err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
			fmt.Fprintf(inv.Stderr, "idebridge mcp: --http %s: want a loopback address such as 127.0.0.1:8765\n", f.addr)
			return "", exitUsage
		}
		ln, err := net.Listen("tcp", f.addr)
		if err != nil {
			fmt.Fprintf(inv.Stderr, "idebridge mcp: --http: %v\n", err)
			return "", exitFailure
		}
		f.lns = append(f.lns, ln)
		f.urls = append(f.urls, "http://"+ln.Addr().String()+ideserver.MCPPath)
	}
	if f.socket != "" {
		path := f.socket
		if wd, err := inv.Getwd(); err == nil {
			path = absIn(wd, f.socket)
		}
		ln, err := net.Listen("unix", path)
		if err != nil {
			f.stop()
			fmt.Fprintf(inv.Stderr, "idebridge mcp: --socket: %v\n", err)
			return "", exitFailure
		}
		os.Chmod(path, 0o600)
		f.socket = path
		f.lns = append(f.lns, ln)
		f.urls = append(f.urls, "http://localhost"+ideserver.MCPPath+" on unix socket "+path)
	}
	f.file = f.tokenFile
	if f.file == "" {
		base := inv.Getenv("XDG_RUNTIME_DIR")
		if base == "" {
			var err error
			if base, err = os.UserCacheDir(); err != nil {
				f.stop()
				fmt.Fprintf(inv.Stderr, "idebridge mcp: no directory for the token file (set --token-file): %v\n", err)
				return "", exitFailure
			}
		}
		f.file = filepath.Join(base, "idebridge", "mcp-"+strconv.Itoa(os.Getpid())+".json")
	}
	e := &ideserver.Endpoint{Transport: ideserver.TransportStreamableHTTP, AuthToken: srv.AuthToken(), PID: os.Getpid(), WorkspaceFolders: []string{dir}}
	if f.addr != "" {
		e.URL = "http://" + f.lns[0].Addr().String() + ideserver.MCPPath
	} else {
		e.URL, e.Socket = "http://localhost"+ideserver.MCPPath, f.socket
	}
	if f.addr != "" && f.socket != "" {
		e.Socket = f.socket
	}
	if err := ideserver.WriteEndpointFile(f.file, e); err != nil {
		f.stop()
		fmt.Fprintf(inv.Stderr, "idebridge mcp: %v\n", err)
		return "", exitFailure
	}
	return "; Streamable HTTP at " + strings.Join(f.urls, " and ") + ", bearer token in " + f.file, exitOK
}

// serve runs the session: Streamable HTTP on every listener when asked
// for, else stdio. It returns what ServeStream would.
func (f *mcpHTTPFlags) serve(ctx context.Context, inv *invocation, srv *ideserver.Server) error {
	if !f.enabled() {
		return srv.ServeStream(ctx, inv.Stdin, inv.Stdout)
	}
	errs := make(chan error, len(f.lns))
	for _, ln := range f.lns {
		go func() { errs <- srv.ServeStreamableHTTP(ctx, ln) }()
	}
	f.lns = nil // ServeStreamableHTTP closes them
	err := <-errs
	if errors.Is(err, context.Canceled) || errors.Is(err, ideserver.ErrServerClosed) {
		err = nil
	}
	return err
}

// stop closes listeners not yet served and removes the token file.
func (f *mcpHTTPFlags) stop() {
	for _, ln := range f.lns {
		ln.Close()
	}
	f.lns = nil
	if f.file != "" {
		os.Remove(f.file)
	}
}
