package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The headless IDE's language-server side: `ide serve` answering
// getDiagnostics from gopls or --lsp-config, and --selection.

// brokenModule writes a Go module whose main.go does not compile.
func brokenModule(t *testing.T) (dir, mainGo string) {
	t.Helper()
	dir = t.TempDir()
	for name, text := range map[string]string{
		"go.mod":  "module example.com/broken\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc main() {\n\tprintln(undefinedThing)\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, filepath.Join(dir, "main.go")
}

// serveDiagnostic is one diagnostic of getDiagnostics' answer.
type serveDiagnostic struct {
	Message, Severity, Source, Code string
	Range                           struct{ Start, End struct{ Line, Character int } }
}

func decodeDiagnostics(t *testing.T, text string) map[string][]serveDiagnostic {
	t.Helper()
	var files []struct {
		URI         string
		Diagnostics []serveDiagnostic
	}
	if err := json.Unmarshal([]byte(text), &files); err != nil {
		t.Fatalf("getDiagnostics answered %q: %v", text, err)
	}
	out := map[string][]serveDiagnostic{}
	for _, f := range files {
		out[f.URI] = f.Diagnostics
	}
	return out
}

func TestServeGetDiagnosticsFromGopls(t *testing.T) {
	dir, mainGo := brokenModule(t)
	r := startServe(t, dir, diagEnv(t, "CLAUDE_CONFIG_DIR="+t.TempDir()), nil, "--diff", "reject")
	c := dialServe(t, r.info)
	uri := "file://" + mainGo
	texts := c.texts("getDiagnostics", map[string]any{"uri": uri})
	if len(texts) != 1 {
		t.Fatalf("answer %q", texts)
	}
	got := decodeDiagnostics(t, texts[0])[uri]
	if len(got) != 1 || got[0].Message != "undefined: undefinedThing" || got[0].Severity != "Error" || got[0].Range.Start.Line != 3 {
		t.Fatalf("diagnostics %+v", got)
	}
	// The agent fixes the file and asks at once.
	if err := os.WriteFile(mainGo, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := decodeDiagnostics(t, c.texts("getDiagnostics", map[string]any{"uri": uri})[0]); len(got[uri]) != 0 {
		t.Fatalf("after the fix: %+v", got)
	}
}

func TestServeLSPConfig(t *testing.T) {
	bin := buildScriptls(t)
	dir := t.TempDir()
	writeConfig(t, dir, map[string]any{
		"script": map[string]any{"command": bin, "args": []string{"-progress"}, "extensionToLanguage": map[string]string{".s": "script"}},
	})
	file := filepath.Join(dir, "a.s")
	if err := os.WriteFile(file, []byte("ok\n  ERROR\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := diagEnv(t, "CLAUDE_CONFIG_DIR="+t.TempDir())
	r := startServe(t, dir, env, nil, "--diff", "reject", "--lsp-config", "lsp.json")
	c := dialServe(t, r.info)
	got := decodeDiagnostics(t, c.texts("getDiagnostics", map[string]any{"uri": "file://" + file})[0])["file://"+file]
	if len(got) != 1 || got[0].Message != "found ERROR" || got[0].Source != "scriptls" || got[0].Code != "E1" {
		t.Fatalf("diagnostics %+v", got)
	}
	// .go is not configured: gopls is not the default once a
	// configuration is given.
	goFile := filepath.Join(dir, "x.go")
	os.WriteFile(goFile, []byte("package x\nfunc f() { y }\n"), 0o644)
	if got := decodeDiagnostics(t, c.texts("getDiagnostics", map[string]any{"uri": "file://" + goFile})[0]); len(got["file://"+goFile]) != 0 {
		t.Errorf(".go with a configuration for .s only: %+v", got)
	}

	code, _, errOut := runIn(t, dir, env, "ide", "serve", "--lsp-config", "missing.json")
	if code != exitUnavailable || !strings.Contains(errOut, "configures no usable language server") {
		t.Errorf("missing configuration: exit %d, stderr %q", code, errOut)
	}
}

func TestServeSelection(t *testing.T) {
	dir, mainGo := brokenModule(t)
	env := diagEnv(t, "CLAUDE_CONFIG_DIR="+t.TempDir())
	r := startServe(t, dir, env, nil, "--diff", "reject", "--selection", "main.go:4")
	c := dialServe(t, r.info)
	c.c.SetReadDeadline(time.Now().Add(serveTestTimeout))
	_, data, err := c.c.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	var n struct {
		Method string
		Params struct {
			Text, FilePath, FileURL string
			Selection               struct {
				Start, End struct{ Line, Character int }
				IsEmpty    bool
			}
		}
	}
	if err := json.Unmarshal(data, &n); err != nil {
		t.Fatal(err)
	}
	p := n.Params
	if n.Method != "selection_changed" || p.Text != "\tprintln(undefinedThing)" || p.FilePath != mainGo || p.FileURL != "file://"+mainGo ||
		p.Selection.Start.Line != 3 || p.Selection.Start.Character != 0 || p.Selection.End.Line != 3 || p.Selection.End.Character != 24 || p.Selection.IsEmpty {
		t.Errorf("notification %s", data)
	}

	for _, bad := range []string{"main.go", "main.go:0", "main.go:99", "nope.go:1", "main.go:x"} {
		if code, _, errOut := runIn(t, dir, env, "ide", "serve", "--selection", bad); code != exitUsage || !strings.Contains(errOut, "--selection") {
			t.Errorf("--selection %s: exit %d, stderr %q", bad, code, errOut)
		}
	}
}
