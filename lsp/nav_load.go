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

// firstLoadGrace is how long after its start a server that answers before
// its first load waits for that load to begin: clangd begins its
// background index a few milliseconds after the first file's compile
// command is known, and never without a compilation database.
const firstLoadGrace = 2 * time.Second

// navLoad is what navigation knows about an instance's loading, from its
// work-done progress. Guarded by the instance's fmu.
type navLoad struct {
	start  time.Time
	titles map[string]string // active progress token -> its title
	begun  int               // progresses begun
	ended  int               // progresses ended
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

// navProgress records a progress notification of the server's own work.
// Call with fmu held.
func (inst *instance) navProgress(tok, kind string, params json.RawMessage) {
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
			l.titles = map[string]string{}
		}
		l.titles[tok] = title
		l.begun++
	case "end":
		if _, ok := l.titles[tok]; ok {
			delete(l.titles, tok)
			l.ended++
		}
	}
}

// loadProfile is how a server's answers relate to its loading.
type loadProfile int

const (
	// profileProgress: the server may answer while a work-done progress
	// is active; such an answer may be incomplete. For unknown servers.
	profileProgress loadProfile = iota
	// profileWaits: the server's answers wait for its loading (gopls,
	// pyright): its progress says nothing about an answer.
	profileWaits
	// profileFirstLoad: as profileProgress, and the server answers before
	// its first load has even begun (typescript-language-server answers
	// references with nothing until "Initializing JS/TS language
	// features" ends; clangd before its background index has run).
	profileFirstLoad
)

// profileOf knows the servers measured: by the command's base name.
func profileOf(cfg *ServerConfig) (loadProfile, time.Duration) {
	base := strings.ToLower(filepath.Base(cfg.Command))
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".exe"), ".cmd")
	switch base {
	case "gopls", "pyright-langserver", "basedpyright-langserver":
		return profileWaits, 0
	case "typescript-language-server":
		// Its first load begins seconds after the first open, once
		// tsserver runs: wait for it as long as for any load.
		return profileFirstLoad, 0
	case "clangd":
		return profileFirstLoad, firstLoadGrace
	}
	return profileProgress, 0
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
}

// loadStateLocked judges the instance's loading now. Call with fmu held.
func (inst *instance) loadStateLocked(prof loadProfile, grace time.Duration, now time.Time) loadState {
	if prof == profileWaits {
		return loadState{}
	}
	l := &inst.nav
	name := inst.s.cfg.Name
	if len(l.titles) > 0 {
		titles := make([]string, 0, len(l.titles))
		for _, t := range l.titles {
			if t != "" {
				titles = append(titles, t)
			}
		}
		sort.Strings(titles)
		what := "work-done progress active"
		if len(titles) > 0 {
			what = strings.Join(titles, "; ")
		}
		return loadState{loading: true, firstPending: l.ended == 0 && prof == profileFirstLoad,
			reason: fmt.Sprintf("%s was still loading the workspace (%s)", name, what)}
	}
	if prof == profileFirstLoad && l.ended == 0 {
		st := loadState{firstPending: true, reason: fmt.Sprintf("%s had not finished loading the workspace (it answers before its first load ends)", name)}
		if grace > 0 {
			st.until = l.start.Add(grace)
			st.loading = now.Before(st.until)
		} else {
			st.loading = true
		}
		return st
	}
	return loadState{}
}

// awaitLoad waits, at most wait (and ctx), until inst is no longer loading.
// It returns the state at the end.
func (inst *instance) awaitLoad(ctx context.Context, prof loadProfile, grace, wait time.Duration) loadState {
	if prof == profileWaits {
		return loadState{}
	}
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
		st := inst.loadStateLocked(prof, grace, now)
		ch := inst.fresh
		inst.fmu.Unlock()
		if !st.loading || wait <= 0 || !now.Before(deadline) {
			return st
		}
		end := deadline
		if !st.until.IsZero() && st.until.Before(end) {
			end = st.until
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
