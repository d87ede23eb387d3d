package lsp

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestResolveCommand(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a", "b", "ws/tools"} {
		writeFile(t, filepath.Join(dir, d, "ls-server"), "#!/bin/sh\n")
		if err := os.Chmod(filepath.Join(dir, d, "ls-server"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, "a", "not-exec"), "")
	environ := []string{"PATH=relative:" + filepath.Join(dir, "a") + ":" + filepath.Join(dir, "b")}
	c := ServerConfig{Command: "ls-server", WorkspaceFolder: filepath.Join(dir, "ws")}
	if p, err := c.ResolveCommand(environ); err != nil || p != filepath.Join(dir, "a", "ls-server") {
		t.Errorf("bare name: %q, %v", p, err)
	}
	c.Env = map[string]string{"PATH": filepath.Join(dir, "b")}
	if p, err := c.ResolveCommand(environ); err != nil || p != filepath.Join(dir, "b", "ls-server") {
		t.Errorf("the configuration's PATH: %q, %v", p, err)
	}
	c.Env = nil
	c.Command = "tools/ls-server"
	if p, err := c.ResolveCommand(environ); err != nil || p != filepath.Join(dir, "ws", "tools", "ls-server") {
		t.Errorf("relative path: %q, %v", p, err)
	}
	for _, cmd := range []string{"missing-server", "not-exec", filepath.Join(dir, "a", "not-exec"), filepath.Join(dir, "nope")} {
		c.Command = cmd
		if p, err := c.ResolveCommand(environ); !errors.Is(err, exec.ErrNotFound) {
			t.Errorf("%s: %q, %v; want exec.ErrNotFound", cmd, p, err)
		}
	}
}

func TestInstallHint(t *testing.T) {
	for cmd, want := range map[string]string{
		"pyright-langserver":                        "npm install -g pyright (or pip install pyright)",
		"/usr/local/bin/typescript-language-server": "npm install -g typescript-language-server typescript",
		"gopls":         GoplsInstallCommand,
		"my-own-server": "",
	} {
		if got := InstallHint(cmd); got != want {
			t.Errorf("InstallHint(%s) = %q, want %q", cmd, got, want)
		}
	}
}
