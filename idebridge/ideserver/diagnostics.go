package ideserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/idebridge/idebridge/internal/env"
	"github.com/idebridge/idebridge/internal/fileuri"
	"github.com/idebridge/idebridge/mcp"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/lsp"

	"github.com/idebridge/idebridge/lspdiag"
)

// DiagnosticsOptions configure NewDiagnostics. A nil *DiagnosticsOptions,
// and every zero field, means the documented default; a negative
// SettleTimeout or MaxFiles is rejected (NewDiagnostics returns an error
// naming it).
type DiagnosticsOptions struct {
	// Configs are the language servers (see lsp.LoadFile). Nil means
	// gopls for .go files (lsp.GoplsConfig), found with
	// lsp.FindGopls and working on the server's first workspace
	// folder; NewDiagnostics fails with an error matching
	// lsp.ErrGoplsNotFound when there is none. An empty, non-nil
	// slice means no server: every file answers an empty list.
	Configs []lsp.ServerConfig
	// Env is the environment in os.Environ form: where gopls is found
	// ($GOPLS, $GOPATH) and the base environment of the server
	// processes. Nil means the process's own.
	Env []string
	// SettleTimeout bounds how long one file waits for its servers'
	// diagnostics. Default lsp.DefaultSettleTimeout (10 s).
	SettleTimeout time.Duration
	// MaxFiles bounds the files kept open in the servers and answered by
	// getDiagnostics without a uri (the most recently asked or opened).
	// Default lsp.DefaultMaxOpenDocuments (50).
	MaxFiles int
	// Logger receives the servers' messages and the manager's notes. Nil
	// is silent.
	Logger *slog.Logger
}

// Diagnostics answers getDiagnostics from language servers, as a headless
// IDE's diagnostics: register its Tool with the Server it was made for.
//
// For each call it opens the requested file (without a uri: every file
// opened with openFile or asked about before) in the servers that serve
// its extension, re-reads it from disk at the moment of the call and
// sends the servers its current text when that changed (agents write
// files themselves and ask within milliseconds), waits until the servers'
// diagnostics for that text are complete (lspdiag's Settle with
// WaitForProgress: gopls's analysis results too), and answers the
// deployed JSON shape:
//
//	[{"uri":"file:///p/main.go","diagnostics":[{"message":"undefined: x",
//	  "severity":"Error","source":"compiler","code":"UndeclaredName",
//	  "range":{"start":{"line":3,"character":9},"end":{...}}}]}]
//
// with severities as strings ("Error", "Warning", "Information", "Hint")
// and columns in characters. A file no server serves answers an empty
// list; a file that does not exist answers -32001, and one that is not a
// regular file (a FIFO, a device) or is over Options.MaxMessageSize is an
// error, never waited on. Calls run side by side: one waiting for a slow
// language server holds up no other. Diagnostics owns its lsp.Manager:
// nothing else may drain it.
type Diagnostics struct {
	srv      *Server
	mgr      *lsp.Manager
	log      *slog.Logger
	maxFiles int

	// mu guards the fields below. It is never held while waiting for a
	// file or a server.
	mu    sync.Mutex
	asked []string             // files asked about, most recent last
	docs  map[string]*docDiags // by absolute path
}

// docDiags is the last complete diagnostic set known for one document.
type docDiags struct {
	server string
	uri    string
	diags  []diag.Diagnostic
	// seq is the registry's sequence number of the publish diags come
	// from (0: none yet); when the registry's last publish for the
	// document has another number, diags may be out of date.
	seq uint64
}

// NewDiagnostics returns the diagnostics of srv's files from the language
// servers opts configures. No server starts until a file needs it.
func NewDiagnostics(srv *Server, opts *DiagnosticsOptions) (*Diagnostics, error) {
	var o DiagnosticsOptions
	if opts != nil {
		o = *opts
	}
	switch {
	case o.SettleTimeout < 0:
		return nil, fmt.Errorf("ideserver: DiagnosticsOptions.SettleTimeout is negative (%v)", o.SettleTimeout)
	case o.MaxFiles < 0:
		return nil, fmt.Errorf("ideserver: DiagnosticsOptions.MaxFiles is negative (%d)", o.MaxFiles)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	folder := srv.cfg.folders[0]
	configs := o.Configs
	if configs == nil {
		gopls, err := lsp.FindGopls(func(k string) string { return env.Get(o.Env, k) })
		if err != nil {
			return nil, fmt.Errorf("ideserver: diagnostics for .go files: %w", err)
		}
		cfg := lsp.GoplsConfig(gopls, folder)
		// gopls holds its analysis pass back for diagnosticsDelay (1 s)
		// after a change, and Settle waits for that pass: an IDE asked
		// right after a write should not idle that second.
		cfg.InitializationOptions = json.RawMessage(`{"verboseWorkDoneProgress":true,"diagnosticsDelay":"0s"}`)
		configs = []lsp.ServerConfig{cfg}
	}
	maxFiles := cmp.Or(o.MaxFiles, lsp.DefaultMaxOpenDocuments)
	// The registry hands out whole sets: no limit short of absurd, and
	// every severity (getDiagnostics reports what the IDE shows). It
	// remembers at least every open file's last publish.
	reg, err := lspdiag.NewRegistry(&lspdiag.RegistryOptions{
		MaxPerPublish: 100_000,
		MaxPerFile:    100_000,
		MaxTotal:      1 << 30,
		MaxDocuments:  max(maxFiles, lspdiag.DefaultMaxDocuments),
		Logger:        log,
	})
	if err != nil {
		return nil, fmt.Errorf("ideserver: diagnostics: %w", err)
	}
	mgr, err := lsp.NewManager(configs, &lsp.ManagerOptions{
		Registry:         reg,
		ProjectDir:       folder,
		MaxOpenDocuments: maxFiles,
		SettleTimeout:    o.SettleTimeout,
		WaitForProgress:  true,
		Env:              o.Env,
		ClientName:       "idebridge-ideserver",
		Logger:           log,
	})
	if err != nil {
		return nil, fmt.Errorf("ideserver: diagnostics: %w", err)
	}
	for _, p := range mgr.Problems() {
		log.Warn("language server configuration", "problem", p)
	}
	return &Diagnostics{
		srv:      srv,
		mgr:      mgr,
		log:      log,
		maxFiles: maxFiles,
		docs:     map[string]*docDiags{},
	}, nil
}

// Tool returns the getDiagnostics tool, to pass to Server.RegisterTool.
func (d *Diagnostics) Tool() Tool {
	return Tool{
		Tool: mcp.Tool{
			Name:        mcp.ToolGetDiagnostics,
			Description: "Get language diagnostics (errors, warnings) from the editor's language servers",
			InputSchema: schema(`"uri":{"type":"string","description":"Optional file URI to get diagnostics for. If not provided, gets diagnostics for all open files."}`),
		},
		Handler: d.handle,
	}
}

// Manager returns the language server manager, for status (Servers,
// Problems). Do not drain its registry.
func (d *Diagnostics) Manager() *lsp.Manager { return d.mgr }

// Close stops the language servers (see lsp.Manager.Shutdown). Close
// the Server first, so that no call is running. Close is idempotent.
func (d *Diagnostics) Close(ctx context.Context) error {
	if err := d.mgr.Shutdown(ctx); err != nil {
		return fmt.Errorf("ideserver: stopping language servers: %w", err)
	}
	return nil
}

// FileReport is one file's diagnostics as Check found them.
type FileReport struct {
	// Path is the file's absolute path.
	Path string
	// Server is the server that serves the file; "" when none does (the
	// file then has no diagnostics, as an editor shows none).
	Server string
	// Diagnostics is the file's complete current set (not only what is
	// new), sorted by severity, then position.
	Diagnostics []diag.Diagnostic
	// Settle says how the diagnostics were known to be current, or that
	// they could not be (Settle.Freshness.Fresh() false: the server did
	// not finish in time and Diagnostics is what it had).
	Settle lsp.SettleResult
	// Err is why the file has no report: it lies outside the workspace
	// folders (an *mcp.Error, as getDiagnostics answers), it cannot be
	// read (fs.ErrNotExist for a missing file; not a regular file; too
	// large), or its server failed.
	Err error
}

// Check is getDiagnostics for Go callers, for several files at once: it
// brings each file in paths (absolute, or relative to the server's first
// workspace folder) up to date with the disk in its servers, waits for
// their diagnostics, and returns one report per path, in order, with the
// file's complete current diagnostics and how they were known. The files
// count as asked about (getDiagnostics without a uri answers for them).
// The error is ctx's when it ended; each file's own failure is in its
// report. Calls run side by side, with each other and with getDiagnostics.
func (d *Diagnostics) Check(ctx context.Context, paths []string) ([]FileReport, error) {
	reports := make([]FileReport, len(paths))
	var targets []string
	var which []int
	for i, p := range paths {
		abs, err := d.srv.resolvePath(p)
		if err != nil {
			abs = p
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(d.srv.cfg.folders[0], abs)
			}
		}
		reports[i] = FileReport{Path: abs, Err: err}
		if err == nil {
			targets = append(targets, abs)
			which = append(which, i)
		}
	}
	d.mu.Lock()
	for _, p := range targets {
		d.remember(p)
	}
	d.mu.Unlock()
	sets, settled, errs := d.refresh(ctx, targets)
	d.mu.Lock()
	d.prune("")
	d.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for j, i := range which {
		r := &reports[i]
		r.Diagnostics, r.Settle, r.Err = slices.Clone(sets[j]), settled[j], errs[j]
		r.Server = settled[j].Server
		if r.Server == "" && r.Err == nil {
			if name, err := d.mgr.ServerFor(r.Path); err == nil {
				r.Server = name
			}
		}
	}
	return reports, nil
}

// wireFileDiagnostics and wireDiagnostic are the deployed answer's shape.
type wireFileDiagnostics struct {
	URI         string           `json:"uri"`
	Diagnostics []wireDiagnostic `json:"diagnostics"`
}

type wireDiagnostic struct {
	Message  string     `json:"message"`
	Severity string     `json:"severity"`
	Source   string     `json:"source,omitempty"`
	Code     string     `json:"code,omitempty"`
	Range    diag.Range `json:"range"`
}

func (d *Diagnostics) handle(ctx context.Context, call *ToolCall) (*mcp.ToolResult, error) {
	var a struct {
		URI string `json:"uri"`
	}
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	var target string
	if a.URI != "" {
		if strings.Contains(a.URI, ":") && !strings.HasPrefix(a.URI, "file:") && !filepath.IsAbs(a.URI) {
			return nil, invalidParams("uri %q is not a file URI", a.URI)
		}
		p, err := d.srv.resolvePath(a.URI)
		if err != nil {
			return nil, err
		}
		target = p
	}
	var targets []string
	d.mu.Lock()
	if target != "" {
		d.remember(target)
		targets = []string{target}
	} else {
		targets = d.known()
	}
	d.mu.Unlock()
	sets, _, errs := d.refresh(ctx, targets)
	d.mu.Lock()
	d.prune(target)
	d.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := []wireFileDiagnostics{}
	for i, p := range targets {
		if err := errs[i]; err != nil {
			if target == "" {
				d.log.Debug("getDiagnostics: leaving a file out", "path", p, "err", err)
				continue
			}
			if errors.Is(err, fs.ErrNotExist) {
				return nil, &mcp.Error{Code: mcp.CodeFileNotOpen, Message: "File not found", Data: mustJSON("Cannot get diagnostics of " + p + ": it does not exist")}
			}
			return nil, fmt.Errorf("getting diagnostics of %s: %w", p, err)
		}
		if target == "" && len(sets[i]) == 0 {
			continue
		}
		f := wireFileDiagnostics{URI: fileuri.FromPath(p), Diagnostics: make([]wireDiagnostic, len(sets[i]))}
		for j, dg := range sets[i] {
			f.Diagnostics[j] = wireDiagnostic{Message: dg.Message, Severity: dg.Severity.String(), Source: dg.Source, Code: dg.Code, Range: dg.Range}
		}
		out = append(out, f)
	}
	return JSONResult(out)
}

// remember records p as asked about, most recent last. d.mu is held.
func (d *Diagnostics) remember(p string) {
	d.asked = slices.DeleteFunc(d.asked, func(q string) bool { return q == p })
	d.asked = append(d.asked, p)
	if len(d.asked) > d.maxFiles {
		for _, old := range d.asked[:len(d.asked)-d.maxFiles] {
			delete(d.docs, old)
		}
		d.asked = slices.Delete(d.asked, 0, len(d.asked)-d.maxFiles)
	}
}

// known returns the files getDiagnostics without a uri answers for: those
// opened in the editor and those asked about, the most recent maxFiles,
// sorted. d.mu is held.
func (d *Diagnostics) known() []string {
	all := append(d.srv.ed.openFiles(), d.asked...)
	seen := map[string]bool{}
	var out []string
	for i := len(all) - 1; i >= 0 && len(out) < d.maxFiles; i-- {
		if p := all[i]; !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// prune forgets the sets of files no longer answered for (fallen out of
// the most recent maxFiles), so that a long session stays bounded. d.mu
// is held.
func (d *Diagnostics) prune(target string) {
	keep := map[string]bool{target: true}
	for _, p := range d.known() {
		keep[p] = true
	}
	for p := range d.docs {
		if !keep[p] {
			delete(d.docs, p)
		}
	}
}

// refresh brings every target up to date with the disk and returns each
// one's complete diagnostic set, or why it has none. It takes d.mu only
// between the waits, so that calls run side by side.
func (d *Diagnostics) refresh(ctx context.Context, targets []string) ([][]diag.Diagnostic, []lsp.SettleResult, []error) {
	sets := make([][]diag.Diagnostic, len(targets))
	settled := make([]lsp.SettleResult, len(targets))
	errs := make([]error, len(targets))
	texts := make([]string, len(targets))
	served := make([]bool, len(targets))
	// The sets this call fills, even if another call prunes them from
	// d.docs meanwhile.
	sts := make([]*docDiags, len(targets))
	for i, p := range targets {
		b, err := d.srv.readRegular(p, d.srv.cfg.MaxMessageSize)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				d.forget(ctx, p)
			}
			errs[i] = err
			continue
		}
		texts[i] = string(b)
		server, err := d.mgr.ServerFor(p)
		if errors.Is(err, lsp.ErrNoServer) {
			continue // no server: no diagnostics, as an editor shows none
		}
		if err != nil {
			errs[i] = err
			continue
		}
		d.mu.Lock()
		st := d.docs[p]
		if st == nil {
			st = &docDiags{server: server, uri: fileuri.FromPath(p)}
			d.docs[p] = st
		}
		sts[i] = st
		d.mu.Unlock()
		// Opens the file, or sends its text when it changed on disk;
		// nothing when the server has it already.
		if errs[i] = d.mgr.Change(ctx, p, texts[i]); errs[i] == nil {
			served[i] = true
		}
	}
	d.settle(ctx, targets, served, settled, errs)

	// A set is complete when it comes from the last publish the registry
	// saw for the document. Otherwise a publish was missed (it arrived
	// while the registry was being reset): reopen the file, which makes
	// its server publish the whole set again.
	var again []bool
	d.mu.Lock()
	d.drain(sts)
	for i, p := range targets {
		if served[i] && errs[i] == nil && !d.current(sts[i]) {
			if again == nil {
				again = make([]bool, len(targets))
			}
			d.log.Debug("getDiagnostics: reopening a file whose diagnostics were missed", "path", p)
			sts[i].diags, sts[i].seq = nil, 0
			again[i] = true
		}
	}
	d.mu.Unlock()
	if again != nil {
		for i, p := range targets {
			if again[i] {
				_ = d.mgr.Close(ctx, p)
				errs[i] = d.mgr.Change(ctx, p, texts[i])
				again[i] = errs[i] == nil
			}
		}
		d.settle(ctx, targets, again, settled, errs)
		d.mu.Lock()
		d.drain(sts)
		d.mu.Unlock()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range targets {
		if served[i] && errs[i] == nil {
			sets[i] = sts[i].diags
		}
	}
	return sets, settled, errs
}

// settle waits for the diagnostics of every target marked in which.
func (d *Diagnostics) settle(ctx context.Context, targets []string, which []bool, settled []lsp.SettleResult, errs []error) {
	waits := 0
	for i := range targets {
		if which[i] && errs[i] == nil {
			waits++
		}
	}
	done := 0
	for i, p := range targets {
		if !which[i] || errs[i] != nil {
			continue
		}
		// The wait for a language server's analysis may take seconds (a
		// module loading): the client that asked for progress sees it.
		ReportProgress(ctx, float64(done), float64(waits), "waiting for the language server's analysis of "+filepath.Base(p))
		done++
		res, err := d.mgr.Settle(ctx, p)
		settled[i] = res
		if err != nil {
			errs[i] = err
			continue
		}
		if !res.Freshness.Fresh() {
			d.log.Debug("getDiagnostics: the language server did not finish in time; answering what it has", "path", p, "freshness", res.Freshness)
		}
	}
}

// drain takes every pending publish from the registry into the known
// sets: those of d.docs and those a running call holds (extra). The
// registry delivers each diagnostic once (it is built for a turn loop);
// resetting each drained document right away makes its next publish
// deliver the whole set again, so a drained document always yields its
// complete current set. d.mu is held.
func (d *Diagnostics) drain(extra []*docDiags) {
	reg := d.mgr.Registry()
	byURI := make(map[string][]*docDiags, len(d.docs)+len(extra))
	seen := make(map[*docDiags]bool, len(d.docs)+len(extra))
	for _, st := range slices.Concat(slices.Collect(maps.Values(d.docs)), extra) {
		if st != nil && !seen[st] {
			seen[st] = true
			byURI[st.uri] = append(byURI[st.uri], st)
		}
	}
	pre := make(map[*docDiags]uint64, len(seen))
	for st := range seen {
		pre[st] = lastSeq(reg, st)
	}
	att, _ := d.mgr.Drain()
	drained := map[string]bool{}
	if att != nil {
		for _, note := range att.Notes {
			d.log.Debug("getDiagnostics: language server note", "note", note)
		}
		for _, f := range att.Files {
			reg.Reset(f.URI)
			drained[f.URI] = true
			for _, st := range byURI[f.URI] {
				st.diags, st.seq = f.Diagnostics, pre[st]
			}
		}
	}
	for st := range seen {
		if drained[st.uri] || pre[st] == st.seq {
			continue
		}
		// A publish that delivered nothing: a clean file, or the document
		// was closed (its publishes forgotten).
		if lp, ok := reg.LastPublish(st.server, st.uri); !ok || lp.Count == 0 {
			st.diags, st.seq = nil, pre[st]
		}
	}
}

// current reports whether st comes from the last publish for its
// document. d.mu is held.
func (d *Diagnostics) current(st *docDiags) bool {
	return st != nil && lastSeq(d.mgr.Registry(), st) == st.seq
}

func lastSeq(reg *lspdiag.Registry, st *docDiags) uint64 {
	if lp, ok := reg.LastPublish(st.server, st.uri); ok {
		return lp.Seq
	}
	return 0
}

// forget closes a file that no longer exists.
func (d *Diagnostics) forget(ctx context.Context, p string) {
	d.mu.Lock()
	_, open := d.docs[p]
	delete(d.docs, p)
	d.asked = slices.DeleteFunc(d.asked, func(q string) bool { return q == p })
	d.mu.Unlock()
	if open {
		_ = d.mgr.Close(ctx, p)
	}
}
