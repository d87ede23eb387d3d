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
	"sync/atomic"
	"time"

	"github.com/idebridge/idebridge/internal/env"
	"github.com/idebridge/idebridge/internal/fileuri"
	"github.com/idebridge/idebridge/mcp"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/lsp"

	"github.com/idebridge/idebridge/lspdiag"
)

// Defaults of DiagnosticsOptions.
const (
	// DefaultMaxDiagnosticsPerFile is lspdiag's own bound on what one
	// publish keeps: far above what a model is shown of a file (10 per
	// file, 30 in all), so that an agent comparing a file's diagnostics
	// before and after an edit compares whole sets for any file with
	// fewer.
	DefaultMaxDiagnosticsPerFile = lspdiag.DefaultMaxPerPublish
	// DefaultAnswerTimeout answers getDiagnostics within the deadline
	// agents give the call (one was seen giving up after 8 s), while
	// leaving a cold gopls time to diagnose a small module.
	DefaultAnswerTimeout = 5 * time.Second
)

// DiagnosticsOptions configure NewDiagnostics. A nil *DiagnosticsOptions,
// and every zero field, means the documented default; a negative
// SettleTimeout, MaxFiles or MaxDiagnosticsPerFile is rejected
// (NewDiagnostics returns an error naming it).
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
	// MaxDiagnosticsPerFile bounds the diagnostics kept and answered for
	// one file, so that memory stays bounded whatever a server publishes:
	// a file with more keeps the most severe (then by position), and its
	// true count is reported (FileReport.Total; in getDiagnostics, a
	// note such as "100000 diagnostics, the 1000 most severe shown").
	// Default DefaultMaxDiagnosticsPerFile (1,000).
	MaxDiagnosticsPerFile int
	// AnswerTimeout bounds one getDiagnostics call: when it is up, the
	// call answers with what the servers have reported so far, and each
	// file they had not finished with carries a note ("diagnostics may be
	// incomplete: gopls had not finished analysing it after 5s"), as an
	// editor answers at once with what it has. A server that never
	// finishes (gopls whose go list blocks on a FIFO in the workspace)
	// then costs each call this long, never the client's deadline.
	// Default DefaultAnswerTimeout (5 s); negative means no bound of its
	// own (SettleTimeout and the call's context still bound it). Check is
	// bounded by SettleTimeout and its context only.
	AnswerTimeout time.Duration
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
// WaitForProgress: gopls's analysis results too) or the call's own bound
// (DiagnosticsOptions.AnswerTimeout) comes, and answers the deployed JSON
// shape:
//
//	[{"uri":"file:///p/main.go","diagnostics":[{"message":"undefined: x",
//	  "severity":"Error","source":"compiler","code":"UndeclaredName",
//	  "range":{"start":{"line":3,"character":9},"end":{...}}}]}]
//
// with severities as strings ("Error", "Warning", "Information", "Hint")
// and columns in characters. A file whose answer leaves something out
// has a "note" member beside its diagnostics, which clients that do not
// know it ignore: its servers had not finished with it when the bound
// came ("diagnostics may be incomplete: gopls had not finished analysing
// it after 5s"), or it has more than MaxDiagnosticsPerFile ("100000
// diagnostics, the 1000 most severe shown"). A file no server serves
// answers an empty list; a file that does not exist answers -32001, and
// one that is not a regular file (a FIFO, a device) or is over
// Options.MaxMessageSize is an error, never waited on. Calls run side by
// side: one waiting for a slow language server holds up no other.
// Diagnostics owns its lsp.Manager: nothing else may drain it.
type Diagnostics struct {
	srv      *Server
	mgr      *lsp.Manager
	log      *slog.Logger
	maxFiles int
	maxDiags int
	answer   time.Duration // the bound of a getDiagnostics call; <= 0: none

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
	diags  []diag.Diagnostic // at most maxDiags, the most severe
	total  int               // the distinct diagnostics of the set, those left out included
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
	case o.MaxDiagnosticsPerFile < 0:
		return nil, fmt.Errorf("ideserver: DiagnosticsOptions.MaxDiagnosticsPerFile is negative (%d)", o.MaxDiagnosticsPerFile)
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
	maxDiags := cmp.Or(o.MaxDiagnosticsPerFile, DefaultMaxDiagnosticsPerFile)
	answer := cmp.Or(o.AnswerTimeout, DefaultAnswerTimeout)
	// The registry hands out whole sets, up to maxDiags a file, with the
	// count of what it leaves out, and every severity (getDiagnostics
	// reports what the IDE shows). What it keeps pending, and what the
	// known sets hold, is then bounded by maxDiags a file whatever a
	// server publishes. It remembers at least every open file's last
	// publish.
	reg, err := lspdiag.NewRegistry(&lspdiag.RegistryOptions{
		MaxPerPublish: maxDiags,
		MaxPerFile:    maxDiags,
		MaxTotal:      -1, // no limit: bounded by maxDiags a pending file
		MaxDocuments:  max(maxFiles, lspdiag.DefaultMaxDocuments),
		Logger:        log,
	})
	if err != nil {
		return nil, fmt.Errorf("ideserver: diagnostics: %w", err)
	}
	mgr, err := lsp.NewManager(configs, &lsp.ManagerOptions{
		Registry:         reg,
		ProjectDir:       folder,
		Roots:            srv.WorkspaceFolders(), // a rename on this manager (idebridge mcp) writes only in the workspace
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
		maxDiags: maxDiags,
		answer:   answer,
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
	// new), sorted by severity, then position; at most
	// DiagnosticsOptions.MaxDiagnosticsPerFile, the most severe.
	Diagnostics []diag.Diagnostic
	// Total is how many distinct diagnostics the file has, those
	// MaxDiagnosticsPerFile left out of Diagnostics included.
	Total int
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
	states := d.refresh(ctx, targets)
	d.mu.Lock()
	d.prune("")
	d.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for j, i := range which {
		r := &reports[i]
		st := &states[j]
		r.Diagnostics, r.Total, r.Settle, r.Err = slices.Clone(st.set), st.total, st.settled, st.err
		r.Server = st.settled.Server
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
	// Note says what the diagnostics leave out: a file over
	// MaxDiagnosticsPerFile, or a server that had not finished. Clients
	// that do not know the member ignore it.
	Note string `json:"note,omitempty"`
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
	// The call's own bound: what the servers have not finished by then
	// is answered as it stands, with a note.
	start := time.Now()
	wctx := ctx
	if d.answer > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeoutCause(ctx, d.answer, errAnswerDue)
		defer cancel()
	}
	states := d.refresh(wctx, targets)
	waited := time.Since(start).Round(100 * time.Millisecond)
	d.mu.Lock()
	d.prune(target)
	d.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := []wireFileDiagnostics{}
	for i, p := range targets {
		st := &states[i]
		if err := st.err; err != nil {
			if target == "" {
				d.log.Debug("getDiagnostics: leaving a file out", "path", p, "err", err)
				continue
			}
			if errors.Is(err, fs.ErrNotExist) {
				return nil, &mcp.Error{Code: mcp.CodeFileNotOpen, Message: "File not found", Data: mustJSON("Cannot get diagnostics of " + p + ": it does not exist")}
			}
			return nil, fmt.Errorf("getting diagnostics of %s: %w", p, err)
		}
		var notes []string
		if st.total > len(st.set) {
			notes = append(notes, fmt.Sprintf("%d diagnostics, the %d most severe shown", st.total, len(st.set)))
		}
		if st.unfinished != "" {
			notes = append(notes, st.unfinished+" after "+waited.String())
			d.log.Debug("getDiagnostics: answering before the language server finished", "path", p, "waited", waited, "reason", st.settled.Reason)
		}
		if target == "" && len(st.set) == 0 && len(notes) == 0 {
			continue
		}
		f := wireFileDiagnostics{URI: fileuri.FromPath(p), Diagnostics: make([]wireDiagnostic, len(st.set)), Note: strings.Join(notes, "; ")}
		for j, dg := range st.set {
			f.Diagnostics[j] = wireDiagnostic{Message: dg.Message, Severity: dg.Severity.String(), Source: dg.Source, Code: dg.Code, Range: dg.Range}
		}
		out = append(out, f)
	}
	return JSONResult(out)
}

// errAnswerDue is the cause of the end of a getDiagnostics call's own
// bound (DiagnosticsOptions.AnswerTimeout).
var errAnswerDue = errors.New("getDiagnostics answers with what it has")

// answerDue reports whether ctx ended because the call's own bound came,
// rather than because its caller gave up.
func answerDue(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errAnswerDue)
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

// fileState is what refresh found for one target.
type fileState struct {
	set     []diag.Diagnostic // the complete current set, at most maxDiags
	total   int               // the distinct diagnostics of the set, those left out included
	settled lsp.SettleResult
	err     error
	// unfinished says, when the servers had not finished with the file
	// (SettleTimeout, or the call's own bound), that set may be
	// incomplete: "diagnostics may be incomplete: gopls had not finished
	// analysing it".
	unfinished string
}

// refresh brings every target up to date with the disk and returns each
// one's complete diagnostic set, or why it has none. It takes d.mu only
// between the waits, so that calls run side by side. When ctx ends by the
// call's own bound (answerDue), a file its servers had not finished with
// gets what they reported so far, marked unfinished.
func (d *Diagnostics) refresh(ctx context.Context, targets []string) []fileState {
	states := make([]fileState, len(targets))
	texts := make([]string, len(targets))
	served := make([]bool, len(targets))
	// The sets this call fills, even if another call prunes them from
	// d.docs meanwhile.
	sts := make([]*docDiags, len(targets))
	for i, p := range targets {
		fst := &states[i]
		b, err := d.srv.readRegular(p, d.srv.cfg.MaxMessageSize)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				d.forget(ctx, p)
			}
			fst.err = err
			continue
		}
		texts[i] = string(b)
		server, err := d.mgr.ServerFor(p)
		if errors.Is(err, lsp.ErrNoServer) {
			continue // no server: no diagnostics, as an editor shows none
		}
		if err != nil {
			fst.err = err
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
		switch err := d.mgr.Change(ctx, p, texts[i]); {
		case err == nil:
			served[i] = true
		case answerDue(ctx):
			// The server is still starting (or waiting to restart): what
			// is known of the file is all there is.
			fst.settled = lsp.SettleResult{Path: p, Server: server, Freshness: lsp.FreshTimedOut, Reason: err.Error()}
			fst.unfinished = fmt.Sprintf("diagnostics unknown: %s was not ready for it", server)
		default:
			fst.err = err
		}
	}
	d.settle(ctx, targets, served, states)

	// A set is complete when it comes from the last publish the registry
	// saw for the document. Otherwise a publish was missed (it arrived
	// while the registry was being reset): reopen the file, which makes
	// its server publish the whole set again.
	var again []bool
	d.mu.Lock()
	d.drain(sts)
	for i, p := range targets {
		if served[i] && states[i].err == nil && !d.current(sts[i]) {
			if again == nil {
				again = make([]bool, len(targets))
			}
			d.log.Debug("getDiagnostics: reopening a file whose diagnostics were missed", "path", p)
			sts[i].diags, sts[i].total, sts[i].seq = nil, 0, 0
			again[i] = true
		}
	}
	d.mu.Unlock()
	if again != nil {
		for i, p := range targets {
			if again[i] {
				_ = d.mgr.Close(ctx, p)
				err := d.mgr.Change(ctx, p, texts[i])
				if err != nil && answerDue(ctx) {
					states[i].unfinished = fmt.Sprintf("diagnostics unknown: %s was not ready for it", sts[i].server)
					err = nil
				} else {
					states[i].err = err
				}
				again[i] = err == nil && states[i].unfinished == ""
			}
		}
		d.settle(ctx, targets, again, states)
		d.mu.Lock()
		d.drain(sts)
		d.mu.Unlock()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range targets {
		if sts[i] == nil || states[i].err != nil {
			continue
		}
		states[i].set, states[i].total = sts[i].diags, sts[i].total
		if states[i].unfinished != "" && sts[i].seq == 0 && lastSeq(d.mgr.Registry(), sts[i]) == 0 {
			// Nothing was ever published for it: not even a partial set.
			states[i].unfinished = fmt.Sprintf("diagnostics unknown: %s had not reported any for it", sts[i].server)
		}
	}
	return states
}

// settle waits for the diagnostics of every target marked in which, side
// by side, so that one slow file does not use up the others' time. The
// wait for a language server's analysis may take seconds (a module
// loading): a client that asked for progress sees each file settle.
func (d *Diagnostics) settle(ctx context.Context, targets []string, which []bool, states []fileState) {
	waits := 0
	for i := range targets {
		if which[i] && states[i].err == nil {
			waits++
		}
	}
	var done atomic.Int64
	ReportProgress(ctx, 0, float64(waits), "waiting for the language servers' analysis")
	var wg sync.WaitGroup
	for i, p := range targets {
		if !which[i] || states[i].err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			fst := &states[i]
			defer func() {
				ReportProgress(ctx, float64(done.Add(1)), float64(waits), "analysed "+filepath.Base(p))
			}()
			res, err := d.mgr.Settle(ctx, p)
			fst.settled = res
			if err != nil && !answerDue(ctx) {
				fst.err = err
				return
			}
			if !res.Freshness.Fresh() {
				fst.unfinished = fmt.Sprintf("diagnostics may be incomplete: %s had not finished analysing it", res.Server)
				d.log.Debug("getDiagnostics: the language server did not finish in time; answering what it has", "path", p, "freshness", res.Freshness, "reason", res.Reason)
			}
		}()
	}
	wg.Wait()
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
				st.diags, st.total, st.seq = f.Diagnostics, len(f.Diagnostics)+f.Cut, pre[st]
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
			st.diags, st.total, st.seq = nil, 0, pre[st]
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
