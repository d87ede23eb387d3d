// Package lspdiag is the diagnostics registry: the boundary between
// language servers, which publish whole sets of diagnostics whenever they
// like, and a model, which must see each problem once, freshly and in
// bounded space.
//
// A Registry takes every textDocument/publishDiagnostics a server sends
// (Publish), drops what is older than the document's current version
// (SetVersion), and at each turn hands out one diag.Attachment of what is
// new (Drain): deduplicated within the batch and against what was delivered
// before, sorted by severity, at most 10 diagnostics per file and 30 in
// all, with the true count of what it leaves out. A malformed diagnostic
// costs only itself: it is dropped and the attachment notes it.
// Attachment.Render makes the model-facing <new-diagnostics> block.
//
// A Registry is safe for concurrent use, starts no goroutines and does no
// I/O; its output is deterministic, its memory bounded by what is pending
// plus 500 documents (RegistryOptions.MaxDocuments). Drain is one
// client's memory of what it was delivered; clients that share a registry
// (a project's servers in a shared runtime) each drain through a Reader of
// their own (NewReader), which delivers each diagnostic once to it. Package lsp runs
// language servers and feeds one; callers that receive publishes
// themselves only need the turn loop:
//
//	reg, err := lspdiag.NewRegistry(nil) // options out of range are an error
//	// for each publishDiagnostics notification:
//	if err := reg.Publish("plugin:go:gopls", params); err != nil { ... }
//	// once per turn:
//	if att, ok := reg.Drain(); ok {
//		prompt += att.Render(&diag.RenderOptions{ProjectDir: dir})
//	}
package lspdiag
