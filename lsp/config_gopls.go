package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// GoplsVersion is the gopls release this package is tested against.
const GoplsVersion = "v0.23.0"

// GoplsInstallCommand installs the tested gopls release.
const GoplsInstallCommand = "go install golang.org/x/tools/gopls@" + GoplsVersion

// ErrGoplsNotFound is returned by FindGopls; its message says how to
// install gopls.
var ErrGoplsNotFound = errors.New("gopls not found (install it with: " + GoplsInstallCommand + ")")

// FindGopls locates a gopls binary: $GOPLS when set, else gopls on PATH,
// else in the bin directory of each $(go env GOPATH) entry. getenv may be
// nil for os.Getenv.
func FindGopls(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	exe := "gopls"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	if p := getenv("GOPLS"); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("$GOPLS=%s is not an executable file: %w", p, ErrGoplsNotFound)
	}
	if p, err := exec.LookPath("gopls"); err == nil {
		return p, nil
	}
	gopath := getenv("GOPATH")
	if gopath == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, err := exec.CommandContext(ctx, "go", "env", "GOPATH").Output()
		cancel()
		if err == nil {
			gopath = strings.TrimSpace(string(out))
		}
	}
	if gopath == "" {
		if home, err := os.UserHomeDir(); err == nil {
			gopath = filepath.Join(home, "go")
		}
	}
	for _, dir := range filepath.SplitList(gopath) {
		if p := filepath.Join(dir, "bin", exe); dir != "" && isExecutable(p) {
			return p, nil
		}
	}
	return "", ErrGoplsNotFound
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	return runtime.GOOS == "windows" || st.Mode().Perm()&0o111 != 0
}

// GoplsConfig is the built-in configuration the command line uses when no
// configuration is given: gopls at path for .go files, with
// verboseWorkDoneProgress so that Settle gets gopls's exact "done" signal.
func GoplsConfig(path, projectDir string) ServerConfig {
	c := NewServerConfig("gopls", path, nil, map[string]string{".go": "go"})
	c.ProjectDir = projectDir
	c.InitializationOptions, _ = json.Marshal(map[string]any{"verboseWorkDoneProgress": true})
	return c
}
