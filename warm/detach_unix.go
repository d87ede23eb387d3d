//go:build unix

package warm

import "syscall"

// detached starts the runtime in a session of its own: no terminal, and
// no signal meant for the client's process group reaches it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
