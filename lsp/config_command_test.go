package lsp

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
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
	// A relative path is the plugin's, never the workspace folder's.
	if p, err := c.ResolveCommand(environ); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("relative path without a root: %q, %v", p, err)
	}
	c.Root = filepath.Join(dir, "ws")
	c.WorkspaceFolder = filepath.Join(dir, "a")
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

// A plugin whose command is a relative path runs the plugin's file, never
// one of that name that the project (or the current directory) plants.
func TestRelativeCommandNotFromProject(t *testing.T) {
	base := t.TempDir()
	plugin, project := filepath.Join(base, "plugin"), filepath.Join(base, "project")
	marker := filepath.Join(base, "planted-ran")
	writeFile(t, filepath.Join(plugin, ConfigFileName), `{"srv": {"command": "bin/srv", "extensionToLanguage": {".x": "x"}}}`)
	writeFile(t, filepath.Join(project, "bin", "srv"), "#!/bin/sh\ntouch "+marker+"\n")
	if err := os.Chmod(filepath.Join(project, "bin", "srv"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(project, "a.x"), "x\n")
	t.Chdir(project)

	cfgs, errs := LoadPlugin(Plugin{Root: plugin}, &LoadOptions{ProjectDir: project})
	if len(errs) != 0 || len(cfgs) != 1 || cfgs[0].Command != filepath.Join(plugin, "bin", "srv") {
		t.Fatalf("loaded %+v, %v", cfgs, errs)
	}
	if p, err := cfgs[0].ResolveCommand(nil); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("resolved to %q, %v", p, err)
	}
	// A configuration written in Go with a relative command and a root is
	// taken from the root; without a root it is refused.
	literal := ServerConfig{Name: "lit", Command: "bin/srv", Root: plugin, ExtensionToLanguage: map[string]string{".y": "y"}}
	rootless := ServerConfig{Name: "rootless", Command: "bin/srv", ExtensionToLanguage: map[string]string{".z": "z"}}
	writeFile(t, filepath.Join(project, "a.y"), "y\n")
	writeFile(t, filepath.Join(project, "a.z"), "z\n")
	m, err := NewManager(append(cfgs, literal, rootless), &ManagerOptions{ProjectDir: project})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Problems()) != 1 {
		t.Errorf("problems %v, want the rootless server refused", m.Problems())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, f := range []string{"a.x", "a.y", "a.z"} {
		if err := m.Open(ctx, filepath.Join(project, f)); err == nil {
			t.Errorf("%s: opened; the plugin has no bin/srv", f)
		}
	}
	m.Shutdown(ctx)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the project's bin/srv ran")
	}
}
