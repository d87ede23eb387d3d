package main

import (
	"encoding/binary"
	"syscall"
)

// newPipe returns a close-on-exec, non-blocking eventfd: one descriptor,
// both ends, and one system call to make (a pipe takes three).
func newPipe() (r, w int, err error) {
	const efdCloexec, efdNonblock = syscall.O_CLOEXEC, syscall.O_NONBLOCK
	fd, _, errno := syscall.RawSyscall(syscall.SYS_EVENTFD2, 0, efdCloexec|efdNonblock, 0)
	if errno != 0 {
		return -1, -1, errno
	}
	return int(fd), int(fd), nil
}

// signalPipe makes the eventfd readable.
func signalPipe(w int) {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	_, _ = syscall.Write(w, one[:])
}

func closeFD(fd int) { _ = syscall.Close(fd) }
