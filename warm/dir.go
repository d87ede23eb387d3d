package warm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/idebridge/idebridge/internal/env"
)

// Environment variables the package reads (through Options.Env and
// ServeOptions.Env).
const (
	// EnvDir overrides the runtime directory (see DefaultDir).
	EnvDir = "IDEBRIDGE_RUNTIME_DIR"
	// EnvIdle is the runtime's idle time before it exits, a Go duration
	// ("90s", "5m"), when ServeOptions.Idle is zero.
	EnvIdle = "IDEBRIDGE_RUNTIME_IDLE"
)

// DefaultDir returns the runtime directory of the user whose environment
// environ is (nil: the process's own): $IDEBRIDGE_RUNTIME_DIR when set,
// else $XDG_RUNTIME_DIR/idebridge, else os.TempDir()/idebridge-<uid>.
func DefaultDir(environ []string) string {
	environ = env.Resolve(environ)
	if d := env.Get(environ, EnvDir); d != "" {
		return d
	}
	if x := env.Get(environ, "XDG_RUNTIME_DIR"); x != "" {
		return filepath.Join(x, "idebridge")
	}
	return filepath.Join(os.TempDir(), "idebridge-"+strconv.Itoa(os.Getuid()))
}

// ErrUnsafeDir is the error, wrapped, of a runtime directory another user
// could reach: not a directory, owned by another user, or open to others.
var ErrUnsafeDir = errors.New("warm: unsafe runtime directory")

// prepareDir makes dir (mode 0700) when missing, then checks that it is a
// directory, not a link, owned by this process's user and closed to every
// other (no group or other permission bits). It never loosens or tightens
// an existing directory: one that fails the check is refused.
func prepareDir(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("%w: empty path", ErrUnsafeDir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("warm: runtime directory: %w", err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("warm: runtime directory: %w", err)
	}
	if err := checkDir(abs); err != nil {
		return "", err
	}
	return abs, nil
}
