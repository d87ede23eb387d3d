package fileuri

import "testing"

func TestToPath(t *testing.T) {
	tests := map[string]string{
		"file:///home/dev/proj/main.go":      "/home/dev/proj/main.go",
		"file:///home/dev/my%20proj/a%23.go": "/home/dev/my proj/a#.go",
		"file://localhost/etc/hosts":         "/etc/hosts",
		"FILE:///etc/hosts":                  "/etc/hosts",
		"file:///C:/Users/dev/main.go":       `C:\Users\dev\main.go`,
		"file:///c%3A/Users/dev/main.go":     `c:\Users\dev\main.go`,
		"file://server/share/x.go":           "//server/share/x.go",
		"untitled:Untitled-1":                "",
		"https://example.com/x.go":           "",
		"file:":                              "",
		"file:relative/x.go":                 "",
		"file:///bad%zzescape":               "",
	}
	for in, want := range tests {
		got, ok := ToPath(in)
		if got != want || ok != (want != "") {
			t.Errorf("ToPath(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestFromPathRoundTrip(t *testing.T) {
	tests := map[string]string{
		"/home/dev/proj/main.go":  "file:///home/dev/proj/main.go",
		"/home/dev/my proj/a#.go": "file:///home/dev/my%20proj/a%23.go",
		`C:\Users\dev\main.go`:    "file:///C:/Users/dev/main.go",
		"C:/Users/dev/main.go":    "file:///C:/Users/dev/main.go",
	}
	for in, want := range tests {
		got := FromPath(in)
		if got != want {
			t.Errorf("FromPath(%q) = %q, want %q", in, got, want)
		}
		back, ok := ToPath(got)
		if !ok || FromPath(back) != got {
			t.Errorf("ToPath(FromPath(%q)) = %q, %v: no round trip", in, back, ok)
		}
	}
}

func TestCanonicalAndHost(t *testing.T) {
	tests := map[string]string{
		"file://localhost/x/y.go": "file:///x/y.go",
		"file:///a%2Fb":           "file:///a/b",
		"file:///x/y.go":          "file:///x/y.go",
		"file://server/share/x":   "file://server/share/x",
		"untitled:1":              "untitled:1",
	}
	for in, want := range tests {
		if got := Canonical(in); got != want {
			t.Errorf("Canonical(%q) = %q, want %q", in, got, want)
		}
	}
	if h := Host("file://server/share/x"); h != "server" {
		t.Errorf("Host = %q", h)
	}
	if h := Host("file://localhost/x"); h != "" {
		t.Errorf("Host(localhost) = %q", h)
	}
}
