//go:build !unix

package idebridge_test

import (
	"errors"
	"os"
)

// freezeProcess: Windows has no signal that stops a process while its
// sockets stay open, so the "freezes" cases do not run there.
func freezeProcess(*os.Process) error { return errors.New("no SIGSTOP on this system") }

const canFreeze = false
