package ideserver

import "time"

// workerIdle is how long a handler goroutine waits for another call before
// it exits.
const workerIdle = 30 * time.Second

// workers runs tool calls on reused goroutines. A fresh goroutine per call
// starts with a small stack that JSON decoding grows again every time;
// reuse keeps that work (and the allocation) out of each call.
type workers struct {
	jobs chan func()   // idle workers receive here
	stop chan struct{} // closed at shutdown: idle workers exit
}

func newWorkers() *workers {
	return &workers{jobs: make(chan func()), stop: make(chan struct{})}
}

// run hands f to an idle worker or starts one with spawn (which must run
// the function it is given on a new goroutine).
func (w *workers) run(f func(), spawn func(func())) {
	select {
	case w.jobs <- f:
	default:
		spawn(func() { w.loop(f) })
	}
}

func (w *workers) loop(f func()) {
	t := time.NewTimer(workerIdle)
	defer t.Stop()
	for {
		f()
		f = nil // an idle worker must not keep the last call (its arguments) alive
		t.Reset(workerIdle)
		select {
		case f = <-w.jobs:
		case <-t.C:
			return
		case <-w.stop:
			return
		}
	}
}
