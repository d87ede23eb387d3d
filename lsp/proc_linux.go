//go:build linux

package lsp

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// containModes are the ways to start a server, most isolated first.
var containModes = []isolation{isolatePIDNamespace, isolateUserPIDNamespace, isolateGroup}

// namespaceRefused remembers the namespace modes this process may not use,
// so that only the first start pays for trying. A mode is marked only once
// a less isolated start of the same command succeeded, so a command that
// fails for its own reasons never disables namespaces.
var namespaceRefused sync.Map // isolation -> true

// startContained starts a copy of cmd in the most isolated way the system
// allows (see the package comment in proc.go) and records which in p. It
// locks the calling goroutine to its thread for good: the caller must
// start, wait for and reap the process on that goroutine, then return,
// which ends the thread only after the process is gone.
func startContained(cmd *exec.Cmd, p *proc, modes []isolation) (*exec.Cmd, error) {
	runtime.LockOSThread()
	var refused []isolation
	err := errors.New("no way to start the process")
	for i, mode := range modes {
		if _, no := namespaceRefused.Load(mode); no && i < len(modes)-1 {
			continue
		}
		c := copyCmd(cmd)
		c.SysProcAttr = sysProcAttr(mode)
		if err = c.Start(); err == nil {
			for _, r := range refused {
				namespaceRefused.Store(r, true)
			}
			p.isolation = mode
			return c, nil
		}
		if mode == isolateGroup || !isRefusal(err) {
			return nil, err
		}
		refused = append(refused, mode)
	}
	return nil, err
}

// sysProcAttr returns the process attributes of a mode. Every mode puts
// the server in its own process group and has the kernel SIGKILL it when
// the thread that started it ends.
func sysProcAttr(mode isolation) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	switch mode {
	case isolatePIDNamespace:
		a.Cloneflags = syscall.CLONE_NEWPID
	case isolateUserPIDNamespace:
		// The agent's own uid and gid, mapped to themselves: the server
		// runs as the same user with the same file access (supplementary
		// groups are kept), and only gains the right to own a PID
		// namespace.
		a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	return a
}

// isRefusal reports whether a failed start may be the kernel refusing a
// namespace: no privilege (EPERM, EACCES), no support (EINVAL, ENOSYS) or a
// limit reached (ENOSPC, EUSERS).
func isRefusal(err error) bool {
	for _, e := range []error{syscall.EPERM, syscall.EACCES, syscall.EINVAL, syscall.ENOSYS, syscall.ENOSPC, syscall.EUSERS} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// tree is the process tree: on Linux, the server's PID namespace or
// process group, reached through the server's pid.
type tree struct{}

// kill SIGKILLs the process group led by p and p itself. When p is the init
// of a PID namespace its death kills every process in the namespace; the
// group kill also reaches grandchildren after p exited in fallback mode.
func (tree) kill(p *os.Process) {
	if p == nil {
		return
	}
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	_ = p.Kill()
}
