package warm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sync"
)

// BuildID returns the identity of the running executable: the first 16
// hexadecimal digits of the SHA-256 of its file, read once per process.
// Two builds of one source tree with different flags have different
// identities, as they should: a client talks only to a runtime of its
// own build.
func BuildID() (string, error) { return buildID() }

var buildID = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("warm: build identity: %w", err)
	}
	return BuildOf(exe)
})

// BuildOf returns the build identity of the executable file at path, as
// BuildID does for the running one: what a client that is not the
// idebridge command itself (an agent using this package, the C library)
// sets as Options.Build to share the runtime of that command (see
// CommandOptions).
func BuildOf(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("warm: build identity: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("warm: build identity: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
