package idebridge

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/idebridge/idebridge/lockfile"
)

func TestRemoveStale(t *testing.T) {
	s := newDiscoverSetup(t)
	now := time.Now().Add(-time.Hour).Truncate(time.Second)
	dead := deadPID(t)
	live := os.Getpid()

	malformed := writeRawLock(t, s.ideDir, closedPort(t), "{broken", now)
	deadPid := writeLock(t, s.ideDir, &lockfile.Lockfile{Port: listenLoopback(t), PID: dead, Transport: "ws", WorkspaceFolders: []string{s.proj}}, now)
	livePidClosed := writeLock(t, s.ideDir, &lockfile.Lockfile{Port: closedPort(t), PID: live, Transport: "ws", WorkspaceFolders: []string{s.proj}}, now)
	noPidClosed := writeRawLock(t, s.ideDir, closedPort(t), s.proj+"\n", now)
	noPidOpen := writeRawLock(t, s.ideDir, listenLoopback(t), s.proj+"\n", now)
	otherWorkspaceDead := writeLock(t, s.ideDir, &lockfile.Lockfile{Port: closedPort(t), PID: dead, WorkspaceFolders: []string{"/elsewhere"}}, now)
	insecure := writeRawLock(t, s.ideDir, closedPort(t), "{broken too", now)
	if err := os.Chmod(insecure, 0o666); err != nil {
		t.Fatal(err)
	}
	rewritten := writeLock(t, s.ideDir, &lockfile.Lockfile{Port: closedPort(t), PID: dead, WorkspaceFolders: []string{s.proj}}, now)

	cands, err := Discover(context.Background(), s.opts())
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 8 {
		t.Fatalf("Discover found %d lockfiles, want 8", len(cands))
	}
	// Listing removed nothing.
	for _, c := range cands {
		if _, err := os.Stat(c.Path); err != nil {
			t.Fatalf("Discover touched %s: %v", c.Path, err)
		}
	}
	// An IDE restarts and rewrites one lockfile after the listing.
	if err := os.Chtimes(rewritten, now.Add(time.Minute), now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}

	removed, err := RemoveStale(context.Background(), cands, s.opts())
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(removed)
	want := []string{malformed, deadPid, noPidClosed, otherWorkspaceDead}
	sort.Strings(want)
	if diff := cmp.Diff(want, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	for _, p := range want {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still exists (%v)", filepath.Base(p), err)
		}
	}
	for _, p := range []string{livePidClosed, noPidOpen, insecure, rewritten} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}

	// Running it again on the same list removes nothing more.
	removed, err = RemoveStale(context.Background(), cands, s.opts())
	if err != nil || len(removed) != 0 {
		t.Errorf("second RemoveStale = %v, %v", removed, err)
	}
}

func TestRemoveStaleUnderWSL(t *testing.T) {
	s := newDiscoverSetup(t)
	s.env["WSL_DISTRO_NAME"] = "Ubuntu"
	now := time.Now()
	deadPid := writeLock(t, s.ideDir, &lockfile.Lockfile{Port: closedPort(t), PID: deadPID(t), WorkspaceFolders: []string{s.proj}}, now)
	malformed := writeRawLock(t, s.ideDir, closedPort(t), "\x00", now)
	cands, err := Discover(context.Background(), s.opts())
	if err != nil {
		t.Fatal(err)
	}
	removed, err := RemoveStale(context.Background(), cands, s.opts())
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != malformed {
		t.Errorf("removed %v, want only the malformed lockfile", removed)
	}
	if _, err := os.Stat(deadPid); err != nil {
		t.Errorf("under WSL a dead pid is not a reason to remove: %v", err)
	}
}

func TestRemoveStaleCancelled(t *testing.T) {
	s := newDiscoverSetup(t)
	p := writeRawLock(t, s.ideDir, closedPort(t), "{", time.Now())
	cands, _ := Discover(context.Background(), s.opts())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RemoveStale(ctx, cands, s.opts()); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Errorf("a cancelled RemoveStale removed %s", p)
	}
}
