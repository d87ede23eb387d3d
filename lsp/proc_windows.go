//go:build windows

package lsp

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"
)

// The job object calls, from kernel32 (the standard library does not wrap
// them).
var (
	kernel32                     = syscall.NewLazyDLL("kernel32.dll")
	procCreateJobObjectW         = kernel32.NewProc("CreateJobObjectW")
	procSetInformationJobObject  = kernel32.NewProc("SetInformationJobObject")
	procAssignProcessToJobObject = kernel32.NewProc("AssignProcessToJobObject")
	procTerminateJobObject       = kernel32.NewProc("TerminateJobObject")
)

const (
	jobObjectExtendedLimitInformation = 9
	jobObjectLimitKillOnJobClose      = 0x2000
	processSetQuota                   = 0x0100
	processTerminate                  = 0x0001
)

// jobObjectExtendedLimitInformation as winnt.h lays it out.
type jobLimits struct {
	PerProcessUserTimeLimit int64
	PerJobUserTimeLimit     int64
	LimitFlags              uint32
	MinimumWorkingSetSize   uintptr
	MaximumWorkingSetSize   uintptr
	ActiveProcessLimit      uint32
	Affinity                uintptr
	PriorityClass           uint32
	SchedulingClass         uint32
	IoCounters              [6]uint64
	ProcessMemoryLimit      uintptr
	JobMemoryLimit          uintptr
	PeakProcessMemoryUsed   uintptr
	PeakJobMemoryUsed       uintptr
}

// containModes are the ways to start a server here: one.
var containModes = []isolation{isolateJob}

// startContained starts a copy of cmd in a new process group (so console
// interrupts meant for the agent do not reach it) and puts it in a job
// object that kills every process in it when its last handle closes: the
// agent holds the only handle, so its exit, however it happens, ends the
// tree. A child the server starts before it is assigned to the job (in the
// first moments after the start) is not in the job. When no job can be
// made, the server is still started, and only it is killed.
func startContained(cmd *exec.Cmd, p *proc, _ []isolation) (*exec.Cmd, error) {
	c := copyCmd(cmd)
	c.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
	if err := c.Start(); err != nil {
		return nil, err
	}
	p.isolation = isolateNone
	if job, ok := newKillOnCloseJob(c.Process.Pid); ok {
		p.tree.job = job
		p.isolation = isolateJob
	}
	return c, nil
}

// newKillOnCloseJob creates a kill-on-close job holding process pid.
func newKillOnCloseJob(pid int) (syscall.Handle, bool) {
	r, _, _ := procCreateJobObjectW.Call(0, 0)
	job := syscall.Handle(r)
	if job == 0 {
		return 0, false
	}
	var limits jobLimits
	limits.LimitFlags = jobObjectLimitKillOnJobClose
	if r, _, _ := procSetInformationJobObject.Call(uintptr(job), jobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&limits)), unsafe.Sizeof(limits)); r == 0 {
		syscall.CloseHandle(job)
		return 0, false
	}
	h, err := syscall.OpenProcess(processSetQuota|processTerminate, false, uint32(pid))
	if err != nil {
		syscall.CloseHandle(job)
		return 0, false
	}
	defer syscall.CloseHandle(h)
	if r, _, _ := procAssignProcessToJobObject.Call(uintptr(job), uintptr(h)); r == 0 {
		syscall.CloseHandle(job)
		return 0, false
	}
	return job, true
}

// tree is the server's job object, if it has one.
type tree struct {
	mu  sync.Mutex
	job syscall.Handle // 0 when none, or once closed
}

// kill terminates every process in the job, then closes it; without a job
// only the server is killed.
func (t *tree) kill(p *os.Process) {
	t.mu.Lock()
	if t.job != 0 {
		procTerminateJobObject.Call(uintptr(t.job), 1)
		syscall.CloseHandle(t.job)
		t.job = 0
	}
	t.mu.Unlock()
	if p != nil {
		_ = p.Kill()
	}
}
