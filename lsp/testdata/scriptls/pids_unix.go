//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// newSession makes cmd start a session of its own, which leaves our
// process group: a group kill does not reach it.
func newSession(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
