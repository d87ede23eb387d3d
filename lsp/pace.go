package lsp

import (
	"slices"
	"sync"
	"time"
)

// paceSamples is how many recent observations a pace keeps.
const paceSamples = 32

// maxQuiet caps the quiet period learned for a server: a server measured
// to publish many seconds apart is better reported as timed out than
// waited for without end.
const maxQuiet = 5 * time.Second

// pace is what Settle has measured of one server's timing, kept across
// its restarts: whether it sends document versions with its publishes,
// how long it takes from a document message to its first publish about
// that document, and how far apart the publishes answering one message
// can be (servers that publish in steps, such as one pass per linter).
type pace struct {
	mu        sync.Mutex
	versioned bool
	// findsAfter: it has published findings after an empty set for the
	// same version (gopls's analyzers).
	findsAfter bool
	first      []time.Duration // ring of changes' first-publish latencies
	nFirst     int
	// Rings of first-to-later publish gaps, after opens and after
	// changes: an open's steps are further apart (the project loads).
	tails [2][]time.Duration
	nTail [2]int
	// firstAnswer: the longest time seen from a start of the server to
	// its first non-empty answer (kept across restarts).
	firstAnswer time.Duration
	// workDelay: the longest time seen from a message of ours to the
	// server's first sign of work after it (a progress created or begun).
	workDelay time.Duration
}

// minWorkQuiet is the shortest wait, after a message other than a
// document's own (a save), for work the server may begin in answer to it
// (rust-analyzer begins cargo check 130 ms after a save on a quiet machine,
// and more than 430 ms after it on a busy one).
const minWorkQuiet = time.Second

// observeWorkDelay records the time from a message of ours to the first
// sign of the server's work after it.
func (p *pace) observeWorkDelay(d time.Duration) {
	p.mu.Lock()
	p.workDelay = max(p.workDelay, min(d, maxQuiet))
	p.mu.Unlock()
}

// workQuiet is how long after a message to wait for the work the server
// may begin in answer to it: twice the longest delay seen, at least
// minWorkQuiet and floor, at most maxQuiet.
func (p *pace) workQuiet(floor time.Duration) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return min(max(minWorkQuiet, floor, 2*p.workDelay), maxQuiet)
}

// observeFirstAnswer records the time from a start of the server to its
// first non-empty answer.
func (p *pace) observeFirstAnswer(d time.Duration) {
	p.mu.Lock()
	p.firstAnswer = max(p.firstAnswer, min(d, time.Minute))
	p.mu.Unlock()
}

// firstAnswerTime is the longest time seen from a start of the server to
// its first non-empty answer; 0 when none seen.
func (p *pace) firstAnswerTime() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.firstAnswer
}

func (p *pace) setVersioned() {
	p.mu.Lock()
	p.versioned = true
	p.mu.Unlock()
}

func (p *pace) setFindsAfterEmpty() {
	p.mu.Lock()
	p.findsAfter = true
	p.mu.Unlock()
}

func (p *pace) findsAfterEmpty() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.findsAfter
}

func (p *pace) isVersioned() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.versioned
}

// observeFirst records the latency from a change to the first publish
// answering it.
func (p *pace) observeFirst(d time.Duration) {
	p.mu.Lock()
	p.first, p.nFirst = pushRing(p.first, p.nFirst, d)
	p.mu.Unlock()
}

// observeTail records a later publish answering the same message (an
// open, or a change), gap after the first one. Gaps far beyond the
// server's own latency are republishes for other reasons (another file
// changed) and are not learned.
func (p *pace) observeTail(open bool, gap, latency time.Duration) {
	if gap > 4*latency+time.Second {
		return
	}
	k := kindOf(open)
	p.mu.Lock()
	p.tails[k], p.nTail[k] = pushRing(p.tails[k], p.nTail[k], gap)
	p.mu.Unlock()
}

func kindOf(open bool) int {
	if open {
		return 0
	}
	return 1
}

func pushRing(ring []time.Duration, n int, d time.Duration) ([]time.Duration, int) {
	if len(ring) < paceSamples {
		return append(ring, d), n + 1
	}
	ring[n%paceSamples] = d
	return ring, n + 1
}

// quiet is how long to wait after the last publish answering a message
// whose first answer took latency, before taking the set as final: at
// least floor, at least an eighth of the server's pace (the larger of this
// latency and the median of its changes' latencies), and twice the longest
// gap it has been seen to leave between the steps of one answer to the
// same kind of message (an open's steps are further apart). After an
// open, the gaps seen after changes count too.
// (typescript-language-server, cold, can publish an empty set and the
// real one 60 ms later, 2 s after the open: an eighth is 250 ms.)
func (p *pace) quiet(open bool, floor, latency time.Duration) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.first) > 0 {
		s := slices.Clone(p.first)
		slices.Sort(s)
		latency = max(latency, s[len(s)/2])
	}
	q := max(floor, latency/8)
	for _, t := range p.tails[1] {
		q = max(q, 2*t)
	}
	if open {
		for _, t := range p.tails[0] {
			q = max(q, 2*t)
		}
	}
	return min(q, maxQuiet)
}

// answeredChanges returns how many changes' first publishes are recorded
// (at most paceSamples) and the longest of their latencies.
func (p *pace) answeredChanges() (int, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var longest time.Duration
	for _, d := range p.first {
		longest = max(longest, d)
	}
	return len(p.first), longest
}
