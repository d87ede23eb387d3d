package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// validate checks v (decoded JSON) against schema, the subset of JSON
// Schema the tools' output schemas use; any other keyword in a schema is
// itself an error, so that nothing is silently left unchecked.
func validate(root, schema map[string]any, v any, at string) []string {
	for k := range schema {
		switch k {
		case "type", "properties", "required", "additionalProperties", "items", "enum", "minimum",
			"$ref", "$defs", "description", "default", "minItems", "maxItems":
		default:
			return []string{fmt.Sprintf("%s: schema keyword %q is not checked by this validator", at, k)}
		}
	}
	if ref, ok := schema["$ref"].(string); ok {
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		defs, _ := root["$defs"].(map[string]any)
		def, found := defs[name].(map[string]any)
		if !ok || !found {
			return []string{fmt.Sprintf("%s: unresolved $ref %q", at, ref)}
		}
		return validate(root, def, v, at)
	}
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, args...)) }
	switch schema["type"] {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			bad("%v is not an object", v)
			return errs
		}
		props, _ := schema["properties"].(map[string]any)
		for _, r := range schema["required"].([]any) {
			if _, ok := obj[r.(string)]; !ok {
				bad("required %q missing", r)
			}
		}
		for k, val := range obj {
			ps, ok := props[k].(map[string]any)
			if !ok {
				if schema["additionalProperties"] == false {
					bad("property %q is not in the schema", k)
				}
				continue
			}
			errs = append(errs, validate(root, ps, val, at+"."+k)...)
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			bad("%v is not an array", v)
			return errs
		}
		if items, ok := schema["items"].(map[string]any); ok {
			for i, it := range arr {
				errs = append(errs, validate(root, items, it, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	case "string":
		if _, ok := v.(string); !ok {
			bad("%v is not a string", v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			bad("%v is not a boolean", v)
		}
	case "integer":
		n, ok := v.(float64)
		if !ok || n != float64(int64(n)) {
			bad("%v is not an integer", v)
		} else if m, ok := schema["minimum"].(float64); ok && n < m {
			bad("%v is below the minimum %v", n, m)
		}
	default:
		bad("schema type %v is not checked by this validator", schema["type"])
	}
	if enum, ok := schema["enum"].([]any); ok && !slices.Contains(enum, v) {
		bad("%v is not one of %v", v, enum)
	}
	return errs
}

// checkStructured validates a result's structured content against the
// tool's output schema.
func checkStructured(t *testing.T, tool ideserver.Tool, res *mcp.ToolResult) map[string]any {
	t.Helper()
	var schema map[string]any
	if err := json.Unmarshal(tool.OutputSchema, &schema); err != nil {
		t.Fatalf("%s: output schema: %v", tool.Name, err)
	}
	if res.StructuredContent == nil {
		t.Errorf("%s answered no structured content: %s", tool.Name, res.Text())
		return nil
	}
	var v map[string]any
	if err := json.Unmarshal(res.StructuredContent, &v); err != nil {
		t.Fatalf("%s: structured content %s: %v", tool.Name, res.StructuredContent, err)
	}
	for _, e := range validate(schema, schema, v, tool.Name) {
		t.Errorf("%s\n  content: %s", e, res.StructuredContent)
	}
	return v
}

// The validator finds what it must: a missing required property, a
// property the schema does not have, a wrong type, a value outside an
// enum, an unknown keyword.
func TestValidatorCatchesMismatches(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal([]byte(outputSchema(locationsSchema)), &schema); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		`{}`,
		`{"status":"fine"}`,
		`{"status":"complete","total":"3"}`,
		`{"status":"complete","locations":[{"path":"/a","line":0,"column":1}]}`,
		`{"status":"complete","locations":[{"path":"/a","line":1}]}`,
		`{"status":"complete","locations":[{"path":"/a","line":1,"column":1,"extra":1}]}`,
	} {
		var v any
		_ = json.Unmarshal([]byte(bad), &v)
		if errs := validate(schema, schema, v, "t"); len(errs) == 0 {
			t.Errorf("%s fits the locations schema", bad)
		}
	}
	odd := map[string]any{"type": "object", "required": []any{}, "pattern": "x"}
	if errs := validate(odd, odd, map[string]any{}, "t"); len(errs) == 0 {
		t.Error("an unchecked keyword passed")
	}
}

// Every tool's structured content fits its own output schema: each tool
// called with gopls and a connected IDE (a headless one that accepts
// edits), and called so that it fails. Every tool has annotations:
// navigation and diagnostics read-only, rename and propose_edit
// destructive.
func TestStructuredContentFitsSchema(t *testing.T) {
	dir := t.TempDir()
	testModule(t, dir)
	writeText(t, filepath.Join(dir, "iface.go"), "package main\n\ntype Greeter interface{ Greet() string }\n\ntype en struct{}\n\nfunc (en) Greet() string { return \"hi\" }\n")
	env := testEnv(t)
	ide, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{dir}, LockfileDir: filepath.Join(getenv(env, "CLAUDE_CONFIG_DIR"), "ide"),
		IDEName: "TestIDE", DiffPolicy: ideserver.AcceptDiffs})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := ide.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer ide.Close()
	// The IDE's own diagnostics, from a gopls of its own.
	d, err := ideserver.NewDiagnostics(ide, &ideserver.DiagnosticsOptions{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())
	if err := ide.RegisterTool(d.Tool()); err != nil {
		t.Fatal(err)
	}
	s := newTestServer(t, dir, &Options{Env: env})

	at := map[string]any{"file": "main.go", "line": 7, "symbol": "greet", "occurrence": 1}
	calls := []struct {
		tool string
		args map[string]any
		fail bool
	}{
		{"diagnostics", map[string]any{"files": []string{"main.go", "greet.go"}}, false},
		{"diagnostics", map[string]any{"files": []string{"main.go", "nope.go", "/etc/passwd"}}, false},
		{"diagnostics", map[string]any{"files": []string{"go.mod"}}, true},
		{"definition", at, false},
		{"definition", map[string]any{"file": "main.go", "line": 7, "symbol": "Println"}, false},
		{"declaration", at, true}, // gopls has no declarationProvider
		{"type_definition", map[string]any{"file": "main.go", "line": 6, "symbol": "unused"}, false},
		{"implementation", map[string]any{"file": "iface.go", "line": 3, "symbol": "Greeter"}, false},
		{"references", at, false},
		{"hover", at, false},
		{"hover", map[string]any{"file": "main.go", "line": 7, "symbol": "nothere"}, true},
		{"document_symbols", map[string]any{"file": "main.go"}, false},
		{"document_symbols", map[string]any{"file": "notes.txt"}, true},
		{"workspace_symbols", map[string]any{"query": "greet"}, false},
		{"call_hierarchy", map[string]any{"file": "greet.go", "line": 4, "symbol": "greet"}, false},
		{"call_hierarchy", map[string]any{"file": "main.go", "line": 5, "symbol": "main", "direction": "outgoing"}, false},
		{"type_hierarchy", map[string]any{"file": "iface.go", "line": 3, "symbol": "Greeter", "direction": "subtypes"}, false},
		{"type_hierarchy", map[string]any{"file": "iface.go", "line": 5, "symbol": "en", "direction": "supertypes"}, false},
		{"type_hierarchy", map[string]any{"file": "iface.go", "line": 3, "symbol": "Greeter", "direction": "sideways"}, true},
		{"type_hierarchy", map[string]any{"file": "iface.go", "line": 3, "symbol": "Greeter"}, true},
		{"references", map[string]any{"file": "main.go", "line": 7, "symbol": "greet", "occurrence": 1, "offset": 1, "limit": 1}, false},
		{"references", map[string]any{"file": "main.go", "line": 7, "symbol": "greet", "occurrence": 1, "offset": 50}, false},
		{"references", map[string]any{"file": "main.go", "line": 7, "symbol": "greet", "occurrence": 1, "limit": 0}, true},
		{"references", map[string]any{"file": "main.go", "line": 7, "symbol": "greet", "occurrence": 1, "offset": -1}, true},
		{"workspace_symbols", map[string]any{"query": "greet", "limit": 1}, false},
		{"call_hierarchy", map[string]any{"file": "greet.go", "line": 4, "symbol": "greet", "offset": 0, "limit": 1}, false},
		{"type_hierarchy", map[string]any{"file": "iface.go", "line": 3, "symbol": "Greeter", "direction": "subtypes", "limit": 1}, false},
		{"type_hierarchy", map[string]any{"file": "iface.go", "line": 3, "symbol": "Greeter", "direction": "subtypes", "limit": 1001}, true},
		{"ide_selection", nil, false},
		{"ide_open_file", map[string]any{"file": "main.go", "line": 7}, false},
		{"ide_open_editors", nil, false},
		{"ide_selection", nil, false},
		{"ide_diagnostics", map[string]any{"file": "main.go"}, false},
		{"ide_open_file", map[string]any{"file": "main.go", "line": 70}, true},
		{"propose_edit", map[string]any{"file": "greet.go", "old_string": "hi ", "new_string": "hello "}, false},
		{"propose_edit", map[string]any{"file": "greet.go", "old_string": "absent", "new_string": "x"}, true},
		{"preview_edit", map[string]any{"edits": []any{map[string]any{"file": "greet.go", "old_string": "hello ", "new_string": "hey "}}}, false},
		{"preview_edit", map[string]any{"edits": []any{map[string]any{"file": "greet.go", "old_string": "absent", "new_string": "x"}}}, true},
		{"apply_edit", map[string]any{"edits": []any{map[string]any{"file": "greet.go", "symbol": "greet", "body": "return \"hey \" + name"}}}, false},
		{"apply_edit", map[string]any{"edits": []any{map[string]any{"file": "greet.go", "symbol": "nothere", "body": "x"}}}, true},
		{"symbol_source", map[string]any{"file": "greet.go", "symbol": "greet"}, false},
		{"fixes", map[string]any{"file": "main.go", "line": 6}, false},
		{"fixes", map[string]any{"file": "main.go", "line": 600}, true},
		{"symbol_source", map[string]any{"file": "greet.go", "symbol": "nothere"}, true},
		{"rename", map[string]any{"file": "greet.go", "line": 4, "symbol": "greet", "new_name": "hello", "apply": false}, false},
		{"rename", map[string]any{"file": "greet.go", "line": 4, "symbol": "greet", "new_name": "hello"}, false},
		{"rename", map[string]any{"file": "greet.go", "line": 4, "symbol": "greet"}, true},
	}
	succeeded := map[string]bool{}
	for _, c := range calls {
		tool := s.tools[c.tool]
		res := s.call(c.tool, c.args)
		if res.IsError != c.fail {
			t.Errorf("%s %v: isError %v:\n%s", c.tool, c.args, res.IsError, res.Text())
		}
		v := checkStructured(t, tool, res)
		if !res.IsError {
			succeeded[c.tool] = true
			if v["status"] == statusUnknown || v["status"] == statusServerDown {
				t.Errorf("%s %v succeeded with status %v: %s", c.tool, c.args, v["status"], res.StructuredContent)
			}
		}
	}
	for name := range s.tools {
		if !succeeded[name] && name != "declaration" {
			t.Errorf("%s was never called with success", name)
		}
	}
	for name, tl := range s.tools {
		var ann mcp.ToolAnnotations
		if err := json.Unmarshal(tl.Annotations, &ann); err != nil || ann.ReadOnlyHint == nil || ann.OpenWorldHint == nil || *ann.OpenWorldHint || ann.Title == "" {
			t.Errorf("%s: annotations %s", name, tl.Annotations)
			continue
		}
		switch name {
		case "rename", "propose_edit", "apply_edit":
			if *ann.ReadOnlyHint || ann.DestructiveHint == nil || !*ann.DestructiveHint {
				t.Errorf("%s is not marked destructive: %s", name, tl.Annotations)
			}
		case "ide_open_file":
			if *ann.ReadOnlyHint || ann.DestructiveHint == nil || *ann.DestructiveHint {
				t.Errorf("%s: annotations %s", name, tl.Annotations)
			}
		default:
			if !*ann.ReadOnlyHint {
				t.Errorf("%s is not marked read-only: %s", name, tl.Annotations)
			}
		}
	}
}
