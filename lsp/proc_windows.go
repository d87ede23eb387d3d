//go:build windows

package lsp

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcAttr starts the server in a new process group, so console
// interrupts meant for the agent do not reach it.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// killGroup kills the server process. Windows has no process-group kill
// without job objects; children the server started are not reached.
func killGroup(p *os.Process) {
	if p != nil {
		_ = p.Kill()
	}
}
