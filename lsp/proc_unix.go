//go:build unix && !linux

package lsp

import (
	"os"
	"os/exec"
	"syscall"
)

// containModes are the ways to start a server here: one.
var containModes = []isolation{isolateGroup}

// startContained starts a copy of cmd in a process group of its own, so
// that it and its children are killed together. Nothing here makes the
// group die with the agent: these systems have no parent-death signal and
// no namespace a process may own without privileges.
func startContained(cmd *exec.Cmd, p *proc, _ []isolation) (*exec.Cmd, error) {
	c := copyCmd(cmd)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		return nil, err
	}
	p.isolation = isolateGroup
	return c, nil
}

// tree is the server's process group, reached through the server's pid.
type tree struct{}

// kill SIGKILLs the process group led by p. The group outlives its leader
// while any member lives, so this also reaches grandchildren after the
// server itself exited.
func (tree) kill(p *os.Process) {
	if p == nil {
		return
	}
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	_ = p.Kill()
}
