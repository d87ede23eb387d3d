package idebridge

import (
	"bytes"
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

	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/pathconv"
)

// Defaults used when the matching ClientOptions field is zero.
const (
	// DefaultConnectTimeout bounds dialing plus the MCP handshake, like
	// Claude Code's connection limit (docs/PROTOCOL.md, Discovery).
	DefaultConnectTimeout = 35 * time.Second
	// DefaultCallTimeout bounds every call except openDiff.
	DefaultCallTimeout = 30 * time.Second
	// DefaultPingInterval is the keep-alive interval.
	DefaultPingInterval = 15 * time.Second
	// DefaultMaxMessageSize bounds one message in either direction.
	DefaultMaxMessageSize = 64 << 20
	// DefaultNotificationBuffer is the capacity of Notifications().
	DefaultNotificationBuffer = 256
	// DefaultClientName is the clientInfo name sent to the IDE.
	DefaultClientName = "idebridge"
)

// ProtocolVersion is the MCP protocol version the client asks for.
const ProtocolVersion = "2025-11-25"

// SupportedProtocolVersions are the versions accepted from the IDE's
// initialize answer. Every deployed IDE answers the oldest.
var SupportedProtocolVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

// ClientOptions configure a Client. A nil *ClientOptions, and every zero
// field, means the documented default.
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
	// pings over SSE. When nothing at all (not even a pong) arrives from
	// the IDE for two intervals, the connection is declared lost and every
	// pending call fails with ErrConnectionLost. Default 15 s; negative
	// turns keep-alive off.
	PingInterval time.Duration
	// MaxMessageSize bounds one message, in bytes, in both directions; see
	// MessageTooLargeError. Default 64 MiB.
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

func resolveClientOptions(o *ClientOptions) *config {
	c := &config{}
	if o != nil {
		c.ClientOptions = *o
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
	if c.PingInterval == 0 {
		c.PingInterval = DefaultPingInterval
	}
	if c.MaxMessageSize <= 0 {
		c.MaxMessageSize = DefaultMaxMessageSize
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
	return c
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
	cfg   *config
	m     *mux
	paths pathconv.Converter
	url   string

	protocol     string
	serverInfo   ServerInfo
	serverCaps   json.RawMessage
	instructions string

	notes   chan Notification
	dropped atomic.Uint64

	toolsMu  sync.Mutex
	tools    []Tool
	toolsGen uint64        // stale's value when tools was fetched
	stale    atomic.Uint64 // bumped by notifications/tools/list_changed
	hasTools bool

	closeOnce sync.Once
}

// ServerInfo is the IDE's initialize answer's serverInfo.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Title   string `json:"title,omitempty"`
}

// Tool is one tool the IDE offers.
type Tool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// OutputSchema and Annotations are passed through as received.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
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
	cfg := resolveClientOptions(opts)
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("connecting to IDE: %w", err)
	}
	if cfg.ConnectTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.ConnectTimeout)
		defer cancel()
	}
	act := &activity{}
	var t transport
	switch strings.ToLower(u.Scheme) {
	case "ws", "wss":
		t, err = dialWS(ctx, u.String(), authToken, cfg.MaxMessageSize, act)
	case "http", "https":
		if u.Path == "" || u.Path == "/" {
			u.Path = "/sse"
		}
		t, err = dialSSE(ctx, u.String(), authToken, cfg.MaxMessageSize, act)
	default:
		return nil, fmt.Errorf("connecting to IDE at %s: unsupported URL scheme %q (want ws, wss, http or https)", u.Redacted(), u.Scheme)
	}
	if err != nil {
		return nil, fmt.Errorf("connecting to IDE at %s: %w", u.Redacted(), err)
	}
	c := newClient(t, cfg, act, u.Redacted())
	if err := c.handshake(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("MCP handshake with IDE at %s: %w", u.Redacted(), err)
	}
	return c, nil
}

func newClient(t transport, cfg *config, act *activity, where string) *Client {
	c := &Client{cfg: cfg, paths: cfg.Paths, url: where}
	if c.paths == nil {
		c.paths = pathconv.Identity{}
	}
	c.notes = make(chan Notification, max(cfg.NotificationBuffer, 0))
	c.m = newMux(t, cfg.Logger, cfg.MaxMessageSize, act)
	if wt, ok := t.(*wsTransport); ok {
		wt.goBackground = c.m.goBackground
	}
	c.m.onNotification = c.handleNotification
	c.m.onEnd = func() { close(c.notes) }
	c.m.start(cfg.PingInterval)
	return c
}

// handshake runs initialize, notifications/initialized, ide_connected and
// tools/list.
func (c *Client) handshake(ctx context.Context) error {
	type clientInfo struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	params := struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      clientInfo      `json:"clientInfo"`
	}{ProtocolVersion, c.cfg.Capabilities, clientInfo{c.cfg.ClientName, c.cfg.ClientVersion}}
	msg, err := c.m.call(ctx, "initialize", func(b *msgBuf) error { return b.encodeJSON(params) }, 0)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if msg.Error != nil {
		return fmt.Errorf("initialize: %w", msg.Error)
	}
	var res struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ServerInfo      ServerInfo      `json:"serverInfo"`
		Instructions    string          `json:"instructions"`
	}
	if err := json.Unmarshal(msg.Result, &res); err != nil {
		return fmt.Errorf("decoding initialize result: %w", err)
	}
	if !slices.Contains(SupportedProtocolVersions, res.ProtocolVersion) {
		return fmt.Errorf("%w %q (this client speaks %s)", ErrUnsupportedProtocol, res.ProtocolVersion, strings.Join(SupportedProtocolVersions, ", "))
	}
	c.protocol = res.ProtocolVersion
	c.serverInfo = res.ServerInfo
	c.serverCaps = res.Capabilities
	c.instructions = res.Instructions

	if err := c.m.notify(ctx, "notifications/initialized", nil); err != nil {
		return err
	}
	if c.cfg.PID >= 0 {
		pid := c.cfg.PID
		err := c.m.notify(ctx, "ide_connected", func(b *msgBuf) error {
			b.b = append(b.b, `{"pid":`...)
			b.b = strconv.AppendInt(b.b, int64(pid), 10)
			b.b = append(b.b, '}')
			return nil
		})
		if err != nil {
			if c.m.failure() != nil || ctx.Err() != nil {
				return err
			}
			// ide_connected is the IDE extensions' own notification; a
			// generic MCP server may refuse it (the official SDK's SSE
			// server answers the POST with 400) and still serve tools.
			c.cfg.Logger.Debug("the server refused ide_connected", "err", err)
		}
	}
	if _, err := c.Tools(ctx); err != nil {
		if c.m.failure() != nil || ctx.Err() != nil {
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
func (c *Client) ServerInfo() ServerInfo { return c.serverInfo }

// ServerCapabilities returns the IDE's capabilities object as received.
func (c *Client) ServerCapabilities() json.RawMessage { return c.serverCaps }

// Instructions returns the IDE's instructions, if it sent any.
func (c *Client) Instructions() string { return c.instructions }

// Done returns a channel closed when the connection has ended (Close, or
// the connection was lost).
func (c *Client) Done() <-chan struct{} { return c.m.done }

// Err returns why the connection ended: nil while it is up, ErrClosed after
// Close, an error matching ErrConnectionLost otherwise.
func (c *Client) Err() error { return c.m.failure() }

// Close ends the connection: pending calls fail with ErrClosed, the
// Notifications channel is closed, and every goroutine of the client has
// exited when Close returns. Close is idempotent and always returns nil.
func (c *Client) Close() error {
	c.closeOnce.Do(c.m.close)
	return nil
}

// Tools returns the IDE's tools. The list fetched during the handshake
// (following nextCursor) is cached until the IDE sends
// notifications/tools/list_changed. The returned slice is the caller's.
func (c *Client) Tools(ctx context.Context) ([]Tool, error) {
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

func (c *Client) listTools(ctx context.Context) ([]Tool, error) {
	var all []Tool
	cursor := ""
	seen := map[string]bool{}
	for page := 0; ; page++ {
		var params paramsFunc
		if cursor != "" {
			cur := cursor
			params = func(b *msgBuf) error {
				b.b = append(b.b, `{"cursor":`...)
				b.b = jsonrpc.AppendString(b.b, cur)
				b.b = append(b.b, '}')
				return nil
			}
		}
		msg, err := c.m.call(ctx, "tools/list", params, c.cfg.CallTimeout)
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		if msg.Error != nil {
			return nil, fmt.Errorf("tools/list: %w", msg.Error)
		}
		var res struct {
			Tools      []Tool `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(msg.Result, &res); err != nil {
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

// ToolResult is a tools/call result.
type ToolResult struct {
	// Content are the result's content blocks.
	Content []Content `json:"content"`
	// StructuredContent is passed through as received.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// IsError is true when the IDE flagged the result as a failure (such
	// a result is returned inside a *ToolError).
	IsError bool `json:"isError,omitempty"`
	// Raw is the whole result as received.
	Raw json.RawMessage `json:"-"`
}

// Content is one content block of a tool result.
type Content struct {
	// Type is "text", "image", "audio", "resource_link" or "resource".
	Type string `json:"type"`
	// Text is a text block's text.
	Text string `json:"text,omitempty"`
	// Data is an image or audio block's base64 data.
	Data string `json:"data,omitempty"`
	// MimeType is an image, audio or resource block's type.
	MimeType string `json:"mimeType,omitempty"`
	// URI and Name describe a resource_link.
	URI  string `json:"uri,omitempty"`
	Name string `json:"name,omitempty"`
	// Resource is an embedded resource, as received.
	Resource json.RawMessage `json:"resource,omitempty"`
}

// Text returns the text blocks of the result joined with newlines.
func (r *ToolResult) Text() string {
	var texts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// CallTool calls an IDE tool with args, which are encoded as JSON (nil
// means {}; a json.RawMessage or []byte is sent as is after a validity
// check). The call ends with ctx, after ClientOptions.CallTimeout (except
// openDiff), or when the connection ends. A tool failure, reported as a
// JSON-RPC error or as an isError result, is a *ToolError.
func (c *Client) CallTool(ctx context.Context, name string, args any) (*ToolResult, error) {
	return c.callTool(ctx, name, func(b *msgBuf) error { return appendArgs(b, args) })
}

// callTool sends tools/call with the arguments object args appends, and
// decodes the result. openDiff alone has no default deadline.
func (c *Client) callTool(ctx context.Context, name string, args paramsFunc) (*ToolResult, error) {
	timeout := c.cfg.CallTimeout
	if name == toolOpenDiff {
		timeout = 0
	}
	msg, err := c.m.call(ctx, "tools/call", func(b *msgBuf) error {
		b.b = append(b.b, `{"name":`...)
		b.b = jsonrpc.AppendString(b.b, name)
		b.b = append(b.b, `,"arguments":`...)
		if err := args(b); err != nil {
			return err
		}
		b.b = append(b.b, '}')
		return nil
	}, timeout)
	if err != nil {
		return nil, fmt.Errorf("calling IDE tool %s: %w", name, err)
	}
	return decodeToolResult(name, msg)
}

// appendArgs appends a tool's arguments object.
func appendArgs(b *msgBuf, args any) error {
	switch a := args.(type) {
	case nil:
		b.b = append(b.b, "{}"...)
	case json.RawMessage:
		return appendRaw(b, a)
	case []byte:
		return appendRaw(b, a)
	default:
		return b.encodeJSON(args)
	}
	return nil
}

func appendRaw(b *msgBuf, raw []byte) error {
	if len(raw) == 0 {
		b.b = append(b.b, "{}"...)
		return nil
	}
	if !json.Valid(raw) {
		return errors.New("arguments are not valid JSON")
	}
	b.b = append(b.b, raw...)
	return nil
}

// decodeToolResult turns a tools/call response into a result or a
// *ToolError.
func decodeToolResult(name string, msg *jsonrpc.Message) (*ToolResult, error) {
	if msg.Error != nil {
		return nil, &ToolError{Tool: name, Code: msg.Error.Code, Message: msg.Error.Message, Data: msg.Error.Data}
	}
	return decodeToolResultRaw(name, msg.Result, true)
}

// DecodeToolResult decodes a tools/call result of tool name as CallTool
// does: an isError result, and a result holding an error object (code and
// message) but no content, come back as a *ToolError. It is for results
// obtained some other way (a log, the C ABI); result is kept as Raw.
func DecodeToolResult(name string, result json.RawMessage) (*ToolResult, error) {
	return decodeToolResultRaw(name, result, false)
}

// decodeToolResultRaw decodes result; valid says it is known to be valid
// JSON (it came out of Decode), so that it is not validated again.
func decodeToolResultRaw(name string, result json.RawMessage, valid bool) (*ToolResult, error) {
	var r *ToolResult
	ok := false
	if valid || jsonrpc.Valid(result) {
		r, ok = decodeToolResultFast(result)
	}
	if !ok {
		var res struct {
			ToolResult
			// The Neovim quirk: an error object inside result.
			Code    *int64          `json:"code"`
			Message *string         `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(result, &res); err != nil {
			return nil, fmt.Errorf("decoding result of IDE tool %s: %w", name, err)
		}
		if res.Content == nil && res.Code != nil && res.Message != nil {
			return nil, &ToolError{Tool: name, Code: *res.Code, Message: *res.Message, Data: res.Data}
		}
		r = &res.ToolResult
	}
	r.Raw = result
	if r.IsError {
		return nil, &ToolError{Tool: name, Message: r.Text(), Result: r}
	}
	return r, nil
}

// decodeToolResultFast decodes the usual result, which must be valid JSON,
// with one pass per nesting level; ok is false whenever encoding/json must
// decide (invalid JSON, the Neovim quirk,
// case-folded or escaped or duplicated keys, unexpected types), so that the
// two never disagree (FuzzToolResult checks it).
func decodeToolResultFast(raw []byte) (*ToolResult, bool) {
	r := &ToolResult{}
	var seen int
	ok := jsonrpc.EachMember(raw, func(key, v []byte) bool {
		var bit int
		switch string(key) {
		case "content":
			bit = 1
			if v[0] == 'n' {
				break
			}
			if v[0] != '[' {
				return false
			}
			r.Content = make([]Content, 0, 2)
			if !jsonrpc.EachElement(v, func(elem []byte) bool {
				c, ok := decodeContentFast(elem)
				r.Content = append(r.Content, c)
				return ok
			}) {
				return false
			}
		case "isError":
			bit = 2
			switch string(v) {
			case "true":
				r.IsError = true
			case "false", "null":
			default:
				return false
			}
		case "structuredContent":
			bit = 4
			r.StructuredContent = bytes.Clone(v)
		case "code", "message", "data":
			return false // maybe the Neovim quirk: the slow path knows
		default:
			return plainUnknownKey(key, "content", "isError", "structuredContent", "code", "message", "data")
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
	return r, ok
}

func decodeContentFast(elem []byte) (Content, bool) {
	var c Content
	if elem[0] != '{' {
		return c, false
	}
	var seen int
	ok := jsonrpc.EachMember(elem, func(key, v []byte) bool {
		var dst *string
		var bit int
		switch string(key) {
		case "type":
			dst, bit = &c.Type, 1
		case "text":
			dst, bit = &c.Text, 2
		case "data":
			dst, bit = &c.Data, 4
		case "mimeType":
			dst, bit = &c.MimeType, 8
		case "uri":
			dst, bit = &c.URI, 16
		case "name":
			dst, bit = &c.Name, 32
		case "resource":
			bit = 64
			c.Resource = bytes.Clone(v)
		default:
			return plainUnknownKey(key, "type", "text", "data", "mimeType", "uri", "name", "resource")
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		if dst != nil {
			switch v[0] {
			case 'n':
			case '"':
				*dst = jsonrpc.UnquoteValid(v)
			default:
				return false
			}
		}
		return true
	})
	return c, ok
}

// plainUnknownKey reports whether encoding/json would also ignore key: it
// does not match any of known by case folding, and has no escapes.
func plainUnknownKey(key []byte, known ...string) bool {
	for _, c := range key {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	for _, k := range known {
		if bytes.EqualFold(key, []byte(k)) {
			return false
		}
	}
	return true
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
	if method == "notifications/tools/list_changed" {
		// Not under toolsMu: Tools may hold it while waiting for this
		// very reader.
		c.stale.Add(1)
	}
	if c.cfg.NotificationBuffer < 0 {
		return
	}
	n := Notification{Method: method, Params: params, paths: c.paths}
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
