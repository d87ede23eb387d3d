package lsp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pluginByID returns the status of a plugin, or fails.
func pluginByID(t *testing.T, c *ClaudeCodeConfig, id string) PluginStatus {
	t.Helper()
	for _, p := range c.Plugins {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("no status for %s in %+v", id, c.Plugins)
	return PluginStatus{}
}

// A repository's own settings enable plugins only in a project the user
// trusted in Claude Code: untrusted, they are ignored and reported, and a
// plugin the user disabled stays disabled.
func TestLoadClaudeCodeUntrustedProject(t *testing.T) {
	in := newInstallation(t)
	project := filepath.Join(in.project, ".claude", "settings.json")
	local := filepath.Join(in.project, ".claude", "settings.local.json")
	for name, setup := range map[string]func(){
		"no record":    func() { os.Remove(filepath.Join(in.config, ".claude.json")) },
		"record false": func() { trustProject(t, in.config, in.project, false) },
		"parent only":  func() { trustProject(t, in.config, filepath.Dir(in.project), true) },
	} {
		t.Run(name, func(t *testing.T) {
			setup()
			got := LoadClaudeCode(&ClaudeCodeOptions{ProjectDir: in.project, ConfigDir: in.config, Env: []string{"HOME=/nowhere"}})
			tr := got.Trust
			if tr.Trusted || tr.Source != "" || !strings.Contains(tr.Reason, "--trust-project") || tr.File != filepath.Join(in.config, ".claude.json") {
				t.Errorf("trust %+v", tr)
			}
			want := []IgnoredSettings{{ScopeProject, project, 4}, {ScopeLocal, local, 2}}
			if diff := cmp.Diff(want, tr.Ignored); diff != "" {
				t.Errorf("ignored (-want +got):\n%s", diff)
			}
			// Only the user's own choices count: pyright-lsp and
			// pyright@example-lsps (which the project would disable).
			if names := sortedNames(got.Servers); cmp.Diff([]string{"plugin:pyright-lsp:pyright", "plugin:pyright:python"}, names) != "" {
				t.Errorf("servers %v", names)
			}
			// clangd-lsp: false for the user, true in the local settings.
			clangd := pluginByID(t, got, "clangd-lsp@claude-plugins-official")
			if clangd.Enabled || clangd.IgnoredFile != local || !clangd.IgnoredEnabled || !strings.Contains(clangd.Reason, "count only in a trusted project") {
				t.Errorf("clangd-lsp %+v", clangd)
			}
			// gopls-lsp: installed for the project, enabled by the project.
			gopls := pluginByID(t, got, "gopls-lsp@claude-plugins-official")
			if gopls.Installed || len(gopls.Servers) != 0 || !strings.Contains(gopls.Reason, "counts only in a trusted project") {
				t.Errorf("gopls-lsp %+v", gopls)
			}
			if diff := cmp.Diff([]string{"gopls-lsp@claude-plugins-official", "clangd-lsp@claude-plugins-official"}, tr.IgnoredInstalls); diff != "" {
				t.Errorf("ignored installs (-want +got):\n%s", diff)
			}

			// --trust-project: applied for this load.
			got = LoadClaudeCode(&ClaudeCodeOptions{ProjectDir: in.project, ConfigDir: in.config, Env: []string{"HOME=/nowhere"}, TrustProject: true})
			if !got.Trust.Trusted || got.Trust.Source != TrustFromOption || len(got.Trust.Ignored) != 0 || len(got.Servers) != 3 {
				t.Errorf("trusted by option: %+v %v", got.Trust, sortedNames(got.Servers))
			}
		})
	}

	trustProject(t, in.config, in.project, true)
	got := LoadClaudeCode(&ClaudeCodeOptions{ProjectDir: in.project, ConfigDir: in.config, Env: []string{"HOME=/nowhere"}})
	if !got.Trust.Trusted || got.Trust.Source != TrustFromRecord || len(got.Trust.Ignored) != 0 || len(got.Servers) != 3 {
		t.Errorf("trusted by record: %+v %v", got.Trust, sortedNames(got.Servers))
	}
}

// The record is looked up where the environment says Claude Code keeps it,
// and a few records never count.
func TestProjectTrustRecord(t *testing.T) {
	home := t.TempDir()
	config := filepath.Join(home, ".claude")
	project := filepath.Join(home, "src", "proj")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home}
	writeJSON(t, filepath.Join(home, ".claude.json"), map[string]any{"projects": map[string]any{
		project: map[string]any{"hasTrustDialogAccepted": true},
		home:    map[string]any{"hasTrustDialogAccepted": true},
	}})
	check := func(name string, o ClaudeCodeOptions, want bool) {
		t.Helper()
		got := LoadClaudeCode(&o).Trust
		if got.Trusted != want {
			t.Errorf("%s: %+v", name, got)
		}
	}
	check("default place", ClaudeCodeOptions{ProjectDir: project, Env: env}, true)
	check("config dir given as the default", ClaudeCodeOptions{ProjectDir: project, ConfigDir: config, Env: env}, true)
	check("CLAUDE_CONFIG_DIR has its own", ClaudeCodeOptions{ProjectDir: project, Env: append(env, "CLAUDE_CONFIG_DIR="+config)}, false)
	check("ignore persisted trust", ClaudeCodeOptions{ProjectDir: project, Env: append(env, "CLAUDE_CODE_IGNORE_PERSISTED_TRUST=1")}, false)
	check("home directory", ClaudeCodeOptions{ProjectDir: home, Env: env}, false)
	check("below the project, not a repository", ClaudeCodeOptions{ProjectDir: filepath.Join(project, "sub"), Env: env}, false)
}

// In a git repository the record of its root counts, for a linked worktree
// that of its main checkout, and a directory that only claims to be a
// worktree of a trusted repository is not trusted.
func TestProjectTrustGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	base := t.TempDir()
	if real, err := filepath.EvalSymlinks(base); err == nil {
		base = real
	}
	repo, wt := filepath.Join(base, "repo"), filepath.Join(base, "wt")
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+base, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.MkdirAll(filepath.Join(repo, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	run(repo, "init", "-q")
	run(repo, "commit", "-q", "--allow-empty", "-m", "x")
	run(repo, "worktree", "add", "-q", wt)
	// A planted directory whose .git file points at a git directory of its
	// own that names the trusted repository as its common directory.
	fake := filepath.Join(base, "fake")
	writeFile(t, filepath.Join(fake, ".git"), "gitdir: "+filepath.Join(fake, "gd")+"\n")
	writeFile(t, filepath.Join(fake, "gd", "commondir"), filepath.Join(repo, ".git")+"\n")
	writeFile(t, filepath.Join(fake, "gd", "gitdir"), filepath.Join(fake, ".git")+"\n")

	// One that points at the real worktree's git directory, which does not
	// point back at it.
	borrowed := filepath.Join(base, "borrowed")
	writeFile(t, filepath.Join(borrowed, ".git"), "gitdir: "+filepath.Join(repo, ".git", "worktrees", "wt")+"\n")

	config := t.TempDir()
	trustProject(t, config, repo, true)
	for dir, want := range map[string]bool{repo: true, filepath.Join(repo, "pkg"): true, wt: true, fake: false, borrowed: false} {
		got := LoadClaudeCode(&ClaudeCodeOptions{ProjectDir: dir, ConfigDir: config, Env: []string{"HOME=/nowhere"}}).Trust
		if got.Trusted != want {
			t.Errorf("%s: %+v", dir, got)
		}
		if want && got.Key != repo {
			t.Errorf("%s: key %s, want %s", dir, got.Key, repo)
		}
	}
}
