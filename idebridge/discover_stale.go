package idebridge

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"slices"
	"strconv"

	"github.com/idebridge/idebridge/lockfile"
)

// RemoveStale deletes the lockfiles among cands (as returned by Discover)
// that are stale by the deployed agents' rules (docs/PROTOCOL.md,
// Discovery) and
// returns the paths it removed:
//   - a lockfile that does not parse;
//   - outside WSL, a lockfile whose pid is not running;
//   - a lockfile without a pid whose port refuses a TCP connection.
//
// Each condition is checked again at removal time, and a lockfile whose
// modification time differs from the candidate's (an IDE rewrote it since
// Discover) is left alone, as is one refused for its permissions (it may not
// be ours). opts are the options given to Discover (environment, process
// inspector, dialer). Listing never removes anything; this is the only
// function that does. The error joins every removal that failed.
func RemoveStale(ctx context.Context, cands []Candidate, opts *DiscoverOptions) ([]string, error) {
	d, err := newDiscovery(opts)
	if err != nil {
		return nil, fmt.Errorf("removing stale lockfiles: %w", err)
	}
	var removed []string
	var errs []error
	for _, c := range cands {
		if err := ctx.Err(); err != nil {
			return removed, fmt.Errorf("removing stale lockfiles: %w", err)
		}
		if c.Path == "" || !d.stale(ctx, c) {
			continue
		}
		info, err := os.Stat(c.Path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("removing stale lockfile %s: %w", c.Path, err))
			continue
		}
		if !info.ModTime().Equal(c.ModTime) {
			d.log.Debug("lockfile changed since it was listed; keeping it", "path", c.Path)
			continue
		}
		if err := lockfile.Remove(c.Path); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, c.Path)
	}
	return removed, errors.Join(errs...)
}

// stale applies the removal rules to one candidate, re-checking the pid or
// the port.
func (d *discovery) stale(ctx context.Context, c Candidate) bool {
	if slices.Contains(c.Reasons, ReasonInsecurePermissions) {
		return false
	}
	if slices.Contains(c.Reasons, ReasonParseError) {
		return true
	}
	lf := c.Lockfile
	if lf == nil {
		return false
	}
	if lf.PID > 0 {
		if d.term.WSL {
			return false // pids may belong to Windows: not ours to judge
		}
		alive, err := d.insp.Alive(ctx, lf.PID)
		return err == nil && !alive
	}
	host := c.Host
	if host == "" {
		host = "127.0.0.1"
	}
	err := d.probe(ctx, net.JoinHostPort(host, strconv.Itoa(lf.Port)))
	return err != nil && isRefused(err)
}
