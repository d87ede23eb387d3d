// Package lockfile reads, validates, scans and writes the lockfiles through
// which IDE extensions announce their MCP servers to coding agents
// (~/.claude/ide/<port>.lock).
//
// Most agents need only Scan over Dirs, then Match against the working
// directory; IDE authors and tests use Write and Remove.
package lockfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Transport names as they appear in a lockfile's "transport" field.
const (
	TransportWS  = "ws"
	TransportSSE = "sse"
)

// Suffix is the file-name suffix of a lockfile.
const Suffix = ".lock"

// Lockfile is one parsed IDE lockfile.
type Lockfile struct {
	// Port is the IDE's MCP server port, taken from the file name.
	Port int `json:"port"`
	// WorkspaceFolders are the folders open in the IDE window, as the IDE
	// wrote them (Windows paths for an IDE running on Windows).
	WorkspaceFolders []string `json:"workspaceFolders"`
	// PID is the IDE process id; 0 when the lockfile has none (legacy).
	PID int `json:"pid,omitempty"`
	// IDEName is the human name of the IDE ("Visual Studio Code", ...).
	IDEName string `json:"ideName,omitempty"`
	// Transport is TransportWS or TransportSSE. Any value other than "ws"
	// in the file, including a missing one, reads as TransportSSE.
	Transport string `json:"transport"`
	// RunningInWindows is true when the IDE runs on the Windows side of WSL.
	RunningInWindows bool `json:"runningInWindows,omitempty"`
	// AuthToken is sent as X-Claude-Code-Ide-Authorization; empty when none.
	AuthToken string `json:"authToken,omitempty"`
	// Legacy is true for the old line-per-folder format.
	Legacy bool `json:"legacy,omitempty"`
	// Path is the file the lockfile was read from or written to, if any.
	Path string `json:"path,omitempty"`
	// ModTime is the file's modification time when read by Scan.
	ModTime time.Time `json:"-"`
}

// ErrNotLockfile is returned for a file whose name is not <port>.lock.
var ErrNotLockfile = errors.New("not a lockfile name (want <port>.lock)")

// PortFromName returns the port named by a lockfile's base name
// ("12345.lock"), or false when the name is not a lockfile name.
func PortFromName(name string) (int, bool) {
	base := filepath.Base(name)
	digits, ok := strings.CutSuffix(base, Suffix)
	if !ok || digits == "" || len(digits) > 5 {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	port, err := strconv.Atoi(digits)
	if err != nil || port < 1 || port > 65535 {
		return 0, false
	}
	return port, true
}

// wireLockfile is the JSON shape IDEs write.
type wireLockfile struct {
	WorkspaceFolders []string `json:"workspaceFolders"`
	PID              *int     `json:"pid"`
	IDEName          string   `json:"ideName"`
	Transport        string   `json:"transport"`
	RunningInWindows bool     `json:"runningInWindows"`
	AuthToken        string   `json:"authToken"`
}

// Parse parses a lockfile from its file name (a path or base name; the port
// comes from it) and contents. JSON content is the current format (unknown
// fields ignored); any content that is not a JSON object is the legacy
// format, one workspace folder per line. Errors name the file.
func Parse(name string, data []byte) (*Lockfile, error) {
	port, ok := PortFromName(name)
	if !ok {
		return nil, fmt.Errorf("parsing lockfile %s: %w", name, ErrNotLockfile)
	}
	lf := &Lockfile{Port: port, Transport: TransportSSE}
	if filepath.Base(name) != name {
		lf.Path = name
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("parsing lockfile %s: file is empty", name)
	}
	if trimmed[0] != '{' {
		return parseLegacy(name, lf, trimmed)
	}
	var w wireLockfile
	if err := json.Unmarshal(trimmed, &w); err != nil {
		return nil, fmt.Errorf("parsing lockfile %s: invalid JSON: %w", name, err)
	}
	if w.PID != nil {
		if *w.PID < 0 {
			return nil, fmt.Errorf("parsing lockfile %s: negative pid %d", name, *w.PID)
		}
		lf.PID = *w.PID
	}
	lf.WorkspaceFolders = w.WorkspaceFolders
	lf.IDEName = w.IDEName
	if w.Transport == TransportWS {
		lf.Transport = TransportWS
	}
	lf.RunningInWindows = w.RunningInWindows
	lf.AuthToken = w.AuthToken
	return lf, nil
}

func parseLegacy(name string, lf *Lockfile, data []byte) (*Lockfile, error) {
	if !isText(data) {
		return nil, fmt.Errorf("parsing lockfile %s: neither JSON nor a list of folders (binary content)", name)
	}
	lf.Legacy = true
	for _, line := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			lf.WorkspaceFolders = append(lf.WorkspaceFolders, line)
		}
	}
	return lf, nil
}

// isText reports whether data is valid UTF-8 without NUL or other C0 control
// characters besides tab, CR and LF.
func isText(data []byte) bool {
	s := string(data)
	for _, r := range s {
		if r == '\uFFFD' || (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f {
			return false
		}
	}
	return true
}

// Marshal returns the lockfile in the current JSON format. Legacy lockfiles
// are written in the legacy format (one folder a line).
func (l *Lockfile) Marshal() ([]byte, error) {
	if l.Legacy {
		var b strings.Builder
		for _, f := range l.WorkspaceFolders {
			if strings.ContainsAny(f, "\r\n") {
				return nil, fmt.Errorf("legacy lockfile folder %q contains a line break", f)
			}
			b.WriteString(f)
			b.WriteByte('\n')
		}
		return []byte(b.String()), nil
	}
	w := struct {
		WorkspaceFolders []string `json:"workspaceFolders"`
		PID              int      `json:"pid,omitempty"`
		IDEName          string   `json:"ideName,omitempty"`
		Transport        string   `json:"transport,omitempty"`
		RunningInWindows bool     `json:"runningInWindows,omitempty"`
		AuthToken        string   `json:"authToken,omitempty"`
	}{l.WorkspaceFolders, l.PID, l.IDEName, l.Transport, l.RunningInWindows, l.AuthToken}
	if w.WorkspaceFolders == nil {
		w.WorkspaceFolders = []string{}
	}
	return json.Marshal(w)
}

// Write writes l as dir/<port>.lock atomically (a temporary file in dir,
// then a rename), creating dir with mode 0700 and the file with mode 0600,
// and returns the file's path.
func Write(dir string, l *Lockfile) (string, error) {
	if l.Port < 1 || l.Port > 65535 {
		return "", fmt.Errorf("writing lockfile: invalid port %d", l.Port)
	}
	data, err := l.Marshal()
	if err != nil {
		return "", fmt.Errorf("writing lockfile: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("writing lockfile: %w", err)
	}
	path := filepath.Join(dir, strconv.Itoa(l.Port)+Suffix)
	tmp, err := os.CreateTemp(dir, ".tmp-"+strconv.Itoa(l.Port)+"-*")
	if err != nil {
		return "", fmt.Errorf("writing lockfile %s: %w", path, err)
	}
	tmpName := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return "", fmt.Errorf("writing lockfile %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return "", fmt.Errorf("writing lockfile %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return "", fmt.Errorf("writing lockfile %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("writing lockfile %s: %w", path, err)
	}
	if err := os.Rename(tmpName, path); err != nil {
		return "", fmt.Errorf("writing lockfile %s: %w", path, err)
	}
	ok = true
	l.Path = path
	return path, nil
}

// Remove deletes a lockfile written by Write. A file that is already gone is
// not an error.
func Remove(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing lockfile %s: %w", path, err)
	}
	return nil
}
