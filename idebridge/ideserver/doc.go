// Package ideserver is the IDE side of the IDE integration: a small MCP
// server that does what an editor extension does for coding agents. It picks
// a free loopback port, announces itself with a lockfile
// (~/.claude/ide/<port>.lock, mode 0600, removed on Close), requires the
// lockfile's auth token, refuses requests whose Host or Origin is not
// loopback, speaks the MCP handshake over WebSocket (or legacy SSE), and
// serves tools.
//
// Editor authors embed it and register their own tools; tests and headless
// setups (`idebridge ide serve`) use the default tool set, which serves a
// plain directory: openFile (which selects lines or text as asked),
// getCurrentSelection and getLatestSelection (what openFile selected),
// getWorkspaceFolders, getOpenEditors, checkDocumentDirty, saveDocument,
// close_tab, closeAllDiffTabs, and openDiff decided by a DiffPolicy (AcceptDiffs, RejectDiffs, or a
// DiffPolicyFunc that asks someone). Answers match deployed IDEs byte for
// byte where the wire allows (FILE_SAVED, DIFF_REJECTED, TAB_CLOSED,
// CLOSED_<n>_DIFF_TABS, JSON texts with escaped slashes). The default tools
// serve only files inside the workspace folders, symbolic links resolved
// (Options.Unconfined lifts that) and checked again on the file opened, so
// that a link swapped after the check is not followed out; and they read
// only regular files, opened without blocking and bounded in size.
//
// Hostile clients are bounded too: every tool call is answered within
// Options.CallTimeout (openDiff waits for the user), a refused request
// closes its connection, slow and idle requests time out
// (Options.RequestTimeout), and connections that have not authenticated
// are capped (Options.MaxUnauthenticatedConns).
//
// The call most people need:
//
//	srv, err := ideserver.New(&ideserver.Options{
//		WorkspaceFolders: []string{dir},
//		DiffPolicy:       ideserver.AcceptDiffs,
//	})
//	if err != nil { ... }
//	if err := srv.Start(ctx); err != nil { ... }
//	defer srv.Close()
//	// Agents now find srv.LockfilePath() and connect to srv.URL().
//
// The same server kit serves an MCP server of one's own over stdio:
// ServeStream runs one session over a reader and a writer (standard input
// and output), newline-delimited JSON-RPC as MCP's stdio transport frames
// it, with no listener and no lockfile. With NoDefaultTools the server
// serves only what RegisterTool adds:
//
//	srv, err := ideserver.New(&ideserver.Options{
//		NoDefaultTools: true, NoLockfile: true,
//		ProtocolVersion: mcp.ProtocolVersion, NegotiateProtocolVersion: true,
//	})
//	srv.RegisterTool(myTool)
//	err = srv.ServeStream(ctx, os.Stdin, os.Stdout) // nil when stdin ends
//
// ServeStreamableHTTP serves the same session semantics over MCP's
// Streamable HTTP transport, on a loopback TCP listener or a unix socket,
// with a bearer token (AuthToken; WriteEndpointFile hands it to clients in
// a 0600 file, as a lockfile does) and the same Host and Origin checks.
//
// Both MCP eras are served on every transport: a legacy client opens with
// initialize (up to 2025-11-25); a 2026-07-28 client sends its protocol
// version and capabilities in every request's params._meta, may ask
// server/discover, and gets resultType (and ttlMs and cacheScope on
// tools/list) in its results. A handler reports progress with
// ReportProgress; it reaches clients whose request asked for it.
//
// A Server is safe for concurrent use. Tool handlers run one goroutine per
// call and must return when their context ends; Close answers pending
// openDiff calls DIFF_REJECTED, cancels the rest, waits for them, closes
// every connection and removes the lockfile.
package ideserver
