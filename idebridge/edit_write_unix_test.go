//go:build unix

package idebridge

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/idebridge/idebridge/internal/safefile"
)

// The text of an edited file is read only from a regular file: a FIFO
// under its name is an error at once, not a read that waits for a writer.
func TestReadTextRefusesFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe.go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := readText(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("readText(FIFO) = %v, want an error matching safefile.ErrNotRegular", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("readText of a FIFO still blocked after 10 s")
	}
}
