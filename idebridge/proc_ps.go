//go:build unix && !linux

package idebridge

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

func (systemInspector) Alive(_ context.Context, pid int) (bool, error) { return signalAlive(pid) }

// Parent runs `ps -o ppid= -p <pid>`; ps prints nothing (and fails) for a
// pid that does not exist.
func (systemInspector) Parent(ctx context.Context, pid int) (int, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("parent of pid %d: %w", pid, ErrNoProcess)
	}
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, "ps", "-o", "ppid=", "-p", strconv.Itoa(pid))
	cmd.Stdout = &stdout
	runErr := cmd.Run()
	out := strings.TrimSpace(stdout.String())
	if out == "" {
		if alive, _ := signalAlive(pid); !alive {
			return 0, fmt.Errorf("parent of pid %d: %w", pid, ErrNoProcess)
		}
		return 0, fmt.Errorf("parent of pid %d: ps: %v", pid, runErr)
	}
	ppid, err := strconv.Atoi(out)
	if err != nil {
		return 0, fmt.Errorf("parent of pid %d: ps printed %q", pid, out)
	}
	return ppid, nil
}
