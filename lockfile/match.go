package lockfile

import (
	"path"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// MatchOptions adjusts Match. A nil *MatchOptions compares the folders as
// written.
type MatchOptions struct {
	// ToLocal converts a folder as the IDE wrote it to the agent's path
	// before comparing; nil means no conversion. Under WSL, for a lockfile
	// with RunningInWindows, pass the ToLocal method of a pathconv WSL
	// converter so that C:\proj is compared as /mnt/c/proj.
	ToLocal func(idePath string) string
}

// Match reports whether cwd is one of folders or lies beneath one.
//
// Paths are compared cleaned (".", ".." and repeated separators resolved)
// and NFC-normalised (macOS may hand either form), and only at a path
// boundary: /a/b contains /a/b/c but not /a/bc. Windows paths (C:\x,
// C:/x, \\server\share\x) compare with '/' and '\' alike and the drive
// letter case-blind; the rest of the path is compared exactly. Relative
// paths match nothing.
func Match(folders []string, cwd string, opts *MatchOptions) bool {
	_, ok := MatchingFolder(folders, cwd, opts)
	return ok
}

// MatchingFolder is Match that also returns the first folder (as written in
// the lockfile) that contains cwd.
func MatchingFolder(folders []string, cwd string, opts *MatchOptions) (string, bool) {
	dir, dirWin, ok := cleanAbs(cwd)
	if !ok {
		return "", false
	}
	for _, f := range folders {
		local := f
		if opts != nil && opts.ToLocal != nil {
			local = opts.ToLocal(f)
		}
		folder, win, ok := cleanAbs(local)
		if !ok || win != dirWin {
			continue
		}
		if contains(folder, dir, win) {
			return f, true
		}
	}
	return "", false
}

// contains reports whether dir is folder or beneath it; both are clean.
func contains(folder, dir string, win bool) bool {
	if folder == dir {
		return true
	}
	sep := "/"
	if win {
		sep = `\`
	}
	prefix := folder
	if !strings.HasSuffix(prefix, sep) { // only a root ends with sep
		prefix += sep
	}
	return strings.HasPrefix(dir, prefix)
}

// cleanAbs returns p NFC-normalised and cleaned, whether it is a Windows
// path, and false when p is not absolute.
func cleanAbs(p string) (string, bool, bool) {
	if isWindowsAbs(p) {
		c, ok := cleanWindows(p)
		return nfcEach(c, '\\'), true, ok
	}
	if !strings.HasPrefix(p, "/") {
		return "", false, false
	}
	return nfcEach(path.Clean(p), '/'), false, true
}

// nfcEach NFC-normalises each sep-separated element of p on its own. A
// whole-string pass is not enough: after invalid UTF-8 the norm package
// normalises a final mark differently from the same mark followed by more
// text, so "/x" and "/x/y" could disagree on their common element.
func nfcEach(p string, sep byte) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(p, sep)
		if i < 0 {
			b.WriteString(norm.NFC.String(p))
			return b.String()
		}
		b.WriteString(norm.NFC.String(p[:i]))
		b.WriteByte(sep)
		p = p[i+1:]
	}
}

// isWindowsAbs reports whether p looks like an absolute Windows path: a
// drive letter with a separator, or a UNC path.
func isWindowsAbs(p string) bool {
	if len(p) >= 3 && isLetter(p[0]) && p[1] == ':' && (p[2] == '\\' || p[2] == '/') {
		return true
	}
	return strings.HasPrefix(p, `\\`)
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// cleanWindows cleans an absolute Windows path to C:\a\b or
// \\server\share\a form, the drive letter in upper case.
func cleanWindows(p string) (string, bool) {
	var root string
	var rest string
	if isLetter(p[0]) && p[1] == ':' {
		root = strings.ToUpper(p[:1]) + `:\`
		rest = p[2:]
	} else {
		parts := splitWindows(p[2:])
		if len(parts) < 2 {
			return "", false
		}
		root = `\\` + parts[0] + `\` + parts[1]
		rest = strings.Join(parts[2:], `\`)
	}
	var out []string
	for _, part := range splitWindows(rest) {
		switch part {
		case ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, part)
		}
	}
	if len(out) == 0 {
		return root, true
	}
	if !strings.HasSuffix(root, `\`) {
		root += `\`
	}
	return root + strings.Join(out, `\`), true
}

// splitWindows splits on both separators, dropping empty parts.
func splitWindows(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '\\' || r == '/' })
}
