//go:build unix

package idebridge_test

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/lockfile"
)

// reconnectWithin runs Reconnect and fails the test when it has not come
// back within bound; release is called until it has.
func reconnectWithin(t *testing.T, cand idebridge.Candidate, bound time.Duration, release func()) (*idebridge.Client, error) {
	t.Helper()
	type result struct {
		c   *idebridge.Client
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, _, err := idebridge.Reconnect(reviewCtx(t), cand, nil)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		return r.c, r.err
	case <-time.After(bound):
		t.Errorf("Reconnect did not come back within %v", bound)
	}
	for {
		select {
		case r := <-done:
			if r.c != nil {
				r.c.Close()
			}
			return nil, nil
		case <-time.After(10 * time.Millisecond):
			release()
		}
	}
}

// Reconnect re-reads the lockfile with discovery's checks: a FIFO in its
// place is an error at once (a plain read would wait for a writer
// forever), and a lockfile that others may write is refused unless the
// candidate came from a discovery that allowed it.
func TestReconnectChecksLockfile(t *testing.T) {
	s := newACScene(t)
	srv := s.startIDE(t, ideserver.Options{})
	cands, err := idebridge.Discover(reviewCtx(t), s.options(nil).Discover)
	if err != nil || len(cands) != 1 || !cands[0].Valid {
		t.Fatalf("Discover = %+v, %v", cands, err)
	}
	cand := cands[0]
	path := srv.LockfilePath()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("FIFO", func(t *testing.T) {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
		release := func() {
			if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		}
		_, err := reconnectWithin(t, cand, 5*time.Second, release)
		var pe *lockfile.ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Reconnect to a FIFO lockfile: %v, want a *lockfile.ParseError saying it is not a regular file", err)
		}
	})

	t.Run("writable by others", func(t *testing.T) {
		os.Remove(path)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o666); err != nil {
			t.Fatal(err)
		}
		c, err := reconnectWithin(t, cand, 5*time.Second, func() {})
		if c != nil {
			c.Close()
		}
		var pe *lockfile.PermissionError
		if !errors.As(err, &pe) || pe.Problem != lockfile.ProblemWritable {
			t.Errorf("Reconnect with a lockfile others may write: %v, want a *lockfile.PermissionError", err)
		}

		// Discovered with AllowInsecure, the same file is read again.
		dopts := s.options(nil).Discover
		dopts.AllowInsecure = true
		cands, err := idebridge.Discover(reviewCtx(t), dopts)
		if err != nil || len(cands) != 1 || !cands[0].Valid {
			t.Fatalf("Discover with AllowInsecure = %+v, %v", cands, err)
		}
		c, err = reconnectWithin(t, cands[0], 5*time.Second, func() {})
		if err != nil {
			t.Fatalf("Reconnect after an insecure discovery: %v", err)
		}
		c.Close()
	})
}
