//go:build unix

package idebridge

import (
	"errors"
	"syscall"
)

// signalAlive sends signal 0: no error or EPERM (the process exists but
// belongs to someone else) means alive, ESRCH means gone.
func signalAlive(pid int) (bool, error) {
	if pid <= 0 {
		return false, nil
	}
	err := syscall.Kill(pid, 0)
	switch {
	case err == nil, errors.Is(err, syscall.EPERM):
		return true, nil
	case errors.Is(err, syscall.ESRCH):
		return false, nil
	}
	return false, err
}
