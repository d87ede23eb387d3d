package lockfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/idebridge/idebridge/internal/env"
)

// DefaultWindowsUsersRoot is where WSL sees the Windows user profiles.
const DefaultWindowsUsersRoot = "/mnt/c/Users"

// Environment variables that decide the lockfile directories.
const (
	// EnvConfigDir replaces ~/.claude when set and not empty.
	EnvConfigDir = "CLAUDE_CONFIG_DIR"
	// EnvWSLDistro is set by WSL in every process it starts.
	EnvWSLDistro = "WSL_DISTRO_NAME"
)

// ErrNoHome is returned by Dir when neither CLAUDE_CONFIG_DIR nor a home
// directory is known.
var ErrNoHome = errors.New("no lockfile directory: CLAUDE_CONFIG_DIR is not set and the home directory is unknown")

// DirOptions adjusts how Dir, Dirs and WindowsDirs find directories. A nil
// *DirOptions means the defaults documented on each field.
type DirOptions struct {
	// Home is the user's home directory. Empty means HOME from the
	// environment passed in (USERPROFILE on Windows); when that environment
	// is the process's own (a nil environ), os.UserHomeDir as a last resort.
	Home string
	// WindowsUsersRoot is where the Windows user profiles are seen under
	// WSL. Empty means DefaultWindowsUsersRoot.
	WindowsUsersRoot string
}

// skippedProfiles are the Windows profile directories that belong to no
// user.
var skippedProfiles = map[string]bool{
	"public":       true,
	"default":      true,
	"default user": true,
	"all users":    true,
}

// IsWSL reports whether environ (os.Environ form; nil means the
// process's environment) is that of a process inside WSL.
func IsWSL(environ []string) bool {
	return env.Get(environ, EnvWSLDistro) != ""
}

// Dir returns the directory where an IDE on this system writes its
// lockfiles: $CLAUDE_CONFIG_DIR/ide when that is set and not empty, else
// ~/.claude/ide. environ is the environment in os.Environ form; nil means
// the process's own.
func Dir(environ []string, opts *DirOptions) (string, error) {
	ownEnv := environ == nil
	if opts == nil {
		opts = &DirOptions{}
	}
	if d := env.Get(environ, EnvConfigDir); d != "" {
		return filepath.Join(d, "ide"), nil
	}
	home := opts.Home
	if home == "" {
		if runtime.GOOS == "windows" {
			home = env.Get(environ, "USERPROFILE")
		} else {
			home = env.Get(environ, "HOME")
		}
	}
	if home == "" && ownEnv {
		home, _ = os.UserHomeDir()
	}
	if home == "" {
		return "", ErrNoHome
	}
	return filepath.Join(home, ".claude", "ide"), nil
}

// Dirs returns every directory in which an agent looks for lockfiles: Dir,
// then, under WSL, the Windows side's (WindowsDirs). Directories that do
// not exist are included; Scan skips them. environ nil means the process's
// environment.
func Dirs(environ []string, opts *DirOptions) []string {
	var dirs []string
	if d, err := Dir(environ, opts); err == nil {
		dirs = append(dirs, d)
	}
	for _, d := range WindowsDirs(environ, opts) {
		if !containsPath(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// WindowsDirs returns, under WSL, the lockfile directory of each Windows
// user profile (<WindowsUsersRoot>/<user>/.claude/ide), skipping Public,
// Default, Default User and All Users; outside WSL, or when the profiles
// cannot be listed, it returns nil. Their Unix permissions are made up by
// the mount (often 0777), so Scan must not judge them by mode: pass them as
// ScanOptions.ForeignDirs. environ nil means the process's environment.
func WindowsDirs(environ []string, opts *DirOptions) []string {
	if !IsWSL(environ) {
		return nil
	}
	root := DefaultWindowsUsersRoot
	if opts != nil && opts.WindowsUsersRoot != "" {
		root = opts.WindowsUsersRoot
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var dirs []string
	for _, e := range entries {
		if !e.IsDir() || skippedProfiles[strings.ToLower(e.Name())] {
			continue
		}
		dirs = append(dirs, filepath.Join(root, e.Name(), ".claude", "ide"))
	}
	sort.Strings(dirs)
	return dirs
}

func containsPath(paths []string, p string) bool {
	for _, q := range paths {
		if filepath.Clean(q) == filepath.Clean(p) {
			return true
		}
	}
	return false
}
