// Package lsp runs the language servers of plugin configuration for an
// agent: it loads the configuration (LoadPlugins, LoadFile), starts and
// supervises the servers (lazily, killing each as a process tree, restarting
// a crashed one within bounds), keeps the files the agent touches in sync
// with them, and feeds their diagnostics to a registry (package lspdiag).
//
// After an edit, Settle says how it knows the diagnostics are current (a
// pull answer for the text, a publish for its version, the end of the
// server's work, or a publish and then the server's learned quiet period)
// and never takes silence for "no errors"; Drain hands out what is new,
// with notes where it is unknown or may be stale:
//
//	configs, errs := lsp.LoadPlugins(plugins, nil) // errs: per plugin and entry
//	m, err := lsp.NewManager(configs, &lsp.ManagerOptions{ProjectDir: dir}) // err: bad options
//	defer m.Shutdown(ctx)
//	m.Change(ctx, "main.go", newText) // opens the file in its server first if needed
//	res, _ := m.Settle(ctx, "main.go") // res.Freshness, res.Reason: how it knew
//	if att, ok := m.Drain(); ok {
//		prompt += att.Render(&diag.RenderOptions{ProjectDir: dir})
//	}
//
// The same servers navigate (nav.go): Definition, Declaration,
// TypeDefinition, Implementation, References, Hover, DocumentSymbols,
// WorkspaceSymbols, the call hierarchy and Rename, each at a Pos (a line
// and a column in characters, or the symbol's text on the line), each
// result typed and rendered for a model, and marked incomplete when the
// server had not finished loading the workspace. Rename only proposes;
// ApplyRename writes, through a caller's review when it has one, else all
// files or none (atomicfile.WriteAll), and never outside
// ManagerOptions.Roots (default: the project directory):
//
//	refs, err := m.References(ctx, lsp.Pos{Path: "use.go", Line: 7, Symbol: "total", Occurrence: 2}, true)
//	prompt += refs.Render(&lsp.NavRenderOptions{ProjectDir: dir})
//
// An EditSet (edit.go) checks edits before they are written: Stage sends
// them to the servers as unsaved text, Check answers the diagnostics they
// introduce and resolve in the edited files and in the files that depend
// on them, Discard puts the servers back on the disk's text, Apply writes
// all files or none:
//
//	es := m.NewEditSet()
//	defer es.Discard(ctx)
//	err := es.Stage(ctx, []lsp.Edit{{File: "calc/a.go", OldString: "Add(a, b int)", NewString: "Add(a, b, c int)"}})
//	check, err := es.Check(ctx) // check.Render(dir): app/c.go: 1 introduced ...
//
// A Manager is safe for concurrent use.
package lsp
