package lsp

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/idebridge/idebridge/diag"
)

// Freshness says how Settle knew that a document's diagnostics are
// current, or that it could not know.
type Freshness int

// The outcomes of Settle.
const (
	// FreshUnknown is the zero value: not settled.
	FreshUnknown Freshness = iota
	// FreshPublished: the server published diagnostics for the document's
	// current version after the last change.
	FreshPublished
	// FreshProgressEnded: the work-done progress the server began after
	// the last change has ended (gopls with verboseWorkDoneProgress), and
	// either a publish for the version arrived or the quiet period passed
	// after it.
	FreshProgressEnded
	// FreshQuiet: nothing changed: the server sent no publish and no
	// progress for the quiet period (gopls does not republish an
	// unchanged set).
	FreshQuiet
	// FreshTimedOut: none of the above before the timeout; diagnostics may
	// be stale or incomplete, and the next Drain says so.
	FreshTimedOut
)

func (f Freshness) String() string {
	switch f {
	case FreshUnknown:
		return "unknown"
	case FreshPublished:
		return "published"
	case FreshProgressEnded:
		return "progress-ended"
	case FreshQuiet:
		return "quiet"
	case FreshTimedOut:
		return "timed-out"
	}
	return fmt.Sprintf("Freshness(%d)", int(f))
}

// MarshalText writes the name String returns.
func (f Freshness) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// Fresh reports whether f means the diagnostics are known to be current.
func (f Freshness) Fresh() bool {
	return f == FreshPublished || f == FreshProgressEnded || f == FreshQuiet
}

// SettleResult is the outcome of Settle for one document.
type SettleResult struct {
	Path      string        `json:"path"`
	URI       string        `json:"uri"`
	Server    string        `json:"server"`
	Version   int           `json:"version"`
	Freshness Freshness     `json:"freshness"`
	Elapsed   time.Duration `json:"elapsedNs"`
}

// Settle waits until the diagnostics of path (open in its server) are
// known for its current version, and says how it knew (see Freshness). It
// considers every document message sent to the server before the call, so
// it also covers a change of another file that affects this one.
//
// By default a publish for the current version settles at once, even when
// the server's work continues: gopls publishes type errors first and
// analysis results a moment later, which the next Drain delivers. With
// ManagerOptions.WaitForProgress, Settle waits for the work-done progress
// to end (FreshProgressEnded), for one-shot callers such as the command
// line.
//
// Settle waits at most the manager's SettleTimeout. Running out of time is
// not an error: the result says FreshTimedOut and the next Drain notes that
// the file's diagnostics may be stale. When ctx ends first, the result says
// FreshTimedOut, the error is ctx's, and the next Drain checks the file. A server that has failed returns a
// *ServerError; a file that is not open, ErrNotOpen.
func (m *Manager) Settle(ctx context.Context, path string) (SettleResult, error) {
	r, abs, err := m.route(path)
	res := SettleResult{Path: abs}
	if err != nil {
		return res, err
	}
	m.mu.Lock()
	doc, ok := m.docs.Peek(abs)
	m.mu.Unlock()
	if !ok {
		return res, fmt.Errorf("settling %s: %w", abs, ErrNotOpen)
	}
	res.URI, res.Server = doc.uri, r.srv.cfg.Name
	doc.srv.syncMu.Lock()
	inst, version, closed := doc.openOn, doc.version, doc.closed
	doc.srv.syncMu.Unlock()
	res.Version = version
	if closed {
		return res, fmt.Errorf("settling %s: %w", abs, ErrNotOpen)
	}
	if inst == nil || inst.isGone() {
		err := doc.srv.failure()
		if err == nil {
			err = fmt.Errorf("settling %s: %w", abs, ErrServerExited)
		}
		m.noteFailure(abs, doc.srv, err)
		return res, err
	}
	start := time.Now()
	inst.fmu.Lock()
	mark := inst.mark
	inst.fmu.Unlock()
	deadline := time.NewTimer(m.opts.SettleTimeout)
	defer deadline.Stop()
	var quiet *time.Timer
	defer func() {
		if quiet != nil {
			quiet.Stop()
		}
	}()
	// Unless cancelled, Settle speaks for the document now; Drain need not
	// guess.
	cancelled := false
	defer func() {
		if !cancelled {
			doc.dirty.Store(false)
		}
	}()
	for {
		f, wait, changed := inst.freshness(doc.uri, version, mark, m.opts.QuietPeriod, time.Now(), m.opts.WaitForProgress)
		if f != FreshUnknown {
			res.Freshness, res.Elapsed = f, time.Since(start)
			return res, nil
		}
		var quietC <-chan time.Time
		if wait > 0 {
			if quiet == nil {
				quiet = time.NewTimer(wait)
			} else {
				quiet.Reset(wait)
			}
			quietC = quiet.C
		}
		select {
		case <-changed:
		case <-quietC:
		case <-inst.gone:
			res.Elapsed = time.Since(start)
			if inst.stopping.Load() {
				// Shutdown, or Reload replaced the server: the document
				// is no longer tracked.
				m.mu.Lock()
				closed := m.closed
				m.mu.Unlock()
				if closed {
					return res, ErrManagerClosed
				}
				return res, fmt.Errorf("settling %s: %w", abs, ErrNotOpen)
			}
			err := inst.exitErr
			m.noteFailure(abs, doc.srv, err)
			return res, err
		case <-deadline.C:
			res.Elapsed = time.Since(start)
			if f, _, _ := inst.freshness(doc.uri, version, mark, 0, time.Now(), false); f == FreshPublished {
				// Waiting for progress: the version was published, the
				// work did not finish.
				res.Freshness = FreshPublished
				return res, nil
			}
			res.Freshness = FreshTimedOut
			m.noteStale(abs, res.Server, m.opts.SettleTimeout)
			return res, nil
		case <-ctx.Done():
			// The caller gave up; the next Drain checks the document.
			cancelled = true
			res.Freshness, res.Elapsed = FreshTimedOut, time.Since(start)
			return res, ctx.Err()
		}
	}
}

// freshness evaluates what is known about uri at version, reacting to the
// document messages sent up to mark. It returns FreshUnknown with the time
// left until the quiet period is over (0: wait for an event) and a channel
// closed at the next event. With waitProgress, a publish for the version
// does not settle while a work-done progress is active.
func (inst *instance) freshness(uri string, version int, mark uint64, quiet time.Duration, now time.Time, waitProgress bool) (Freshness, time.Duration, <-chan struct{}) {
	inst.fmu.Lock()
	defer inst.fmu.Unlock()
	p, ok := inst.pubs[uri]
	published := ok && p.seq > mark && (p.version == nil || *p.version >= version)
	if published && !waitProgress {
		return FreshPublished, 0, nil
	}
	if len(inst.active) > 0 {
		return FreshUnknown, 0, inst.fresh
	}
	// A progress that began after the mark has ended.
	ended := inst.ended > mark
	if ended && published {
		return FreshProgressEnded, 0, nil
	}
	if published {
		return FreshPublished, 0, nil
	}
	// Ended without a publish for this version: a server that does not
	// republish an unchanged set, or one whose publish is still on its way
	// (gopls, loaded, can end its "diagnosing" progress just before the
	// publish, and on a first open it may end one progress and begin the
	// next). Settle only after a quiet period since the last progress.
	if !inst.conn.idle() {
		// A message is on its way: look again after a quiet period.
		return FreshUnknown, quiet, inst.fresh
	}
	last := inst.markTime
	if inst.activity.After(last) {
		last = inst.activity
	}
	if idle := now.Sub(last); idle >= quiet {
		if ended {
			return FreshProgressEnded, 0, nil
		}
		return FreshQuiet, 0, nil
	} else {
		return FreshUnknown, quiet - idle, inst.fresh
	}
}

// noteStale records, for the next Drain, that path's diagnostics may be
// stale.
func (m *Manager) noteStale(path, server string, waited time.Duration) {
	m.addNote(path, fmt.Sprintf("%s: diagnostics may be stale or incomplete: %s did not finish analysing it within %v",
		m.display(path), server, waited.Round(time.Millisecond)))
}

// maxListedFiles is how many files a note names before it summarizes.
const maxListedFiles = 3

// Drain returns the diagnostics that are new since the last Drain (see
// Registry.Drain), with notes saying which files' diagnostics may be stale
// or incomplete: a Settle that timed out, a server that failed, a file
// changed since its last Settle whose server is still working. It returns
// an attachment holding only notes when there are no new diagnostics, so
// that silence never reads as "no errors"; nil, false when there is
// nothing at all.
func (m *Manager) Drain() (*diag.Attachment, bool) {
	// Files changed but not settled: check without waiting.
	m.mu.Lock()
	var dirty []*document
	for _, p := range m.docs.Keys() {
		if d, ok := m.docs.Peek(p); ok && d.dirty.Load() {
			dirty = append(dirty, d)
		}
	}
	m.mu.Unlock()
	busy := map[*server][]string{}
	var busyOrder []*server
	for _, d := range dirty {
		d.srv.syncMu.Lock()
		inst, version, closed := d.openOn, d.version, d.closed
		d.srv.syncMu.Unlock()
		if closed || !d.dirty.Swap(false) {
			continue
		}
		if inst == nil || inst.isGone() {
			if err := d.srv.failure(); err != nil {
				m.noteFailure(d.path, d.srv, err)
			}
			continue
		}
		inst.fmu.Lock()
		mark := inst.mark
		inst.fmu.Unlock()
		if f, _, _ := inst.freshness(d.uri, version, mark, m.opts.QuietPeriod, time.Now(), false); f == FreshUnknown {
			if busy[d.srv] == nil {
				busyOrder = append(busyOrder, d.srv)
			}
			busy[d.srv] = append(busy[d.srv], m.display(d.path))
		}
	}
	for _, s := range busyOrder {
		files := busy[s]
		if len(files) <= maxListedFiles {
			for _, f := range files {
				m.addNote("busy:"+f, fmt.Sprintf("%s: diagnostics may be incomplete: %s was still analysing it", f, s.cfg.Name))
			}
			continue
		}
		m.addNote("busy:"+s.cfg.Name, fmt.Sprintf("%d files: diagnostics may be incomplete: %s was still analysing them (%s, …)",
			len(files), s.cfg.Name, strings.Join(files[:maxListedFiles], ", ")))
	}

	att, ok := m.reg.Drain()
	m.mu.Lock()
	keys := make([]string, 0, len(m.notes))
	for k := range m.notes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	notes := make([]string, 0, len(keys))
	for _, k := range keys {
		notes = append(notes, m.notes[k])
	}
	clear(m.notes)
	m.mu.Unlock()
	if len(notes) == 0 {
		return att, ok
	}
	if !ok {
		att = &diag.Attachment{Servers: []string{}, Files: []diag.FileDiagnostics{}}
	}
	att.Notes = append(att.Notes, notes...)
	return att, true
}
