package idebridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
)

func (systemInspector) Alive(_ context.Context, pid int) (bool, error) { return signalAlive(pid) }

// Parent reads the fourth field of /proc/<pid>/stat. The second field, the
// command name in parentheses, may itself hold spaces and parentheses, so
// the fields are counted from the last ')'.
func (systemInspector) Parent(_ context.Context, pid int) (int, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("parent of pid %d: %w", pid, ErrNoProcess)
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("parent of pid %d: %w", pid, ErrNoProcess)
	}
	if err != nil {
		return 0, fmt.Errorf("parent of pid %d: %w", pid, err)
	}
	return parseProcStatPPID(data)
}

// parseProcStatPPID extracts the parent pid from /proc/<pid>/stat.
func parseProcStatPPID(data []byte) (int, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("parsing /proc stat %q: no command name", data)
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 2 {
		return 0, fmt.Errorf("parsing /proc stat %q: too few fields", data)
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil || ppid < 0 {
		return 0, fmt.Errorf("parsing /proc stat %q: bad parent pid", data)
	}
	return ppid, nil
}
