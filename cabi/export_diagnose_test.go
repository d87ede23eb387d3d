package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idebridge/idebridge/cabi/abispec"
)

// diagnoseAnswer is idb_lsp_diagnose's JSON, as a test reads it.
type diagnoseAnswer struct {
	Attachment *struct {
		Files []struct {
			Path        string
			Diagnostics []struct{ Message string }
		}
	}
	Files []struct {
		Path     string
		Server   string
		Settle   *struct{ Status, Freshness string }
		Error    string
		NoServer bool
	}
}

func diagnoseCall(t *testing.T, h C_uint64, files []string) (diagnoseAnswer, string) {
	t.Helper()
	js, _ := json.Marshal(files)
	var out *C_char
	wantStatus(t, idb_lsp_diagnose(h, cstr(t, string(js)), 120000, &out), 0, "idb_lsp_diagnose")
	text := take(out)
	var a diagnoseAnswer
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		t.Fatalf("idb_lsp_diagnose: %v:\n%s", err, text)
	}
	return a, text
}

// TestLSPDiagnose: idb_lsp_diagnose answers a file's diagnostics whole on
// every call, whatever idb_lsp_drain delivered between, on a manager of
// the process and through the runtime alike; a file no server serves is
// that file's error; bad arguments are IDB_ERR_ARGUMENT.
func TestLSPDiagnose(t *testing.T) {
	lockThread(t)
	noLeak(t)
	command, rtDir := serveRuntime(t)
	dir := navModule(t)
	broken := filepath.Join(dir, "broken.go")
	if err := os.WriteFile(broken, []byte("package nav\n\nfunc brokenF() {\n\tvar x int = \"s\"\n\t_ = x\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`{"gopls":{"command":%q,"extensionToLanguage":{".go":"go"}}}`, goplsPath(t))
	opts := fmt.Sprintf(`{"runtime":true,"runtimeCommand":%q,"runtimeDir":%q}`, command, rtDir)
	var remote, local C_uint64
	wantStatus(t, idb_lsp_new(cstr(t, config), cstr(t, dir), cstr(t, opts), &remote), 0, "idb_lsp_new")
	defer idb_lsp_shutdown(remote, 10000)
	wantStatus(t, idb_lsp_new(cstr(t, config), cstr(t, dir), nil, &local), 0, "idb_lsp_new")
	defer idb_lsp_shutdown(local, 10000)

	check := func(what string, a diagnoseAnswer, text string) {
		t.Helper()
		if len(a.Files) != 1 || a.Files[0].Path != broken || a.Files[0].Server != "gopls" || a.Files[0].Settle == nil ||
			a.Files[0].Settle.Status != "complete" || a.Attachment == nil || len(a.Attachment.Files) != 1 ||
			len(a.Attachment.Files[0].Diagnostics) != 1 || !strings.Contains(a.Attachment.Files[0].Diagnostics[0].Message, `cannot use "s"`) {
			t.Errorf("%s: %s", what, text)
		}
	}
	for i := range 2 {
		a, text := diagnoseCall(t, local, []string{"broken.go"})
		check(fmt.Sprintf("in the process, call %d", i), a, text)
		// A drain between takes what is new to the manager; the next
		// diagnose answers the whole set again.
		var out *C_char
		wantStatus(t, idb_lsp_drain(local, &out), 0, "idb_lsp_drain")
		take(out)
		a, text = diagnoseCall(t, remote, []string{broken})
		check(fmt.Sprintf("through the runtime, call %d", i), a, text)
	}

	a, text := diagnoseCall(t, remote, []string{"notes.txt", "broken.go"})
	if len(a.Files) != 2 || !a.Files[0].NoServer || a.Files[0].Error == "" || a.Files[0].Settle != nil || a.Files[1].Settle == nil {
		t.Errorf("a file no server serves beside one: %s", text)
	}

	var out *C_char
	for _, bad := range []string{`[]`, `{"files":1}`, `["a.go",`, `[""]`} {
		wantStatus(t, idb_lsp_diagnose(local, cstr(t, bad), 1000, &out), abispec.StArgument, "idb_lsp_diagnose", "files_json")
	}
	wantStatus(t, idb_lsp_diagnose(local, nil, 1000, &out), abispec.StArgument, "idb_lsp_diagnose", "files_json")
}
