package idebridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idebridge/idebridge/mcp"
	"github.com/idebridge/idebridge/mcpclient"
	"github.com/idebridge/idebridge/pathconv"
)

// Defaults used when the matching ClientOptions field is zero.
const (
	// DefaultConnectTimeout bounds dialing plus the MCP handshake, like
	// Claude Code's connection limit (docs/PROTOCOL.md, Discovery).
	DefaultConnectTimeout = 35 * time.Second
	// DefaultCallTimeout bounds every call except openDiff.
	DefaultCallTimeout = 30 * time.Second
	// DefaultNotificationBuffer is the capacity of Notifications().
	DefaultNotificationBuffer = 256
	// DefaultClientName is the clientInfo name sent to the IDE.
	DefaultClientName = "idebridge"
)

// ClientOptions configure a Client. A nil *ClientOptions, and every zero
// field, means the documented default; a negative value is "off" where
// that is documented and an error (from Connect and DialURL) elsewhere.
type ClientOptions struct {
	// Logger receives debug records (dropped messages and notifications,
	// requests from the IDE, keep-alive failures). Nil is silent.
	Logger *slog.Logger

	// ClientName and ClientVersion are sent as initialize's clientInfo.
	// Defaults: "idebridge" and the module's version.
	ClientName, ClientVersion string

	// ConnectTimeout bounds dialing plus the handshake (initialize,
	// notifications/initialized, ide_connected, tools/list). Default 35 s;
	// negative means only the context bounds it.
	ConnectTimeout time.Duration
	// CallTimeout is the default deadline of every call except openDiff,
	// which waits for the user as long as its context allows. A context
	// with an earlier deadline wins. Default 30 s; negative means none.
	CallTimeout time.Duration
	// PingInterval is the keep-alive interval: WebSocket pings, or MCP
	// pings over SSE. When no sign of life (a pong, an answer, any data
	// at all) comes from the IDE within two intervals of a ping, the
	// connection is declared lost and every pending call fails with
	// ErrConnectionLost. Default mcpclient.DefaultPingInterval (15 s);
	// negative turns keep-alive off.
	PingInterval time.Duration
	// MaxMessageSize bounds one message, in bytes, in both directions; see
	// mcpclient.MessageTooLargeError. Default
	// mcpclient.DefaultMaxMessageSize (64 MiB).
	MaxMessageSize int64

	// NotificationBuffer is the capacity of the Notifications channel. The
	// reader never waits for a slow consumer: when the buffer is full,
	// the oldest notification is dropped (counted by
	// DroppedNotifications, logged at debug level). Default 256; negative
	// means notifications are not delivered at all.
	NotificationBuffer int

	// PID is sent in the ide_connected notification. Default os.Getpid();
	// negative means ide_connected is not sent.
	PID int
	// Capabilities is the initialize request's capabilities object.
	// Default {}.
	Capabilities json.RawMessage

	// Paths converts paths between the agent and the IDE (WSL). Default:
	// the candidate's converter for Connect, pathconv.Identity{} for
	// DialURL.
	Paths pathconv.Converter
}

// config is ClientOptions with the defaults applied.
type config struct {
	ClientOptions
}

func resolveClientOptions(o *ClientOptions) (*config, error) {
	c := &config{}
	if o != nil {
		c.ClientOptions = *o
	}
	if c.MaxMessageSize < 0 {
		return nil, fmt.Errorf("connecting to IDE: negative ClientOptions.MaxMessageSize %d", c.MaxMessageSize)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.ClientName == "" {
		c.ClientName = DefaultClientName
	}
	if c.ClientVersion == "" {
		c.ClientVersion = moduleVersion()
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.NotificationBuffer == 0 {
		c.NotificationBuffer = DefaultNotificationBuffer
	}
	if c.PID == 0 {
		c.PID = os.Getpid()
	}
	if len(c.Capabilities) == 0 {
		c.Capabilities = json.RawMessage("{}")
	}
	if c.Paths == nil {
		c.Paths = pathconv.Identity{}
	}
	return c, nil
}

// moduleVersion is this module's version as built, or "devel".
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	const path = "github.com/idebridge/idebridge"
	if bi.Main.Path == path && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == path && d.Version != "" {
			return d.Version
		}
	}
	return "devel"
}

// Client is an MCP client connected to one IDE. Its methods are safe for
// concurrent use. A Client ends when Close is called or the connection is
// lost; it never reconnects (make a new one).
type Client struct {
	cfg  *config
	conn *mcpclient.Conn

	protocol     string
	serverInfo   mcp.Implementation
	serverCaps   json.RawMessage
	instructions string

	notes   chan Notification
	dropped atomic.Uint64

	toolsMu  sync.Mutex
	tools    []mcp.Tool
	toolsGen uint64        // stale's value when tools was fetched
	stale    atomic.Uint64 // bumped by notifications/tools/list_changed
	hasTools bool
}

// Connect connects to a discovered IDE: WebSocket or SSE as its URL says,
// with its auth token and path converter. ctx bounds only the connection
// attempt and handshake (together with ClientOptions.ConnectTimeout); the
// connection lives until Close or until it is lost.
func Connect(ctx context.Context, c Candidate, opts *ClientOptions) (*Client, error) {
	rawURL := c.URL
	if rawURL == "" {
		if c.Port == 0 {
			return nil, errors.New("connecting to IDE: candidate has neither URL nor port")
		}
		host := c.Host
		if host == "" {
			host = "127.0.0.1"
		}
		hp := net.JoinHostPort(host, strconv.Itoa(c.Port))
		if c.Transport == "ws" {
			rawURL = "ws://" + hp + "/"
		} else {
			rawURL = "http://" + hp + "/sse"
		}
	}
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	if o.Paths == nil {
		o.Paths = c.Paths
	}
	return DialURL(ctx, rawURL, c.AuthToken, &o)
}

// DialURL connects to an IDE's MCP server at rawURL: ws:// (or wss://) for
// WebSocket, http:// (or https://) for the legacy SSE transport, where a URL
// without a path means /sse. authToken is sent as
// X-Claude-Code-Ide-Authorization when not empty. ctx bounds the connection
// attempt and handshake only.
func DialURL(ctx context.Context, rawURL, authToken string, opts *ClientOptions) (*Client, error) {
	cfg, err := resolveClientOptions(opts)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("connecting to IDE: %w", err)
	}
	if cfg.ConnectTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.ConnectTimeout)
		defer cancel()
	}
	var t mcpclient.Transport
	switch strings.ToLower(u.Scheme) {
	case "ws", "wss":
		t, err = mcpclient.DialWebSocket(ctx, u.String(), &mcpclient.WebSocketOptions{AuthToken: authToken, MaxMessageSize: cfg.MaxMessageSize})
	case "http", "https":
		if u.Path == "" || u.Path == "/" {
			u.Path = "/sse"
		}
		t, err = mcpclient.DialSSE(ctx, u.String(), &mcpclient.SSEOptions{AuthToken: authToken, MaxMessageSize: cfg.MaxMessageSize})
	default:
		return nil, fmt.Errorf("connecting to IDE at %s: unsupported URL scheme %q (want ws, wss, http or https)", u.Redacted(), u.Scheme)
	}
	if err != nil {
		return nil, fmt.Errorf("connecting to IDE at %s: %w", u.Redacted(), err)
	}
	c := &Client{cfg: cfg, notes: make(chan Notification, max(cfg.NotificationBuffer, 0))}
	c.conn, err = mcpclient.New(t, &mcpclient.Options{
		Logger:         cfg.Logger,
		MaxMessageSize: cfg.MaxMessageSize,
		PingInterval:   cfg.PingInterval,
		OnNotification: c.handleNotification,
		OnEnd:          func() { close(c.notes) },
	})
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("connecting to IDE at %s: %w", u.Redacted(), err)
	}
	if err := c.handshake(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("MCP handshake with IDE at %s: %w", u.Redacted(), err)
	}
	return c, nil
}

// handshake runs initialize, notifications/initialized, ide_connected and
// tools/list.
func (c *Client) handshake(ctx context.Context) error {
	params := mcp.InitializeParams{
		ProtocolVersion: mcp.ProtocolVersion,
		Capabilities:    c.cfg.Capabilities,
		ClientInfo:      mcp.Implementation{Name: c.cfg.ClientName, Version: c.cfg.ClientVersion},
	}
	raw, err := c.conn.Call(ctx, mcp.MethodInitialize, func(m *mcpclient.Message) error { return m.AppendJSON(params) }, 0)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var res mcp.InitializeResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("decoding initialize result: %w", err)
	}
	if !mcp.IsSupportedProtocolVersion(res.ProtocolVersion) {
		return fmt.Errorf("%w %q (this client speaks %s)", ErrUnsupportedProtocol, res.ProtocolVersion, strings.Join(mcp.SupportedProtocolVersions(), ", "))
	}
	c.protocol = res.ProtocolVersion
	c.serverInfo = res.ServerInfo
	c.serverCaps = res.Capabilities
	c.instructions = res.Instructions

	if err := c.conn.Notify(ctx, mcp.MethodInitialized, nil); err != nil {
		return err
	}
	if c.cfg.PID >= 0 {
		pid := int64(c.cfg.PID)
		err := c.conn.Notify(ctx, mcp.MethodIDEConnected, func(m *mcpclient.Message) error {
			m.AppendRaw(`{"pid":`)
			m.AppendInt(pid)
			m.AppendRaw(`}`)
			return nil
		})
		if err != nil {
			if c.conn.Err() != nil || ctx.Err() != nil {
				return err
			}
			// ide_connected is the IDE extensions' own notification; a
			// generic MCP server may refuse it (the official SDK's SSE
			// server answers the POST with 400) and still serve tools.
			c.cfg.Logger.Debug("the server refused ide_connected", "err", err)
		}
	}
	if _, err := c.Tools(ctx); err != nil {
		if c.conn.Err() != nil || ctx.Err() != nil {
			return err
		}
		// An IDE that cannot list its tools can still be called; Tools
		// tries again later.
		c.cfg.Logger.Debug("tools/list failed during the handshake", "err", err)
	}
	return nil
}

// ProtocolVersion returns the MCP protocol version the IDE answered.
func (c *Client) ProtocolVersion() string { return c.protocol }

// ServerInfo returns the IDE's serverInfo.
func (c *Client) ServerInfo() mcp.Implementation { return c.serverInfo }

// ServerCapabilities returns the IDE's capabilities object as received.
func (c *Client) ServerCapabilities() json.RawMessage { return c.serverCaps }

// Instructions returns the IDE's instructions, if it sent any.
func (c *Client) Instructions() string { return c.instructions }

// Done returns a channel closed when the connection has ended (Close, or
// the connection was lost).
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }

// Err returns why the connection ended: nil while it is up, ErrClosed after
// Close, an error matching ErrConnectionLost otherwise.
func (c *Client) Err() error { return c.conn.Err() }

// Close ends the connection: pending calls fail with ErrClosed, the
// Notifications channel is closed, and every goroutine of the client has
// exited when Close returns. Close is idempotent and always returns nil.
func (c *Client) Close() error { return c.conn.Close() }

// Tools returns the IDE's tools. The list fetched during the handshake
// (following nextCursor) is cached until the IDE sends
// notifications/tools/list_changed. The returned slice is the caller's.
func (c *Client) Tools(ctx context.Context) ([]mcp.Tool, error) {
	c.toolsMu.Lock()
	defer c.toolsMu.Unlock()
	gen := c.stale.Load()
	if c.hasTools && c.toolsGen == gen {
		return slices.Clone(c.tools), nil
	}
	tools, err := c.listTools(ctx)
	if err != nil {
		return nil, err
	}
	c.tools, c.toolsGen, c.hasTools = tools, gen, true
	return slices.Clone(tools), nil
}

// maxToolPages stops a server whose cursors never end.
const maxToolPages = 1000

func (c *Client) listTools(ctx context.Context) ([]mcp.Tool, error) {
	var all []mcp.Tool
	cursor := ""
	seen := map[string]bool{}
	for page := 0; ; page++ {
		var params mcpclient.Params
		if cursor != "" {
			cur := cursor
			params = func(m *mcpclient.Message) error {
				m.AppendRaw(`{"cursor":`)
				m.AppendString(cur)
				m.AppendRaw(`}`)
				return nil
			}
		}
		raw, err := c.conn.Call(ctx, mcp.MethodListTools, params, c.cfg.CallTimeout)
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		var res mcp.ListToolsResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("decoding tools/list result: %w", err)
		}
		all = append(all, res.Tools...)
		if res.NextCursor == "" {
			return all, nil
		}
		if seen[res.NextCursor] || page >= maxToolPages {
			return nil, fmt.Errorf("tools/list: the IDE's cursors do not end (cursor %q repeated or over %d pages)", res.NextCursor, maxToolPages)
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
}

// CallTool calls an IDE tool with args, which are encoded as JSON (nil
// means {}; a json.RawMessage or []byte is sent as is after a validity
// check). The call ends with ctx, after ClientOptions.CallTimeout (except
// openDiff), or when the connection ends. A tool failure, reported as a
// JSON-RPC error or as an isError result, is a *mcp.ToolError.
func (c *Client) CallTool(ctx context.Context, name string, args any) (*mcp.ToolResult, error) {
	return c.callTool(ctx, name, func(m *mcpclient.Message) error { return appendArgs(m, args) })
}

// callTool sends tools/call with the arguments object args appends, and
// decodes the result. openDiff alone has no default deadline.
func (c *Client) callTool(ctx context.Context, name string, args mcpclient.Params) (*mcp.ToolResult, error) {
	timeout := c.cfg.CallTimeout
	if name == mcp.ToolOpenDiff {
		timeout = 0
	}
	raw, err := c.conn.Call(ctx, mcp.MethodCallTool, func(m *mcpclient.Message) error {
		m.AppendRaw(`{"name":`)
		m.AppendString(name)
		m.AppendRaw(`,"arguments":`)
		if err := args(m); err != nil {
			return err
		}
		m.AppendRaw(`}`)
		return nil
	}, timeout)
	if err != nil {
		var rpcErr *mcp.Error
		if errors.As(err, &rpcErr) {
			return nil, &mcp.ToolError{Tool: name, Code: rpcErr.Code, Message: rpcErr.Message, Data: rpcErr.Data}
		}
		return nil, fmt.Errorf("calling IDE tool %s: %w", name, err)
	}
	return mcp.DecodeToolResult(name, raw)
}

// appendArgs appends a tool's arguments object.
func appendArgs(m *mcpclient.Message, args any) error {
	switch a := args.(type) {
	case nil:
		m.AppendRaw("{}")
	case json.RawMessage:
		return appendRaw(m, a)
	case []byte:
		return appendRaw(m, a)
	default:
		return m.AppendJSON(args)
	}
	return nil
}

func appendRaw(m *mcpclient.Message, raw []byte) error {
	if len(raw) == 0 {
		m.AppendRaw("{}")
		return nil
	}
	if !json.Valid(raw) {
		return errors.New("arguments are not valid JSON")
	}
	_, _ = m.Write(raw)
	return nil
}

// Notifications returns the channel of notifications from the IDE (all of
// them, known or not; see Notification). It is closed when the connection
// ends. The connection's reader never waits for the consumer: when the buffer
// (ClientOptions.NotificationBuffer) is full, the oldest notification is
// dropped.
func (c *Client) Notifications() <-chan Notification { return c.notes }

// DroppedNotifications returns how many notifications were dropped because
// the Notifications channel was full.
func (c *Client) DroppedNotifications() uint64 { return c.dropped.Load() }

// handleNotification runs on whichever goroutine holds the reader role.
func (c *Client) handleNotification(method string, params json.RawMessage) {
	if method == mcp.MethodToolsListChanged {
		// Not under toolsMu: Tools may hold it while waiting for this
		// very reader.
		c.stale.Add(1)
	}
	if c.cfg.NotificationBuffer < 0 {
		return
	}
	n := Notification{Method: method, Params: params, paths: c.cfg.Paths}
	for {
		select {
		case c.notes <- n:
			return
		default:
		}
		select {
		case old := <-c.notes:
			c.dropped.Add(1)
			c.cfg.Logger.Debug("notification buffer full: dropped the oldest notification", "method", old.Method)
		default:
		}
	}
}
