package lockfile

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		name    string
		folders []string
		cwd     string
		want    bool
	}{
		{"equal", []string{"/a/b"}, "/a/b", true},
		{"beneath", []string{"/a/b"}, "/a/b/c/d", true},
		{"sibling sharing a prefix", []string{"/a/b"}, "/a/bc", false},
		{"parent", []string{"/a/b"}, "/a", false},
		{"second folder", []string{"/x", "/a/b"}, "/a/b/c", true},
		{"none", nil, "/a", false},
		{"trailing slash in folder", []string{"/a/b/"}, "/a/b/c", true},
		{"trailing slash in cwd", []string{"/a/b"}, "/a/b/", true},
		{"dot dot in folder", []string{"/a/x/../b"}, "/a/b/c", true},
		{"dot dot escaping in cwd", []string{"/a/b"}, "/a/b/../bc", false},
		{"double slashes", []string{"//a//b"}, "/a/b/c", true},
		{"root folder", []string{"/"}, "/anything", true},
		{"relative folder", []string{"a/b"}, "/a/b", false},
		{"relative cwd", []string{"/a/b"}, "a/b", false},
		{"empty folder", []string{""}, "/a", false},
		{"case differs on posix", []string{"/A/b"}, "/a/b", false},
		{"NFD cwd, NFC folder", []string{"/Users/me/caf\u00e9"}, "/Users/me/cafe\u0301/src", true},
		{"NFC cwd, NFD folder", []string{"/Users/me/cafe\u0301"}, "/Users/me/caf\u00e9", true},
		{"windows drive letter case-blind", []string{`c:\Users\me\p`}, `C:\Users\me\p\src`, true},
		{"windows rest case-sensitive", []string{`C:\Users\Me\p`}, `C:\Users\me\p`, false},
		{"windows separators mixed", []string{`C:/Users/me/p`}, `C:\Users\me\p\src`, true},
		{"windows sibling prefix", []string{`C:\p`}, `C:\pq`, false},
		{"windows drive root", []string{`D:\`}, `d:\x`, true},
		{"windows other drive", []string{`C:\p`}, `D:\p`, false},
		{"windows dot dot", []string{`C:\a\..\p`}, `C:\p\x`, true},
		{"unc", []string{`\\server\share\p`}, `\\server\share\p\q`, true},
		{"unc share root", []string{`\\server\share`}, `\\server\share\q`, true},
		{"unc other share", []string{`\\server\share`}, `\\server\sharex\q`, false},
		{"windows folder, posix cwd", []string{`C:\p`}, "/mnt/c/p", false},
		{"drive-relative is not absolute", []string{`C:p`}, `C:\p`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Match(tt.folders, tt.cwd, nil); got != tt.want {
				t.Errorf("Match(%q, %q) = %v, want %v", tt.folders, tt.cwd, got, tt.want)
			}
		})
	}
}

// fakeWSL converts C:\x to /mnt/c/x the simple way; the real converter
// lives in pathconv (which lockfile must not import).
func fakeWSL(p string) string {
	if len(p) >= 3 && p[1] == ':' {
		return "/mnt/" + strings.ToLower(p[:1]) + strings.ReplaceAll(p[2:], `\`, "/")
	}
	return p
}

func TestMatchConverted(t *testing.T) {
	opts := &MatchOptions{ToLocal: fakeWSL}
	folders := []string{`D:\other`, `C:\Users\me\proj`}
	got, ok := MatchingFolder(folders, "/mnt/c/Users/me/proj/pkg", opts)
	if !ok || got != `C:\Users\me\proj` {
		t.Errorf("MatchingFolder = %q, %v; want the Windows folder as written", got, ok)
	}
	if Match(folders, "/mnt/c/Users/me/projX", opts) {
		t.Error("converted folder matched a sibling")
	}
	if Match(folders, "/mnt/c/Users/me/proj", nil) {
		t.Error("unconverted Windows folder matched a WSL path")
	}
}
