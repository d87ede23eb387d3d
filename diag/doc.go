// Package diag is the diagnostic vocabulary every other package of this
// module speaks: Severity, Position, Range, Diagnostic, the diagnostics of
// one file (FileDiagnostics), and the Attachment an agent hands its model,
// with its renderer, the <new-diagnostics> block.
//
// The same types carry what a language server publishes (package lsp and
// the registry in package lspdiag), what an IDE reports through its
// getDiagnostics tool (package idebridge) and what the headless IDE answers
// (package ideserver), so that a model sees one format whichever path found
// a problem. Decoding follows the LSP wire forms and checks their shape
// (ShapeError); the package depends on the standard library only.
//
//	att := &diag.Attachment{Files: files}
//	fmt.Println(att.Render(&diag.RenderOptions{ProjectDir: dir}))
package diag
