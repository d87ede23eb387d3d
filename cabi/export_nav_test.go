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

// navModule copies the lsp package's Go navigation fixture.
func navModule(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "lsp", "testdata", "nav", "go")
	dir := t.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// navCall runs a navigation export with request and decodes its result.
func navCall(t *testing.T, name string, fn func(C_uint64, *C_char, C_int64, **C_char) C_int, h C_uint64, request any, v any) string {
	t.Helper()
	js, err := json.Marshal(request)
	if err != nil {
		t.Fatal(err)
	}
	var out *C_char
	wantStatus(t, fn(h, cstr(t, string(js)), 60000, &out), 0, name)
	text := take(out)
	if v != nil {
		if err := json.Unmarshal([]byte(text), v); err != nil {
			t.Fatalf("%s: %v:\n%s", name, err, text)
		}
	}
	return text
}

type navLoc struct {
	Path         string
	Line, Column int
	Text         string
}

func TestLSPNavigationExports(t *testing.T) {
	lockThread(t)
	noLeak(t)
	dir := navModule(t)
	config := fmt.Sprintf(`{"gopls":{"command":%q,"extensionToLanguage":{".go":"go"}}}`, goplsPath(t))
	var h C_uint64
	wantStatus(t, idb_lsp_new(cstr(t, config), cstr(t, dir), nil, &h), 0, "idb_lsp_new")
	defer idb_lsp_shutdown(h, 10000)
	use, shapes := filepath.Join(dir, "use.go"), filepath.Join(dir, "shapes.go")

	var refs struct {
		Op, Server string
		Incomplete bool
		Locations  []navLoc
		Text       string
	}
	navCall(t, "idb_lsp_references", idb_lsp_references, h,
		map[string]any{"path": use, "line": 7, "symbol": "total", "occurrence": 2, "includeDeclaration": true}, &refs)
	var got []string
	for _, l := range refs.Locations {
		got = append(got, fmt.Sprintf("%s:%d:%d", filepath.Base(l.Path), l.Line, l.Column))
	}
	if refs.Op != "references" || refs.Server != "gopls" || refs.Incomplete ||
		strings.Join(got, " ") != "use.go:5:2 use.go:7:3 use.go:7:11 use.go:9:9" {
		t.Errorf("references: %+v", refs)
	}
	if !strings.HasPrefix(refs.Text, "References to total (use.go:7:11), from gopls: 4 in 1 file\n") || !strings.Contains(refs.Text, "use.go:9:9: return total\n") {
		t.Errorf("references text:\n%s", refs.Text)
	}
	// A column after two characters outside the BMP, in characters.
	var def struct{ Locations []navLoc }
	navCall(t, "idb_lsp_definition", idb_lsp_definition, h, map[string]any{"path": use, "line": 15, "column": 22}, &def)
	if len(def.Locations) != 1 || def.Locations[0].Path != use || def.Locations[0].Line != 4 || def.Locations[0].Column != 6 {
		t.Errorf("definition at use.go:15:22: %+v", def)
	}
	var hover struct{ Markdown, Text string }
	navCall(t, "idb_lsp_hover", idb_lsp_hover, h, map[string]any{"path": use, "line": 4, "symbol": "Total"}, &hover)
	if !strings.Contains(hover.Markdown, "func Total(shapes []Shape) float64") {
		t.Errorf("hover: %+v", hover)
	}
	var syms struct {
		Symbols []struct {
			Name     string
			Kind     int
			Children []struct{ Name string }
		}
	}
	navCall(t, "idb_lsp_document_symbols", idb_lsp_document_symbols, h, map[string]any{"path": shapes}, &syms)
	if len(syms.Symbols) != 5 || syms.Symbols[0].Name != "Shape" || syms.Symbols[0].Kind != 11 || len(syms.Symbols[0].Children) != 1 {
		t.Errorf("document symbols: %+v", syms)
	}
	var ws struct{ Symbols []struct{ Name string } }
	navCall(t, "idb_lsp_workspace_symbols", idb_lsp_workspace_symbols, h, map[string]any{"query": "Area"}, &ws)
	if len(ws.Symbols) != 3 {
		t.Errorf("workspace symbols: %+v", ws)
	}
	var calls struct {
		Items []struct{ Name string }
		Calls []struct {
			Item  struct{ Name string }
			Sites []navLoc
		}
	}
	navCall(t, "idb_lsp_incoming_calls", idb_lsp_incoming_calls, h, map[string]any{"path": use, "line": 4, "symbol": "Total"}, &calls)
	if len(calls.Calls) != 1 || calls.Calls[0].Item.Name != "Report" || len(calls.Calls[0].Sites) != 1 || calls.Calls[0].Sites[0].Column != 22 {
		t.Errorf("incoming calls: %+v", calls)
	}
	navCall(t, "idb_lsp_outgoing_calls", idb_lsp_outgoing_calls, h, map[string]any{"path": use, "line": 13, "symbol": "Report"}, &calls)
	if len(calls.Calls) != 2 {
		t.Errorf("outgoing calls: %+v", calls)
	}
	var impl struct{ Locations []navLoc }
	navCall(t, "idb_lsp_implementation", idb_lsp_implementation, h, map[string]any{"path": shapes, "line": 5, "symbol": "Area"}, &impl)
	if len(impl.Locations) != 2 {
		t.Errorf("implementation: %+v", impl)
	}
	navCall(t, "idb_lsp_type_definition", idb_lsp_type_definition, h, map[string]any{"path": use, "line": 14, "symbol": "sq"}, &impl)
	if len(impl.Locations) != 1 || impl.Locations[0].Line != 9 {
		t.Errorf("type definition: %+v", impl)
	}
	navCall(t, "idb_lsp_prepare_call_hierarchy", idb_lsp_prepare_call_hierarchy, h, map[string]any{"path": use, "line": 4, "symbol": "Total"}, &calls)
	if len(calls.Items) != 1 || calls.Items[0].Name != "Total" {
		t.Errorf("prepare call hierarchy: %+v", calls)
	}

	var types struct {
		Op    string
		Items []struct{ Name string }
		Types []struct {
			Name     string
			Kind     int
			Location navLoc
		}
		Text string
	}
	navCall(t, "idb_lsp_subtypes", idb_lsp_subtypes, h, map[string]any{"path": shapes, "line": 4, "symbol": "Shape"}, &types)
	if types.Op != "subtypes" || len(types.Items) != 1 || types.Items[0].Name != "Shape" || len(types.Types) != 2 ||
		types.Types[0].Name != "Square" || types.Types[0].Location.Line != 9 || types.Types[1].Name != "Circle" ||
		!strings.HasPrefix(types.Text, "Subtypes of Shape (shapes.go:4:6), from gopls: 2 types\n") {
		t.Errorf("subtypes: %+v", types)
	}
	navCall(t, "idb_lsp_supertypes", idb_lsp_supertypes, h, map[string]any{"path": shapes, "line": 9, "symbol": "Square"}, &types)
	if types.Op != "supertypes" || len(types.Types) != 1 || types.Types[0].Name != "Shape" || types.Types[0].Kind != 11 {
		t.Errorf("supertypes: %+v", types)
	}
	navCall(t, "idb_lsp_prepare_type_hierarchy", idb_lsp_prepare_type_hierarchy, h, map[string]any{"path": shapes, "line": 9, "symbol": "Square"}, &types)
	if types.Op != "prepareTypeHierarchy" || len(types.Items) != 1 || types.Items[0].Name != "Square" {
		t.Errorf("prepare type hierarchy: %+v", types)
	}
	// A page of the references: the exact total, its offset.
	var page struct {
		Total, Offset int
		Locations     []navLoc
		Text          string
	}
	navCall(t, "idb_lsp_references", idb_lsp_references, h,
		map[string]any{"path": use, "line": 7, "symbol": "total", "occurrence": 2, "includeDeclaration": true, "offset": 1, "limit": 2}, &page)
	if page.Total != 4 || page.Offset != 1 || len(page.Locations) != 2 || page.Locations[0].Line != 7 || page.Locations[0].Column != 3 ||
		!strings.HasPrefix(page.Text, "References to total (use.go:7:11), from gopls: 4; showing 2-3 of 4 (2 in 1 file)\n") {
		t.Errorf("a page of references: %+v", page)
	}

	// Errors: an ambiguous symbol, a missing path, unknown members, an
	// operation gopls does not offer, NULL out.
	var out *C_char
	wantStatus(t, idb_lsp_references(h, cstr(t, fmt.Sprintf(`{"path":%q,"line":7,"symbol":"total"}`, use)), 0, &out),
		abispec.StArgument, "idb_lsp_references", `"total" occurs 2 times on line 7`, "\t\ttotal = total + s.Area()")
	wantStatus(t, idb_lsp_definition(h, cstr(t, `{"line":7}`), 0, &out), abispec.StArgument, "idb_lsp_definition", "path is required")
	wantStatus(t, idb_lsp_references(h, cstr(t, fmt.Sprintf(`{"path":%q,"line":7,"column":3,"offset":-1}`, use)), 0, &out),
		abispec.StArgument, "idb_lsp_references", "offset and limit must not be negative")
	wantStatus(t, idb_lsp_definition(h, cstr(t, `{"path":"x.go","lin":7}`), 0, &out), abispec.StArgument, "idb_lsp_definition", "unknown field")
	wantStatus(t, idb_lsp_declaration(h, cstr(t, fmt.Sprintf(`{"path":%q,"line":7,"symbol":"Area"}`, use)), 0, &out),
		abispec.StError, "idb_lsp_declaration", "gopls does not offer declaration")
	wantStatus(t, idb_lsp_definition(h, cstr(t, fmt.Sprintf(`{"path":%q,"line":7,"column":1}`, use)), 0, nil), abispec.StArgument, "idb_lsp_definition")
	wantStatus(t, idb_lsp_hover(h, cstr(t, fmt.Sprintf(`{"path":%q,"line":1,"column":1}`, filepath.Join(dir, "notes.txt"))), 0, &out),
		abispec.StNotFound, "idb_lsp_hover", "no language server")

	// Rename, then apply it: nothing is written before.
	before, _ := os.ReadFile(use)
	var proposal struct {
		Files []struct{ Path, NewText, Diff string }
		Text  string
	}
	raw := navCall(t, "idb_lsp_rename", idb_lsp_rename, h, map[string]any{"path": use, "line": 18, "symbol": "label", "newName": "tag"}, &proposal)
	if len(proposal.Files) != 1 || proposal.Files[0].Path != use || !strings.Contains(proposal.Files[0].Diff, "+func tag(prefix string, v float64) string {") ||
		!strings.Contains(proposal.Text, "Nothing is written yet.") {
		t.Fatalf("rename: %+v", proposal)
	}
	if now, _ := os.ReadFile(use); string(now) != string(before) {
		t.Fatal("rename wrote the file")
	}
	wantStatus(t, idb_lsp_apply_rename(h, cstr(t, raw), 0, &out), 0, "idb_lsp_apply_rename")
	var applied struct {
		Written int
		Files   []struct{ Path, Status string }
		Text    string
	}
	if err := json.Unmarshal([]byte(take(out)), &applied); err != nil {
		t.Fatal(err)
	}
	if applied.Written != 1 || applied.Files[0].Status != "written" || applied.Text != "Rename: 1 of 1 file written.\nuse.go: written\n" {
		t.Errorf("apply: %+v", applied)
	}
	if now, _ := os.ReadFile(use); string(now) != proposal.Files[0].NewText {
		t.Errorf("use.go after applying:\n%s", now)
	}
	// The same proposal again: the file changed since; nothing is
	// written, and the error names it.
	written, _ := os.ReadFile(use)
	wantStatus(t, idb_lsp_apply_rename(h, cstr(t, raw), 0, &out), abispec.StError, "idb_lsp_apply_rename",
		"rename not applied: edit of "+use+" not written: the file changed on disk")
	if now, _ := os.ReadFile(use); string(now) != string(written) {
		t.Errorf("applying twice wrote use.go:\n%s", now)
	}
	wantStatus(t, idb_lsp_apply_rename(h, cstr(t, `{"files":[{"path":"/x"}]}`), 0, &out), abispec.StArgument, "idb_lsp_apply_rename", "no path or base")
	wantStatus(t, idb_lsp_apply_rename(h, nil, 0, &out), abispec.StArgument, "idb_lsp_apply_rename", "proposal_json is NULL")
}

func TestLSPNavigationBadHandles(t *testing.T) {
	lockThread(t)
	noLeak(t)
	req := cstr(t, `{"path":"/x.go","line":1,"column":1}`)
	for _, h := range []C_uint64{0, 3, C_uint64(kindLSP) << kindShift} {
		var out *C_char
		for name, st := range map[string]C_int{
			"idb_lsp_definition":   idb_lsp_definition(h, req, 0, &out),
			"idb_lsp_references":   idb_lsp_references(h, req, 0, &out),
			"idb_lsp_rename":       idb_lsp_rename(h, req, 0, &out),
			"idb_lsp_apply_rename": idb_lsp_apply_rename(h, cstr(t, "{}"), 0, &out),
		} {
			if st != abispec.StHandle {
				t.Errorf("%s(%#x) = %d, want %d", name, uint64(h), st, abispec.StHandle)
			}
		}
	}
}
