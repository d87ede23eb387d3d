//go:build unix && !linux

package lsp

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the server in its own process group, so that it and its
// children are killed together.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
