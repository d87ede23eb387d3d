package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/idebridge/idebridge/lsp"
)

// progressHelp documents the progress line and -q in a command's help.
const progressHelp = "While a step takes more than a second (a language server starting, its first\n" +
	"load), a line on standard error says what it waits for, with the server's own\n" +
	"percentage; it is erased before the output. Nothing is shown when standard\n" +
	"error is not a terminal, or with -q."

// progressDelay is how long a step runs before the progress line shows
// it: quick steps print nothing. A variable for tests.
var progressDelay = time.Second

// progressTick is how often the progress line is redrawn.
const progressTick = 200 * time.Millisecond

// stderrIsTerminal reports whether w is an interactive terminal; a
// variable for tests.
var stderrIsTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressLine shows on standard error, on one line redrawn in place,
// what a command waits for once a step has taken longer than
// progressDelay: a language server starting, or its work-done progress
// (its first load, with the server's own percentage). The line is
// cleared when the step ends and when the command ends, so that the
// command's own output is never mixed with it. It is silent (nil) when
// standard error is not a terminal or with -q.
type progressLine struct {
	w     io.Writer
	mu    sync.Mutex
	steps map[string]*progressStep // by server and token
	drawn bool
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

type progressStep struct {
	server, what string
	pct          int
	since        time.Time
}

// newProgressLine returns the progress line for inv, or nil when it must
// be silent.
func newProgressLine(inv *invocation, quiet bool) *progressLine {
	if quiet || !stderrIsTerminal(inv.Stderr) {
		return nil
	}
	p := &progressLine{w: inv.Stderr, steps: map[string]*progressStep{}, stop: make(chan struct{}), done: make(chan struct{})}
	go p.run()
	return p
}

// onEvent is the manager's OnEvent; nil for a silent line.
func (p *progressLine) onEvent() func(lsp.Event) {
	if p == nil {
		return nil
	}
	return func(e lsp.Event) {
		p.mu.Lock()
		defer p.mu.Unlock()
		key := e.Server + "\x00start"
		switch e.Kind {
		case lsp.EventStarting:
			p.steps[key] = &progressStep{server: e.Server, what: "starting", pct: -1, since: time.Now()}
		case lsp.EventRunning, lsp.EventFailed:
			delete(p.steps, key)
		case lsp.EventProgress:
			key = e.Server + "\x00" + e.Token
			switch e.Progress {
			case "begin":
				p.steps[key] = &progressStep{server: e.Server, what: strings.TrimSpace(e.Title + " " + e.Message), pct: e.Percentage, since: time.Now()}
			case "report":
				if s := p.steps[key]; s != nil {
					if e.Message != "" {
						s.what = e.Message
					}
					if e.Percentage >= 0 {
						s.pct = e.Percentage
					}
				}
			case "end":
				delete(p.steps, key)
			}
		}
	}
}

func (p *progressLine) run() {
	defer close(p.done)
	t := time.NewTicker(progressTick)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.draw()
		}
	}
}

// draw shows the oldest step that has run longer than progressDelay, or
// clears the line when there is none.
func (p *progressLine) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	var steps []*progressStep
	for _, s := range p.steps {
		if time.Since(s.since) >= progressDelay {
			steps = append(steps, s)
		}
	}
	if len(steps) == 0 {
		p.clear()
		return
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].since.Before(steps[j].since) })
	s := steps[0]
	line := s.server + ": " + s.what
	if s.pct >= 0 {
		line += fmt.Sprintf(" %d%%", s.pct)
	}
	line += fmt.Sprintf(" (%ds)", int(time.Since(s.since).Seconds()))
	if len(steps) > 1 {
		line += fmt.Sprintf(" and %d more", len(steps)-1)
	}
	if r := []rune(line); len(r) > 79 {
		line = string(r[:78]) + "…"
	}
	fmt.Fprint(p.w, "\r\x1b[K"+line)
	p.drawn = true
}

// clear erases the line if it shows something. Call with p.mu held.
func (p *progressLine) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// Pause erases the line so that the command can print; the next tick
// draws it again while something is still running.
func (p *progressLine) Pause() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.clear()
	p.mu.Unlock()
}

// Close stops the line and erases it.
func (p *progressLine) Close() {
	if p == nil {
		return
	}
	p.once.Do(func() { close(p.stop) })
	<-p.done
	p.mu.Lock()
	p.clear()
	p.mu.Unlock()
}
