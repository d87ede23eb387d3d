package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// forkGrandchild starts "scriptls -sleep" in a new session where there are
// sessions, outside our process group, and writes both host pids to path.
func forkGrandchild(path string) {
	cmd := exec.Command(os.Args[0], "-sleep")
	newSession(cmd)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "scriptls: grandchild:", err)
		os.Exit(1)
	}
	os.WriteFile(path, []byte(fmt.Sprintf("%d %d\n", hostPID(), childHostPID(cmd.Process.Pid))), 0o600)
}

// hostPID is our pid as the agent sees it. In a PID namespace os.Getpid is
// the namespace's pid (1 for its init), but /proc is the agent's, so
// /proc/self names us by the agent's pid.
func hostPID() int {
	if s, err := os.Readlink("/proc/self"); err == nil {
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	}
	return os.Getpid()
}

// childHostPID finds, in the agent's /proc, the child of ours whose
// namespace pid is pid; outside a namespace that is pid itself.
func childHostPID(pid int) int {
	me := strconv.Itoa(hostPID())
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		data, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		var ppid, nspid string
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "PPid:"); ok {
				ppid = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
				f := strings.Fields(v)
				nspid = f[len(f)-1]
			}
		}
		if ppid == me && nspid == strconv.Itoa(pid) {
			n, _ := strconv.Atoi(e.Name())
			return n
		}
	}
	return pid
}
