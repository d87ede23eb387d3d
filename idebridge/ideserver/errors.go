package ideserver

import "errors"

var (
	// ErrServerClosed is returned by Start and Notify after Close or
	// Shutdown, and is the cause of every handler context the shutdown
	// cancels (see context.Cause).
	ErrServerClosed = errors.New("ideserver: server closed")
	// ErrAlreadyStarted is returned by a second Start.
	ErrAlreadyStarted = errors.New("ideserver: server already started")
	// ErrNotStarted is returned by Notify before Start when no
	// ServeStream session is being served either.
	ErrNotStarted = errors.New("ideserver: server not started")
	// ErrNotLoopback is wrapped by New when Options.Host is not a loopback
	// address: an IDE's MCP server must never listen beyond the machine.
	ErrNotLoopback = errors.New("ideserver: host is not a loopback address")
	// ErrDiffClosed is the context cause seen by a DiffPolicy when its diff
	// tab was closed by close_tab or closeAllDiffTabs; the pending openDiff
	// is answered DIFF_REJECTED.
	ErrDiffClosed = errors.New("ideserver: diff tab closed")
	// ErrRequestCancelled is the context cause seen by a ToolHandler whose
	// request the client cancelled with notifications/cancelled; no answer
	// is sent for it.
	ErrRequestCancelled = errors.New("ideserver: request cancelled by the client")
	// ErrClientGone is the context cause seen by a ToolHandler whose client
	// disconnected.
	ErrClientGone = errors.New("ideserver: client disconnected")
)
