//go:build unix

package lsp

import (
	"errors"
	"syscall"
)

// processAlive reports whether pid names a live (not reaped) process.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
