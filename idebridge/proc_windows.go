package idebridge

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"unsafe"
)

const (
	processQueryLimitedInformation = 0x1000
	stillActive                    = 259
	errorInvalidParameter          = syscall.Errno(87)
)

// Alive opens the process and asks whether it has exited.
func (systemInspector) Alive(_ context.Context, pid int) (bool, error) {
	if pid <= 0 {
		return false, nil
	}
	h, err := syscall.OpenProcess(processQueryLimitedInformation, false, uint32(pid))
	if errors.Is(err, errorInvalidParameter) {
		return false, nil // no such process
	}
	if errors.Is(err, syscall.ERROR_ACCESS_DENIED) {
		return true, nil // exists, but not ours to query
	}
	if err != nil {
		return false, err
	}
	defer syscall.CloseHandle(h)
	var code uint32
	if err := syscall.GetExitCodeProcess(h, &code); err != nil {
		return false, err
	}
	return code == stillActive, nil
}

// Parent finds pid in a process snapshot.
func (systemInspector) Parent(_ context.Context, pid int) (int, error) {
	snap, err := syscall.CreateToolhelp32Snapshot(syscall.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return 0, fmt.Errorf("parent of pid %d: %w", pid, err)
	}
	defer syscall.CloseHandle(snap)
	var e syscall.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	for err = syscall.Process32First(snap, &e); err == nil; err = syscall.Process32Next(snap, &e) {
		if int(e.ProcessID) == pid {
			return int(e.ParentProcessID), nil
		}
	}
	return 0, fmt.Errorf("parent of pid %d: %w", pid, ErrNoProcess)
}
