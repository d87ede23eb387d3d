package lockfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
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

// PortName returns the file name of the lockfile for port ("12345.lock").
func PortName(port int) string { return strconv.Itoa(port) + Suffix }

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

// MaxSize is the largest lockfile Scan reads. Real lockfiles are a few
// hundred bytes; anything this large is not one.
const MaxSize = 1 << 20

// Parse parses a lockfile from its file name (a path or base name; the port
// comes from it) and contents.
//
// Content that starts with '{' (after white space and an optional UTF-8
// byte-order mark) is the current JSON format: keys are matched exactly,
// unknown keys are ignored, escaped slashes are ordinary JSON. Any other
// text is the legacy format: one workspace folder a line (LF, CRLF or CR),
// blank lines ignored, no pid, SSE transport.
//
// Errors are *ParseError values naming the file and what is wrong; a name
// that is not <port>.lock also matches ErrNotLockfile.
func Parse(name string, data []byte) (*Lockfile, error) {
	port, ok := PortFromName(name)
	if !ok {
		return nil, &ParseError{Path: name, Err: ErrNotLockfile}
	}
	lf := &Lockfile{Port: port, Transport: TransportSSE}
	if filepath.Base(name) != name {
		lf.Path = name
	}
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(data, utf8BOM))
	if len(trimmed) == 0 {
		return nil, &ParseError{Path: name, Err: errors.New("file is empty")}
	}
	if bytes.HasPrefix(trimmed, utf8BOM) {
		// Only a mark at the very start is a byte-order mark; read as a
		// folder, this one could not be written back.
		return nil, &ParseError{Path: name, Err: errors.New("a byte-order mark after white space: neither JSON nor a list of folders")}
	}
	if trimmed[0] != '{' {
		return parseLegacy(name, lf, trimmed)
	}
	if err := parseJSON(lf, trimmed); err != nil {
		return nil, &ParseError{Path: name, Err: err}
	}
	return lf, nil
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// parseJSON fills lf from the JSON object in data. Keys are matched exactly
// (encoding/json alone would also accept "PID" for "pid"; the deployed
// readers do not), and a repeated key keeps its last value, as in
// JavaScript.
func parseJSON(lf *Lockfile, data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	if raw, ok := present(fields, "workspaceFolders"); ok {
		if err := json.Unmarshal(raw, &lf.WorkspaceFolders); err != nil {
			return errors.New(`field "workspaceFolders" is not a list of strings`)
		}
		if len(lf.WorkspaceFolders) == 0 {
			lf.WorkspaceFolders = nil
		}
	}
	if raw, ok := present(fields, "pid"); ok {
		pid, err := parsePID(raw)
		if err != nil {
			return err
		}
		lf.PID = pid
	}
	if raw, ok := present(fields, "ideName"); ok {
		if err := json.Unmarshal(raw, &lf.IDEName); err != nil {
			return errors.New(`field "ideName" is not a string`)
		}
	}
	if raw, ok := present(fields, "transport"); ok {
		// Any value but the string "ws" means SSE, as in the deployed agents.
		var t string
		if json.Unmarshal(raw, &t) == nil && t == TransportWS {
			lf.Transport = TransportWS
		}
	}
	if raw, ok := present(fields, "runningInWindows"); ok {
		if err := json.Unmarshal(raw, &lf.RunningInWindows); err != nil {
			return errors.New(`field "runningInWindows" is not a boolean`)
		}
	}
	if raw, ok := present(fields, "authToken"); ok {
		if err := json.Unmarshal(raw, &lf.AuthToken); err != nil {
			return errors.New(`field "authToken" is not a string`)
		}
	}
	return nil
}

// present returns the raw value of key unless it is missing or null.
func present(fields map[string]json.RawMessage, key string) (json.RawMessage, bool) {
	raw, ok := fields[key]
	if !ok || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

// parsePID accepts a non-negative integral JSON number up to MaxInt32
// (123 and 123.0 alike: JavaScript writers do not distinguish them).
func parsePID(raw json.RawMessage) (int, error) {
	var n json.Number
	// json.Number also accepts a quoted number; a pid must be a number.
	if c := raw[0]; c != '-' && (c < '0' || c > '9') || json.Unmarshal(raw, &n) != nil {
		return 0, errors.New(`field "pid" is not a number`)
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > math.MaxInt32 {
		return 0, fmt.Errorf(`field "pid" is not a process id: %s`, n)
	}
	return int(f), nil
}

func parseLegacy(name string, lf *Lockfile, data []byte) (*Lockfile, error) {
	if !isText(data) {
		return nil, &ParseError{Path: name, Err: errors.New("neither JSON nor a list of folders (binary content)")}
	}
	lf.Legacy = true
	text := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(data))
	for _, line := range strings.Split(text, "\n") {
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
		if err := checkLegacyFolders(l.WorkspaceFolders); err != nil {
			return nil, err
		}
		var b strings.Builder
		for _, f := range l.WorkspaceFolders {
			b.WriteString(f)
			b.WriteByte('\n')
		}
		return []byte(b.String()), nil
	}
	if l.PID < 0 {
		return nil, fmt.Errorf("lockfile has a negative pid %d", l.PID)
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

// checkLegacyFolders reports folders that the legacy format cannot carry
// so that they would read back differently.
func checkLegacyFolders(folders []string) error {
	if len(folders) == 0 {
		return errors.New("legacy lockfile has no folders")
	}
	for i, f := range folders {
		switch {
		case strings.TrimSpace(f) != f || f == "":
			return fmt.Errorf("legacy lockfile folder %q is empty or has surrounding white space", f)
		case strings.ContainsAny(f, "\r\n") || !isText([]byte(f)):
			return fmt.Errorf("legacy lockfile folder %q contains a line break or control character", f)
		case i == 0 && (strings.HasPrefix(f, "{") || strings.HasPrefix(f, string(utf8BOM))):
			return fmt.Errorf("legacy lockfile folder %q would read as JSON", f)
		}
	}
	return nil
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
	path := filepath.Join(dir, PortName(l.Port))
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
