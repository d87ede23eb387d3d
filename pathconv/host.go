package pathconv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"

	"github.com/idebridge/idebridge/internal/env"
)

// EnvHostOverride names the variable that sets the IDE's host outright.
const EnvHostOverride = "CLAUDE_CODE_IDE_HOST_OVERRIDE"

// DefaultResolvConf is the file WindowsHost reads when the route fails.
const DefaultResolvConf = "/etc/resolv.conf"

// ErrNoWindowsHost is returned (wrapped) by WindowsHost when neither the
// default route nor resolv.conf names the Windows host.
var ErrNoWindowsHost = errors.New("cannot find the Windows host's address")

// HostOverride returns CLAUDE_CODE_IDE_HOST_OVERRIDE of environ (os.Environ
// form; nil means the process's environment) when it is set and not blank.
func HostOverride(environ []string) (string, bool) {
	h := strings.TrimSpace(env.Get(environ, EnvHostOverride))
	return h, h != ""
}

// WindowsHostFromRoute returns the default gateway from the output of
// `ip route show default` ("default via 172.22.64.1 dev eth0 ..."): inside
// WSL 2 that gateway is the Windows host. It returns false when no default
// route with a valid gateway address is listed.
func WindowsHostFromRoute(text string) (string, bool) {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] != "default" {
			continue
		}
		for i := 1; i+1 < len(f); i++ {
			if f[i] == "via" {
				if a, ok := hostAddr(f[i+1]); ok {
					return a, true
				}
				break
			}
		}
	}
	return "", false
}

// WindowsHostFromResolvConf returns the first usable nameserver address in
// the text of /etc/resolv.conf: WSL points it at the Windows host unless
// told otherwise. Loopback and unspecified addresses are skipped (they are
// never the Windows host).
func WindowsHostFromResolvConf(text string) (string, bool) {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "nameserver" {
			continue
		}
		if a, ok := hostAddr(f[1]); ok {
			return a, true
		}
	}
	return "", false
}

// hostAddr validates an address and returns it in canonical form.
func hostAddr(s string) (string, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil || a.IsLoopback() || a.IsUnspecified() || a.IsMulticast() {
		return "", false
	}
	return a.String(), true
}

// HostOptions adjusts WindowsHost. A nil *HostOptions means the defaults.
type HostOptions struct {
	// Env is the environment (CLAUDE_CODE_IDE_HOST_OVERRIDE) in os.Environ
	// form; nil means the process's own.
	Env []string
	// IPCommand is the ip program to run as `IPCommand route show
	// default`; empty means "ip" from PATH.
	IPCommand string
	// ResolvConf is the resolv.conf to read; empty means DefaultResolvConf.
	ResolvConf string
}

// WindowsHost returns the address at which an agent inside WSL reaches an
// IDE running on Windows: CLAUDE_CODE_IDE_HOST_OVERRIDE when set, else the
// default gateway of `ip route show default`, else the nameserver of
// resolv.conf. ctx bounds running ip. The error wraps ErrNoWindowsHost and
// says what was tried.
func WindowsHost(ctx context.Context, opts *HostOptions) (string, error) {
	if opts == nil {
		opts = &HostOptions{}
	}
	if h, ok := HostOverride(opts.Env); ok {
		return h, nil
	}
	ipCmd := opts.IPCommand
	if ipCmd == "" {
		ipCmd = "ip"
	}
	out, routeErr := exec.CommandContext(ctx, ipCmd, "route", "show", "default").Output()
	if routeErr == nil {
		if h, ok := WindowsHostFromRoute(string(out)); ok {
			return h, nil
		}
		routeErr = errors.New("no default gateway listed")
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("finding the Windows host: %w", err)
	}
	resolv := opts.ResolvConf
	if resolv == "" {
		resolv = DefaultResolvConf
	}
	data, resolvErr := os.ReadFile(resolv)
	if resolvErr == nil {
		if h, ok := WindowsHostFromResolvConf(string(data)); ok {
			return h, nil
		}
		resolvErr = errors.New("no usable nameserver")
	}
	return "", fmt.Errorf("%w: %s route show default: %v; %s: %v", ErrNoWindowsHost, ipCmd, routeErr, resolv, resolvErr)
}
