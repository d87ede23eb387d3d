// Package mcpserver is the MCP server of a project: `idebridge mcp` as a
// library. Its tools give a model the project's language servers and the
// user's IDE:
//
//   - diagnostics: the language servers' errors and warnings for files, as
//     they are on disk now, waited for until known current;
//   - navigation: definition, declaration, type_definition,
//     implementation, references, hover, document_symbols,
//     workspace_symbols, call_hierarchy, type_hierarchy, and rename (a
//     diff, written on request or through the IDE's review); a long list
//     comes in pages (offset, limit) that say the exact total;
//   - verified edits: preview_edit (edits staged in the language servers,
//     not written: their diff and the diagnostics they introduce and
//     resolve in the edited files and their dependents), apply_edit (the
//     same, written all or none, never under a file with unsaved changes
//     in the IDE), fixes (the code actions at a line, each stageable as an
//     edit) and symbol_source (a symbol's text by name path);
//   - the IDE, when one is found as Claude Code finds it: ide_selection,
//     ide_open_editors, ide_open_file, ide_diagnostics and propose_edit (a
//     change shown in the IDE's diff viewer, written as the user accepts
//     it).
//
// # Tutorial
//
// Serve the project in the working directory over standard input and
// output, MCP's stdio transport, as `idebridge mcp` does:
//
//	srv, err := mcpserver.New(nil) // gopls for .go files, the IDE if found
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer srv.Close()
//	if err := srv.ServeStream(ctx, os.Stdin, os.Stdout); err != nil {
//		log.Fatal(err)
//	}
//
// Options choose the project (ProjectDir, and more Roots), the language
// servers (Configs from lsp.LoadFile or lsp.GoplsConfig, or an existing
// *ideserver.Diagnostics), the environment, the IDE link (NoIDE), a
// Logger (silent by default), and what initialize answers. An agent that
// runs its own MCP server mounts the same tools on it instead:
//
//	ide, _ := ideserver.New(&ideserver.Options{NoLockfile: true, NoDefaultTools: true})
//	_ = srv.Register(ide) // or range over srv.Tools()
//
// # Answers
//
// Every tool answers a text block for the model and, for programs, a
// structuredContent object that its outputSchema describes: locations with
// absolute paths and 1-based lines and columns (columns in characters,
// ends exclusive), diagnostics with 1-based ranges, and a status:
// "complete", "partial" (entries may be missing: the server was still
// loading, or a file's diagnostics were not known current), "unknown"
// (nothing can be said; reason says why) or "server-down". A failure a
// model can act on is an isError result with one sentence saying what to
// do, its structuredContent {status, reason}. Every tool carries MCP
// annotations: the navigation and diagnostics tools are read-only and
// idempotent, rename, propose_edit and apply_edit destructive, none reaches outside
// the machine (openWorldHint false).
//
// references includes the declaration unless include_declaration is
// false, as `idebridge lsp refs` does (--no-decl) and as editors' "Find
// All References" does: a model about to change a symbol needs every
// place that names it, its declaration first of all.
//
// # Confinement
//
// Every path a client names, to any tool, must lie inside the project's
// roots once symbolic links are resolved, and the file opened is checked
// on its descriptor (see internal/safefile): "/etc/passwd",
// "../x/secret.go" and a link inside the project to a file outside are
// refused with a sentence naming the path (clipped to a few hundred
// characters). A result may point outside the roots (a definition in the
// standard library or the module cache): it is listed, marked outside in
// the structured result, without its source line, so that no text of a
// file outside the roots reaches the model but what the language server
// itself answers.
package mcpserver
