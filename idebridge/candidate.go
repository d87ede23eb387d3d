package idebridge

import (
	"time"

	"github.com/idebridge/idebridge/lockfile"
	"github.com/idebridge/idebridge/pathconv"
)

// Reason is a machine-readable reason why a discovered lockfile is not a
// usable IDE.
type Reason string

// Reasons reported by discovery.
const (
	ReasonParseError          Reason = "parse_error"
	ReasonWorkspaceMismatch   Reason = "workspace_mismatch"
	ReasonPIDDead             Reason = "pid_dead"
	ReasonNotAncestor         Reason = "not_ancestor"
	ReasonPortClosed          Reason = "port_closed"
	ReasonInsecurePermissions Reason = "insecure_permissions"
)

// Candidate is one lockfile found by discovery, with the outcome of every
// check. Its JSON form is what `idebridge ide list --json` prints and what
// crosses the C ABI.
type Candidate struct {
	Port             int      `json:"port"`
	IDEName          string   `json:"ideName"`
	Transport        string   `json:"transport"`
	WorkspaceFolders []string `json:"workspaceFolders"`
	PID              int      `json:"pid"`
	// URL is where to connect: ws://host:port/ or http://host:port/sse.
	URL string `json:"url"`
	// Valid is true when every check passed.
	Valid bool `json:"valid"`
	// Reasons lists each failed check; empty when Valid.
	Reasons []Reason `json:"reasons"`
	// Message is one human sentence: why the candidate is or is not usable.
	Message string `json:"message"`
	// Path is the lockfile's path.
	Path string `json:"path"`
	// RunningInWindows is true when the IDE runs on the Windows side of WSL.
	RunningInWindows bool `json:"runningInWindows,omitempty"`

	// Host is the address to dial (127.0.0.1, the override, or the Windows
	// host under WSL).
	Host string `json:"-"`
	// AuthToken is the lockfile's token; never printed.
	AuthToken string `json:"-"`
	// Lockfile is the parsed lockfile; nil when it could not be parsed.
	Lockfile *lockfile.Lockfile `json:"-"`
	// Paths converts between the IDE's paths and the agent's (WSL).
	Paths pathconv.Converter `json:"-"`
	// ModTime is the lockfile's modification time when it was scanned;
	// RemoveStale leaves a lockfile alone that changed since.
	ModTime time.Time `json:"-"`

	// unchecked is true when discovery read the lockfile without its owner
	// and mode checks (DiscoverOptions.AllowInsecure, or a directory whose
	// modes a mount makes up); Reconnect re-reads it the same way.
	unchecked bool
}
