package lsp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/idebridge/idebridge/internal/env"
	"github.com/idebridge/idebridge/internal/jsonrpc"
)

// ClaudeGlobalConfigFile is the file in which Claude Code keeps its global
// state, the record of trusted projects among it, for an environment (nil:
// the process's): .claude.json in $CLAUDE_CONFIG_DIR when that is set and
// non-empty, else .claude.json in the home directory (beside ~/.claude, not
// in it); empty when neither is known.
func ClaudeGlobalConfigFile(environ []string) string {
	if d := env.Get(environ, "CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, ".claude.json")
	}
	if home := homeDir(environ); home != "" {
		return filepath.Join(home, ".claude.json")
	}
	return ""
}

// homeDir is the home directory of an environment: $HOME, or %USERPROFILE%
// on Windows.
func homeDir(environ []string) string {
	home := env.Get(environ, "HOME")
	if runtime.GOOS == "windows" {
		if p := env.Get(environ, "USERPROFILE"); p != "" {
			home = p
		}
	}
	return home
}

// How a project came to be trusted (ProjectTrust.Source).
const (
	TrustFromRecord = "record" // Claude Code's own record: the user accepted its trust dialog
	TrustFromOption = "option" // ClaudeCodeOptions.TrustProject (the command line's --trust-project)
)

// ProjectTrust says whether the project's own configuration counted: the
// enabledPlugins of its .claude/settings.json and .claude/settings.local.json
// and the plugins installed with project or local scope. They count only in a
// project the user trusted in Claude Code (or for one load, with
// ClaudeCodeOptions.TrustProject), as Claude Code itself loads a project's
// plugins only once its folder-trust dialog was accepted there.
//
// The record is Claude Code's: projects[Key].hasTrustDialogAccepted, true,
// in File. Key is where Claude Code records the trust of the project: the
// root of its git repository (for a linked worktree, the repository's main
// checkout, the link checked both ways), else the project directory itself.
// A record of a folder above Key does not count (Claude Code's own check for
// project plugins does not walk up either), and the home directory is never
// trusted by a record: Claude Code's answer for it holds for one session and
// is never written down. CLAUDE_CODE_IGNORE_PERSISTED_TRUST, truthy in the
// environment, makes every record not count, as it does for Claude Code.
type ProjectTrust struct {
	// Trusted says the project's own configuration counted.
	Trusted bool `json:"trusted"`
	// Source is TrustFromRecord or TrustFromOption; empty when not
	// trusted.
	Source string `json:"source,omitempty"`
	// Key is the project's key in the record (see above); File is the
	// record file read. Either is empty when it could not be known.
	Key  string `json:"key,omitempty"`
	File string `json:"file,omitempty"`
	// Reason says why the project is not trusted and how to trust it;
	// empty when trusted.
	Reason string `json:"reason,omitempty"`
	// Ignored lists the project's settings files whose enabledPlugins did
	// not count because the project is not trusted, and
	// IgnoredInstalls the plugins whose project- or local-scoped install
	// for it did not count, by id.
	Ignored         []IgnoredSettings `json:"ignored,omitempty"`
	IgnoredInstalls []string          `json:"ignoredInstalls,omitempty"`
}

// IgnoredSettings is a settings file of an untrusted project whose
// enabledPlugins were not applied.
type IgnoredSettings struct {
	Scope string `json:"scope"` // ScopeProject or ScopeLocal
	File  string `json:"file"`
	// Entries counts its enabledPlugins entries.
	Entries int `json:"entries"`
}

// projectTrust decides the trust of o.ProjectDir.
func projectTrust(o *ClaudeCodeOptions, recordFile string) ProjectTrust {
	t := ProjectTrust{File: recordFile}
	key, keyErr := trustKey(o.ProjectDir)
	t.Key = key
	if o.TrustProject {
		t.Trusted, t.Source = true, TrustFromOption
		return t
	}
	how := "open the project in Claude Code and accept its trust dialog"
	if key != "" && recordFile != "" {
		how += fmt.Sprintf(", or set projects[%q].hasTrustDialogAccepted to true in %s", filepath.ToSlash(key), recordFile)
	}
	how += "; --trust-project accepts them for one run"
	switch {
	case keyErr != nil:
		t.Reason = fmt.Sprintf("where Claude Code records its trust is not known (%v); --trust-project accepts them for one run", keyErr)
		return t
	case env.Truthy(env.Get(o.Env, "CLAUDE_CODE_IGNORE_PERSISTED_TRUST")):
		t.Reason = "CLAUDE_CODE_IGNORE_PERSISTED_TRUST is set, so no trust record counts; --trust-project accepts them for one run"
		return t
	case isHome(key, o.Env):
		t.Reason = "it is the home directory, whose trust Claude Code never records (its answer holds for one session); --trust-project accepts them for one run"
		return t
	case recordFile == "":
		t.Reason = "no Claude Code global configuration (.claude.json) is known: neither CLAUDE_CONFIG_DIR nor HOME is set; " + how
		return t
	}
	accepted, err := readTrustRecord(recordFile, key)
	switch {
	case errors.Is(err, os.ErrNotExist):
		t.Reason = fmt.Sprintf("Claude Code has no record of trusting it (%s does not exist); %s", recordFile, how)
	case err != nil:
		t.Reason = fmt.Sprintf("Claude Code's record of trust cannot be read (%s: %v); %s", recordFile, err, how)
	case !accepted:
		t.Reason = fmt.Sprintf("the project is not trusted in Claude Code (%s has no projects[%q].hasTrustDialogAccepted: true); %s",
			recordFile, filepath.ToSlash(key), how)
	default:
		t.Trusted, t.Source = true, TrustFromRecord
	}
	return t
}

// readTrustRecord reports whether the record file holds
// projects[key].hasTrustDialogAccepted: true. Keys are compared in Claude
// Code's spelling: forward slashes on Windows.
func readTrustRecord(file, key string) (bool, error) {
	data, err := readConfigFile(file)
	if err != nil {
		return false, err
	}
	doc, err := objectFields(data)
	if err != nil {
		return false, err
	}
	projects := doc["projects"]
	if len(projects) == 0 || jsonrpc.Kind(projects) != "object" {
		return false, nil
	}
	entries, err := objectFields(projects)
	if err != nil {
		return false, err
	}
	want := filepath.ToSlash(key)
	for k, v := range entries {
		if k != want && (runtime.GOOS != "windows" || filepath.ToSlash(k) != want) {
			continue
		}
		fields, err := objectFields(v)
		if err != nil {
			continue
		}
		if string(fields["hasTrustDialogAccepted"]) == "true" {
			return true, nil
		}
	}
	return false, nil
}

// isHome reports whether dir is the home directory of the environment.
func isHome(dir string, environ []string) bool {
	home := homeDir(environ)
	if home == "" || dir == "" {
		return false
	}
	if filepath.Clean(home) == dir {
		return true
	}
	rh, err := filepath.EvalSymlinks(home)
	return err == nil && rh == dir
}

// trustKey returns where Claude Code records the trust of the project dir:
// the root of its git repository, the main checkout for a linked worktree,
// else dir itself; with symbolic links resolved, as Claude Code sees its
// working directory.
func trustKey(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	root, ok := gitRoot(abs)
	if !ok {
		return abs, nil
	}
	return canonicalGitRoot(root), nil
}

// gitRoot returns the nearest directory at or above dir holding a .git
// entry (a directory, a worktree's file, or a link).
func gitRoot(dir string) (string, bool) {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false
		}
		d = parent
	}
}

// canonicalGitRoot returns the main checkout of the repository whose linked
// worktree is root, or root itself. The worktree's .git file names its git
// directory, which must lie in <common>/worktrees/ and point back at that
// .git file: a directory cannot claim to belong to a trusted repository
// without the repository agreeing.
func canonicalGitRoot(root string) string {
	data, err := readSmall(filepath.Join(root, ".git"))
	if err != nil {
		return root // a directory, or unreadable: the root itself
	}
	line := strings.TrimSpace(string(data))
	if !strings.HasPrefix(line, "gitdir:") {
		return root
	}
	gitdir := resolveAgainst(root, strings.TrimSpace(strings.TrimPrefix(line, "gitdir:")))
	common, err := readSmall(filepath.Join(gitdir, "commondir"))
	if err != nil {
		return root // a submodule, or not a worktree
	}
	commonDir := resolveAgainst(gitdir, strings.TrimSpace(string(common)))
	if filepath.Dir(gitdir) != filepath.Join(commonDir, "worktrees") {
		return root
	}
	back, err := readSmall(filepath.Join(gitdir, "gitdir"))
	if err != nil {
		return root
	}
	backPath, err1 := filepath.EvalSymlinks(resolveAgainst(gitdir, strings.TrimSpace(string(back))))
	want, err2 := filepath.EvalSymlinks(filepath.Join(root, ".git"))
	if err1 != nil || err2 != nil || backPath != want {
		return root
	}
	if filepath.Base(commonDir) != ".git" {
		// A bare repository's worktree: the bare repository is the key,
		// unless it is itself a checkout.
		if _, err := os.Lstat(filepath.Join(commonDir, ".git")); err == nil {
			return root
		}
		return commonDir
	}
	return filepath.Dir(commonDir)
}

// resolveAgainst makes p absolute against dir and cleans it.
func resolveAgainst(dir, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// readSmall reads a small regular file (a git pointer file).
func readSmall(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	return readConfigFile(path)
}
