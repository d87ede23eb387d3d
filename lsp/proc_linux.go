//go:build linux

package lsp

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the server in its own process group, so that it and its
// children are killed together, and asks the kernel to SIGKILL it when the
// thread that started it dies, so servers do not outlive a crashed agent.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
