package idebridge

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// probe connects to hostPort within the probe timeout and closes the
// connection at once. A refused connection answers immediately, so probing
// many closed ports concurrently costs little.
func (d *discovery) probe(ctx context.Context, hostPort string) error {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	conn, err := d.dial(ctx, "tcp", hostPort)
	if err != nil {
		return err
	}
	conn.Close()
	return nil
}

// wsaeconnrefused is Windows' "connection refused", which syscall does not
// map to ECONNREFUSED.
const wsaeconnrefused = syscall.Errno(10061)

// isRefused reports whether err is a refused TCP connection (nothing
// listening), as opposed to a timeout or an unreachable host.
func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, wsaeconnrefused)
}

// portMessage says in words why a probe of hostPort failed.
func portMessage(hostPort string, err error, timeout time.Duration) string {
	switch {
	case isRefused(err):
		return fmt.Sprintf("nothing is listening on %s (connection refused)", hostPort)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("%s did not accept a connection within %v", hostPort, timeout)
	}
	return fmt.Sprintf("cannot connect to %s: %v", hostPort, err)
}
