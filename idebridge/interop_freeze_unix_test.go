//go:build unix

package idebridge_test

import (
	"os"
	"syscall"
)

// freezeProcess stops p (SIGSTOP): the kernel keeps its sockets open and
// nobody reads them.
func freezeProcess(p *os.Process) error { return p.Signal(syscall.SIGSTOP) }

const canFreeze = true
