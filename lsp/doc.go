// Package lsp runs the language servers of plugin configuration for an
// agent: it loads the configuration (LoadPlugins, LoadFile), starts and
// supervises the servers (lazily, killing each as a process tree, restarting
// a crashed one within bounds), keeps the files the agent touches in sync
// with them, and feeds their diagnostics to a registry (package lspdiag).
//
// After an edit, Settle says how it knows the diagnostics are current, and
// Drain hands out what is new, with notes where it may be stale:
//
//	configs, errs := lsp.LoadPlugins(plugins, nil) // errs: per plugin and entry
//	m := lsp.NewManager(configs, &lsp.ManagerOptions{ProjectDir: dir})
//	defer m.Shutdown(ctx)
//	m.Change(ctx, "main.go", newText) // opens the file in its server first if needed
//	m.Settle(ctx, "main.go")
//	if att, ok := m.Drain(); ok {
//		prompt += att.Render(&diag.RenderOptions{ProjectDir: dir})
//	}
//
// A Manager is safe for concurrent use.
package lsp
