package idebridge

import (
	"context"
	"errors"
)

// ProcessInspector answers the two questions discovery asks about
// processes. DiscoverOptions.Processes nil means the system's own (on
// Linux signal 0 and /proc/<pid>/stat, on other Unix systems signal 0 and
// `ps -o ppid= -p <pid>`, on Windows the process API); tests can simulate a
// process tree.
type ProcessInspector interface {
	// Alive reports whether a process with this pid exists (a process
	// that exists but may not be signalled counts as alive). It must not
	// block for long; ctx bounds any helper it runs.
	Alive(ctx context.Context, pid int) (bool, error)
	// Parent returns the parent pid of pid, or an error wrapping
	// ErrNoProcess when there is no such process.
	Parent(ctx context.Context, pid int) (int, error)
}

// ErrNoProcess is wrapped by ProcessInspector.Parent for a pid that does
// not exist.
var ErrNoProcess = errors.New("no such process")

// systemInspector inspects the real processes (proc_linux.go, proc_ps.go,
// proc_windows.go).
type systemInspector struct{}

// MaxAncestors is how many parents the ancestry check walks.
const MaxAncestors = 10

// ancestors returns up to MaxAncestors ancestors of pid, nearest first. The
// walk stops early at pid 1 (or 0), at a loop, or when a parent cannot be
// read; the error then says why, and the pids found so far are returned.
func ancestors(ctx context.Context, insp ProcessInspector, pid int) ([]int, error) {
	var out []int
	for len(out) < MaxAncestors {
		parent, err := insp.Parent(ctx, pid)
		if err != nil {
			return out, err
		}
		if parent <= 0 || parent == pid {
			break
		}
		out = append(out, parent)
		if parent == 1 {
			break
		}
		pid = parent
	}
	return out, nil
}
