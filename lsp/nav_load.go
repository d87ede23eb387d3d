package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultLoadWait is the default of ManagerOptions.LoadWait: how long a
// navigation request waits for a server that is still loading the
// workspace before it asks anyway (and says the answer may be incomplete).
const DefaultLoadWait = 30 * time.Second

// firstLoadGrace is the shortest first-load grace: how long after its
// start a server that has answered nothing yet may still be about to begin
// loading, or be analysing what it was just given (clangd begins its
// background index a few milliseconds after the first file's compile
// command is known; bash-language-server answers navigation about a file
// with nothing until it has analysed it). A server's own pace lengthens
// it (see firstAnswerGrace).
const firstLoadGrace = 2 * time.Second

// createdWait bounds how long a progress token the server created
// (window/workDoneProgress/create) and has not begun counts as loading.
const createdWait = time.Second

// navLoad is what navigation knows about an instance's loading, from its
// work-done progress. Guarded by the instance's fmu.
type navLoad struct {
	// caps are the navigation providers the server announced in its
	// initialize answer; nil when not known.
	caps   map[string]bool
	start  time.Time
	titles map[string]string // active progress token -> its title
	// beganAt: active progress token -> the arrival number of its begin.
	beganAt map[string]uint64
	// heard: active progress token -> when it last began or reported.
	heard map[string]time.Time
	// created: tokens the server created and has not begun.
	created map[string]createdToken
	begun   int // progresses begun
	ended   int // progresses ended
	// answered: documents (URIs) the server has answered a navigation
	// request about with something.
	answered map[string]bool
	// firstAnswer: when the server first answered anything non-empty (a
	// publish or pull with findings, a navigation answer); zero: not yet.
	firstAnswer time.Time
}

// navTokenPrefix starts the work-done tokens navigation requests carry
// (as JSON strings), so that the progress a server reports for a request
// itself is told from its own work.
const navTokenPrefix = "idebridge-nav-"

var navTokens atomic.Uint64

func nextNavToken() string { return fmt.Sprintf("%s%d", navTokenPrefix, navTokens.Add(1)) }

// isNavToken reports whether tok, a progress token as raw JSON, is one of
// navigation's request tokens.
func isNavToken(tok string) bool { return strings.HasPrefix(tok, `"`+navTokenPrefix) }

// createdToken is when a token was created, and the arrival number of the
// request that created it.
type createdToken struct {
	at  time.Time
	seq uint64
}

// navCreated records a window/workDoneProgress/create: until the token
// begins (or createdWait passes) the server counts as loading. Call with
// fmu held.
func (inst *instance) navCreated(seq uint64, params json.RawMessage) {
	var p struct {
		Token json.RawMessage `json:"token"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.Token) == 0 {
		return
	}
	l := &inst.nav
	if l.created == nil {
		l.created = map[string]createdToken{}
	}
	now := time.Now()
	for tok, c := range l.created { // bounded: stale ones go
		if now.Sub(c.at) > createdWait {
			delete(l.created, tok)
		}
	}
	l.created[string(p.Token)] = createdToken{now, seq}
}

// createdPending returns how many tokens the server created and has not
// begun still count as loading at now, and when the first of them stops
// counting. Call with fmu held.
func (inst *instance) createdPending(now time.Time) (int, time.Duration) {
	n, next := 0, time.Duration(0)
	for _, c := range inst.nav.created {
		if left := createdWait - now.Sub(c.at); left > 0 {
			n++
			if next == 0 || left < next {
				next = left
			}
		}
	}
	return n, next
}

// stallAfter is how long a work-done progress may go without a report
// before it is taken as stalled: a server whose progress begins and never
// ends (or whose end was lost) does not hold answers for ever. A stalled
// progress still makes answers partial; it is just no longer waited for.
const stallAfter = 10 * time.Second

// workActive returns how many of the server's progresses are active and
// reporting, the titles of those that have stalled (no report for
// stallAfter), and when the next active one would stall. Call with fmu
// held.
func (inst *instance) workActive(now time.Time) (n int, stalled []string, next time.Duration) {
	for tok := range inst.active {
		heard, ok := inst.nav.heard[tok]
		if !ok {
			n++
			continue
		}
		if left := stallAfter - now.Sub(heard); left > 0 {
			n++
			if next == 0 || left < next {
				next = left
			}
			continue
		}
		title := inst.nav.titles[tok]
		if title == "" {
			title = "untitled"
		}
		stalled = append(stalled, title)
	}
	sort.Strings(stalled)
	return n, stalled, next
}

// stallNote says which progresses were not waited for, or "".
func stallNote(stalled []string) string {
	if len(stalled) == 0 {
		return ""
	}
	return fmt.Sprintf("; its work-done progress (%s) stopped reporting %v before and was not waited for", strings.Join(stalled, "; "), stallAfter)
}

// loadingSince reports whether the server is at work that began by
// arrival number seq: a progress of its own begun then and active, or a
// token it created and has not begun. Call with fmu held.
func (inst *instance) loadingSince(seq uint64, now time.Time) bool {
	for tok, began := range inst.active {
		if heard, ok := inst.nav.heard[tok]; ok && now.Sub(heard) >= stallAfter {
			continue // stalled
		}
		if began <= seq {
			return true
		}
	}
	for _, c := range inst.nav.created {
		if now.Sub(c.at) <= createdWait && c.seq <= seq {
			return true
		}
	}
	return false
}

// workSince returns how many of the server's progresses begun after
// arrival number seq are active and reporting, or created and not begun,
// leaving out the requests' own; and when to look again (a progress
// stalls, a created token stops counting), 0 for no sooner than the next
// event. Call with fmu held.
func (inst *instance) workSince(seq uint64, now time.Time) (int, time.Duration) {
	n, next := 0, time.Duration(0)
	soon := func(d time.Duration) {
		if next == 0 || d < next {
			next = d
		}
	}
	for tok, began := range inst.active {
		if began <= seq {
			continue
		}
		if _, own := inst.reqOwn[tok]; own {
			continue
		}
		if heard, ok := inst.nav.heard[tok]; ok {
			left := stallAfter - now.Sub(heard)
			if left <= 0 {
				continue
			}
			soon(left)
		}
		n++
	}
	for _, c := range inst.nav.created {
		if left := createdWait - now.Sub(c.at); left > 0 && c.seq > seq {
			n++
			soon(left)
		}
	}
	return n, next
}

// workBegan learns, from the server's first sign of work (a progress
// created or begun, not a request's own) after a message of ours, how
// long it takes to begin work in answer to one. Call with fmu held.
func (inst *instance) workBegan() {
	if inst.workSent == inst.sent || inst.markTime.IsZero() {
		return
	}
	inst.workSent = inst.sent
	inst.s.pace.observeWorkDelay(time.Since(inst.markTime))
}

// inFirstGrace reports whether, at now, a server that has answered
// nothing non-empty yet is still within its first-load grace, and until
// when. Call with fmu held.
func (inst *instance) inFirstGrace(now time.Time) (bool, time.Time) {
	if !inst.nav.firstAnswer.IsZero() {
		return false, time.Time{}
	}
	end := inst.nav.start.Add(inst.firstAnswerGrace(0))
	return now.Before(end), end
}

// docGraceEnd is when the first-load grace ends for a navigation answer
// about the document uri from a server that has answered nothing about it
// yet: the grace counts from the later of the server's start and the last
// time the document was sent to it (didOpen or didChange), since a server
// analyses a document only once it has it, and one slow to start (a Node
// server on a busy machine can take seconds to answer initialize) would
// otherwise see its grace spent before it was given anything. Call with
// fmu held.
func (inst *instance) docGraceEnd(uri string, wait time.Duration) time.Time {
	from := inst.nav.start
	if dt := inst.docs[uri]; dt != nil && dt.sentAt.After(from) {
		from = dt.sentAt
	}
	return from.Add(inst.firstAnswerGrace(wait))
}

// emptyMayBeEarly reports whether an empty navigation answer about the
// document uri, received at now, may only mean that the server has not
// analysed enough yet, so that it is asked again (within the load wait)
// before it is reported: the server has answered no navigation request
// about the document with something, and either the document was sent to
// it less than its first-answer grace ago (see docGraceEnd), or the server
// publishes diagnostics and has reported none for the document yet (it is
// still at it). A publish for the document does not end the grace: a
// server may lint a document apart from the analysis navigation needs
// (bash-language-server runs shellcheck beside its background analysis of
// the workspace). Never for a request about no document. Call with fmu
// held.
func (inst *instance) emptyMayBeEarly(uri string, wait time.Duration, now time.Time) bool {
	if uri == "" || inst.nav.answered[uri] {
		return false
	}
	if now.Before(inst.docGraceEnd(uri, wait)) {
		return true
	}
	if dt := inst.docs[uri]; dt != nil && !dt.everPub && !dt.pulled.ok {
		for _, o := range inst.docs {
			if o.everPub {
				return true
			}
		}
	}
	return false
}

// navAnswered records that the server answered something non-empty (about
// uri, when not empty). Call with fmu held.
func (inst *instance) navAnswered(uri string) {
	l := &inst.nav
	if l.firstAnswer.IsZero() {
		l.firstAnswer = time.Now()
		inst.s.pace.observeFirstAnswer(l.firstAnswer.Sub(l.start))
	}
	if uri == "" {
		return
	}
	if l.answered == nil {
		l.answered = map[string]bool{}
	}
	if len(l.answered) < 4096 {
		l.answered[uri] = true
	}
}

// navProgress records a progress notification of the server's own work.
// Call with fmu held.
func (inst *instance) navProgress(seq uint64, tok, kind string, params json.RawMessage) {
	l := &inst.nav
	switch kind {
	case "begin":
		var p struct {
			Value struct {
				Title   string `json:"title"`
				Message string `json:"message"`
			} `json:"value"`
		}
		_ = json.Unmarshal(params, &p)
		title := p.Value.Title
		if title == "" {
			title = p.Value.Message
		}
		if l.titles == nil {
			l.titles, l.beganAt, l.heard = map[string]string{}, map[string]uint64{}, map[string]time.Time{}
		}
		delete(l.created, tok)
		l.titles[tok] = title
		l.beganAt[tok] = seq
		if !isStatusToken(tok) {
			// A readiness signal is a state the server says again when it
			// changes, not a progress that reports: it never stalls.
			l.heard[tok] = time.Now()
		}
		l.begun++
	case "report":
		if _, ok := l.titles[tok]; ok && !isStatusToken(tok) {
			l.heard[tok] = time.Now()
		}
	case "end":
		delete(l.created, tok)
		if _, ok := l.titles[tok]; ok {
			delete(l.titles, tok)
			delete(l.beganAt, tok)
			delete(l.heard, tok)
			l.ended++
		}
	}
}

// loadTuning is what a server's name may tune: defaults of the loading
// model, never the model itself (which reads only what the server does).
type loadTuning struct {
	// expectLoad: until a first work-done progress of the server's has
	// ended, its answers may be partial although it reports no loading
	// yet: it begins its first load only later (typescript-language-server
	// once tsserver runs, seconds after the first open; clangd its
	// background index).
	expectLoad bool
	// beginGrace, with expectLoad: how long after its start to wait for
	// that load to begin; 0: as long as the load wait.
	beginGrace time.Duration
}

// tuningOf returns the defaults measured for known servers, by the
// command's base name; other servers get none and are judged by what they
// do alone.
func tuningOf(cfg *ServerConfig) loadTuning {
	base := strings.ToLower(filepath.Base(cfg.Command))
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".exe"), ".cmd")
	switch base {
	case "typescript-language-server":
		return loadTuning{expectLoad: true}
	case "clangd":
		return loadTuning{expectLoad: true, beginGrace: firstLoadGrace}
	}
	return loadTuning{}
}

// loadState is a snapshot of an instance's loading, for one request.
type loadState struct {
	loading bool
	reason  string
	// firstPending: the server has not finished its first load.
	firstPending bool
	// until is when waiting for a first load to begin stops (set only
	// while no progress is active); zero: wait for the load as long as
	// allowed.
	until time.Time
	// beganAfter: a progress that began after the request was sent is
	// active (a load that began right after it, or the request's own
	// work).
	beganAfter bool
}

// noSeq, as loadStateLocked's since, counts every active progress.
const noSeq = ^uint64(0)

// loadStateLocked judges the instance's loading now, counting the
// progresses begun up to arrival number since (later ones are reported as
// beganAfter). Call with fmu held.
func (inst *instance) loadStateLocked(tun loadTuning, since uint64, now time.Time) loadState {
	l := &inst.nav
	name := inst.s.cfg.Name
	var titles []string
	active, after := 0, false
	for tok, t := range l.titles {
		if l.beganAt[tok] > since {
			after = true
			continue
		}
		active++
		if t != "" {
			titles = append(titles, t)
		}
	}
	created := 0
	for _, c := range l.created {
		if now.Sub(c.at) > createdWait {
			continue
		}
		if c.seq > since {
			after = true
			continue
		}
		created++
	}
	if active > 0 || created > 0 {
		sort.Strings(titles)
		what := "work-done progress active"
		if len(titles) > 0 {
			what = strings.Join(titles, "; ")
		} else if active == 0 {
			what = "a work-done progress it created has not begun"
		}
		return loadState{loading: true, firstPending: l.ended == 0 && tun.expectLoad, beganAfter: after,
			reason: fmt.Sprintf("%s was still loading the workspace (%s)", name, what)}
	}
	if tun.expectLoad && l.ended == 0 {
		st := loadState{firstPending: true, beganAfter: after,
			reason: fmt.Sprintf("%s had not finished loading the workspace (it answers before its first load ends)", name)}
		if tun.beginGrace > 0 {
			st.until = l.start.Add(tun.beginGrace)
			st.loading = now.Before(st.until)
			if !st.loading && l.begun == 0 {
				// clangd indexes in the background only with a
				// compilation database.
				st.reason = fmt.Sprintf("%s has not indexed the workspace (it reported no indexing; without a compile_commands.json "+
					"it knows only the files it has open and what they include)", name)
			}
		} else {
			st.loading = true
		}
		return st
	}
	return loadState{beganAfter: after}
}

// firstAnswerGrace is how long after its start a server that has not
// answered anything about a document may still be analysing it: twice the
// time this server has taken to its first non-empty answer, at least
// firstLoadGrace, at most wait.
func (inst *instance) firstAnswerGrace(wait time.Duration) time.Duration {
	g := max(firstLoadGrace, 2*inst.s.pace.firstAnswerTime())
	if wait > 0 {
		g = min(g, wait)
	}
	return g
}

// awaitLoad waits, at most wait (and ctx), until inst is no longer loading.
// It returns the state at the end.
//
// A progress that has stopped reporting (stallAfter) is not waited for
// once the server has answered about the document uri (published or
// pulled its diagnostics, or answered a navigation request about it with
// something; any time when uri is ""): the state then says so.
func (inst *instance) awaitLoad(ctx context.Context, tun loadTuning, uri string, wait time.Duration) loadState {
	deadline := time.Now().Add(wait)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		now := time.Now()
		inst.fmu.Lock()
		st := inst.loadStateLocked(tun, noSeq, now)
		ch := inst.fresh
		working, stalled, next := inst.workActive(now)
		created, _ := inst.createdPending(now)
		answered := uri == "" || inst.nav.answered[uri]
		if dt := inst.docs[uri]; dt != nil && (dt.everPub || dt.pulled.ok) {
			answered = true
		}
		inst.fmu.Unlock()
		if !st.loading || wait <= 0 || !now.Before(deadline) {
			return st
		}
		if working == 0 && created == 0 && len(stalled) > 0 && answered {
			// Only stalled progress: not waited for; the answer says so.
			st.reason += fmt.Sprintf(" (it stopped reporting %v before)", stallAfter)
			return st
		}
		end := deadline
		if !st.until.IsZero() && st.until.Before(end) {
			end = st.until
		}
		// Created tokens stop counting on their own, and progress stalls.
		end = minTime(end, now.Add(createdWait))
		if next > 0 {
			end = minTime(end, now.Add(next))
		}
		if timer == nil {
			timer = time.NewTimer(end.Sub(now))
		} else {
			timer.Reset(end.Sub(now))
		}
		select {
		case <-ch:
		case <-timer.C:
		case <-ctx.Done():
			return st
		case <-inst.gone:
			return st
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// onStatus reads a server's own readiness signal, and counts it as a
// work-done progress of its own under a token of the client's making
// (begun when the server says it is busy, ended when it says it is
// ready), so that Settle and navigation treat it as any progress:
// rust-analyzer's experimental/serverStatus (quiescent: false while it
// loads the workspace or runs cargo check), the Dart analysis server's
// $/analyzerStatus (isAnalyzing), jdtls's language/status (Starting, then
// Started or ServiceReady).
func (inst *instance) onStatus(seq uint64, method string, params json.RawMessage) {
	var p struct {
		Quiescent   *bool  `json:"quiescent"`
		Health      string `json:"health"`
		Message     string `json:"message"`
		IsAnalyzing *bool  `json:"isAnalyzing"`
		Type        string `json:"type"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	var busy bool
	title := method
	switch method {
	case "experimental/serverStatus":
		if p.Quiescent == nil {
			return
		}
		busy = !*p.Quiescent
		if p.Message != "" {
			title += ": " + p.Message
		}
	case "$/analyzerStatus":
		if p.IsAnalyzing == nil {
			return
		}
		busy = *p.IsAnalyzing
	case "language/status":
		switch p.Type {
		case "Starting":
			busy = true
		case "Started", "ServiceReady":
		default:
			return
		}
		if p.Message != "" {
			title += ": " + p.Message
		}
	}
	tok, _ := json.Marshal(statusTokenPrefix + method)
	inst.fmu.Lock()
	_, active := inst.active[string(tok)]
	inst.fmu.Unlock()
	kind := "end"
	if busy {
		kind = "begin"
		if active {
			kind = "report" // still busy: it is alive
		}
	} else if !active {
		return
	}
	msg, _ := json.Marshal(map[string]any{"token": json.RawMessage(tok), "value": map[string]any{"kind": kind, "title": title}})
	inst.onProgress(seq, msg)
}

// statusTokenPrefix starts the token under which a server's own
// readiness signal is counted as a progress (see onStatus).
const statusTokenPrefix = "idebridge-status:"

// isStatusToken reports whether tok, a progress token as raw JSON, stands
// for a server's readiness signal.
func isStatusToken(tok string) bool { return strings.HasPrefix(tok, `"`+statusTokenPrefix) }

// statusBusy returns what the server's own readiness signal says it is
// busy with, or "" when it says it is ready or sends none. Call with fmu
// held.
func (inst *instance) statusBusy() string {
	for tok := range inst.active {
		if isStatusToken(tok) {
			if t := inst.nav.titles[tok]; t != "" {
				return t
			}
			return "its readiness signal"
		}
	}
	return ""
}

// navProviders reads which navigation providers an initialize result
// announces: a provider is offered unless absent, null or false.
func navProviders(result json.RawMessage) map[string]bool {
	var r struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(result, &r) != nil || r.Capabilities == nil {
		return nil
	}
	caps := map[string]bool{}
	for k, v := range r.Capabilities {
		s := string(v)
		caps[k] = s != "" && s != "null" && s != "false"
	}
	return caps
}

// navProvider names the server capability that offers each method.
var navProvider = map[string]string{
	"textDocument/definition":           "definitionProvider",
	"textDocument/declaration":          "declarationProvider",
	"textDocument/typeDefinition":       "typeDefinitionProvider",
	"textDocument/implementation":       "implementationProvider",
	"textDocument/references":           "referencesProvider",
	"textDocument/hover":                "hoverProvider",
	"textDocument/documentSymbol":       "documentSymbolProvider",
	"workspace/symbol":                  "workspaceSymbolProvider",
	"textDocument/prepareCallHierarchy": "callHierarchyProvider",
	"callHierarchy/incomingCalls":       "callHierarchyProvider",
	"callHierarchy/outgoingCalls":       "callHierarchyProvider",
	"textDocument/rename":               "renameProvider",
}

// offers reports whether the instance's server offers method, and the
// capability that says so; true when not known.
func (inst *instance) offers(method string) (bool, string) {
	name, ok := navProvider[method]
	if !ok {
		return true, ""
	}
	inst.fmu.Lock()
	defer inst.fmu.Unlock()
	if inst.nav.caps == nil {
		return true, name
	}
	return inst.nav.caps[name], name
}
