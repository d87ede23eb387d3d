// Package warm is the user's shared runtime: one background process per
// user and build that owns the language servers, so that every MCP client,
// agent and subagent on a project shares one server per project, already
// warm, instead of starting its own.
//
// # The runtime
//
// Serve runs it (`idebridge runtime serve`; clients start it themselves).
// It serves package mcpserver: one mcpserver.Server per Project, shared
// by every session that asks for an equal Project and counted by them, and
// one lsp.Manager, so one process per language server, per project
// directory and server configuration, shared by every Project that has
// both whatever else sets it apart. A project with no session for the idle
// time (ServeOptions.Idle: default $IDEBRIDGE_RUNTIME_IDLE, else
// DefaultIdle) ends, and its language servers stop unless another project
// uses them; the runtime with no session at all for the idle time exits.
//
// Each connection to the runtime's socket carries one session, MCP's
// stdio transport (newline-delimited JSON-RPC) after a short handshake:
// the session ends when its connection closes, so a client that dies, even
// by SIGKILL, has its session ended at once, as the system closes its
// socket. The language servers run in the runtime's environment, which is
// that of the client that started it.
//
// When the runtime dies, even by SIGKILL, its language servers die with
// it: package lsp starts each in a PID namespace when it can, else in a
// process group, with the kernel's parent-death signal (see lsp.Manager).
//
// # Security
//
// The runtime listens on its socket, on its HTTP socket beside it, and on
// a TCP port only when ServeOptions.HTTP.Addr asks, a loopback address
// only, every request there with a bearer token. The sockets lie in a
// directory of the user's own, mode 0700 (DefaultDir:
// $IDEBRIDGE_RUNTIME_DIR, else $XDG_RUNTIME_DIR/idebridge, else
// os.TempDir()/idebridge-<uid>), made so when missing; a directory owned
// by another user or open to others is refused with ErrUnsafeDir, never
// repaired. On Linux every connection's peer on either socket is also
// checked (SO_PEERCRED): a process of another uid is closed on without a
// word, even if it reached the socket. On other unix systems the directory's mode is the
// only guard; Windows is not supported (ErrUnsupported).
//
// # Streamable HTTP
//
// MCP clients that speak only Streamable HTTP reach the runtime's projects
// directly (HTTPOptions): on the unix socket BUILD.http beside the
// runtime's (the runtime's own socket cannot carry HTTP: there the runtime
// speaks first, and so does an HTTP client), and on a loopback TCP
// address when asked, with the bearer token kept 0600 in the runtime
// directory. The URL names the project, its absolute directory as the
// HTTPProjectParam parameter of HTTPPath; the project's configuration is
// HTTPOptions.Project's, never the request's, so a client cannot make the
// runtime run a command of its choosing. Requests go to the project's own
// MCP server, the one its stdio sessions are served on, and so to the same
// language servers. A legacy session (opened by initialize) counts as a
// runtime session until DELETE, or until it has had no request for
// HTTPOptions.SessionIdle; a 2026-07-28 request counts while it runs.
//
// # Versions
//
// The runtime and its clients are one build: the socket is named after
// the build identity (BuildID, a hash of the executable), so a client of
// a new build starts a runtime of its own beside the old one, which exits
// when idle. The handshake checks the identity again: a runtime of another
// build on the socket is refused with ErrVersionSkew naming both, and
// left alone (`idebridge mcp` then serves the session in its own process
// and says so).
//
// # Clients
//
// Open finds the runtime or starts it (Options.Start, detached in a
// session of its own, its output in BUILD.log in the runtime directory;
// a lock file makes clients that start at once make one runtime) and
// opens a session on a Project. Proxy serves a stdio MCP session through
// it, as `idebridge mcp` does by default: when the runtime is lost, the
// requests it had not answered get an error, and the client's next message
// reconnects, starting a new runtime, and replays the session's
// initialize, so that the call is answered. Navigate runs one
// read-only lsp.NavRequest on a Project's servers in the runtime and
// returns lsp's own result, as `idebridge lsp refs` and the other
// navigation commands do by default. Diagnose opens, settles and drains
// files there, as `idebridge diag` does by default: through an
// lsp.Drainer of the request's own, so that it gets every diagnostic of
// its files that stands, whichever client drained first, and not the
// files only other clients have open (unless their server reports on
// files nobody opened, as gopls does; then a process of its own would
// get them too). The files a request opened are closed when it ends.
// GetStatus and Stop are
// `idebridge runtime status` and `idebridge runtime stop`.
//
// # Agents
//
// Dial is an agent's way in: a Remote is a Project's servers in the
// runtime, held over one connection that is the agent's session there
// (ended by Close, or by the agent's death, however it dies). It offers
// the read-only navigation of an lsp.Manager, with lsp's own result types
// and errors.Is targets, and Servers; calls run concurrently, a cancelled
// ctx cancels the call in the runtime, and when the runtime dies the
// calls in flight fail with ErrRuntimeLost and the next call starts a new
// one. *lsp.Manager and *Remote both satisfy Navigator, so an agent
// written against it chooses by its constructor alone. An agent that is
// not the idebridge command shares that command's runtime with
// CommandOptions. Documents, unsaved text, edits and renames stay with an
// lsp.Manager of the agent's own; diagnostics through a Remote are not
// there yet (they need the runtime to remember what it delivered to each
// client).
//
// # Sessions share one project's state
//
// Sessions on one project share its language servers and so the
// documents open in them. Verified edits (preview_edit, apply_edit) stage
// their text in the language servers for the length of the call (an
// lsp.EditSet): while one runs, no other tool call of any session of the
// project runs (they wait, until it ends or their own cancellation), so no
// session ever sees another's staged text; other calls run concurrently.
// The sessions have no IDE link: which IDE an agent may reach depends on
// the agent (its environment and process ancestry), which the runtime is
// not. The repository's docs/RUNTIME.md has the details.
package warm
