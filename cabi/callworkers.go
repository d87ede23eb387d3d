package main

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Calls run on goroutines that linger after a call, for lingerFor, ready
// to run the next one: starting a goroutine wakes a parked thread, which
// costs tens of microseconds on a busy or virtual machine (measured: a
// trivial asynchronous call from Python or Node went from about 100 us of
// overhead to about 15), and an agent's calls come in bursts (a tool call,
// then its diagnostics, then a settle). A lingering goroutine spins,
// yielding between looks, instead of parking; after lingerFor without work
// it exits. At most GOMAXPROCS goroutines linger at once, so the cost is
// bounded: lingerFor of processor time per idle processor after a burst.

// lingerFor is how long a call's goroutine waits for another call.
const lingerFor = 200 * time.Microsecond

// lingerer is a goroutine waiting for a call.
type lingerer struct {
	work atomic.Pointer[callWork]
}

// callWork is one call to run.
type callWork struct {
	c    *asyncCall
	body func() callOutcome
}

// lingering holds the goroutines waiting for a call, most recent last.
var lingering struct {
	sync.Mutex
	idle []*lingerer
}

// dispatch runs body for c on a lingering goroutine, or on a new one.
func dispatch(c *asyncCall, body func() callOutcome) {
	w := &callWork{c, body}
	lingering.Lock()
	var l *lingerer
	if n := len(lingering.idle); n > 0 {
		l = lingering.idle[n-1]
		lingering.idle = lingering.idle[:n-1]
	}
	lingering.Unlock()
	if l != nil {
		l.work.Store(w)
		return
	}
	go callWorker(w)
}

// callWorker runs w, then lingers for further calls.
func callWorker(w *callWork) {
	id := goid()
	for w != nil {
		w.c.run(id, w.body)
		w = linger()
	}
}

// linger waits up to lingerFor for a call and returns it, or nil.
func linger() *callWork {
	l := &lingerer{}
	lingering.Lock()
	if len(lingering.idle) >= runtime.GOMAXPROCS(0) {
		lingering.Unlock()
		return nil
	}
	lingering.idle = append(lingering.idle, l)
	lingering.Unlock()
	deadline := time.Now().Add(lingerFor)
	for {
		if w := l.work.Load(); w != nil {
			return w
		}
		if time.Now().After(deadline) {
			break
		}
		runtime.Gosched()
	}
	lingering.Lock()
	for i, x := range lingering.idle {
		if x == l {
			lingering.idle = append(lingering.idle[:i], lingering.idle[i+1:]...)
			lingering.Unlock()
			return nil
		}
	}
	lingering.Unlock()
	// A dispatch took l off the list: its call is being handed over.
	for {
		if w := l.work.Load(); w != nil {
			return w
		}
		runtime.Gosched()
	}
}
