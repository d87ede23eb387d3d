package lspdiag_test

import (
	"encoding/json"
	"fmt"

	"github.com/idebridge/idebridge/diag"

	"github.com/idebridge/idebridge/lspdiag"
)

// A turn of an agent: servers publish, the registry hands out what is new
// once, and the block goes into the model's next request.
func Example() {
	reg, err := lspdiag.NewRegistry(nil)
	if err != nil {
		fmt.Println(err) // only options out of range fail
		return
	}
	reg.SetVersion("file:///home/dev/proj/main.go", 2)

	// What gopls sent (params of textDocument/publishDiagnostics).
	_ = reg.Publish("plugin:go:gopls", json.RawMessage(`{
		"uri": "file:///home/dev/proj/main.go", "version": 2,
		"diagnostics": [
			{"range": {"start": {"line": 9, "character": 1}, "end": {"line": 9, "character": 2}},
			 "severity": 2, "source": "unusedvariable", "message": "declared and not used: y"},
			{"range": {"start": {"line": 2, "character": 4}, "end": {"line": 2, "character": 5}},
			 "severity": 1, "code": "UndeclaredName", "source": "compiler", "message": "undefined: x"}
		]}`))
	// A late publish for an older version is dropped.
	_ = reg.Publish("plugin:go:gopls", json.RawMessage(`{
		"uri": "file:///home/dev/proj/main.go", "version": 1,
		"diagnostics": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
			"message": "stale"}]}`))

	if att, ok := reg.Drain(); ok {
		fmt.Println(att.Render(&diag.RenderOptions{ProjectDir: "/home/dev/proj"}))
	}
	// Nothing is handed out twice.
	_, ok := reg.Drain()
	fmt.Println("again:", ok)
	// Output:
	// <new-diagnostics>
	// The following new diagnostic issues were detected:
	//
	// main.go:
	//   ✘ [Line 3:5] undefined: x [UndeclaredName] (compiler)
	//   ⚠ [Line 10:2] declared and not used: y (unusedvariable)
	// </new-diagnostics>
	// again: false
}

// The attachment as JSON, for callers in other languages.
func ExampleAttachment_json() {
	reg, err := lspdiag.NewRegistry(nil)
	if err != nil {
		fmt.Println(err) // only options out of range fail
		return
	}
	_ = reg.PublishParams("plugin:py:pyright", &diag.PublishParams{
		URI: "file:///home/dev/proj/app.py",
		Diagnostics: []diag.Diagnostic{{
			Range:    diag.Range{Start: diag.Position{Line: 4}, End: diag.Position{Line: 4, Character: 3}},
			Severity: diag.SeverityError,
			Source:   "Pyright",
			Code:     "reportUndefinedVariable",
			Message:  `"foo" is not defined`,
		}},
	})
	att, _ := reg.Drain()
	b, _ := json.MarshalIndent(att, "", "  ")
	fmt.Println(string(b))
	// Output:
	// {
	//   "servers": [
	//     "plugin:py:pyright"
	//   ],
	//   "files": [
	//     {
	//       "uri": "file:///home/dev/proj/app.py",
	//       "path": "/home/dev/proj/app.py",
	//       "diagnostics": [
	//         {
	//           "range": {
	//             "start": {
	//               "line": 4,
	//               "character": 0
	//             },
	//             "end": {
	//               "line": 4,
	//               "character": 3
	//             }
	//           },
	//           "severity": 1,
	//           "code": "reportUndefinedVariable",
	//           "source": "Pyright",
	//           "message": "\"foo\" is not defined"
	//         }
	//       ],
	//       "cut": 0
	//     }
	//   ],
	//   "cut": 0
	// }
}

// Bounding what the model sees: 11 errors in one file give 10 and a count.
func ExampleRegistry_Drain() {
	reg, err := lspdiag.NewRegistry(nil)
	if err != nil {
		fmt.Println(err) // only options out of range fail
		return
	}
	var ds []diag.Diagnostic
	for i := range 11 {
		ds = append(ds, diag.Diagnostic{
			Range:   diag.Range{Start: diag.Position{Line: i}, End: diag.Position{Line: i, Character: 1}},
			Message: fmt.Sprintf("error %d", i+1),
		})
	}
	_ = reg.PublishParams("plugin:go:gopls", &diag.PublishParams{URI: "file:///p/big.go", Diagnostics: ds})
	att, _ := reg.Drain()
	fmt.Println(att.Count(), "shown,", att.Cut, "cut")
	fmt.Println(att.Render(&diag.RenderOptions{ProjectDir: "/p", MaxChars: 250}))
	// Output:
	// 10 shown, 1 cut
	// <new-diagnostics>
	// The following new diagnostic issues were detected:
	//
	// big.go:
	//   ✘ [Line 1:1] error 1
	//   ✘ [Line 2:1] error 2
	//   ✘ [Line 3:1] error 3
	//   ✘ [Line 4:1] error 4
	//   ✘ [Line 5:1] error 5
	// … 6 more not shown
	// </new-diagnostics>
}

// Options that would let the registry's memory grow without bound are
// rejected; the limits of an attachment accept a negative value as "no
// limit".
func ExampleNewRegistry() {
	_, err := lspdiag.NewRegistry(&lspdiag.RegistryOptions{MaxDocuments: -1})
	fmt.Println(err)
	reg, err := lspdiag.NewRegistry(&lspdiag.RegistryOptions{MaxPerFile: -1, MaxTotal: -1})
	fmt.Println(reg != nil, err)
	// Output:
	// lspdiag: invalid RegistryOptions: MaxDocuments is -1: it bounds the registry's memory and must be positive (0 means the default, 500)
	// true <nil>
}

// One bad diagnostic does not cost the others: it is dropped, and the
// block says so.
func ExampleRegistry_Publish_invalid() {
	reg, err := lspdiag.NewRegistry(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	err = reg.Publish("plugin:go:gopls", json.RawMessage(`{"uri": "file:///p/main.go", "diagnostics": [
		{"range": {"start": {"line": 2, "character": 4}, "end": {"line": 2, "character": 5}}, "severity": 1, "message": "undefined: x"},
		{"range": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 1}}, "severity": 99, "message": "?"}]}`))
	fmt.Println("error:", err)
	att, _ := reg.Drain()
	fmt.Println(att.Render(&diag.RenderOptions{ProjectDir: "/p"}))
	// Output:
	// error: <nil>
	// <new-diagnostics>
	// The following new diagnostic issues were detected:
	//
	// main.go:
	//   ✘ [Line 3:5] undefined: x
	// /p/main.go: 1 invalid diagnostic from plugin:go:gopls was dropped (diagnostics[1].severity: number 99 is not a severity (1 to 4))
	// </new-diagnostics>
}
