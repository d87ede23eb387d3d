//go:build unix && !linux

package main

import "syscall"

// newPipe returns a close-on-exec pipe: the read end for the caller's event
// loop, the write end for the call.
func newPipe() (r, w int, err error) {
	var fds [2]int
	syscall.ForkLock.RLock()
	err = syscall.Pipe(fds[:])
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, -1, err
	}
	return fds[0], fds[1], nil
}

// signalPipe makes the read end readable: one byte, which the pipe's
// buffer always has room for.
func signalPipe(w int) {
	_, _ = syscall.Write(w, []byte{1})
}

func closeFD(fd int) { _ = syscall.Close(fd) }
