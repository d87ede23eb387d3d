package pathconv

import (
	"context"
	"path"
	"strings"
	"sync"
	"time"
)

// DefaultMountRoot is where WSL mounts the Windows drives (/mnt/c, ...)
// unless /etc/wsl.conf says otherwise.
const DefaultMountRoot = "/mnt"

// DefaultUNCHost is the host in the UNC paths ToIDE writes for files inside
// the distribution (\\wsl$\<distro>\...). Windows 10 and 11 both accept it;
// newer wslpath versions write wsl.localhost, which ToLocal also reads.
const DefaultUNCHost = "wsl$"

// DefaultWSLPathTimeout bounds one wslpath call when
// WSLOptions.WSLPathTimeout is zero.
const DefaultWSLPathTimeout = 2 * time.Second

// WSLPathFunc converts path with the wslpath tool: to a Windows path
// (wslpath -w) when toWindows, else to a WSL path (wslpath -u).
type WSLPathFunc func(ctx context.Context, toWindows bool, path string) (string, error)

// WSLOptions adjusts NewWSL. A nil *WSLOptions means the defaults below and
// the pure-Go conversion.
type WSLOptions struct {
	// MountRoot is where the Windows drives are mounted. Empty means
	// DefaultMountRoot.
	MountRoot string
	// UNCHost is the host of the UNC paths written for files inside the
	// distribution. Empty means DefaultUNCHost.
	UNCHost string
	// WSLPath, when not nil, converts paths the pure-Go code recognises;
	// its answer wins, and the pure-Go conversion is used when it fails.
	// SystemWSLPath returns one for the installed tool. Answers are cached.
	WSLPath WSLPathFunc
	// WSLPathTimeout bounds one WSLPath call. Zero means
	// DefaultWSLPathTimeout; negative leaves no time for the tool, so
	// WSLPath is never called (the pure-Go conversion alone).
	WSLPathTimeout time.Duration
}

// WSL converts between the paths of an IDE running on Windows and an agent
// running inside a WSL distribution. It is safe for concurrent use.
//
// ToLocal: C:\Users\me\p (or C:/Users/me/p) becomes /mnt/c/Users/me/p;
// \\wsl$\<distro>\home\me and \\wsl.localhost\<distro>\home\me become
// /home/me for this distribution (another distribution's UNC paths, and
// anything else that is not an absolute Windows path, are returned as
// they are). ToIDE is the inverse: /mnt/c/x becomes C:\x and any other
// absolute path becomes \\wsl$\<distro>\...; a path with characters that a
// Windows path cannot hold (\ : * ? " < > | and control characters) is
// returned as it is. Both directions clean the path (".", ".." and
// repeated separators), so for a clean absolute WSL path p that ToIDE
// converts, ToLocal(ToIDE(p)) == p.
type WSL struct {
	distro    string
	mountRoot string
	uncHost   string
	run       WSLPathFunc
	timeout   time.Duration

	mu    sync.Mutex
	cache map[cacheKey]string
}

type cacheKey struct {
	toWindows bool
	path      string
}

// maxCache bounds the wslpath answer cache; it is emptied when full.
const maxCache = 4096

// NewWSL returns the converter for an agent inside the WSL distribution
// distro (as in WSL_DISTRO_NAME) and an IDE on Windows. An empty distro
// converts drive paths only.
func NewWSL(distro string, opts *WSLOptions) *WSL {
	if opts == nil {
		opts = &WSLOptions{}
	}
	w := &WSL{
		distro:    distro,
		mountRoot: path.Clean("/" + opts.MountRoot),
		uncHost:   opts.UNCHost,
		run:       opts.WSLPath,
		timeout:   opts.WSLPathTimeout,
	}
	if opts.MountRoot == "" {
		w.mountRoot = DefaultMountRoot
	}
	if w.uncHost == "" {
		w.uncHost = DefaultUNCHost
	}
	switch {
	case w.timeout == 0:
		w.timeout = DefaultWSLPathTimeout
	case w.timeout < 0:
		w.run = nil
	}
	return w
}

// Distro returns the distribution name the converter was made for.
func (w *WSL) Distro() string { return w.distro }

// ToLocal converts a Windows path as the IDE wrote it to the agent's path.
func (w *WSL) ToLocal(idePath string) string {
	out, ok := w.windowsToWSL(idePath)
	if !ok {
		return idePath
	}
	return w.viaTool(false, idePath, out)
}

// ToIDE converts an agent path to the Windows path the IDE expects.
func (w *WSL) ToIDE(localPath string) string {
	out, ok := w.wslToWindows(localPath)
	if !ok {
		return localPath
	}
	return w.viaTool(true, localPath, out)
}

// viaTool returns wslpath's answer for in when a tool is configured, else
// (or when it fails) the pure-Go answer.
func (w *WSL) viaTool(toWindows bool, in, pure string) string {
	if w.run == nil {
		return pure
	}
	key := cacheKey{toWindows, in}
	w.mu.Lock()
	cached, ok := w.cache[key]
	w.mu.Unlock()
	if ok {
		return cached
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	out, err := w.run(ctx, toWindows, in)
	if err != nil || out == "" {
		return pure // not cached: the tool may work next time
	}
	w.mu.Lock()
	if w.cache == nil || len(w.cache) >= maxCache {
		w.cache = make(map[cacheKey]string)
	}
	w.cache[key] = out
	w.mu.Unlock()
	return out
}

// windowsToWSL is the pure-Go ToLocal; false means "not converted".
func (w *WSL) windowsToWSL(p string) (string, bool) {
	// Extended-length paths: \\?\C:\x and \\?\UNC\host\share\x.
	if rest, ok := strings.CutPrefix(p, `\\?\`); ok {
		if unc, ok := strings.CutPrefix(rest, `UNC\`); ok {
			p = `\\` + unc
		} else {
			p = rest
		}
	}
	if len(p) >= 2 && isLetter(p[0]) && p[1] == ':' && (len(p) == 2 || isSep(p[2])) {
		return joinClean(path.Join(w.mountRoot, strings.ToLower(p[:1])), p[2:]), true
	}
	if len(p) < 2 || !isSep(p[0]) || !isSep(p[1]) {
		return "", false
	}
	parts := splitSeps(p[2:])
	if len(parts) < 2 || w.distro == "" || !strings.EqualFold(parts[1], w.distro) {
		return "", false
	}
	if host := strings.ToLower(parts[0]); host != "wsl$" && host != "wsl.localhost" {
		return "", false
	}
	return joinClean("", strings.Join(parts[2:], "/")), true
}

// joinClean appends the Windows-separated rest, cleaned as a rooted path
// (so ".." stops at the drive or share root), to the POSIX prefix.
func joinClean(prefix, rest string) string {
	c := path.Clean("/" + strings.Join(splitSeps(rest), "/"))
	if c == "/" && prefix != "" {
		return prefix
	}
	return prefix + c
}

// wslToWindows is the pure-Go ToIDE; false means "not converted".
func (w *WSL) wslToWindows(p string) (string, bool) {
	if !strings.HasPrefix(p, "/") || strings.ContainsFunc(p, notInWindowsPath) {
		return "", false
	}
	p = path.Clean(p)
	prefix := w.mountRoot
	if prefix != "/" {
		prefix += "/"
	}
	if rest, ok := strings.CutPrefix(p, prefix); ok && len(rest) >= 1 && isLower(rest[0]) && (len(rest) == 1 || rest[1] == '/') {
		drive := strings.ToUpper(rest[:1]) + `:\`
		return drive + strings.ReplaceAll(strings.TrimPrefix(rest[1:], "/"), "/", `\`), true
	}
	if w.distro == "" {
		return "", false
	}
	return `\\` + w.uncHost + `\` + w.distro + strings.ReplaceAll(p, "/", `\`), true
}

// notInWindowsPath reports the characters a Windows file name cannot hold
// (WSL maps them to private-use characters, which a plain conversion would
// not reproduce).
func notInWindowsPath(r rune) bool {
	return r < 0x20 || strings.ContainsRune(`\:*?"<>|`, r)
}

func isSep(c byte) bool    { return c == '\\' || c == '/' }
func isLower(c byte) bool  { return 'a' <= c && c <= 'z' }
func isLetter(c byte) bool { return isLower(c) || 'A' <= c && c <= 'Z' }

// splitSeps splits on both separators, dropping empty parts.
func splitSeps(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '\\' || r == '/' })
}
