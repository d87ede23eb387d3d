package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/idebridge/idebridge/lsp"
)

// The progress line shows a server's start, then its work with the
// server's percentage, and nothing once every step has ended; only on a
// terminal, and never with -q.
func TestProgressLine(t *testing.T) {
	delay, isTerm := progressDelay, stderrIsTerminal
	t.Cleanup(func() { progressDelay, stderrIsTerminal = delay, isTerm })
	progressDelay = 0

	var buf bytes.Buffer
	inv := &invocation{Stderr: &buf}
	stderrIsTerminal = func(io.Writer) bool { return false }
	if p := newProgressLine(inv, false); p != nil {
		t.Error("a progress line when standard error is not a terminal")
	}
	stderrIsTerminal = func(io.Writer) bool { return true }
	if p := newProgressLine(inv, true); p != nil {
		t.Error("a progress line with -q")
	}
	if p := newProgressLine(inv, false); p == nil {
		t.Error("no progress line on a terminal")
	} else {
		p.Close()
	}
	// Drawn by hand, without the ticker's goroutine.
	p := &progressLine{w: &buf, steps: map[string]*progressStep{}}
	on := p.onEvent()
	step := func(e lsp.Event, want string) {
		t.Helper()
		on(e)
		buf.Reset()
		p.draw()
		got := buf.String()
		if want == "" {
			if strings.Contains(strings.TrimPrefix(got, "\r\x1b[K"), "gopls") {
				t.Errorf("after %+v: drew %q, want nothing", e, got)
			}
			return
		}
		if !strings.HasPrefix(got, "\r\x1b[K"+want) {
			t.Errorf("after %+v: drew %q, want %q", e, got, want)
		}
	}
	step(lsp.Event{Server: "gopls", Kind: lsp.EventStarting, Percentage: -1}, "gopls: starting (")
	step(lsp.Event{Server: "gopls", Kind: lsp.EventRunning, Percentage: -1}, "")
	step(lsp.Event{Server: "gopls", Kind: lsp.EventProgress, Progress: "begin", Token: "1", Title: "Loading packages", Percentage: 0}, "gopls: Loading packages 0% (")
	step(lsp.Event{Server: "gopls", Kind: lsp.EventProgress, Progress: "report", Token: "1", Percentage: 45}, "gopls: Loading packages 45% (")
	step(lsp.Event{Server: "gopls", Kind: lsp.EventProgress, Progress: "end", Token: "1", Percentage: -1}, "")
}
