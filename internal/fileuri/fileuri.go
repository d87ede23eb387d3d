// Package fileuri converts between file system paths and file:// URIs, in
// the one form every package of this module uses: file:///abs/path, and
// file:///C:/dir/file for a Windows drive path (whatever the local OS, since
// an IDE under WSL reports Windows paths).
package fileuri

import (
	"net/url"
	"path/filepath"
	"strings"
)

// FromPath returns the file URI of an absolute path: /home/x, C:\dir\x or
// C:/dir/x. Other paths are converted as they are (a relative path gives a
// URI a server will not understand; callers make paths absolute first).
func FromPath(p string) string {
	if IsDrivePath(p) {
		p = "/" + strings.ReplaceAll(p, `\`, "/")
	} else {
		p = filepath.ToSlash(p)
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// ToPath returns the path a file URI denotes, with ok false for anything
// that is not a file URI with a path. A drive path comes back as
// C:\dir\file; a URI naming a host other than localhost comes back as the
// UNC path //host/path, which callers that only want local files refuse
// (see Host).
func ToPath(uri string) (path string, ok bool) {
	if len(uri) < 5 || !strings.EqualFold(uri[:5], "file:") {
		return "", false
	}
	u, err := url.Parse(uri)
	if err != nil || !strings.EqualFold(u.Scheme, "file") || u.Opaque != "" || u.Path == "" {
		return "", false
	}
	p := u.Path
	if len(p) >= 3 && p[0] == '/' && IsDrivePath(p[1:]) {
		return strings.ReplaceAll(p[1:], "/", `\`), true
	}
	if u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
		return "//" + u.Host + p, true
	}
	return filepath.FromSlash(p), true
}

// Host returns the host a file URI names, "" for none or localhost.
func Host(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || strings.EqualFold(u.Host, "localhost") {
		return ""
	}
	return u.Host
}

// Canonical rewrites a local file URI in the form FromPath produces, so that
// another spelling of the same file ("file:///a%2Fb", "file://localhost/x")
// compares equal; other URIs come back unchanged.
func Canonical(uri string) string {
	p, ok := ToPath(uri)
	if !ok || strings.HasPrefix(p, "//") || strings.HasPrefix(p, `\\`) {
		return uri
	}
	return FromPath(p)
}

// IsDrivePath reports whether p starts with a Windows drive letter and a
// colon followed by a separator or nothing: C:\x, c:/x, D:.
func IsDrivePath(p string) bool {
	if len(p) < 2 || p[1] != ':' || !isASCIILetter(p[0]) {
		return false
	}
	return len(p) == 2 || p[2] == '/' || p[2] == '\\'
}

func isASCIILetter(b byte) bool { return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' }
