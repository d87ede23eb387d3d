// Package idebridge connects a coding agent to the user's editor: it finds
// the IDE through the lockfiles IDE extensions write, checks that it is the
// right one and reachable, connects to the MCP server the extension runs
// (WebSocket or legacy SSE), and drives the IDE's tools (diff view, open
// file, diagnostics, selection).
//
// Most agents need three calls:
//
//	cands, err := idebridge.Discover(ctx, nil) // every lockfile, checked
//	valid := idebridge.ValidCandidates(cands)
//	if len(valid) != 1 {
//		// none, or several: show cands (each says why it is or is not
//		// usable) and let the user choose
//	}
//	client, err := idebridge.Connect(ctx, valid[0], nil)
//	defer client.Close()
//	diags, err := client.GetDiagnostics(ctx, "")
//
// # Discovery
//
// Discover reads every lockfile (package lockfile), concurrently checks the
// workspace folders against the working directory, the IDE's pid, its
// ancestry when the agent runs in the IDE's own terminal, and its TCP port,
// and returns one Candidate per lockfile with machine-readable Reasons and a
// human Message. Auto-connecting is the caller's decision: pick a candidate
// only when exactly one is valid. RemoveStale deletes stale lockfiles, and
// only when asked. DetectTerminal says from the environment whether the
// agent runs in an IDE's terminal and which; DetectRunningIDEs scans the
// process list when the environment does not say.
//
// Everything that reads the environment, the file system or processes
// takes it through options (DiscoverOptions.Env, Dirs, Processes, Dial), so
// that tests and embedders never touch the real home directory. An Env is
// in os.Environ form ("KEY=value"); nil means the process's own.
//
// # Connecting and calling tools
//
// Connect (or DialURL) performs the MCP handshake over WebSocket or legacy
// SSE and returns a Client, safe for concurrent use. The connection under
// it is package mcpclient's (a JSON-RPC multiplexer over a message-level
// transport), and the protocol's types and names are package mcp's. CallTool calls any
// tool; typed wrappers (OpenDiff, CloseTab, CloseAllDiffTabs, OpenFile,
// GetDiagnostics, ...) use the argument names deployed IDEs expect. Every
// call except openDiff has a default deadline (ClientOptions.CallTimeout);
// a dead connection fails every pending call at once with
// ErrConnectionLost. Notifications (selection_changed, at_mentioned, ...)
// arrive on Client.Notifications.
//
// AutoConnect decides, as Claude Code does, whether to connect
// without asking (ShouldAutoConnect), waits for exactly one usable IDE and
// connects; NoIDEError and AmbiguousIDEError list the candidates and why.
// Reconnect returns to the same IDE after a lost connection.
//
// # Agent flows
//
// A Reviewer shows a proposed edit in the IDE's diff viewer
// (Reviewer.ProposeEdit) and writes the file atomically according to the
// user's decision, refusing with a ConflictError when the file changed
// underneath; CancelAll is the user's ESC. ApplyEdit is the same write
// without an IDE. SnapshotDiagnostics before an edit and
// DiagnosticsSnapshot.NewDiagnostics after it report only the diagnostics
// the edit introduced, rendered as a capped <new-diagnostics> block; the
// Try variants turn IDE errors into "nothing", as Claude Code does.
//
// Candidate, Discover and the detection functions are safe for concurrent
// use. Paths from the IDE pass through Candidate.Paths, which converts
// between Windows and WSL when the IDE runs on the Windows side.
package idebridge
