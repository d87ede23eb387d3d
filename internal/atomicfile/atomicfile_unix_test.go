//go:build unix

package atomicfile

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestReadRefusesAFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := Read(p)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a FIFO read as a file")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read blocked on a FIFO without a writer")
	}
}
