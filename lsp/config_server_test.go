package lsp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idebridge/idebridge/internal/fileuri"
)

// A plugin's settings and workspaceFolder, as users write them in a
// .lsp.json, reach the server: the settings through
// workspace/didChangeConfiguration and in answer to workspace/configuration
// by dotted section, and the folder as rootUri, rootPath, the only
// workspace folder and the working directory. The scripted server records
// what it received.
func TestPluginSettingsAndWorkspaceReachTheServer(t *testing.T) {
	base := t.TempDir()
	project := filepath.Join(base, "project")
	plugin := filepath.Join(base, "plugin")
	log := filepath.Join(project, "server.log")
	settings := `{"python": {"analysis": {"typeCheckingMode": "strict", "extraPaths": ["lib"]}}, "flat.key": 7}`
	writeFile(t, filepath.Join(plugin, ".lsp.json"), `{"script": {
	  "command": "`+scriptlsBin+`",
	  "args": ["-log", "${CLAUDE_PROJECT_DIR}/server.log",
	           "-ask-config", "-,python,python.analysis,python.analysis.typeCheckingMode,flat.key,missing.section"],
	  "extensionToLanguage": {".s": "script"},
	  "settings": `+settings+`,
	  "workspaceFolder": "sub"
	}}`)
	src := writeSource(t, filepath.Join(project, "sub"), "a.s", "ERROR\n")
	cfgs, errs := LoadPlugin(Plugin{Root: plugin}, &LoadOptions{ProjectDir: project})
	if len(errs) != 0 || len(cfgs) != 1 {
		t.Fatalf("cfgs %+v errs %v", cfgs, errs)
	}
	folder := filepath.Join(project, "sub")
	if cfgs[0].WorkspaceFolder != folder {
		t.Fatalf("workspace folder %s, want %s", cfgs[0].WorkspaceFolder, folder)
	}
	m := newManager(t, cfgs, testOptions(project))
	ctx := context.Background()
	if err := m.Open(ctx, src); err != nil {
		t.Fatal(err)
	}
	var env map[string]string
	if err := m.Call(ctx, src, "test/env", nil, &env); err != nil {
		t.Fatal(err)
	}
	if env["cwd"] != folder || env["CLAUDE_PROJECT_DIR"] != project || env["CLAUDE_PLUGIN_ROOT"] != plugin {
		t.Errorf("server environment %v", env)
	}

	init := logged(t, log, "initialize")
	if len(init) != 1 {
		t.Fatalf("%d initialize requests", len(init))
	}
	var ip struct {
		RootURI          string `json:"rootUri"`
		RootPath         string `json:"rootPath"`
		WorkspaceFolders []struct {
			URI  string `json:"uri"`
			Name string `json:"name"`
		} `json:"workspaceFolders"`
	}
	if err := json.Unmarshal(init[0], &ip); err != nil {
		t.Fatal(err)
	}
	if ip.RootURI != fileuri.FromPath(folder) || ip.RootPath != folder || len(ip.WorkspaceFolders) != 1 ||
		ip.WorkspaceFolders[0].URI != fileuri.FromPath(folder) || ip.WorkspaceFolders[0].Name != "sub" {
		t.Errorf("workspace in initialize: %+v", ip)
	}

	compact := func(s string) string {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		out, _ := json.Marshal(v)
		return string(out)
	}
	pushes := logged(t, log, "workspace/didChangeConfiguration")
	if len(pushes) != 1 || compact(string(pushes[0])) != compact(`{"settings": `+settings+`}`) {
		t.Errorf("didChangeConfiguration %s", pushes)
	}
	var answer json.RawMessage
	waitFor(t, "the answer to workspace/configuration", func() bool {
		for _, l := range serverLog(t, log) {
			if r, ok := l["result"]; ok {
				answer = r
				return true
			}
		}
		return false
	})
	want := `[` + settings + `, {"analysis": {"typeCheckingMode": "strict", "extraPaths": ["lib"]}},
	  {"typeCheckingMode": "strict", "extraPaths": ["lib"]}, "strict", 7, null]`
	if diff := cmp.Diff(compact(want), compact(string(answer))); diff != "" {
		t.Errorf("workspace/configuration answer (-want +got):\n%s", diff)
	}
}
