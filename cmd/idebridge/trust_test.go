package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// untrustedSetup is a Claude Code installation in a temporary home with two
// plugins of a marketplace installed for the user: "planted" (whose server
// leaves a marker file when it starts) disabled in the user's settings, and
// "relative" (command "bin/srv", which only the project has) enabled; and a
// project whose own settings enable "planted" and which plants bin/srv.
type untrustedSetup struct {
	home, config, project, plantedRan, projectSrvRan string
	runtimeDir                                       string
	env                                              []string
}

func newUntrustedSetup(t *testing.T) *untrustedSetup {
	t.Helper()
	base := t.TempDir()
	if real, err := filepath.EvalSymlinks(base); err == nil {
		base = real
	}
	s := &untrustedSetup{home: filepath.Join(base, "home"), project: filepath.Join(base, "project"),
		plantedRan: filepath.Join(base, "planted-ran"), projectSrvRan: filepath.Join(base, "project-srv-ran")}
	s.config = filepath.Join(s.home, ".claude")
	write := func(path, text string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	market := filepath.Join(s.config, "plugins", "marketplaces", "m")
	write(filepath.Join(market, ".claude-plugin", "marketplace.json"), `{"name": "m", "plugins": [
	  {"name": "planted", "source": "./planted"}, {"name": "relative", "source": "./relative"}]}`, 0o644)
	planted, relative := filepath.Join(market, "planted"), filepath.Join(market, "relative")
	write(filepath.Join(planted, "srv"), "#!/bin/sh\ntouch "+s.plantedRan+"\n", 0o755)
	write(filepath.Join(planted, ".lsp.json"), `{"srv": {"command": "${CLAUDE_PLUGIN_ROOT}/srv", "extensionToLanguage": {".x": "x"}}}`, 0o644)
	write(filepath.Join(relative, ".lsp.json"), `{"srv": {"command": "bin/srv", "extensionToLanguage": {".y": "y"}}}`, 0o644)
	write(filepath.Join(s.config, "plugins", "installed_plugins.json"), `{"version": 2, "plugins": {
	  "planted@m": [{"scope": "user", "installPath": "`+planted+`", "version": "1"}],
	  "relative@m": [{"scope": "user", "installPath": "`+relative+`", "version": "1"}]}}`, 0o644)
	write(filepath.Join(s.config, "settings.json"), `{"enabledPlugins": {"planted@m": false, "relative@m": true}}`, 0o644)

	write(filepath.Join(s.project, ".claude", "settings.json"), `{"enabledPlugins": {"planted@m": true}}`, 0o644)
	write(filepath.Join(s.project, "bin", "srv"), "#!/bin/sh\ntouch "+s.projectSrvRan+"\n", 0o755)
	write(filepath.Join(s.project, "a.x"), "x\n", 0o644)
	write(filepath.Join(s.project, "a.y"), "y\n", 0o644)
	// A runtime of the test's own: its phases stop it in between (see
	// stopRuntime).
	s.runtimeDir = filepath.Join(base, "rt")
	s.env = append(os.Environ(), "HOME="+s.home, "CLAUDE_CONFIG_DIR=", "USERPROFILE=", "CLAUDE_CODE_IGNORE_PERSISTED_TRUST=",
		"IDEBRIDGE_RUNTIME_DIR="+s.runtimeDir)
	t.Cleanup(func() { stopRuntimesIn(s.runtimeDir) })
	return s
}

// stopRuntime stops the setup's runtime: diag goes through it, and its
// servers outlive a command, so that the next command on the same
// configuration would share the servers the last one started instead of
// starting them.
func (s *untrustedSetup) stopRuntime(t *testing.T) {
	t.Helper()
	stopRuntimesIn(s.runtimeDir)
}

// run runs the built binary in the project directory.
func (s *untrustedSetup) run(t *testing.T, args ...string) (string, string) {
	t.Helper()
	bin, err := buildCommand()
	if err != nil {
		t.Fatalf("building idebridge: %v", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = s.project, s.env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run() // diag exits non-zero: the servers do not speak LSP
	return stdout.String(), stderr.String()
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// From outside the checkout: a cloned repository's settings do not start a
// plugin the user disabled, and its bin/srv is never a plugin's command;
// --trust-project, or Claude Code's record of trust, lets its settings
// count.
func TestBinaryUntrustedProject(t *testing.T) {
	s := newUntrustedSetup(t)

	out, errOut := s.run(t, "diag", "--timeout", "30s", "a.x", "a.y")
	if exists(s.plantedRan) || exists(s.projectSrvRan) {
		t.Fatalf("a server ran: planted %v, project's bin/srv %v\nstderr:\n%s", exists(s.plantedRan), exists(s.projectSrvRan), errOut)
	}
	if !strings.Contains(errOut, "warning: ignored 1 enabledPlugins entries of "+filepath.Join(s.project, ".claude", "settings.json")) ||
		!strings.Contains(errOut, "--trust-project") {
		t.Errorf("diag did not say what it ignored:\n%s%s", out, errOut)
	}

	out, _ = s.run(t, "lsp", "list")
	if !strings.Contains(out, "Ignored, because the project is not trusted:") ||
		!strings.Contains(out, `projects["`+filepath.ToSlash(s.project)+`"].hasTrustDialogAccepted`) ||
		!strings.Contains(out, filepath.Join(s.config, "plugins", "marketplaces", "m", "relative", "bin", "srv")) {
		t.Errorf("lsp list:\n%s", out)
	}
	out, _ = s.run(t, "lsp", "list", "--json")
	var l listing
	if err := json.Unmarshal([]byte(out), &l); err != nil || l.Trust == nil || l.Trust.Trusted || len(l.Trust.Ignored) != 1 {
		t.Errorf("lsp list --json: %v %+v\n%s", err, l.Trust, out)
	}

	// For one run.
	s.run(t, "diag", "--timeout", "30s", "--trust-project", "a.x")
	if !exists(s.plantedRan) {
		t.Error("--trust-project: the project's settings did not count")
	}
	os.Remove(s.plantedRan)
	s.stopRuntime(t)

	// Trusted in Claude Code.
	rec, _ := json.Marshal(map[string]any{"projects": map[string]any{filepath.ToSlash(s.project): map[string]any{"hasTrustDialogAccepted": true}}})
	if err := os.WriteFile(filepath.Join(s.home, ".claude.json"), rec, 0o600); err != nil {
		t.Fatal(err)
	}
	s.run(t, "diag", "--timeout", "30s", "a.x", "a.y")
	if !exists(s.plantedRan) || exists(s.projectSrvRan) {
		t.Errorf("trusted: planted ran %v (want true), project's bin/srv ran %v (want false)", exists(s.plantedRan), exists(s.projectSrvRan))
	}
}
