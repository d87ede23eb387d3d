package ideserver

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/idebridge/idebridge/lockfile"
	"github.com/idebridge/idebridge/mcp"
)

// Defaults used when the matching Options field is zero.
const (
	DefaultIDEName         = "idebridge"
	DefaultHost            = "127.0.0.1"
	DefaultProtocolVersion = mcp.LegacyProtocolVersion
	DefaultServerName      = "idebridge-ideserver"
	DefaultServerVersion   = "0.1.0"
	DefaultPingInterval    = 30 * time.Second
	DefaultWriteTimeout    = 10 * time.Second
	DefaultMaxMessageSize  = 64 << 20
	// DefaultCallTimeout bounds a tool call (openDiff aside).
	DefaultCallTimeout = time.Minute
	// DefaultRequestTimeout bounds reading an HTTP request and an idle
	// kept-alive connection.
	DefaultRequestTimeout = 10 * time.Second
	// DefaultToolsListTTL is the ttlMs of a modern tools/list: the tools
	// change only when the embedder registers or removes one.
	DefaultToolsListTTL = time.Minute
	// DefaultProgressInterval is the least time between two progress
	// notifications about one call.
	DefaultProgressInterval = 100 * time.Millisecond
	// DefaultMaxUnauthenticatedConns bounds the connections that have not
	// authenticated yet.
	DefaultMaxUnauthenticatedConns = 64
)

// Options configure a Server. A nil *Options, and every zero field, means
// the documented default.
type Options struct {
	// WorkspaceFolders are the folders the IDE has open; they go into the
	// lockfile and are served by getWorkspaceFolders. Relative paths are
	// made absolute; each must be an existing directory. Default: the
	// current working directory.
	WorkspaceFolders []string
	// IDEName is the lockfile's ideName. Default "idebridge".
	IDEName string
	// Transport is lockfile.TransportWS ("ws", the default: WebSocket on
	// "/") or lockfile.TransportSSE ("sse": the legacy GET /sse and POST
	// /messages endpoints).
	Transport string
	// Host is the address to listen on. Only loopback addresses are
	// accepted ("localhost" means 127.0.0.1); anything else makes New fail
	// with ErrNotLoopback. Default 127.0.0.1.
	Host string
	// Port to listen on; 0 picks a free port.
	Port int
	// AuthToken clients must send in the mcp.AuthHeader header. Default: 32 random bytes from crypto/rand, hex encoded.
	AuthToken string
	// LockfileDir is where <port>.lock is written. Default
	// $CLAUDE_CONFIG_DIR/ide, or ~/.claude/ide (see lockfile.Dir).
	LockfileDir string
	// NoLockfile turns off writing a lockfile (embedding, tests).
	NoLockfile bool
	// Getenv reads the environment for the default lockfile directory
	// (CLAUDE_CONFIG_DIR, HOME). Default os.Getenv.
	Getenv func(string) string

	// ProtocolVersion answered to initialize, whatever the client asked
	// for. Default mcp.LegacyProtocolVersion ("2024-11-05"), what every
	// deployed IDE answers.
	ProtocolVersion string
	// NegotiateProtocolVersion answers the version the client asks for
	// when it is one of mcp.SupportedProtocolVersions, and ProtocolVersion
	// otherwise, as MCP servers negotiate; by default ProtocolVersion is
	// answered whatever the client asked, as deployed IDEs do.
	NegotiateProtocolVersion bool
	// ServerName and ServerVersion are the initialize result's serverInfo.
	ServerName, ServerVersion string
	// Instructions, when set, goes in the initialize result: advice to the
	// model on how to use the server's tools.
	Instructions string

	// Logger receives one debug record per message received (method, id,
	// client, and the tool of a tools/call) and warnings about misbehaving
	// clients. Nil is silent.
	Logger *slog.Logger

	// PingInterval is how often WebSocket pings go to each client; a client
	// that has sent nothing (not even a pong) for two intervals is dropped.
	// For SSE it is the keep-alive comment interval. Default 30 s; negative
	// turns keep-alive off.
	PingInterval time.Duration
	// WriteTimeout bounds every write to a client; a client that does not
	// take a message within it is dropped. Default 10 s.
	WriteTimeout time.Duration
	// MaxMessageSize is the largest message accepted from a client, in
	// bytes; a larger one closes the WebSocket (1009) or fails the SSE POST
	// (413). Default 64 MiB.
	MaxMessageSize int64

	// DiffPolicy decides openDiff calls. Default RejectDiffs: a headless
	// server never accepts an edit nobody approved.
	DiffPolicy DiffPolicy
	// NoDefaultTools registers none of the default tools: the server
	// serves only what RegisterTool adds (an MCP server of one's own,
	// such as one served over stdio with ServeStream).
	NoDefaultTools bool
	// DisabledTools names default tools not to register (for example
	// "openDiff" to register your own, though RegisterTool also replaces).
	DisabledTools []string
	// ToolsPageSize, when positive, splits tools/list into pages of that
	// many tools linked by nextCursor, so clients' pagination can be
	// exercised. Default: one page.
	ToolsPageSize int
	// ToolsListTTL is the ttlMs of a modern tools/list or server/discover
	// result: how long a client may cache it. Default DefaultToolsListTTL;
	// negative means 0 (never fresh).
	ToolsListTTL time.Duration
	// ProgressInterval is the least time between two notifications/progress
	// about one call (see ReportProgress); reports in between are dropped.
	// Default DefaultProgressInterval; negative means no limit.
	ProgressInterval time.Duration
	// RefusePing answers the MCP ping request with -32601 Method not found,
	// as the Neovim plugin does; by default ping is answered with {}.
	RefusePing bool

	// Unconfined lets the default tools (and getDiagnostics) reach any
	// file. By default every path a tool is given must lie inside a
	// workspace folder once symbolic links are resolved; others are
	// refused with -32602 "Path outside the workspace". A file URI naming
	// another host is refused either way.
	Unconfined bool
	// CallTimeout bounds every tool call whose Tool.Timeout is zero: its
	// handler's context ends then, and the call is answered with an
	// error at that moment even if the handler has not returned. The
	// default openDiff has no bound (it waits for the user). Default
	// DefaultCallTimeout (1 min); negative means none.
	CallTimeout time.Duration
	// RequestTimeout bounds reading each HTTP request (its headers, and
	// an SSE POST's body) and how long a kept-alive connection may sit
	// idle between requests. Default DefaultRequestTimeout (10 s); a
	// negative value is rejected.
	RequestTimeout time.Duration
	// MaxUnauthenticatedConns bounds the connections that have not
	// authenticated yet (sent the token, or posted to a live SSE
	// session); over it the oldest is closed, so that a local user
	// without the token cannot exhaust the server's descriptors and lock
	// the agent out. Refused requests close their connection. Default
	// DefaultMaxUnauthenticatedConns (64); a negative value is rejected.
	MaxUnauthenticatedConns int

	// OnEvent, if set, is called for every client lifecycle event. It runs
	// on the client's connection goroutine, outside the server's locks, so
	// calls for different clients may be concurrent; one client's events
	// arrive in order. It must not block for long.
	OnEvent func(Event)
}

// config is Options with every default applied.
type config struct {
	Options
	folders     []string
	realFolders []string // folders with symbolic links resolved
}

func resolveOptions(o *Options) (*config, error) {
	c := &config{}
	if o != nil {
		c.Options = *o
	}
	if c.IDEName == "" {
		c.IDEName = DefaultIDEName
	}
	switch c.Transport {
	case "":
		c.Transport = lockfile.TransportWS
	case lockfile.TransportWS, lockfile.TransportSSE:
	default:
		return nil, fmt.Errorf("ideserver: unknown transport %q (want %q or %q)", c.Transport, lockfile.TransportWS, lockfile.TransportSSE)
	}
	host, err := loopbackListenHost(c.Host)
	if err != nil {
		return nil, err
	}
	c.Host = host
	if c.Port < 0 || c.Port > 65535 {
		return nil, fmt.Errorf("ideserver: invalid port %d", c.Port)
	}
	if c.ProtocolVersion == "" {
		c.ProtocolVersion = DefaultProtocolVersion
	}
	if c.ServerName == "" {
		c.ServerName = DefaultServerName
	}
	if c.ServerVersion == "" {
		c.ServerVersion = DefaultServerVersion
	}
	if c.PingInterval == 0 {
		c.PingInterval = DefaultPingInterval
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.MaxMessageSize <= 0 {
		c.MaxMessageSize = DefaultMaxMessageSize
	}
	switch {
	case c.ToolsListTTL == 0:
		c.ToolsListTTL = DefaultToolsListTTL
	case c.ToolsListTTL < 0:
		c.ToolsListTTL = 0
	}
	switch {
	case c.ProgressInterval == 0:
		c.ProgressInterval = DefaultProgressInterval
	case c.ProgressInterval < 0:
		c.ProgressInterval = 0
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	switch {
	case c.RequestTimeout < 0:
		return nil, fmt.Errorf("ideserver: Options.RequestTimeout is negative (%v)", c.RequestTimeout)
	case c.RequestTimeout == 0:
		c.RequestTimeout = DefaultRequestTimeout
	}
	switch {
	case c.MaxUnauthenticatedConns < 0:
		return nil, fmt.Errorf("ideserver: Options.MaxUnauthenticatedConns is negative (%d)", c.MaxUnauthenticatedConns)
	case c.MaxUnauthenticatedConns == 0:
		c.MaxUnauthenticatedConns = DefaultMaxUnauthenticatedConns
	}
	if c.DiffPolicy == nil {
		c.DiffPolicy = RejectDiffs
	}
	getenv := c.Getenv
	if c.ToolsPageSize < 0 {
		return nil, fmt.Errorf("ideserver: negative ToolsPageSize %d", c.ToolsPageSize)
	}
	folders := c.WorkspaceFolders
	if len(folders) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("ideserver: default workspace folder: %w", err)
		}
		folders = []string{wd}
	}
	for _, f := range folders {
		abs, err := filepath.Abs(f)
		if err != nil {
			return nil, fmt.Errorf("ideserver: workspace folder %s: %w", f, err)
		}
		st, err := os.Stat(abs)
		if err != nil {
			return nil, fmt.Errorf("ideserver: workspace folder: %w", err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("ideserver: workspace folder %s is not a directory", abs)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("ideserver: workspace folder: %w", err)
		}
		c.folders = append(c.folders, abs)
		c.realFolders = append(c.realFolders, real)
	}
	if !c.NoLockfile && c.LockfileDir == "" {
		// lockfile.Dir falls back to os.UserHomeDir only for a nil
		// environment.
		var environ []string
		if getenv != nil {
			environ = []string{}
			for _, k := range []string{lockfile.EnvConfigDir, "HOME", "USERPROFILE"} {
				environ = append(environ, k+"="+getenv(k))
			}
		}
		dir, err := lockfile.Dir(environ, nil)
		if err != nil {
			return nil, fmt.Errorf("ideserver: default lockfile directory: %w", err)
		}
		c.LockfileDir = dir
	}
	return c, nil
}

// loopbackListenHost validates Options.Host and returns the IP literal to
// listen on.
func loopbackListenHost(h string) (string, error) {
	switch strings.ToLower(h) {
	case "":
		return DefaultHost, nil
	case "localhost":
		return DefaultHost, nil
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	if ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("%w: %q", ErrNotLoopback, h)
	}
	return ip.String(), nil
}
