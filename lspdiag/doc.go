// Package lspdiag turns the diagnostics of language servers started from
// plugin configuration into a small, fresh, deduplicated block of text for
// a model.
//
// It has two layers. The Registry is pure data in, data out: it takes every
// textDocument/publishDiagnostics a server sends (Publish), drops what is
// older than the document's current version (SetVersion), and at each turn
// hands out one Attachment of what is new (Drain): deduplicated within the
// batch and against what was delivered before, sorted by severity, at most
// 10 diagnostics per file and 30 in all. Attachment.Render makes the
// model-facing <new-diagnostics> block; the Attachment marshals to JSON
// for other languages. A Registry is safe for concurrent use, starts no
// goroutines and does no I/O.
//
// The manager layer on top loads plugin LSP configuration (LoadPlugins,
// LoadFile), starts and supervises the servers (lazily, restarting a
// crashed one within bounds), keeps the files an agent touches in sync with
// them and feeds their publishes to its Registry. After an edit, Settle
// says how it knows the diagnostics are current (published, progress
// ended, quiet, or timed out), and Drain notes when they may be stale:
//
//	configs, errs := lspdiag.LoadPlugins(plugins, nil) // errs: per plugin and entry
//	m := lspdiag.NewManager(configs, &lspdiag.ManagerOptions{ProjectDir: dir})
//	defer m.Shutdown(ctx)
//	m.Change(ctx, "main.go", newText) // opens the file in its server first if needed
//	m.Settle(ctx, "main.go")
//	if att, ok := m.Drain(); ok { ... }
//
// Callers that receive publishes themselves only need the registry's turn
// loop:
//
//	reg := lspdiag.NewRegistry(nil)
//	// for each publishDiagnostics notification:
//	if err := reg.Publish("plugin:go:gopls", params); err != nil { ... }
//	// once per turn:
//	if att, ok := reg.Drain(); ok {
//		prompt += att.Render(&lspdiag.RenderOptions{ProjectDir: dir})
//	}
package lspdiag
