package fuzz

import (
	"net/netip"
	"path"
	"strings"
	"testing"

	"github.com/idebridge/idebridge/pathconv"
)

const distro = "Ubuntu"

// isWindowsAbs reports whether p is an absolute Windows path as ToIDE
// writes them: a drive (C:\...) or a UNC path (\\host\...).
func isWindowsAbs(p string) bool {
	return len(p) >= 3 && 'A' <= p[0] && p[0] <= 'Z' && p[1] == ':' && p[2] == '\\' || strings.HasPrefix(p, `\\`)
}

// FuzzWSLToWindowsRoundTrip checks that a clean absolute WSL path that
// ToIDE accepts (converts) comes back unchanged through ToLocal, and that
// what ToIDE writes is an absolute Windows path without forward slashes.
func FuzzWSLToWindowsRoundTrip(f *testing.F) {
	convs := []*pathconv.WSL{
		pathconv.NewWSL(distro, nil),
		pathconv.NewWSL(distro, &pathconv.WSLOptions{MountRoot: "/", UNCHost: "wsl.localhost"}),
		pathconv.NewWSL("", nil),
	}
	f.Fuzz(func(t *testing.T, p string) {
		for _, conv := range convs {
			win := conv.ToIDE(p)
			if win == p {
				continue
			}
			if !isWindowsAbs(win) || strings.Contains(win, "/") {
				t.Fatalf("ToIDE(%q) = %q, not an absolute Windows path", p, win)
			}
			if p != path.Clean(p) {
				continue // accepted, but only clean paths come back as they were
			}
			if back := conv.ToLocal(win); back != p {
				t.Fatalf("ToLocal(ToIDE(%q)) = ToLocal(%q) = %q", p, win, back)
			}
		}
	})
}

// FuzzWindowsToWSL checks that what ToLocal produces is a clean absolute
// WSL path, and that converting it to Windows and back is stable.
func FuzzWindowsToWSL(f *testing.F) {
	conv := pathconv.NewWSL(distro, nil)
	f.Fuzz(func(t *testing.T, p string) {
		local := conv.ToLocal(p)
		if local == p {
			return
		}
		if !strings.HasPrefix(local, "/") || path.Clean(local) != local {
			t.Fatalf("ToLocal(%q) = %q, not a clean absolute path", p, local)
		}
		win := conv.ToIDE(local)
		if win == local {
			return // a name Windows cannot hold
		}
		if again := conv.ToLocal(win); again != local {
			t.Fatalf("ToLocal(ToIDE(%q)) = %q via %q", local, again, win)
		}
	})
}

// FuzzWindowsHostParsers checks that an address found in ip-route or
// resolv.conf text is a valid, non-loopback address, and that the parsers
// find it again in the canonical text that names it.
func FuzzWindowsHostParsers(f *testing.F) {
	check := func(t *testing.T, which, text, host string) {
		a, err := netip.ParseAddr(host)
		if err != nil || a.IsLoopback() || a.IsUnspecified() {
			t.Fatalf("%s(%q) = %q, not a usable address (%v)", which, text, host, err)
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		if host, ok := pathconv.WindowsHostFromRoute(text); ok {
			check(t, "WindowsHostFromRoute", text, host)
			if again, ok := pathconv.WindowsHostFromRoute("default via " + host + " dev eth0\n"); !ok || again != host {
				t.Fatalf("route fixed point: %q gave %q, %v", host, again, ok)
			}
		}
		if host, ok := pathconv.WindowsHostFromResolvConf(text); ok {
			check(t, "WindowsHostFromResolvConf", text, host)
			if again, ok := pathconv.WindowsHostFromResolvConf("nameserver " + host + "\n"); !ok || again != host {
				t.Fatalf("resolv.conf fixed point: %q gave %q, %v", host, again, ok)
			}
		}
	})
}
