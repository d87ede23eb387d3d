package lsp

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idebridge/idebridge/lspdiag"

	"github.com/idebridge/idebridge/internal/fileuri"
	"github.com/idebridge/idebridge/internal/safefile"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Defaults of ManagerOptions.
const (
	DefaultMaxOpenDocuments = 50
	DefaultQuietPeriod      = 50 * time.Millisecond
	DefaultSettleTimeout    = 10 * time.Second
	DefaultStartupTimeout   = 30 * time.Second
	DefaultShutdownTimeout  = 5 * time.Second
	DefaultRestartBackoff   = time.Second
	DefaultRetryBackoff     = 500 * time.Millisecond
	DefaultWriteTimeout     = 30 * time.Second
	DefaultClientName       = "idebridge"
)

// maxRestartDelay caps the exponential restart backoff.
const maxRestartDelay = 30 * time.Second

// ManagerOptions configures a Manager. A nil *ManagerOptions, and any field
// left at its zero value, means the default. A negative number or duration
// is rejected by NewManager with an error naming the field, unless the
// field says that negative means off.
type ManagerOptions struct {
	// Registry receives the servers' diagnostics; nil means a new
	// registry with the default options (remembering at least
	// MaxOpenDocuments documents), available from Manager.Registry.
	Registry *lspdiag.Registry
	// ProjectDir is CLAUDE_PROJECT_DIR for servers whose configuration
	// does not name one, and their default workspace folder. Default: the
	// current directory.
	ProjectDir string
	// Roots are the project's roots: the directories the manager writes
	// in (ApplyRename), symbolic links resolved. A rename with a file
	// outside them (a module replaced by ../lib, a file reached through a
	// link out of the project) is refused whole, naming those files,
	// before anything is written. Default: ProjectDir alone. To allow
	// writes anywhere, give the file system's root ("/").
	Roots []string
	// MaxOpenDocuments bounds the documents kept open in servers; the
	// least recently used one is closed (didClose) to make room. Default
	// 50.
	MaxOpenDocuments int
	// SafeMode starts no server at all: document operations return
	// ErrSafeMode.
	SafeMode bool
	// QuietPeriod is the shortest silence Settle waits for where silence
	// is the only signal: after the publish that answered a change from a
	// server that sends no document versions (Settle then waits longer
	// for a server measured to publish in several steps, or slowly), and
	// after the reactions to other documents' changes. Silence alone never
	// settles a document the server has not published for. Default 50 ms.
	QuietPeriod time.Duration
	// SettleTimeout bounds one Settle (ctx may end it sooner). Default
	// 10 s.
	SettleTimeout time.Duration
	// WaitForProgress makes Settle wait for a server's work-done progress
	// to end even after a publish for the document's version (gopls
	// publishes analysis results after type errors). For one-shot use.
	WaitForProgress bool
	// StartupTimeout and ShutdownTimeout apply to servers whose
	// configuration sets none. Defaults 30 s and 5 s.
	StartupTimeout  time.Duration
	ShutdownTimeout time.Duration
	// RestartBackoff is the delay before the first restart after a crash;
	// each further restart waits twice as long (at most 30 s). Default 1 s.
	RestartBackoff time.Duration
	// RetryBackoff is the delay before the first retry of a request
	// answered with ContentModified; it doubles for each of the up to 3
	// retries. Default 500 ms.
	RetryBackoff time.Duration
	// WriteTimeout bounds one write to a server's stdin; a server that
	// stops reading for that long is treated as crashed. Default 30 s.
	WriteTimeout time.Duration
	// ClientName and ClientVersion identify the client in initialize.
	// Default name "idebridge".
	ClientName    string
	ClientVersion string
	// LoadWait bounds how long a navigation request (Definition,
	// References, ...) waits for a server that is still loading the
	// workspace before it asks anyway; the answer then says that it may be
	// incomplete. Default DefaultLoadWait (30 s); negative: do not wait.
	LoadWait time.Duration
	// Env is the base environment of server processes, in os.Environ
	// form; nil means the process's own.
	Env []string
	// Logger receives the servers' log messages and the manager's
	// warnings. Nil is silent.
	Logger *slog.Logger
	// OnEvent, when set, is told what the servers are doing, for a
	// progress display: a start beginning and ending, and the servers'
	// work-done progress (a workspace load with its percentage). It is
	// called on the manager's goroutines, possibly concurrently, with no
	// lock held; it must return quickly.
	OnEvent func(Event)
}

// EventKind says what an Event reports.
type EventKind string

// The kinds of Event.
const (
	// EventStarting: a server process is being started and initialized.
	EventStarting EventKind = "starting"
	// EventRunning: the server answered initialize and is in use.
	EventRunning EventKind = "running"
	// EventFailed: the start failed (Err says why).
	EventFailed EventKind = "failed"
	// EventProgress: the server's work-done progress began, reported or
	// ended (Progress says which).
	EventProgress EventKind = "progress"
)

// Event is one thing a server did, as ManagerOptions.OnEvent receives it.
type Event struct {
	// Server is the server's name.
	Server string
	Kind   EventKind
	// Progress is "begin", "report" or "end" for EventProgress.
	Progress string
	// Token identifies the work-done progress (as the server sent it).
	Token string
	// Title and Message are the progress's words, as the server sent
	// them (a report repeats no title).
	Title, Message string
	// Percentage is the progress's percentage, or -1 when the server
	// gave none.
	Percentage int
	// Err is the failure, for EventFailed.
	Err error
}

// ErrInvalidOptions is matched (errors.Is) by the error NewManager returns
// for options it cannot use.
var ErrInvalidOptions = errors.New("invalid manager options")

// withDefaults checks o and fills in the defaults of its zero fields.
func (o ManagerOptions) withDefaults() (ManagerOptions, error) {
	var bad []error
	negative := func(name string, v int64) {
		if v < 0 {
			bad = append(bad, fmt.Errorf("%s is negative (%d); use 0 for the default", name, v))
		}
	}
	negativeDur := func(name string, d time.Duration) {
		if d < 0 {
			bad = append(bad, fmt.Errorf("%s is negative (%v); use 0 for the default", name, d))
		}
	}
	negative("MaxOpenDocuments", int64(o.MaxOpenDocuments))
	negativeDur("QuietPeriod", o.QuietPeriod)
	negativeDur("SettleTimeout", o.SettleTimeout)
	negativeDur("StartupTimeout", o.StartupTimeout)
	negativeDur("ShutdownTimeout", o.ShutdownTimeout)
	negativeDur("RestartBackoff", o.RestartBackoff)
	negativeDur("RetryBackoff", o.RetryBackoff)
	negativeDur("WriteTimeout", o.WriteTimeout)
	if len(bad) > 0 {
		return o, fmt.Errorf("%w: %w", ErrInvalidOptions, errors.Join(bad...))
	}
	setDefault(&o.MaxOpenDocuments, DefaultMaxOpenDocuments)
	setDefault(&o.QuietPeriod, DefaultQuietPeriod)
	setDefault(&o.SettleTimeout, DefaultSettleTimeout)
	setDefault(&o.StartupTimeout, DefaultStartupTimeout)
	setDefault(&o.ShutdownTimeout, DefaultShutdownTimeout)
	setDefault(&o.RestartBackoff, DefaultRestartBackoff)
	setDefault(&o.RetryBackoff, DefaultRetryBackoff)
	setDefault(&o.WriteTimeout, DefaultWriteTimeout)
	setDefault(&o.ClientName, DefaultClientName)
	setDefault(&o.LoadWait, DefaultLoadWait)
	if o.ProjectDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return o, fmt.Errorf("%w: no ProjectDir and no current directory: %w", ErrInvalidOptions, err)
		}
		o.ProjectDir = wd
	} else if abs, err := filepath.Abs(o.ProjectDir); err == nil {
		o.ProjectDir = abs
	}
	if len(o.Roots) == 0 {
		o.Roots = []string{o.ProjectDir}
	} else {
		roots := make([]string, len(o.Roots))
		for i, r := range o.Roots {
			abs, err := filepath.Abs(r)
			if r == "" || err != nil {
				return o, fmt.Errorf("%w: Roots[%d] is %q, not a directory", ErrInvalidOptions, i, r)
			}
			roots[i] = abs
		}
		o.Roots = roots
	}
	return o, nil
}

// Manager starts and supervises the language servers of a set of
// configurations, keeps the documents an agent touches in sync with them,
// and feeds their diagnostics into a Registry.
//
// Servers start lazily, on the first operation on a file they serve. A
// Manager is safe for concurrent use; operations on documents of one server
// are sent in the order they are made.
type Manager struct {
	opts ManagerOptions
	log  *slog.Logger
	reg  *lspdiag.Registry

	mu       sync.Mutex
	closed   bool
	servers  []*server
	routes   []route // longest extension first
	problems []error
	docs     *simplelru.LRU[string, *document]
	closing  map[string]*document // evicted from docs, didClose not yet sent
	versions map[string]int       // uri -> last version used
	notes    map[string]string    // path or server -> note for the next Drain
	noteLog  noteLog              // the latest notes, for Drainers

	// edit is held by the one EditSet staged on the manager (capacity 1).
	edit chan struct{}
}

// route sends files whose name ends in ext (lower case) to srv.
type route struct {
	ext  string
	lang string
	srv  *server
}

// document is a file open in a server.
type document struct {
	path, uri, lang string
	srv             *server
	dirty           atomic.Bool // synced since the last Settle or Drain

	// Guarded by srv.syncMu.
	version int
	text    string
	openOn  *instance // the instance the document is open in, if any
	closed  bool
	// The file on disk as last seen, to tell a change by someone else.
	stamp   fileStamp
	diskSum uint64
}

// NewManager returns a manager for configs (see LoadPlugins). Extension
// conflicts are resolved as ResolveConflicts does and reported by
// Problems. No server starts until a file needs it. Options it cannot use
// (a negative number or duration) give an error matching
// ErrInvalidOptions, and no manager.
func NewManager(configs []ServerConfig, opts *ManagerOptions) (*Manager, error) {
	var o ManagerOptions
	if opts != nil {
		o = *opts
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Manager{
		opts:     o,
		log:      o.Logger,
		reg:      o.Registry,
		closing:  map[string]*document{},
		versions: map[string]int{},
		notes:    map[string]string{},
		edit:     make(chan struct{}, 1),
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.reg == nil {
		// The registry remembers versions for at least the open documents.
		// Options in range: NewRegistry cannot fail.
		m.reg, _ = lspdiag.NewRegistry(&lspdiag.RegistryOptions{MaxDocuments: max(o.MaxOpenDocuments, lspdiag.DefaultMaxDocuments)})
	}
	docs, err := simplelru.NewLRU(o.MaxOpenDocuments, func(path string, d *document) {
		m.closing[path] = d // sent by whoever holds the server's syncMu next
	})
	if err != nil { // withDefaults rules out a size below 1
		return nil, fmt.Errorf("%w: MaxOpenDocuments: %w", ErrInvalidOptions, err)
	}
	m.docs = docs
	m.problems = m.install(configs, nil)
	return m, nil
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// install replaces the server set with configs, keeping the servers in
// keep (by name) whose configuration is unchanged. It returns the conflict
// problems and the servers no longer used. Call with m.mu held (or before
// m is shared).
func (m *Manager) install(configs []ServerConfig, keep map[string]*server) []error {
	cfgs, problems := ResolveConflicts(configs)
	seen := map[string]bool{}
	m.servers = m.servers[:0]
	m.routes = m.routes[:0]
	for _, c := range cfgs {
		if seen[c.Name] {
			problems = append(problems, &ConfigError{Plugin: c.Plugin, File: c.File, Server: c.Server,
				Err: fmt.Errorf("duplicate server name %s", c.Name)})
			continue
		}
		seen[c.Name] = true
		s := keep[c.Name]
		if s == nil || !s.cfg.Equal(&c) {
			s = newServer(m, c)
		}
		m.servers = append(m.servers, s)
		for ext, lang := range c.ExtensionToLanguage {
			m.routes = append(m.routes, route{ext: strings.ToLower(ext), lang: lang, srv: s})
		}
	}
	sort.SliceStable(m.routes, func(i, j int) bool {
		if len(m.routes[i].ext) != len(m.routes[j].ext) {
			return len(m.routes[i].ext) > len(m.routes[j].ext)
		}
		return m.routes[i].ext < m.routes[j].ext
	})
	return problems
}

// Registry returns the registry the manager feeds.
func (m *Manager) Registry() *lspdiag.Registry { return m.reg }

// Problems returns the configuration problems found by NewManager or the
// last Reload: extension conflicts (*ExtensionConflictError) and duplicate names.
func (m *Manager) Problems() []error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]error(nil), m.problems...)
}

// Servers returns a snapshot of every configured server, in configuration
// order.
func (m *Manager) Servers() []ServerStatus {
	m.mu.Lock()
	servers := append([]*server(nil), m.servers...)
	exts := map[*server][]string{}
	for _, r := range m.routes {
		exts[r.srv] = append(exts[r.srv], r.ext)
	}
	m.mu.Unlock()
	out := make([]ServerStatus, 0, len(servers))
	for _, s := range servers {
		st := s.status()
		st.Extensions = exts[s]
		sort.Strings(st.Extensions)
		out = append(out, st)
	}
	return out
}

// OpenDocuments returns the paths of the documents open in servers, least
// recently used first.
func (m *Manager) OpenDocuments() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.docs.Keys()
}

// ServerFor returns the name of the server that serves path, or a
// *NoServerError.
func (m *Manager) ServerFor(path string) (string, error) {
	r, _, err := m.route(path)
	if err != nil {
		return "", err
	}
	return r.srv.cfg.Name, nil
}

// route finds the server for path, which it makes absolute.
func (m *Manager) route(path string) (route, string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return route{}, "", fmt.Errorf("resolving %s: %w", path, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return route{}, abs, ErrManagerClosed
	}
	if m.opts.SafeMode {
		return route{}, abs, ErrSafeMode
	}
	base := strings.ToLower(filepath.Base(abs))
	for _, r := range m.routes {
		if strings.HasSuffix(base, r.ext) && len(base) > len(r.ext) {
			return r, abs, nil
		}
	}
	known := make([]string, 0, len(m.routes))
	for _, r := range m.routes {
		known = append(known, r.ext)
	}
	sort.Strings(known)
	return route{}, abs, &NoServerError{Path: abs, Extension: strings.ToLower(filepath.Ext(abs)), Known: known}
}

// Open opens path in its server with the file's current contents, starting
// the server if needed. For a file already open it sends the contents as
// a change when they differ from what the server has.
func (m *Manager) Open(ctx context.Context, path string) error {
	return m.syncDoc(ctx, path, nil, false)
}

// Change sends the full new text of path (opening it first when needed).
// The document's version increases by one.
func (m *Manager) Change(ctx context.Context, path, text string) error {
	return m.syncDoc(ctx, path, &text, false)
}

// Save tells the server that path was saved, first syncing the file's
// contents on disk like Open.
func (m *Manager) Save(ctx context.Context, path string) error {
	return m.syncDoc(ctx, path, nil, true)
}

// Close closes path in its server (didClose) and drops its pending
// diagnostics; which of them were delivered is remembered, so reopening
// the file unchanged delivers nothing again. Closing a file that is not
// open does nothing.
func (m *Manager) Close(ctx context.Context, path string) error {
	r, abs, err := m.route(path)
	if err != nil {
		if errors.Is(err, ErrNoServer) {
			return nil
		}
		return err
	}
	r.srv.syncMu.Lock()
	m.mu.Lock()
	m.docs.Remove(abs)
	m.mu.Unlock()
	others := m.closePending(ctx, r.srv)
	r.srv.syncMu.Unlock()
	m.closeOthers(ctx, others)
	return nil
}

// syncDoc is Open, Change and Save: text nil means the file on disk.
func (m *Manager) syncDoc(ctx context.Context, path string, text *string, save bool) error {
	orig := text
	for attempt := 0; ; attempt++ {
		r, abs, err := m.route(path)
		if err != nil {
			return err
		}
		// The file is read before the server is started, so that a
		// missing or unreadable file is reported at once, not after a
		// start of seconds.
		var disk *diskView
		if text == nil {
			dv, err := readDisk(abs)
			if err != nil {
				return fmt.Errorf("reading %s: %w", abs, err)
			}
			t := dv.text
			text, disk = &t, &dv
		} else if dv, err := readDisk(abs); err == nil {
			disk = &dv // what is on disk now, to tell a later change by someone else
		}
		inst, err := r.srv.ensure(ctx)
		if errors.Is(err, errRetired) && attempt < 3 {
			text = orig
			continue // Reload replaced the server; route again
		}
		if err != nil {
			m.noteFailure(abs, r.srv, err)
			return err
		}
		retry, err := m.send(ctx, r, abs, inst, *text, save, disk)
		if retry && attempt < 3 {
			text = orig
			continue // the instance was replaced meanwhile
		}
		if err != nil {
			m.noteFailure(abs, r.srv, err)
		}
		return err
	}
}

// send brings the document at abs to text in inst, under the server's
// sync lock. retry reports that inst is no longer current.
func (m *Manager) send(ctx context.Context, r route, abs string, inst *instance, text string, save bool, disk *diskView) (retry bool, err error) {
	srv := r.srv
	srv.syncMu.Lock()
	if srv.current() != inst {
		srv.syncMu.Unlock()
		return true, nil
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		srv.syncMu.Unlock()
		return false, ErrManagerClosed
	}
	doc, ok := m.docs.Get(abs)
	if !ok {
		doc = &document{path: abs, uri: fileuri.FromPath(abs), lang: r.lang, srv: srv}
		m.docs.Add(abs, doc)
	}
	m.mu.Unlock()
	// Close what was evicted from this server before opening anything, so
	// a path evicted and reopened is never open twice.
	others := m.closePending(ctx, srv)
	if disk != nil {
		doc.stamp, doc.diskSum = disk.stamp, disk.sum
	}

	switch {
	case doc.openOn != inst:
		doc.version, doc.text = m.nextVersion(doc.uri), text
		err = m.didOpen(ctx, inst, doc, false)
	case doc.text != text:
		doc.version, doc.text = m.nextVersion(doc.uri), text
		err = m.didChange(ctx, inst, doc)
	}
	if err == nil && save {
		// A save may make a server work (linters on save): Settle waits
		// for its reaction, or its quiet, as after another file's change.
		inst.setMark()
		err = inst.conn.notify(ctx, "textDocument/didSave", map[string]any{
			"textDocument": map[string]string{"uri": doc.uri},
		})
	}
	doc.dirty.Store(true)
	srv.syncMu.Unlock()
	m.closeOthers(ctx, others)
	if err != nil {
		if ferr := inst.failed(err); ferr != nil {
			return false, ferr
		}
		return false, fmt.Errorf("syncing %s with %s: %w", abs, srv.cfg.Name, err)
	}
	return false, nil
}

// nextVersion returns the next version for uri: 1 for a new document, and
// never a number used before for it, even across close and reopen, so a
// late publish for an earlier session cannot pass for a new one.
func (m *Manager) nextVersion(uri string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := m.versions[uri] + 1
	m.versions[uri] = v
	return v
}

// didOpen opens doc in inst. same says the server had that very text
// open just before (a reopen: Manager.resend). A document opened with the
// text on disk is new to a server that knows only the documents it is
// sent.
func (m *Manager) didOpen(ctx context.Context, inst *instance, doc *document, same bool) error {
	m.reg.SetVersion(doc.uri, doc.version)
	inst.setText(doc.uri, doc.lang, doc.version, doc.text, true, same)
	err := inst.conn.notify(ctx, "textDocument/didOpen", map[string]any{
		"textDocument": map[string]any{"uri": doc.uri, "languageId": doc.lang, "version": doc.version, "text": doc.text},
	})
	if err == nil {
		doc.openOn = inst
	}
	return err
}

func (m *Manager) didChange(ctx context.Context, inst *instance, doc *document) error {
	m.reg.SetVersion(doc.uri, doc.version)
	inst.setText(doc.uri, doc.lang, doc.version, doc.text, false, false)
	return inst.conn.notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": doc.uri, "version": doc.version},
		"contentChanges": []map[string]string{{"text": doc.text}},
	})
}

// closePending sends didClose for the evicted documents of srv, whose
// syncMu the caller holds, and returns the evicted documents of other
// servers.
func (m *Manager) closePending(ctx context.Context, srv *server) []*document {
	m.mu.Lock()
	var mine, others []*document
	for p, d := range m.closing {
		if d.srv == srv {
			mine = append(mine, d)
		} else {
			others = append(others, d)
		}
		delete(m.closing, p)
	}
	m.mu.Unlock()
	for _, d := range mine {
		m.closeDoc(ctx, d)
	}
	return others
}

// closeOthers closes documents of other servers, taking each one's lock.
func (m *Manager) closeOthers(ctx context.Context, docs []*document) {
	for _, d := range docs {
		d.srv.syncMu.Lock()
		m.closeDoc(ctx, d)
		d.srv.syncMu.Unlock()
	}
}

// closeDoc sends didClose for d if it is open in a live instance. Call
// with d.srv.syncMu held.
func (m *Manager) closeDoc(ctx context.Context, d *document) {
	if d.closed {
		return
	}
	d.closed = true
	// Pending diagnostics go, the delivered memory stays: reopening the
	// file unchanged must not deliver its diagnostics again. Before the
	// didClose, so that what the server publishes for the closed file
	// (gopls republishes a workspace file's set) is the file's, not the
	// document's.
	//
	// The track goes first: a pull answered meanwhile registers its set
	// only while the track stands (see instance.pull), so it cannot land
	// after the registry was cleared.
	inst := d.openOn
	live := inst != nil && !inst.isGone() && d.srv.current() == inst
	if live {
		inst.dropText(d.uri, false)
	}
	m.reg.Close(d.uri)
	if live {
		err := inst.conn.notify(context.WithoutCancel(ctx), "textDocument/didClose", map[string]any{
			"textDocument": map[string]string{"uri": d.uri},
		})
		if err != nil {
			d.srv.log.Debug("lsp: didClose failed", "uri", d.uri, "err", err)
		}
	}
	d.openOn = nil
}

// reopen opens, in a freshly started instance of s, every document routed
// to s: after a restart the server gets back what it had.
func (m *Manager) reopen(s *server, inst *instance) {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	m.mu.Lock()
	var docs []*document
	for _, p := range m.docs.Keys() {
		if d, ok := m.docs.Peek(p); ok && d.srv == s {
			docs = append(docs, d)
		}
	}
	m.mu.Unlock()
	ctx := context.Background()
	for _, d := range docs {
		if d.closed || d.openOn == inst {
			continue
		}
		d.openOn = nil
		if d.version == 0 {
			continue // never sent; its first operation opens it
		}
		if err := m.didOpen(ctx, inst, d, false); err != nil {
			s.log.Debug("lsp: reopening document failed", "uri", d.uri, "err", err)
			return
		}
		d.dirty.Store(true)
	}
}

// restartDelay is the backoff before restart number n+1.
func (m *Manager) restartDelay(n int) time.Duration {
	d := m.opts.RestartBackoff
	for i := 0; i < n && d < maxRestartDelay; i++ {
		d *= 2
	}
	return min(d, maxRestartDelay)
}

// Reload replaces the configurations (plugins changed). Servers whose
// configuration vanished or changed are stopped and their documents
// forgotten; servers whose configuration is unchanged keep running with
// their documents; new servers start on first use. It returns the new
// configurations' problems, as Problems does.
func (m *Manager) Reload(ctx context.Context, configs []ServerConfig) []error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return []error{ErrManagerClosed}
	}
	old := append([]*server(nil), m.servers...)
	keep := map[string]*server{}
	for _, s := range old {
		keep[s.cfg.Name] = s
	}
	m.problems = m.install(configs, keep)
	alive := map[*server]bool{}
	for _, s := range m.servers {
		alive[s] = true
	}
	var stop []*server
	for _, s := range old {
		if !alive[s] {
			stop = append(stop, s)
		}
	}
	// Documents whose route changed are closed; the rest stay open.
	var moved []string
	for _, p := range m.docs.Keys() {
		d, _ := m.docs.Peek(p)
		base := strings.ToLower(filepath.Base(p))
		var to *server
		for _, r := range m.routes {
			if strings.HasSuffix(base, r.ext) && len(base) > len(r.ext) {
				to = r.srv
				break
			}
		}
		if to != d.srv {
			moved = append(moved, p)
		}
	}
	for _, p := range moved {
		m.docs.Remove(p)
	}
	problems := append([]error(nil), m.problems...)
	m.mu.Unlock()

	var wg sync.WaitGroup
	for _, s := range stop {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.stop(ctx)
		}()
	}
	wg.Wait()
	// Close the moved documents: in their old server when it still runs,
	// else just forget them.
	m.mu.Lock()
	var docs []*document
	for p, d := range m.closing {
		docs = append(docs, d)
		delete(m.closing, p)
	}
	m.mu.Unlock()
	m.closeOthers(ctx, docs)
	return problems
}

// Shutdown stops every server: a graceful shutdown within each server's
// timeout (and ctx), then its process group is killed, so nothing is left
// behind even when a server misbehaves; a server still starting (it has
// not answered initialize) is killed at once, never waited for. It clears
// all documents and pending diagnostics. Later operations return
// ErrManagerClosed. Shutdown may be called more than once; it returns
// ctx.Err() when ctx ended before every server stopped gracefully.
func (m *Manager) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	servers := append([]*server(nil), m.servers...)
	m.docs.Purge()
	clear(m.closing)
	clear(m.notes)
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.stop(ctx)
		}()
	}
	wg.Wait()
	m.reg.ResetAll()
	return ctx.Err()
}

// Call sends a request (hover, definition, references, ...) to the server
// of path, opening the file first when it is not open. A ContentModified
// answer is retried up to 3 times with exponential backoff; when ctx ends,
// the server is sent $/cancelRequest. An error answer is an *RPCError.
func (m *Manager) Call(ctx context.Context, path, method string, params, result any) error {
	r, abs, err := m.route(path)
	if err != nil {
		return err
	}
	m.mu.Lock()
	_, open := m.docs.Get(abs)
	m.mu.Unlock()
	if !open {
		if err := m.Open(ctx, abs); err != nil {
			return err
		}
	}
	inst, err := r.srv.ensure(ctx)
	if err != nil {
		return err
	}
	if err := inst.callRequest(ctx, method, params, result); err != nil {
		if ferr := inst.failed(err); ferr != nil {
			return ferr
		}
		return fmt.Errorf("%s: %w", r.srv.cfg.Name, err)
	}
	return nil
}

// noteFailure records, for the next Drain, that diagnostics of path are
// unavailable because its server failed.
func (m *Manager) noteFailure(path string, s *server, err error) {
	if !errors.Is(err, ErrServerFailed) {
		return
	}
	var se *ServerError
	msg := err.Error()
	if errors.As(err, &se) {
		msg = se.Err.Error()
		if se.ExitStatus != "" {
			msg += " (" + se.ExitStatus + ")"
		}
		if l := lastLine(se.Stderr); l != "" {
			msg += ": " + l
		}
	}
	m.addNote(path, fmt.Sprintf("%s: no diagnostics: language server %s failed: %s", m.display(path), s.cfg.Name, msg))
}

func (m *Manager) addNote(key, note string) {
	m.mu.Lock()
	if !m.closed {
		m.notes[key] = note
		m.noteLog.add(key, note)
	}
	m.mu.Unlock()
}

// display shortens path for notes: relative to the project when inside it.
func (m *Manager) display(path string) string {
	if rel, err := filepath.Rel(m.opts.ProjectDir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return path
}

// diskView is a file's contents as read, with what identifies that state.
type diskView struct {
	text  string
	stamp fileStamp
	sum   uint64
}

// maxTrackedFileBytes bounds the files whose changes on disk are followed.
const maxTrackedFileBytes = DefaultMaxMessageBytes

// readDisk reads path with its stamp and checksum. Only a regular file is
// read (safefile: a FIFO or a device under the name is refused, never
// waited on).
func readDisk(path string) (diskView, error) {
	f, fi, err := safefile.Open(path, nil)
	if err != nil {
		return diskView{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTrackedFileBytes+1))
	if err != nil {
		return diskView{}, err
	}
	dv := diskView{text: string(data), stamp: stampOf(fi), sum: checksum(data)}
	if len(data) > maxTrackedFileBytes {
		dv.stamp = fileStamp{} // too large to follow
	}
	return dv, nil
}

// checksum identifies file contents (not against an adversary: against
// "touched but unchanged").
func checksum(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// syncDisk brings the servers up to date with the disk before Settle (the
// documents of only) or Drain (every server, only nil): an open document
// whose file changed since it was last read or sent (a formatter, a shell
// command, a git checkout) is sent as a change, and the files matching the
// watchers a server registered are reported to it.
func (m *Manager) syncDisk(ctx context.Context, only *server) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	byServer := map[*server][]*document{}
	var order []*server
	for _, p := range m.docs.Keys() {
		d, _ := m.docs.Peek(p)
		if only != nil && d.srv != only {
			continue
		}
		if byServer[d.srv] == nil {
			order = append(order, d.srv)
		}
		byServer[d.srv] = append(byServer[d.srv], d)
	}
	if only != nil && byServer[only] == nil {
		order = append(order, only)
	}
	m.mu.Unlock()
	for _, s := range order {
		m.syncServerDisk(ctx, s, byServer[s])
	}
}

func (m *Manager) syncServerDisk(ctx context.Context, s *server, docs []*document) {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	inst := s.current()
	if inst == nil {
		return
	}
	open := make(map[string]bool, len(docs))
	for _, d := range docs {
		if d.closed || d.openOn != inst {
			continue
		}
		open[d.path] = true
		if !d.stamp.ok {
			continue
		}
		fi, err := os.Stat(d.path)
		if err != nil || stampOf(fi) == d.stamp {
			continue // gone files stay open with their last text
		}
		dv, err := readDisk(d.path)
		if err != nil {
			continue
		}
		changed := dv.sum != d.diskSum
		d.stamp, d.diskSum = dv.stamp, dv.sum
		if !changed || dv.text == d.text {
			continue
		}
		d.version, d.text = m.nextVersion(d.uri), dv.text
		d.dirty.Store(true)
		if err := m.didChange(ctx, inst, d); err != nil {
			s.log.Debug("lsp: sending a file changed on disk failed", "path", d.path, "err", err)
			return
		}
		s.log.Debug("lsp: open file changed on disk; sent its new text", "path", d.path, "version", d.version)
	}
	if events := inst.files.poll(open); len(events) > 0 {
		inst.setMark()
		err := inst.conn.notify(ctx, "workspace/didChangeWatchedFiles", map[string]any{"changes": events})
		if err != nil {
			s.log.Debug("lsp: didChangeWatchedFiles failed", "err", err)
		}
		// The documents of this server may change: Drain checks them.
		for _, d := range docs {
			d.dirty.Store(true)
		}
	}
}

// markDirty makes the next Drain check the documents of s: the server
// said its results may have changed.
func (m *Manager) markDirty(s *server) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.docs.Keys() {
		if d, _ := m.docs.Peek(p); d.srv == s {
			d.dirty.Store(true)
		}
	}
}
