package pathconv

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// SystemWSLPath returns a WSLPathFunc that runs the wslpath tool found on
// PATH, or nil when there is none (outside WSL, for instance), so that
// WSLOptions{WSLPath: SystemWSLPath()} uses the tool exactly when present.
func SystemWSLPath() WSLPathFunc {
	bin, err := exec.LookPath("wslpath")
	if err != nil {
		return nil
	}
	return CommandWSLPath(bin)
}

// CommandWSLPath returns a WSLPathFunc that runs the wslpath-compatible
// program bin ("bin -w PATH" or "bin -u PATH", the answer on one line of
// standard output).
func CommandWSLPath(bin string) WSLPathFunc {
	return func(ctx context.Context, toWindows bool, p string) (string, error) {
		flag := "-u"
		if toWindows {
			flag = "-w"
		}
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, bin, flag, p)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		// Do not wait for a grandchild holding the pipes after ctx ends.
		cmd.WaitDelay = 100 * time.Millisecond
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("running %s %s %q: %w (%s)", bin, flag, p, err, strings.TrimSpace(stderr.String()))
		}
		out := strings.TrimRight(stdout.String(), "\r\n")
		if out == "" || strings.ContainsAny(out, "\r\n") {
			return "", fmt.Errorf("running %s %s %q: unexpected output %q", bin, flag, p, stdout.String())
		}
		return out, nil
	}
}
