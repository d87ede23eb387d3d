package lsp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/internal/fileuri"
)

// Freshness says how Settle knew that a document's diagnostics are
// current, or that it could not know.
type Freshness int

// The outcomes of Settle. A document just opened (or opened again after an
// eviction or a server restart) is never fresh before its server has
// published for it or answered a pull for it: silence never reads as "no
// errors".
const (
	// FreshUnknown is the zero value: not settled.
	FreshUnknown Freshness = iota
	// FreshPublished: the server published diagnostics for the document's
	// current version (it sends versions with its publishes).
	FreshPublished
	// FreshProgressEnded: the work-done progress the server began after
	// the last change has ended (gopls with verboseWorkDoneProgress),
	// after a publish for the version, or, for a document the server had
	// published before, without one (its set did not change; only from a
	// progress no publish for another document followed and that was no
	// request of ours, once a quiet period has passed).
	FreshProgressEnded
	// FreshQuiet: the server, which sends no versions with its publishes,
	// published for the document after its last change, and then nothing
	// more for the quiet period learned for it (see
	// ManagerOptions.QuietPeriod).
	FreshQuiet
	// FreshTimedOut: none of the above before the timeout; diagnostics may
	// be stale or incomplete, and the next Drain says so.
	FreshTimedOut
	// FreshPulled: the server answered a pull request
	// (textDocument/diagnostic) for the document's current version, sent
	// after every message that could change it.
	FreshPulled
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
	case FreshPulled:
		return "pulled"
	}
	return fmt.Sprintf("Freshness(%d)", int(f))
}

// MarshalText writes the name String returns.
func (f Freshness) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText reads a name MarshalText writes, so that a SettleResult
// crosses a process (package warm's runtime) unchanged.
func (f *Freshness) UnmarshalText(b []byte) error {
	for g := FreshUnknown; g <= FreshPulled; g++ {
		if g.String() == string(b) {
			*f = g
			return nil
		}
	}
	return fmt.Errorf("lsp: unknown freshness %q", clip(string(b)))
}

// Fresh reports whether f means the diagnostics are known to be current.
func (f Freshness) Fresh() bool {
	switch f {
	case FreshPublished, FreshProgressEnded, FreshQuiet, FreshPulled:
		return true
	}
	return false
}

// SettleResult is the outcome of Settle for one document.
type SettleResult struct {
	Path      string    `json:"path"`
	URI       string    `json:"uri"`
	Server    string    `json:"server"`
	Version   int       `json:"version"`
	Freshness Freshness `json:"freshness"`
	// Fresh is Freshness.Fresh(): the diagnostics are known to be
	// current. For callers in other languages, which have no method.
	Fresh   bool          `json:"fresh"`
	Elapsed time.Duration `json:"elapsedNs"`
	// Reason says in words how Settle knew, or why it could not: "published
	// for version 3", "pulled for version 3", "no publish for it from
	// pyright within 10s".
	Reason string `json:"reason"`
	// Status is the one word on how far the diagnostics can be trusted
	// (see Status); Reason is its detail. StatusComplete only when Fresh
	// and no work of the server's was left unwaited for; StatusPartial
	// when Settle timed out after the server had reported on the document
	// (or gave up early on a change a server that answers changes left
	// unanswered for far longer than it takes: see Settle), or settled
	// without the server's answer to another document's change sent
	// after this one's, or a progress of the server's stopped reporting
	// and was not waited for; StatusUnknown when it timed out before the server had reported
	// anything on it; StatusServerDown with the server's failure.
	Status Status `json:"status"`
}

// Settle waits until the diagnostics of path (open in its server) are
// known for its current version, and says how it knew (see Freshness). It
// considers every document message sent to the server before the call, so
// it also covers a change of another file that affects this one. First it
// brings the server up to date with the disk: open documents whose files
// changed are sent as changes, and files matching the watchers the server
// registered are reported (workspace/didChangeWatchedFiles).
//
// A server that offers pull diagnostics is asked (textDocument/diagnostic):
// its answer is exact for the version asked. Otherwise Settle waits for
// the server's publish: for the document's version when the server sends
// versions; when it does not, the first publish after the change and then
// a quiet period that adapts to the server's measured pace. By default a
// publish for the current version settles at once, even when the server's
// work continues: gopls publishes type errors first and analysis results
// a moment later, which the next Drain delivers. With
// ManagerOptions.WaitForProgress, Settle waits for the work-done progress
// to end (FreshProgressEnded), for one-shot callers such as the command
// line.
//
// A change that a server which has answered changes before leaves
// unanswered, with no work of its own running, for four times the
// longest time it took to answer one (at least that plus 3 s), ends the
// wait early: FreshTimedOut, StatusPartial, and a Reason that says the
// server may not republish a set that did not change
// (typescript-language-server publishes nothing when a document's set
// stays empty).
//
// Settle waits at most the manager's SettleTimeout. Running out of time is
// not an error: the result says FreshTimedOut and the next Drain notes,
// naming the file and the server, that its diagnostics are unknown or may
// be stale. When ctx ends first, the result says FreshTimedOut, the error
// is ctx's, and the next Drain checks the file. A server that has failed
// returns a *ServerError; a file that is not open, ErrNotOpen.
func (m *Manager) Settle(ctx context.Context, path string) (SettleResult, error) {
	return m.SettleWith(ctx, path, nil)
}

// SettleOptions are a Settle's own choices, for a caller that shares a
// Manager made with others (a runtime's): zero fields take the Manager's.
type SettleOptions struct {
	// Timeout bounds this Settle instead of ManagerOptions.SettleTimeout.
	Timeout time.Duration `json:"timeoutNs,omitempty"`
	// WaitForProgress: this Settle waits for the server's work-done
	// progress to end, as ManagerOptions.WaitForProgress does.
	WaitForProgress bool `json:"waitForProgress,omitempty"`
}

// SettleWith is Settle with o's choices (nil: the Manager's). A negative
// Timeout is the Manager's.
func (m *Manager) SettleWith(ctx context.Context, path string, o *SettleOptions) (SettleResult, error) {
	so := SettleOptions{Timeout: m.opts.SettleTimeout, WaitForProgress: m.opts.WaitForProgress}
	if o != nil {
		if o.Timeout > 0 {
			so.Timeout = o.Timeout
		}
		so.WaitForProgress = so.WaitForProgress || o.WaitForProgress
	}
	res, err := m.settle(ctx, path, so)
	res.Fresh = res.Freshness.Fresh()
	if st := statusOfErr(err); st != "" {
		res.Status = st
		if res.Reason == "" {
			res.Reason = err.Error()
		}
	} else if res.Status == "" && res.Fresh {
		res.Status = StatusComplete
	}
	return res, err
}

func (m *Manager) settle(ctx context.Context, path string, so SettleOptions) (SettleResult, error) {
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
	start := time.Now()
	m.syncDisk(ctx, doc.srv)
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
	deadline := time.NewTimer(so.Timeout)
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
	// A pull runs beside the wait, so that the wait still sees the
	// server's end, the deadline and ctx.
	pctx, pcancel := context.WithCancel(ctx)
	defer pcancel()
	var pullDone chan error
	var retry *time.Timer
	var retryC <-chan time.Time
	backoff := 20 * time.Millisecond
	defer func() {
		if retry != nil {
			retry.Stop()
		}
	}()
	opts := evalOptions{quiet: m.opts.QuietPeriod, waitProgress: so.WaitForProgress}
	for {
		v, changed := inst.evaluate(doc.uri, version, time.Now(), opts)
		if v.f != FreshUnknown {
			res.Freshness, res.Elapsed, res.Reason = v.f, time.Since(start), v.reason
			if v.partial {
				res.Status = StatusPartial
			}
			if v.f == FreshTimedOut {
				m.noteTimedOut(abs, res.Server, inst, doc.uri, res.Elapsed)
			}
			return res, nil
		}
		if v.pull && pullDone == nil && retryC == nil {
			pullDone = make(chan error, 1)
			go func() { pullDone <- inst.pull(pctx, doc.uri) }()
		}
		var quietC <-chan time.Time
		if v.wait > 0 {
			if quiet == nil {
				quiet = time.NewTimer(v.wait)
			} else {
				quiet.Reset(v.wait)
			}
			quietC = quiet.C
		}
		select {
		case <-changed:
		case <-quietC:
		case err := <-pullDone:
			pullDone = nil
			switch {
			case err == nil, errors.Is(err, errNoPull):
			case errors.Is(err, ErrNotOpen):
			default:
				// Asked again after a pause: the server cancelled, the
				// content changed under it, or it failed.
				if !errors.Is(err, errRetrigger) && pctx.Err() == nil {
					doc.srv.log.Debug("lsp: pull diagnostics failed", "uri", doc.uri, "err", err)
				}
				if retry == nil {
					retry = time.NewTimer(backoff)
				} else {
					retry.Reset(backoff)
				}
				retryC = retry.C
				backoff = min(2*backoff, time.Second)
			}
		case <-retryC:
			retryC = nil
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
			v, _ := inst.evaluate(doc.uri, version, time.Now(), evalOptions{quiet: 0})
			if v.f == FreshPublished {
				// Waiting for progress: the version was published, the
				// work did not finish.
				res.Freshness, res.Reason = FreshPublished, v.reason+"; its work-done progress did not end in time"
				res.Status = StatusPartial
				return res, nil
			}
			res.Freshness, res.Status = FreshTimedOut, StatusUnknown
			if inst.reported(doc.uri) {
				res.Status = StatusPartial
			}
			res.Reason = inst.timeoutReason(doc.uri, so.Timeout)
			m.noteTimedOut(abs, res.Server, inst, doc.uri, so.Timeout)
			return res, nil
		case <-ctx.Done():
			// The caller gave up; the next Drain checks the document.
			cancelled = true
			res.Freshness, res.Elapsed, res.Status = FreshTimedOut, time.Since(start), StatusUnknown
			if inst.reported(doc.uri) {
				res.Status = StatusPartial
			}
			res.Reason = inst.timeoutReason(doc.uri, res.Elapsed.Round(100*time.Millisecond)) + " (" + ctx.Err().Error() + ")"
			return res, ctx.Err()
		}
	}
}

// evalOptions tune evaluate.
type evalOptions struct {
	quiet        time.Duration // the floor of quiet periods
	waitProgress bool
}

// verdict is what evaluate found.
type verdict struct {
	f      Freshness
	reason string
	wait   time.Duration // > 0: look again after this long
	pull   bool          // a pull request would tell
	// partial: fresh for the version, but work of the server's (a
	// progress that stopped reporting) was not waited for.
	partial bool
}

// evaluate says what is known about the diagnostics of uri at version.
// FreshUnknown comes with what to wait for: the channel, closed at the
// next event; a time after which to look again; or that a pull is due.
func (inst *instance) evaluate(uri string, version int, now time.Time, o evalOptions) (verdict, <-chan struct{}) {
	inst.fmu.Lock()
	defer inst.fmu.Unlock()
	ch := inst.fresh
	t := inst.docs[uri]
	if t == nil {
		return verdict{}, ch
	}
	if len(inst.pullProviders(uri, t.lang)) > 0 {
		p := t.pulled
		if p.ok && p.version >= version && p.version == t.version && p.sent == inst.sent && p.gen == inst.refreshGen {
			if !p.provisional {
				if t.everPub {
					// It publishes for the document too (its set is the
					// union): work it began after the document's last
					// message ends with that publish (rust-analyzer's
					// cargo check after a save).
					if n, next := inst.workSince(t.sentSeq, now); n > 0 {
						return verdict{wait: next}, ch
					}
					// A message sent after the document's own (a save)
					// may start such work a moment later.
					if inst.realSent > t.sentN {
						if d, q := now.Sub(inst.markTime), inst.s.pace.workQuiet(o.quiet); d < q {
							return verdict{wait: q - d}, ch
						}
					}
				}
				return verdict{f: FreshPulled, reason: fmt.Sprintf("pulled for version %d", p.version)}, nil
			}
			// Answered during the first load: asked again once the load
			// is over (its progress ended, the grace passed, or a
			// refresh came).
			if inst.loadingSince(noSeq, now) {
				_, next := inst.createdPending(now)
				return verdict{wait: next}, ch
			}
			if in, end := inst.inFirstGrace(now); in {
				return verdict{wait: end.Sub(now)}, ch
			}
		}
		return verdict{pull: true}, ch
	}
	idle := inst.conn.idle()
	// quietSince waits for q of silence after from, on an idle connection.
	quietSince := func(from time.Time, q time.Duration) (bool, time.Duration) {
		if inst.activity.After(from) {
			from = inst.activity
		}
		if !idle {
			return false, max(q, time.Millisecond)
		}
		if d := now.Sub(from); d < q {
			return false, q - d
		}
		return true, 0
	}
	if t.pubSeq <= t.sentSeq {
		// Nothing answered the document's last message. A progress begun
		// after it that ended says the server is done: for a document it
		// published before, its set did not change (servers that do not
		// republish an unchanged set). Never for one it has not published,
		// nor from a progress a publish for another document followed
		// (that document's work) or a request's own progress; and only
		// after a quiet period, in which a publish that follows the end
		// arrives.
		if t.everPub && len(inst.active) == 0 && inst.endedUnclaimed(t.sentSeq) {
			q := inst.s.pace.quiet(t.opened, o.quiet, 0)
			if ok, wait := quietSince(inst.markTime, q); !ok {
				return verdict{wait: wait}, ch
			}
			return verdict{f: FreshProgressEnded, reason: "its work-done progress ended with no new publish: the set is unchanged"}, nil
		}
		// A server that has answered changes before and is silent about
		// this one, with no work of its own running, for well past the
		// longest time it took: typescript-language-server publishes
		// nothing when a document's set stays empty. Silence is still no
		// answer, so not fresh; but waiting out the whole timeout tells
		// nothing more than this does now.
		if t.everPub && !t.opened && len(inst.active) == 0 {
			if n, longest := inst.s.pace.answeredChanges(); n > 0 {
				if c, next := inst.createdPending(now); c > 0 {
					return verdict{wait: next}, ch
				}
				w := unansweredWait(longest)
				if ok, wait := quietSince(t.sentAt, w); !ok {
					return verdict{wait: wait}, ch
				}
				return verdict{f: FreshTimedOut, partial: true, reason: fmt.Sprintf(
					"no publish for version %d from %s within %v of the change, though it answered its changes within %v: it may not republish a set that did not change (its last set is kept, not confirmed)",
					t.version, inst.s.cfg.Name, w.Round(time.Millisecond), longest.Round(time.Millisecond))}, nil
			}
		}
		return verdict{}, ch
	}
	exact := t.pubVersion != nil && *t.pubVersion >= version
	// An empty publish from a server seen to follow one with findings for
	// the same version (gopls runs its analyzers only on packages without
	// type errors, a second later) is final only once its work is done.
	waitProgress := o.waitProgress || (exact && t.pubEmpty && inst.s.pace.findsAfterEmpty())
	cross := inst.crossOf(uri, t)
	if exact && !waitProgress && cross.pending == "" && inst.mark <= max(t.sentSeq, cross.lastSeq) {
		// Nothing but documents' messages since its own, each answered:
		// published after those answers, or quiet since.
		if ok, wait, _ := inst.crossSettled(t, cross, now, o, quietSince); !ok {
			return verdict{wait: wait}, ch
		}
		return verdict{f: FreshPublished, reason: fmt.Sprintf("published for version %d", *t.pubVersion)}, nil
	}
	working, stalled, stallIn := inst.workActive(now)
	if working > 0 {
		return verdict{wait: stallIn}, ch
	}
	note := stallNote(stalled)
	partial := note != ""
	if n, next := inst.createdPending(now); n > 0 {
		// Work announced and not begun yet.
		return verdict{wait: next}, ch
	}
	ended := inst.ended > t.sentSeq
	// Messages sent after the document's own (other documents' changes,
	// watched files) may change its set too. Other documents' changes
	// first: see crossOf. Then the rest (saves, watched files, closes): a
	// publish for it since, an ended progress, or a quiet period settles
	// that.
	// Settled without the server's answer to another document's change:
	// partial, and the reason says which.
	ok, wait, crossWhy := inst.crossSettled(t, cross, now, o, quietSince)
	if !ok {
		return verdict{wait: wait}, ch
	}
	if crossWhy != "" {
		note += crossWhy
		partial = true
	}
	crossDone := t.pubSeq > inst.mark || inst.ended > inst.mark || inst.mark <= cross.lastSeq
	if exact {
		if !crossDone {
			q := inst.s.pace.quiet(false, o.quiet, 0)
			if ok, wait := quietSince(inst.markTime, q); !ok {
				return verdict{wait: wait}, ch
			}
		}
		if waitProgress && !o.waitProgress && !ended {
			// No progress to wait for: the gaps learned instead.
			q := inst.s.pace.quiet(t.opened, o.quiet, t.firstAt.Sub(t.sentAt))
			if ok, wait := quietSince(t.lastAt, q); !ok {
				return verdict{wait: wait}, ch
			}
		}
		if ended && waitProgress {
			why := "its work-done progress ended"
			if !o.waitProgress {
				why = "its work-done progress ended (the server has followed an empty set with findings before)"
			}
			return verdict{f: FreshProgressEnded, reason: fmt.Sprintf("published for version %d; %s", *t.pubVersion, why) + crossWhy, partial: crossWhy != ""}, nil
		}
		return verdict{f: FreshPublished, reason: fmt.Sprintf("published for version %d", *t.pubVersion) + note, partial: partial}, nil
	}
	// A server without versions: the first publish after the change, then
	// the quiet period learned for it. An empty first answer from a server
	// that has answered nothing yet is no answer within its first-load
	// grace: it may be about to begin loading.
	if in, end := inst.inFirstGrace(now); in && t.opened && t.pubEmpty {
		return verdict{wait: end.Sub(now)}, ch
	}
	latency := t.firstAt.Sub(t.sentAt)
	q := inst.s.pace.quiet(t.opened, o.quiet, latency)
	if t.opened && t.pubEmpty {
		// An empty answer to an open is what a quick first pass sends
		// before the full check (typescript-language-server, cold: an
		// empty set, the errors up to 430 ms later): the weakest
		// evidence, given half the server's time to be contradicted.
		q = max(q, min(latency/2, maxQuiet))
	}
	from := t.lastAt
	if t.pubSeq <= cross.ackSeq && cross.ackAt.After(from) {
		from = cross.ackAt
	}
	if !crossDone && inst.markTime.After(from) {
		from = inst.markTime
	}
	if ok, wait := quietSince(from, q); !ok {
		return verdict{wait: wait}, ch
	}
	if ended && o.waitProgress {
		return verdict{f: FreshProgressEnded, reason: fmt.Sprintf("published (without a version) %v after the change; its work-done progress ended", latency.Round(time.Millisecond)) + crossWhy, partial: crossWhy != ""}, nil
	}
	return verdict{f: FreshQuiet, reason: fmt.Sprintf("published (without a version) %v after the change, then quiet for %v",
		latency.Round(time.Millisecond), q.Round(time.Millisecond)) + note, partial: partial}, nil
}

// timeoutReason says why a Settle of uri ran out of time.
func (inst *instance) timeoutReason(uri string, waited time.Duration) string {
	inst.fmu.Lock()
	defer inst.fmu.Unlock()
	name := inst.s.cfg.Name
	t := inst.docs[uri]
	switch {
	case t == nil:
		return "closed while waiting"
	case len(inst.pullProviders(uri, t.lang)) > 0 && t.pulled.ok && t.pulled.provisional:
		return fmt.Sprintf("%s was still loading within %v (it %s, for version %d)", name, waited.Round(time.Millisecond), t.pulled.loadReason, t.pulled.version)
	case len(inst.pullProviders(uri, t.lang)) > 0:
		return fmt.Sprintf("%s did not answer a pull for it within %v", name, waited.Round(time.Millisecond))
	case !t.everPub:
		return fmt.Sprintf("no publish for it from %s within %v", name, waited.Round(time.Millisecond))
	case t.pubSeq <= t.sentSeq:
		return fmt.Sprintf("no publish for version %d from %s within %v", t.version, name, waited.Round(time.Millisecond))
	}
	return fmt.Sprintf("%s did not finish analysing it within %v", name, waited.Round(time.Millisecond))
}

// reported says whether the server has published for uri, or answered a
// pull for it, since it was opened.
func (inst *instance) reported(uri string) bool {
	inst.fmu.Lock()
	defer inst.fmu.Unlock()
	t := inst.docs[uri]
	return t != nil && (t.everPub || t.pulled.ok)
}

// noteTimedOut records, for the next Drain, that path's diagnostics are
// unknown (the server never reported any for it) or may be stale.
func (m *Manager) noteTimedOut(path, server string, inst *instance, uri string, waited time.Duration) {
	inst.fmu.Lock()
	t := inst.docs[uri]
	never := t != nil && !t.everPub && !t.pulled.ok
	silent := t != nil && t.pubSeq <= t.sentSeq && !t.pulled.ok
	inst.fmu.Unlock()
	w := waited.Round(time.Millisecond)
	switch {
	case never:
		m.addNote(path, fmt.Sprintf("%s: diagnostics unknown: %s has not reported any for it (waited %v)", m.display(path), server, w))
	case silent:
		m.addNote(path, fmt.Sprintf("%s: diagnostics may be stale or incomplete: %s published nothing for its last change within %v", m.display(path), server, w))
	default:
		m.addNote(path, fmt.Sprintf("%s: diagnostics may be stale or incomplete: %s did not finish analysing it within %v", m.display(path), server, w))
	}
}

// drainPullWait bounds how long Drain waits for the pull answers it asks
// for.
const drainPullWait = 500 * time.Millisecond

// maxListedFiles is how many files a note names before it summarizes.
const maxListedFiles = 3

// Drain returns the diagnostics that are new since the last Drain (see
// Registry.Drain), with notes saying which files' diagnostics may be stale
// or incomplete: a Settle that timed out, a server that failed, a file
// changed since its last Settle whose server is still working. Like
// Settle, it first brings the servers up to date with the disk; it does not
// wait for servers, except that a server serving pull diagnostics is asked
// about such files, for at most half a second. It returns
// an attachment holding only notes when there are no new diagnostics, so
// that silence never reads as "no errors"; nil, false when there is
// nothing at all.
func (m *Manager) Drain() (*diag.Attachment, bool) {
	m.syncDisk(context.Background(), nil)
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
	type check struct {
		d       *document
		inst    *instance
		version int
	}
	var checks, pulls []check
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
		checks = append(checks, check{d, inst, version})
		if v, _ := inst.evaluate(d.uri, version, time.Now(), evalOptions{quiet: m.opts.QuietPeriod}); v.pull {
			pulls = append(pulls, check{d, inst, version})
		}
	}
	// Servers that serve pull diagnostics are asked, briefly: an answer
	// is exact, and one that is analysed answers at once (a refresh after
	// a change, say, leaves the last answer in doubt).
	if len(pulls) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), drainPullWait)
		var wg sync.WaitGroup
		for _, c := range pulls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = c.inst.pull(ctx, c.d.uri)
			}()
		}
		wg.Wait()
		cancel()
	}
	for _, c := range checks {
		d, inst, version := c.d, c.inst, c.version
		if v, _ := inst.evaluate(d.uri, version, time.Now(), evalOptions{quiet: m.opts.QuietPeriod}); !v.f.Fresh() {
			if !inst.reported(d.uri) {
				m.addNote("busy:"+m.display(d.path), fmt.Sprintf("%s: diagnostics unknown: %s has not reported any for it yet",
					m.display(d.path), d.srv.cfg.Name))
				continue
			}
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

// Another document's change can change a document's set (a rename: the
// caller first, then the file that defines the new name), and a server
// may publish for the document's current version a set it computed
// before it took that change in, after the change was sent: gopls
// published `undefined: calc.Plus` for the caller that way. Arrival after
// the change proves nothing; what proves that the server has taken a
// change of document X in is its answer about X: a publish for X's
// version (or, from a server without versions, a publish for X after the
// change). Once every document changed after this one's last message has
// been answered, this one's set is current when it was published after
// the last of those answers, or when nothing more came for it for the
// server's quiet period after them (its set did not change: servers do
// not republish an unchanged set). A change the server never answers
// (its set for X did not change, and the server publishes only changes)
// is waited for only for the time the server takes to begin its work
// after a message (see pace.workQuiet), on an idle connection; the result
// is then partial, and the reason says so.

// crossState is what is known of the other documents' messages sent
// after a document's own.
type crossState struct {
	lastSeq   uint64    // the latest sentSeq among them; 0: none
	changed   bool      // one of them gave the server a new text
	ackSeq    uint64    // arrival of the latest answer to them
	ackAt     time.Time // and its time
	pending   string    // a document whose last message has no answer yet
	pendingAt time.Time // the latest such message's time
}

// crossOf looks at the documents opened or changed after t's last
// message. Call with fmu held.
func (inst *instance) crossOf(uri string, t *docTrack) crossState {
	var c crossState
	versioned := inst.s.pace.isVersioned()
	for u, x := range inst.docs {
		if u == uri || x.sentN <= t.sentN {
			continue
		}
		c.lastSeq = max(c.lastSeq, x.sentSeq)
		if x.realN <= t.sentN {
			continue // it gave the server no text it did not have then
		}
		c.changed = true
		answered := x.pubSeq > x.sentSeq && (!versioned || x.pubVersion != nil && *x.pubVersion >= x.version)
		if answered {
			if x.pubSeq > c.ackSeq {
				c.ackSeq = x.pubSeq
			}
			if x.lastAt.After(c.ackAt) {
				c.ackAt = x.lastAt
			}
			continue
		}
		if p := x.pulled; p.ok && p.version == x.version && p.sent >= x.sentN {
			continue // a pull answered after it: taken in
		}
		if c.pending == "" || x.sentAt.After(c.pendingAt) {
			c.pending, c.pendingAt = u, x.sentAt
		}
	}
	return c
}

// crossSettled says whether the other documents' changes sent after t's
// last message are known to be reflected in t's set (see crossOf); when
// not, how long until it should look again. why is a note for the
// reason when it settled without the server's answer to one of them.
// Call with fmu held.
func (inst *instance) crossSettled(t *docTrack, c crossState, now time.Time, o evalOptions,
	quietSince func(time.Time, time.Duration) (bool, time.Duration)) (ok bool, wait time.Duration, why string) {
	if !c.changed {
		return true, 0, ""
	}
	// Work the server began after the document's own message (a pass
	// over the documents that depend on the changed ones: gopls
	// diagnoses them after its diagnostics delay, under a progress of
	// its own) ends first.
	if n, next := inst.workSince(t.sentSeq, now); n > 0 {
		return false, next, ""
	}
	if c.pending != "" {
		q := inst.s.pace.workQuiet(o.quiet)
		if ok, wait := quietSince(c.pendingAt, q); !ok {
			return false, wait, ""
		}
		name := c.pending
		if p, ok := fileuri.ToPath(name); ok {
			name = filepath.Base(p)
		}
		return true, 0, fmt.Sprintf("; %s did not answer the change of %s sent after it (quiet for %v)",
			inst.s.cfg.Name, name, q.Round(time.Millisecond))
	}
	if c.ackSeq > 0 && t.pubSeq <= c.ackSeq {
		q := inst.s.pace.quiet(false, o.quiet, 0)
		if ok, wait := quietSince(c.ackAt, q); !ok {
			return false, wait, ""
		}
	}
	return true, 0, ""
}

// unansweredWait is how long a server silent after a change, which has
// answered changes before within longest, is waited for: four times
// that, and at least that plus 3 s (typescript-language-server answered
// changes in 365 ms on a quiet machine and in up to 3.3 s on a loaded
// one).
func unansweredWait(longest time.Duration) time.Duration {
	return max(4*longest, longest+3*time.Second)
}
