//go:build unix

package warm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// tryLock takes an exclusive lock on path, or fails with ErrRunning when
// another process holds it. The lock lasts until unlock or the process's
// end, whatever the end.
func tryLock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("warm: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrRunning
		}
		return nil, fmt.Errorf("warm: lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// lock takes an exclusive lock on path, waiting for it until ctx ends.
func lock(ctx context.Context, path string) (unlock func(), err error) {
	for {
		unlock, err := tryLock(path)
		if !errors.Is(err, ErrRunning) {
			return unlock, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("warm: waiting for %s: %w", path, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
