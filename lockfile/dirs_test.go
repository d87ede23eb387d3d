package lockfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// envFunc returns m in os.Environ form (never nil), so tests never read
// the real environment.
func envFunc(m map[string]string) []string {
	out := []string{}
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

func TestDirConfigDirWins(t *testing.T) {
	got, err := Dir(envFunc(map[string]string{"CLAUDE_CONFIG_DIR": "/cfg", "HOME": "/home/me"}), nil)
	if err != nil || got != filepath.Join("/cfg", "ide") {
		t.Errorf("Dir = %q, %v; want /cfg/ide", got, err)
	}
}

func TestDirHome(t *testing.T) {
	got, err := Dir(envFunc(map[string]string{"CLAUDE_CONFIG_DIR": "", "HOME": "/home/me"}), nil)
	if err != nil || got != filepath.Join("/home/me", ".claude", "ide") {
		t.Errorf("Dir = %q, %v; want /home/me/.claude/ide", got, err)
	}
	got, err = Dir(envFunc(map[string]string{"HOME": "/home/me"}), &DirOptions{Home: "/other"})
	if err != nil || got != filepath.Join("/other", ".claude", "ide") {
		t.Errorf("Dir with Home option = %q, %v; want /other/.claude/ide", got, err)
	}
}

func TestDirNoHome(t *testing.T) {
	// An injected environment without HOME must not fall back to the real
	// home directory.
	got, err := Dir(envFunc(nil), nil)
	if !errors.Is(err, ErrNoHome) {
		t.Errorf("Dir = %q, %v; want ErrNoHome", got, err)
	}
	if dirs := Dirs(envFunc(nil), nil); len(dirs) != 0 {
		t.Errorf("Dirs = %q, want none", dirs)
	}
}

func TestDirsWSLWindowsProfiles(t *testing.T) {
	users := t.TempDir()
	for _, name := range []string{"me", "Public", "Default", "Default User", "All Users", "other", "public"} {
		if err := os.Mkdir(filepath.Join(users, name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(users, "desktop.ini"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": "/home/me", "WSL_DISTRO_NAME": "Ubuntu"}
	opts := &DirOptions{WindowsUsersRoot: users}
	got := Dirs(envFunc(env), opts)
	want := []string{
		filepath.Join("/home/me", ".claude", "ide"),
		filepath.Join(users, "me", ".claude", "ide"),
		filepath.Join(users, "other", ".claude", "ide"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Dirs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[1:], WindowsDirs(envFunc(env), opts)); diff != "" {
		t.Errorf("WindowsDirs (-want +got):\n%s", diff)
	}

	// Outside WSL the Windows side is not looked at.
	delete(env, "WSL_DISTRO_NAME")
	if got := Dirs(envFunc(env), opts); len(got) != 1 {
		t.Errorf("Dirs outside WSL = %q, want only the home directory", got)
	}

	// A missing users root gives no Windows directories, not an error.
	env["WSL_DISTRO_NAME"] = "Ubuntu"
	if got := WindowsDirs(envFunc(env), &DirOptions{WindowsUsersRoot: filepath.Join(users, "nope")}); got != nil {
		t.Errorf("WindowsDirs with a missing root = %q", got)
	}
}

func TestDirsDeduplicatesConfigDirOnWindowsSide(t *testing.T) {
	users := t.TempDir()
	if err := os.Mkdir(filepath.Join(users, "me"), 0o700); err != nil {
		t.Fatal(err)
	}
	// CLAUDE_CONFIG_DIR pointing at the Windows profile's .claude.
	env := map[string]string{"WSL_DISTRO_NAME": "Ubuntu", "CLAUDE_CONFIG_DIR": filepath.Join(users, "me", ".claude") + "/"}
	got := Dirs(envFunc(env), &DirOptions{WindowsUsersRoot: users})
	if len(got) != 1 {
		t.Errorf("Dirs = %q, want the one directory once", got)
	}
}

func TestIsWSL(t *testing.T) {
	if !IsWSL([]string{"WSL_DISTRO_NAME=Ubuntu"}) || IsWSL([]string{"WSL_DISTRO_NAME="}) || IsWSL([]string{}) {
		t.Error("IsWSL does not read WSL_DISTRO_NAME of the environment given")
	}
	t.Setenv("WSL_DISTRO_NAME", "Debian")
	if !IsWSL(nil) || IsWSL([]string{}) {
		t.Error("nil must mean the process's environment, and only nil")
	}
}
