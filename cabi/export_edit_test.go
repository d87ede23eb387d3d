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

func init() { moreExportCalls = append(moreExportCalls, editExportCalls) }

// editExportCalls covers the edit set's exports in TestExportsRecover.
func editExportCalls(t *testing.T) map[string]func() C_int {
	var out *C_char
	var n C_uint64
	return map[string]func() C_int{
		"idb_edit_set_new":      func() C_int { return idb_edit_set_new(1, &n) },
		"idb_edit_set_stage":    func() C_int { return idb_edit_set_stage(1, cstr(t, "[]"), 0, &out) },
		"idb_edit_set_check":    func() C_int { return idb_edit_set_check(1, 0, &out) },
		"idb_edit_set_diff":     func() C_int { return idb_edit_set_diff(1, &out) },
		"idb_edit_set_discard":  func() C_int { return idb_edit_set_discard(1, 0) },
		"idb_edit_set_apply":    func() C_int { return idb_edit_set_apply(1, 0, &out) },
		"idb_edit_set_free":     func() C_int { return idb_edit_set_free(1, 0) },
		"idb_lsp_code_actions":  func() C_int { return idb_lsp_code_actions(1, nil, 0, &out) },
		"idb_lsp_symbol_source": func() C_int { return idb_lsp_symbol_source(1, nil, 0, &out) },
	}
}

// editModule writes a Go module where a change to Add's signature in
// calc/a.go breaks calc/b.go (the same package) and app/c.go (another
// package).
func editModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	for name, text := range map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.22\n",
		"calc/a.go": "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
		"calc/b.go": "package calc\n\n// Twice doubles.\nfunc Twice(x int) int { return Add(x, x) }\n",
		"app/c.go":  "package app\n\nimport \"example.com/m/calc\"\n\n// Sum sums.\nfunc Sum() int { return calc.Add(1, 2) }\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// readTree returns every file of dir by its path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type editCheckJSON struct {
	Files []struct {
		Path       string
		Edited     bool
		Status     string
		Introduced []struct{ Message string }
		Resolved   []struct{ Message string }
	}
	Introduced, Resolved, Unchecked int
	Status, Diff, Text              string
}

// setJSON runs an export with a set and an out string, and decodes it.
func setJSON(t *testing.T, name string, st C_int, out *C_char, v any) string {
	t.Helper()
	wantStatus(t, st, 0, name)
	text := take(out)
	if v != nil {
		if err := json.Unmarshal([]byte(text), v); err != nil {
			t.Fatalf("%s: %v:\n%s", name, err, text)
		}
	}
	return text
}

// An edit set through the exports, on gopls: a staged signature change is
// checked with the error it makes in another package's file, and nothing
// is written; a discard leaves the disk as it was; the change staged with
// its fixes checks clean and apply writes all three files. Bad edits are
// refused with a clear error, and the code actions and a symbol's source
// are the staged text's.
func TestEditSetExports(t *testing.T) {
	lockThread(t)
	noLeak(t)
	dir := editModule(t)
	a, b, c := filepath.Join(dir, "calc", "a.go"), filepath.Join(dir, "calc", "b.go"), filepath.Join(dir, "app", "c.go")
	config := fmt.Sprintf(`{"gopls":{"command":%q,"extensionToLanguage":{".go":"go"}}}`, goplsPath(t))
	var m C_uint64
	wantStatus(t, idb_lsp_new(cstr(t, config), cstr(t, dir), nil, &m), 0, "idb_lsp_new")
	defer idb_lsp_shutdown(m, 10000)
	var set C_uint64
	wantStatus(t, idb_edit_set_new(m, &set), 0, "idb_edit_set_new")
	defer idb_edit_set_free(set, 30000)
	before := readTree(t, dir)

	var out *C_char
	// Bad edits: refused before anything is staged.
	wantStatus(t, idb_edit_set_stage(set, cstr(t, `{"file": "a.go"}`), 0, &out), abispec.StArgument, "idb_edit_set_stage", "edits_json: not a JSON array of edits")
	wantStatus(t, idb_edit_set_stage(set, cstr(t, fmt.Sprintf(`[{"file": %q, "old_string": "Add"}]`, a)), 0, &out), abispec.StArgument,
		"idb_edit_set_stage", "edit 1: old_string needs new_string")
	wantStatus(t, idb_edit_set_stage(set, nil, 0, &out), abispec.StArgument, "idb_edit_set_stage", "edits_json is NULL")
	wantStatus(t, idb_edit_set_stage(set, cstr(t, fmt.Sprintf(`[{"file": %q, "old_string": "nowhere", "new_string": "x"}]`, a)), 60000, &out), abispec.StError,
		"idb_edit_set_stage", "edit 1 (", "old_string does not occur in the file")
	wantStatus(t, idb_edit_set_check(set, 0, &out), abispec.StError, "idb_edit_set_check", "nothing is staged")
	wantStatus(t, idb_edit_set_check(m, 0, &out), abispec.StHandle, "idb_edit_set_check", "is a LSP manager handle, not a edit set handle")

	breaking, _ := json.Marshal([]map[string]any{{"file": a, "old_string": "func Add(a, b int) int {\n\treturn a + b", "new_string": "func Add(a, b, c int) int {\n\treturn a + b + c"}})
	var files []string
	setJSON(t, "idb_edit_set_stage", idb_edit_set_stage(set, cstr(t, string(breaking)), 0, &out), out, &files)
	if len(files) != 1 || files[0] != a {
		t.Errorf("staged files %q, want [%s]", files, a)
	}
	var chk editCheckJSON
	setJSON(t, "idb_edit_set_check", idb_edit_set_check(set, 0, &out), out, &chk)
	found := false
	for _, f := range chk.Files {
		if f.Path == c && !f.Edited && len(f.Introduced) == 1 && strings.Contains(f.Introduced[0].Message, "not enough arguments in call to calc.Add") {
			found = true
		}
	}
	if !found || chk.Introduced < 2 || !strings.Contains(chk.Text, "app/c.go: 1 introduced") || !strings.Contains(chk.Diff, "+func Add(a, b, c int) int {") {
		t.Errorf("check of the breaking change names no error in app/c.go: %+v\n%s", chk, chk.Text)
	}
	wantStatus(t, idb_edit_set_diff(set, &out), 0, "idb_edit_set_diff")
	if d := take(out); !strings.Contains(d, "--- a/calc/a.go") || !strings.Contains(d, "+func Add(a, b, c int) int {") {
		t.Errorf("diff:\n%s", d)
	}
	// The symbol's source is the staged text's.
	var src struct {
		Path, Symbol, Text string
		Line, EndLine      int
	}
	setJSON(t, "idb_lsp_symbol_source", idb_lsp_symbol_source(m, cstr(t, fmt.Sprintf(`{"path": %q, "symbol": "Add"}`, a)), 0, &out), out, &src)
	if src.Symbol != "Add" || src.Line != 4 || src.EndLine != 6 || !strings.HasPrefix(src.Text, "func Add(a, b, c int) int {") {
		t.Errorf("symbol source: %+v", src)
	}
	wantStatus(t, idb_lsp_symbol_source(m, cstr(t, fmt.Sprintf(`{"path": %q, "symbol": "Sub"}`, a)), 0, &out), abispec.StError, "idb_lsp_symbol_source", `no symbol "Sub" in the file; its symbols: Add`)
	wantStatus(t, idb_lsp_symbol_source(m, cstr(t, `{"path": "x.go"}`), 0, &out), abispec.StArgument, "idb_lsp_symbol_source", "path and symbol are required")

	wantStatus(t, idb_edit_set_discard(set, 0), 0, "idb_edit_set_discard")
	if after := readTree(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("the check or the discard wrote files:\n%v", after)
	}
	wantStatus(t, idb_edit_set_diff(set, &out), 0, "idb_edit_set_diff")
	if d := take(out); d != "" {
		t.Errorf("diff after the discard:\n%s", d)
	}

	// A quick fix at a line of the staged text, staged by its title.
	missing, _ := json.Marshal([]map[string]any{{"file": b, "old_string": "return Add(x, x) }", "new_string": "return Add(x, x) }\n\n// Up shouts.\nfunc Up(s string) string { return strings.ToUpper(s) }"}})
	setJSON(t, "idb_edit_set_stage", idb_edit_set_stage(set, cstr(t, string(missing)), 0, &out), out, nil)
	var acts struct {
		Server, Path string
		Line         int
		Actions      []struct{ Title, Kind string }
	}
	setJSON(t, "idb_lsp_code_actions", idb_lsp_code_actions(m, cstr(t, fmt.Sprintf(`{"path": %q, "line": 7}`, b)), 0, &out), out, &acts)
	if acts.Server != "gopls" || acts.Line != 7 || len(acts.Actions) == 0 || !strings.HasPrefix(acts.Actions[0].Title, "Add import") {
		t.Errorf("code actions at b.go:7: %+v", acts)
	}
	fix, _ := json.Marshal([]map[string]any{{"file": b, "line": 7, "fix": "Add import"}})
	setJSON(t, "idb_edit_set_stage", idb_edit_set_stage(set, cstr(t, string(fix)), 0, &out), out, nil)
	setJSON(t, "idb_edit_set_check", idb_edit_set_check(set, 0, &out), out, &chk)
	if chk.Introduced != 0 {
		t.Errorf("after the quick fix:\n%s", chk.Text)
	}
	wantStatus(t, idb_lsp_code_actions(m, cstr(t, fmt.Sprintf(`{"path": %q}`, b)), 0, &out), abispec.StArgument, "idb_lsp_code_actions", "path and line (1-based) are required")
	wantStatus(t, idb_edit_set_discard(set, 0), 0, "idb_edit_set_discard")

	// The change with its fixes: nothing left broken; apply writes them all.
	all, _ := json.Marshal([]map[string]any{
		{"file": a, "old_string": "func Add(a, b int) int {\n\treturn a + b", "new_string": "func Add(a, b, c int) int {\n\treturn a + b + c"},
		{"file": b, "old_string": "Add(x, x)", "new_string": "Add(x, x, 0)"},
		{"file": c, "old_string": "calc.Add(1, 2)", "new_string": "calc.Add(1, 2, 0)"},
	})
	setJSON(t, "idb_edit_set_stage", idb_edit_set_stage(set, cstr(t, string(all)), 0, &out), out, &files)
	if len(files) != 3 {
		t.Errorf("staged files %q", files)
	}
	if after := readTree(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("staging wrote files:\n%v", after)
	}
	var applied struct {
		Written    []string
		Check      *editCheckJSON
		CheckError string
		Text       string
	}
	setJSON(t, "idb_edit_set_apply", idb_edit_set_apply(set, 0, &out), out, &applied)
	if len(applied.Written) != 3 || applied.Check == nil || applied.Check.Introduced != 0 || applied.CheckError != "" ||
		!strings.HasPrefix(applied.Text, "written: calc/a.go, calc/b.go, app/c.go\n") {
		t.Errorf("apply: %+v", applied)
	}
	for p, want := range map[string]string{a: "func Add(a, b, c int) int {", b: "Add(x, x, 0)", c: "calc.Add(1, 2, 0)"} {
		if got, _ := os.ReadFile(p); !strings.Contains(string(got), want) {
			t.Errorf("%s after apply:\n%s", p, got)
		}
	}
	wantStatus(t, idb_edit_set_diff(set, &out), 0, "idb_edit_set_diff")
	if d := take(out); d != "" {
		t.Errorf("diff after apply:\n%s", d)
	}
}

// A set staged when its manager is shut down is freed without error, and
// a freed set's handle is invalid.
func TestEditSetFreeAfterShutdown(t *testing.T) {
	lockThread(t)
	noLeak(t)
	dir := editModule(t)
	a := filepath.Join(dir, "calc", "a.go")
	config := fmt.Sprintf(`{"gopls":{"command":%q,"extensionToLanguage":{".go":"go"}}}`, goplsPath(t))
	var m, set C_uint64
	wantStatus(t, idb_lsp_new(cstr(t, config), cstr(t, dir), nil, &m), 0, "idb_lsp_new")
	wantStatus(t, idb_edit_set_new(m, &set), 0, "idb_edit_set_new")
	var out *C_char
	edit, _ := json.Marshal([]map[string]any{{"file": a, "old_string": "a + b", "new_string": "b + a"}})
	setJSON(t, "idb_edit_set_stage", idb_edit_set_stage(set, cstr(t, string(edit)), 0, &out), out, nil)
	wantStatus(t, idb_lsp_shutdown(m, 10000), 0, "idb_lsp_shutdown")
	wantStatus(t, idb_edit_set_check(set, 0, &out), abispec.StClosed, "idb_edit_set_check")
	wantStatus(t, idb_edit_set_free(set, 0), 0, "idb_edit_set_free")
	wantStatus(t, idb_edit_set_free(set, 0), abispec.StHandle, "idb_edit_set_free", "already freed")
	if got, _ := os.ReadFile(a); strings.Contains(string(got), "b + a") {
		t.Errorf("a.go was written:\n%s", got)
	}
}

// A file changed on disk after it was staged stops the write whole: apply
// fails naming it, nothing is written, and the edits stay staged. While a
// set has edits staged, another set's stage waits, and fails when its
// timeout ends.
func TestEditSetApplyConflictAndBusy(t *testing.T) {
	lockThread(t)
	noLeak(t)
	dir := editModule(t)
	a, b := filepath.Join(dir, "calc", "a.go"), filepath.Join(dir, "calc", "b.go")
	config := fmt.Sprintf(`{"gopls":{"command":%q,"extensionToLanguage":{".go":"go"}}}`, goplsPath(t))
	var m, set, other C_uint64
	wantStatus(t, idb_lsp_new(cstr(t, config), cstr(t, dir), nil, &m), 0, "idb_lsp_new")
	defer idb_lsp_shutdown(m, 10000)
	wantStatus(t, idb_edit_set_new(m, &set), 0, "idb_edit_set_new")
	defer idb_edit_set_free(set, 30000)
	wantStatus(t, idb_edit_set_new(m, &other), 0, "idb_edit_set_new")
	defer idb_edit_set_free(other, 30000)
	var out *C_char
	edits, _ := json.Marshal([]map[string]any{
		{"file": a, "old_string": "a + b", "new_string": "b + a"},
		{"file": b, "old_string": "Add(x, x)", "new_string": "Add(x, 2*x)"},
	})
	setJSON(t, "idb_edit_set_stage", idb_edit_set_stage(set, cstr(t, string(edits)), 0, &out), out, nil)

	one, _ := json.Marshal([]map[string]any{{"file": b, "new_text": "package calc\n"}})
	wantStatus(t, idb_edit_set_stage(other, cstr(t, string(one)), 300, &out), abispec.StTimeout, "idb_edit_set_stage", "another edit set is staged on this manager")

	changed := "package calc\n\n// Add adds, changed by someone else.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"
	if err := os.WriteFile(a, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	bBefore, _ := os.ReadFile(b)
	wantStatus(t, idb_edit_set_apply(set, 0, &out), abispec.StError, "idb_edit_set_apply", "edits not applied", a)
	if got, _ := os.ReadFile(a); string(got) != changed {
		t.Errorf("a.go was written:\n%s", got)
	}
	if got, _ := os.ReadFile(b); string(got) != string(bBefore) {
		t.Errorf("b.go was written:\n%s", got)
	}
	wantStatus(t, idb_edit_set_diff(set, &out), 0, "idb_edit_set_diff")
	if d := take(out); !strings.Contains(d, "+func Twice(x int) int { return Add(x, 2*x) }") {
		t.Errorf("the edits are no longer staged after the refused apply:\n%s", d)
	}
	wantStatus(t, idb_edit_set_discard(set, 0), 0, "idb_edit_set_discard")
	// The manager is free again: the other set stages.
	setJSON(t, "idb_edit_set_stage", idb_edit_set_stage(other, cstr(t, string(one)), 0, &out), out, nil)
}
