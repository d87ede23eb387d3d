package mcpserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outsideScene is a project next to a secret: a Go file outside the
// project, reached from inside by a file link and a directory link.
func outsideScene(t *testing.T) (proj, secret string) {
	root := t.TempDir()
	proj = filepath.Join(root, "proj")
	testModule(t, proj)
	secret = filepath.Join(root, "secret", "secret.go")
	writeText(t, secret, "package secret\n\n// Key is secret.\nconst Key = \"s3cr3t-value\"\n")
	if err := os.Symlink("../secret/secret.go", filepath.Join(proj, "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secret", filepath.Join(proj, "linkdir")); err != nil {
		t.Fatal(err)
	}
	return proj, secret
}

// Every tool refuses every path outside the project's roots with a
// sentence naming the path, before a language server or the IDE sees it:
// a system file, an absolute path outside, a relative path out, a link
// inside the project to a file outside, a file under a linked directory,
// and a file URI. Nothing of the secret is shown and nothing is written.
func TestEveryToolConfinesPaths(t *testing.T) {
	proj, secret := outsideScene(t)
	s := newTestServer(t, proj, &Options{NoIDE: true})
	paths := []string{"/etc/passwd", secret, "../secret/secret.go", "link.go", "linkdir/secret.go", "file://" + secret}
	at := func(p string) map[string]any { return map[string]any{"file": p, "line": 4, "column": 7} }
	calls := map[string]func(p string) map[string]any{
		"hover":            at,
		"definition":       at,
		"declaration":      at,
		"type_definition":  at,
		"implementation":   at,
		"references":       at,
		"call_hierarchy":   at,
		"type_hierarchy":   func(p string) map[string]any { a := at(p); a["direction"] = "subtypes"; return a },
		"rename":           func(p string) map[string]any { a := at(p); a["new_name"] = "Lock"; a["apply"] = true; return a },
		"document_symbols": func(p string) map[string]any { return map[string]any{"file": p} },
		"workspace_symbols": func(p string) map[string]any {
			return map[string]any{"query": "Key", "file": p}
		},
		"diagnostics":     func(p string) map[string]any { return map[string]any{"files": []string{p}} },
		"ide_open_file":   func(p string) map[string]any { return map[string]any{"file": p, "line": 1} },
		"ide_diagnostics": func(p string) map[string]any { return map[string]any{"file": p} },
		"propose_edit":    func(p string) map[string]any { return map[string]any{"file": p, "content": "x"} },
		"preview_edit": func(p string) map[string]any {
			return map[string]any{"edits": []any{map[string]any{"file": p, "old_string": "Key", "new_string": "Lock"}}}
		},
		"apply_edit": func(p string) map[string]any {
			return map[string]any{"edits": []any{map[string]any{"file": "main.go", "new_text": "package main\n"}, map[string]any{"file": p, "new_text": "x"}}}
		},
		"symbol_source": func(p string) map[string]any { return map[string]any{"file": p, "symbol": "Key"} },
		"fixes":         func(p string) map[string]any { return map[string]any{"file": p, "line": 4} },
	}
	if len(calls) != len(s.tools)-2 { // ide_selection and ide_open_editors take no path
		t.Errorf("%d tools take a path here, the server has %d tools", len(calls), len(s.tools))
	}
	for tool, args := range calls {
		for _, p := range paths {
			res := s.call(tool, args(p))
			text := res.Text()
			named := strings.TrimPrefix(p, "file://")
			if !res.IsError || !strings.Contains(text, "is outside the project ("+proj+")") || !strings.Contains(text, filepath.Base(named)) {
				t.Errorf("%s on %s: isError %v, answered:\n%s\nwant it refused as outside the project", tool, p, res.IsError, text)
			}
			if strings.Contains(text, "s3cr3t") {
				t.Errorf("%s on %s showed the secret:\n%s", tool, p, text)
			}
		}
	}
	if b, err := os.ReadFile(secret); err != nil || !strings.Contains(string(b), "const Key = ") {
		t.Errorf("the secret file changed: %q, %v", b, err)
	}
}

// A path of 8 KiB is quoted clipped, and still refused.
func TestRefusalQuotesClipped(t *testing.T) {
	proj, _ := outsideScene(t)
	s := newTestServer(t, proj, &Options{NoIDE: true})
	long := "../" + strings.Repeat("a", 8000) + ".go"
	for _, tool := range []string{"hover", "document_symbols"} {
		res := s.call(tool, map[string]any{"file": long, "line": 1, "column": 1})
		if tool == "document_symbols" {
			res = s.call(tool, map[string]any{"file": long})
		}
		if !res.IsError || len(res.Text()) > 1000 || !strings.Contains(res.Text(), "bytes in all") {
			t.Errorf("%s on an 8 KiB path: isError %v, %d bytes: %.300s", tool, res.IsError, len(res.Text()), res.Text())
		}
	}
}

// A result outside the roots (fmt.Println's definition, in GOROOT) is
// listed, marked outside, without its source line: in the text and in the
// structured result. Inside the project the source line is shown.
func TestResultOutsideListedWithoutText(t *testing.T) {
	proj, _ := outsideScene(t)
	s := newTestServer(t, proj, &Options{NoIDE: true})
	res := s.ok("definition", map[string]any{"file": "main.go", "line": 7, "symbol": "Println"})
	var st locationsResult
	if err := json.Unmarshal(res.StructuredContent, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Locations) != 1 || !st.Locations[0].Outside || st.Locations[0].Text != "" || !strings.HasSuffix(st.Locations[0].Path, filepath.Join("fmt", "print.go")) {
		t.Errorf("definition of Println: %s", res.StructuredContent)
	}
	if strings.Contains(res.Text(), "func Println(") || !strings.Contains(res.Text(), filepath.Join("fmt", "print.go")+":") ||
		!strings.Contains(res.Text(), "(Files outside the project are listed without their source lines.)") {
		t.Errorf("definition of Println shows text from outside the project, or no location:\n%s", res.Text())
	}
	res = s.ok("definition", map[string]any{"file": "main.go", "line": 7, "symbol": "greet", "occurrence": 1})
	if !strings.Contains(res.Text(), "greet.go:4:6: func greet(name string) string") || strings.Contains(res.Text(), "outside the project") {
		t.Errorf("definition of greet, inside the project:\n%s", res.Text())
	}
}

// Options.Roots widens the rule: a file in another root is served (here
// through the link inside the project too), one outside every root is
// still refused.
func TestRootsWidenConfinement(t *testing.T) {
	proj, secret := outsideScene(t)
	s := newTestServer(t, proj, &Options{NoIDE: true, Roots: []string{filepath.Dir(secret)}})
	for _, p := range []string{secret, "../secret/secret.go", "link.go"} {
		res := s.call("document_symbols", map[string]any{"file": p})
		if strings.Contains(res.Text(), "is outside the project") {
			t.Errorf("document_symbols on %s, inside a root: %s", p, res.Text())
		}
	}
	if res := s.call("document_symbols", map[string]any{"file": "/etc/passwd"}); !res.IsError || !strings.Contains(res.Text(), "is outside the project ("+proj+", "+filepath.Dir(secret)+")") {
		t.Errorf("document_symbols on /etc/passwd with two roots: %s", res.Text())
	}
}
