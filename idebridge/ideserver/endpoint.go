package ideserver

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Endpoint tells a client where a Streamable HTTP server listens and how to
// authenticate, as an IDE's lockfile does for its WebSocket: written by
// WriteEndpointFile, mode 0600, for the user alone to read.
type Endpoint struct {
	// URL is the MCP endpoint: http://127.0.0.1:<port>/mcp, or
	// http://localhost/mcp for a unix socket.
	URL string `json:"url"`
	// Socket is the unix socket's path ("" for TCP).
	Socket string `json:"socket,omitempty"`
	// Transport is "streamable-http".
	Transport string `json:"transport"`
	// AuthToken is sent as "Authorization: Bearer <AuthToken>".
	AuthToken string `json:"authToken"`
	// PID is the server's process.
	PID int `json:"pid"`
	// WorkspaceFolders are the folders served.
	WorkspaceFolders []string `json:"workspaceFolders,omitempty"`
}

// WriteEndpointFile writes e as JSON to path atomically (a temporary file
// beside it, then a rename), the file with mode 0600 and a missing
// directory with 0700. Remove the file when the server stops.
func WriteEndpointFile(path string, e *Endpoint) error {
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return fmt.Errorf("writing endpoint file %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("writing endpoint file %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-endpoint-*")
	if err != nil {
		return fmt.Errorf("writing endpoint file %s: %w", path, err)
	}
	name := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(name)
		return fmt.Errorf("writing endpoint file %s: %w", path, err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		return fail(err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("writing endpoint file %s: %w", path, err)
	}
	return nil
}
