//go:build unix

package lsp

import (
	"os"
	"syscall"
)

// killGroup SIGKILLs the process group led by p. The group outlives its
// leader while any member lives, so this also reaches grandchildren after
// the server itself exited.
func killGroup(p *os.Process) {
	if p == nil {
		return
	}
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	_ = p.Kill()
}
