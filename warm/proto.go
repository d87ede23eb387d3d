package warm

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/idebridge/idebridge/lsp"
)

// protoName names the runtime's wire protocol in its hello line. A change
// to the lines below changes it.
const protoName = "idebridge-runtime/1"

// The wire, on one connection to the socket: the runtime writes a hello
// line (JSON); the client writes one request line; the runtime answers one
// reply line. After the reply to a "session" request the connection
// carries one MCP session, MCP's stdio transport (newline-delimited
// JSON-RPC) both ways, until either side closes it.
type hello struct {
	Runtime string `json:"runtime"`
	Build   string `json:"build"`
	PID     int    `json:"pid"`
}

type request struct {
	Op      string   `json:"op"` // "session", "nav", "diag", "ops" (see Remote), "status" or "stop"
	Project *Project `json:"project,omitempty"`
	// Nav is the request of a "nav" (see Navigate), and Timeout its time
	// in the runtime (0: none).
	Nav     *lsp.NavRequest `json:"nav,omitempty"`
	Timeout time.Duration   `json:"timeoutNs,omitempty"`
	// Diag is the request of a "diag" (see Diagnose); Timeout is its
	// time too.
	Diag *DiagRequest `json:"diag,omitempty"`
}

type reply struct {
	Error  string  `json:"error,omitempty"`
	Status *Status `json:"status,omitempty"`
}

// Bounds of the handshake: a line longer than maxLine, or a peer that
// sends nothing for handshakeTimeout, ends the connection.
const (
	maxLine          = 4 << 20
	maxNavLine       = 256 << 20 // a navigation answer (see Navigate)
	handshakeTimeout = 10 * time.Second
)

// Project is what a session asks the runtime for: the MCP server of a
// project directory with its language servers. Sessions asking for equal
// Projects share one mcpserver.Server; any difference (NoIDE, the
// version) makes another. Projects with equal Dir and Configs share one
// lsp.Manager, one process per language server, whatever else differs.
type Project struct {
	// Dir is the project directory, absolute.
	Dir string `json:"dir"`
	// Configs are the language servers, as mcpserver.Options.Configs (nil:
	// gopls for .go files, found in the runtime's environment).
	Configs []lsp.ServerConfig `json:"configs"`
	// NoIDE and NoIDEReason are mcpserver.Options' fields.
	NoIDE       bool   `json:"noIDE,omitempty"`
	NoIDEReason string `json:"noIDEReason,omitempty"`
	// ServerVersion is what initialize answers (default
	// mcpserver.DefaultServerVersion).
	ServerVersion string `json:"serverVersion,omitempty"`
}

// Status is the runtime's state, as `idebridge runtime status` shows it.
type Status struct {
	PID      int             `json:"pid"`
	Build    string          `json:"build"`
	Socket   string          `json:"socket"`
	Started  time.Time       `json:"started"`
	Uptime   time.Duration   `json:"uptimeNs"`
	Idle     time.Duration   `json:"idleExitNs"` // the idle time before it exits
	RSS      int64           `json:"rssBytes"`   // the runtime's own resident memory (0: unknown)
	Sessions int             `json:"sessions"`
	Projects []ProjectStatus `json:"projects"`
	// HTTP is where MCP clients reach the runtime over Streamable HTTP.
	HTTP *HTTPStatus `json:"http,omitempty"`
}

// ProjectStatus is one shared project: its sessions, language servers and
// open documents.
type ProjectStatus struct {
	Dir      string          `json:"dir"`
	Key      string          `json:"key"` // what tells apart two setups of one directory
	Sessions []SessionStatus `json:"sessions"`
	// Clients are the MCP clients of the sessions, as their initialize
	// named them ("" for a session not initialized: a 2026-07-28 client
	// sends no initialize).
	Clients       []string       `json:"clients"`
	Servers       []ServerStatus `json:"servers"`
	OpenDocuments []string       `json:"openDocuments"`
	// IdleSince is when its last session ended, while it has none: it
	// stops its servers once idle for the runtime's idle time.
	IdleSince *time.Time `json:"idleSince,omitempty"`
}

// SessionStatus is one MCP session: a client connection.
type SessionStatus struct {
	ID    int       `json:"id"`
	PID   int       `json:"pid,omitempty"` // the client process, when the system says (SO_PEERCRED)
	Since time.Time `json:"since"`
	// Transport is "http" for a Streamable HTTP session (one opened by
	// initialize, or one request of a client that opens none), "" for
	// one on the runtime's socket.
	Transport string `json:"transport,omitempty"`
	// Client is an HTTP session's client, as its initialize named it.
	Client string `json:"client,omitempty"`
}

// ServerStatus is one language server of a project, with its resident
// memory (RSS, bytes; 0 when unknown or not running).
type ServerStatus struct {
	Name       string   `json:"name"`
	State      string   `json:"state"` // an lsp.ServerState
	PID        int      `json:"pid,omitempty"`
	Restarts   int      `json:"restarts"`
	Extensions []string `json:"extensions"`
	RSS        int64    `json:"rssBytes"`
}

var buildPattern = regexp.MustCompile(`^[0-9A-Za-z._-]{1,64}$`)

func checkBuild(b string) error {
	if !buildPattern.MatchString(b) {
		return fmt.Errorf("warm: build identity %q: want 1 to 64 letters, digits, '.', '_' or '-'", clip(b))
	}
	return nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// readLine reads one handshake line of at most maxLine bytes.
func readLine(r *bufio.Reader, v any) error { return readLineMax(r, v, maxLine) }

// readLineMax reads one line of at most limit bytes.
func readLineMax(r *bufio.Reader, v any, limit int) error {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(line)+len(frag) > limit {
			return errors.New("handshake line too long")
		}
		line = append(line, frag...)
		if err == nil {
			break
		}
		if err != bufio.ErrBufferFull {
			return err
		}
	}
	return json.Unmarshal(line, v)
}

func writeLine(w interface{ Write([]byte) (int, error) }, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
