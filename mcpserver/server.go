package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/mcp"
)

// Defaults of Options.
const (
	// DefaultServerName is the name the server gives MCP clients.
	DefaultServerName = "idebridge"
	// DefaultServerVersion is the version it gives them.
	DefaultServerVersion = "0.1.0"
	// DefaultInstructions is the initialize result's advice to the model.
	DefaultInstructions = "Code intelligence from the user's language servers and IDE. " +
		"Paths are relative to the project directory, or absolute inside it; lines and columns are 1-based. " +
		"Call diagnostics after editing files to see the errors the edits introduced, " +
		"or check edits before writing them with preview_edit (it shows what they break in other files too) and write them with apply_edit. " +
		"The ide_ tools and propose_edit need the user's IDE; without one they say why."
)

// Options configure New. A nil *Options, and every zero field, means the
// documented default.
type Options struct {
	// ProjectDir is the project: relative paths in tool calls are
	// relative to it, and the language servers work on it. Default: the
	// working directory.
	ProjectDir string
	// Roots are more directories the tools may read and name, besides
	// ProjectDir (which always is one). Every path a client names must
	// lie inside a root once symbolic links are resolved.
	Roots []string
	// Configs are the language servers (see lsp.LoadFile and
	// lsp.GoplsConfig). Nil means gopls for .go files, found as
	// ideserver.NewDiagnostics finds it; an empty, non-nil slice means no
	// server. Ignored when Diagnostics is set.
	Configs []lsp.ServerConfig
	// Diagnostics, when set, is an existing set of language servers to
	// serve the tools from (its Server's workspace folders should be the
	// roots); Close does not close it. Default: New makes one from
	// Configs, and Close stops its servers.
	Diagnostics *ideserver.Diagnostics
	// SettleTimeout bounds how long a tool (diagnostics, preview_edit,
	// apply_edit, rename's check) waits for one file's diagnostics before
	// it answers what it has, marked partial or unknown. Zero means
	// lsp.DefaultSettleTimeout (10 s); negative is an error. Ignored when
	// Diagnostics is set (its own SettleTimeout counts).
	SettleTimeout time.Duration
	// Env is the environment in os.Environ form: where gopls is found,
	// the language servers' environment, and CLAUDE_CONFIG_DIR and
	// CLAUDE_CODE_AUTO_CONNECT_IDE for finding the IDE. Nil means the
	// process's own.
	Env []string
	// NoIDE turns the IDE link off: the ide_ tools and propose_edit answer
	// that there is no IDE, and rename never opens a review.
	NoIDE bool
	// NoIDEReason is why, in the words the IDE tools answer with
	// ("auto-connect is off: " + NoIDEReason). Default: "the server was
	// made with NoIDE".
	NoIDEReason string
	// Logger receives the server's log (IDE found or lost, MCP messages at
	// debug level). Nil is silent.
	Logger *slog.Logger
	// ServerLogger receives the language servers' messages. Nil means
	// Logger.
	ServerLogger *slog.Logger
	// ServerName, ServerVersion and Instructions are what initialize
	// answers. Defaults: DefaultServerName, DefaultServerVersion,
	// DefaultInstructions.
	ServerName    string
	ServerVersion string
	Instructions  string
}

// Server is the MCP server of one project: its tools, the language
// servers they ask, and the link to the user's IDE.
type Server struct {
	srv     *ideserver.Server
	diags   *ideserver.Diagnostics
	ownDiag bool
	link    *ideLink
	tools   []ideserver.Tool
	project project

	closeOnce sync.Once
}

// New makes the server: the language servers are configured but none
// starts until a tool needs it, and the IDE is looked for at the first
// tool call that needs it.
func New(opts *Options) (*Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	dir := o.ProjectDir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("mcpserver: working directory: %w", err)
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: ProjectDir: %w", err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("mcpserver: ProjectDir %s is not a directory", dir)
	}
	roots := []string{dir}
	for _, r := range o.Roots {
		a, err := filepath.Abs(r)
		if err != nil {
			return nil, fmt.Errorf("mcpserver: Roots: %w", err)
		}
		if !slices.Contains(roots, a) {
			roots = append(roots, a)
		}
	}
	p, err := newProject(dir, roots)
	if err != nil {
		return nil, err
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	version := cmpOr(o.ServerVersion, DefaultServerVersion)
	srv, err := ideserver.New(&ideserver.Options{
		WorkspaceFolders:         roots,
		NoLockfile:               true,
		NoDefaultTools:           true,
		ProtocolVersion:          mcp.ProtocolVersion,
		NegotiateProtocolVersion: true,
		ServerName:               cmpOr(o.ServerName, DefaultServerName),
		ServerVersion:            version,
		Instructions:             cmpOr(o.Instructions, DefaultInstructions),
		Logger:                   log,
	})
	if err != nil {
		return nil, fmt.Errorf("mcpserver: %w", err)
	}
	s := &Server{srv: srv, diags: o.Diagnostics, project: p}
	if s.diags == nil {
		sl := o.ServerLogger
		if sl == nil {
			sl = log
		}
		d, err := ideserver.NewDiagnostics(srv, &ideserver.DiagnosticsOptions{Configs: o.Configs, Env: o.Env, Logger: sl, SettleTimeout: o.SettleTimeout})
		if err != nil {
			srv.Close()
			return nil, fmt.Errorf("mcpserver: %w", err)
		}
		s.diags, s.ownDiag = d, true
	}
	s.link = newIDELink(dir, o.Env, o.NoIDE, cmpOr(o.NoIDEReason, "the server was made with NoIDE"), version, log)
	s.tools = []ideserver.Tool{diagnosticsTool(s.diags, p)}
	s.tools = append(s.tools, navTools(&navigator{m: s.diags.Manager(), p: p, link: s.link})...)
	s.tools = append(s.tools, editTools(&editTool{m: s.diags.Manager(), p: p, link: s.link})...)
	s.tools = append(s.tools, ideTools(s.link, p, s.diags.Manager())...)
	if err := s.Register(srv); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Tools returns the server's tools, to mount on an ideserver.Server of
// one's own (Register does that) or to call directly. The handlers stay
// bound to s: they work until s is closed.
func (s *Server) Tools() []ideserver.Tool { return slices.Clone(s.tools) }

// Register adds the server's tools to srv, an MCP server of the caller's
// own on any transport ideserver serves.
func (s *Server) Register(srv *ideserver.Server) error {
	for _, t := range s.tools {
		if err := srv.RegisterTool(t); err != nil {
			return fmt.Errorf("mcpserver: %w", err)
		}
	}
	return nil
}

// ServeStream serves one MCP session over r and w, MCP's stdio transport
// (newline-delimited JSON-RPC), until r ends (nil: the client closed its
// side), ctx ends (nil too: the caller ended it), or reading or writing
// fails. See ideserver.Server.ServeStream.
func (s *Server) ServeStream(ctx context.Context, r io.Reader, w io.Writer) error {
	err := s.srv.ServeStream(ctx, r, w)
	switch {
	case err == nil, errors.Is(err, context.Canceled), errors.Is(err, io.ErrClosedPipe):
		return nil
	}
	return err
}

// Underlying returns the ideserver.Server the tools are registered on (no
// lockfile, no default tools; ServeStream serves it), to serve the same
// session state over another transport it offers. Do not close it: Close
// does.
func (s *Server) Underlying() *ideserver.Server { return s.srv }

// Manager returns the language servers' manager, for status (Servers,
// Problems). Do not drain its registry.
func (s *Server) Manager() *lsp.Manager { return s.diags.Manager() }

// IDEStatus looks for the user's IDE now (connecting when exactly one is
// usable, within ctx) and describes it, or says why there is none.
func (s *Server) IDEStatus(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, ideConnectTimeout+time.Second)
	defer cancel()
	return s.link.describe(ctx)
}

// shutdownGrace bounds how long Close waits for the language servers to
// exit before they are killed.
const shutdownGrace = 5 * time.Second

// Close ends every session and running call, disconnects the IDE and stops
// the language servers New started (within a few seconds; those that do
// not exit are killed). It is idempotent.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		err = s.srv.Close()
		s.link.close()
		if s.ownDiag {
			ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
			defer cancel()
			if e := s.diags.Close(ctx); e != nil && err == nil {
				err = e
			}
		}
	})
	return err
}
