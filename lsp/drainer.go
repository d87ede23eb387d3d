package lsp

import (
	"sort"
	"sync"

	"github.com/idebridge/idebridge/diag"
	"github.com/idebridge/idebridge/internal/fileuri"
	"github.com/idebridge/idebridge/lspdiag"
)

// Drainer is one client's delivered-diagnostics memory on a Manager that
// several clients share (a project's Manager in the shared runtime, see
// package warm): its Drain delivers what is new to this client, whoever
// else drained, where the Manager's own Drain delivers each diagnostic
// once, to whichever caller drains first.
//
// A Drainer sees the files its client opened and told it about (Watch),
// and the files no client has open that their servers report on (what
// they publish on their own, such as the other files of a workspace
// gopls diagnoses): not the files
// only other clients opened, unless their server diagnoses its workspace
// (it was seen publishing for a file nobody opened), which would publish
// for them in a process of the client's own too (lspdiag.Reader has the
// rule). Its first Drain delivers what the servers
// have published for them and still stands, also what they published
// before the Drainer was made, so that a client that opens and settles
// files and then drains gets what a Manager of its own, which opened the
// same files, would have delivered (see lspdiag.Reader for the rules).
// Notes of the Manager's about a watched file made after the Drainer
// (a Settle that timed out, a server that failed) come with it, once.
//
// Unlike Manager.Drain, Drain neither syncs the disk nor looks at files
// changed since their last Settle: Settle them first. A Drainer holds no
// resource of the Manager's: one that is dropped costs nothing; Close
// frees its memory at once. It is safe for concurrent use.
type Drainer struct {
	m  *Manager
	rd *lspdiag.Reader

	mu      sync.Mutex
	watched map[string]bool // absolute paths
	noteSeq uint64          // the last note of the Manager's looked at
}

// NewDrainer returns a Drainer of m that has delivered nothing and
// watches no file; opts, which may be nil, are its limits of an
// attachment where they are not the Manager's registry's.
func (m *Manager) NewDrainer(opts *lspdiag.ReaderOptions) *Drainer {
	m.mu.Lock()
	seq := m.noteLog.seq
	m.mu.Unlock()
	return &Drainer{m: m, rd: m.reg.NewReader(opts), watched: map[string]bool{}, noteSeq: seq}
}

// Watch adds path (made absolute) to the files the Drainer sees: call it
// for each file the client opens. At most ManagerOptions.MaxOpenDocuments
// (and the registry's MaxDocuments) are watched; beyond, the least
// recently watched go first.
func (d *Drainer) Watch(path string) error {
	r, abs, err := d.m.route(path)
	if abs == "" {
		return err
	}
	d.rd.Watch(fileuri.FromPath(abs))
	if err == nil {
		d.rd.WatchServer(r.srv.cfg.Name)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.watched == nil {
		return nil // closed
	}
	d.watched[abs] = true
	for p := range d.watched {
		if len(d.watched) <= maxDrainerWatched {
			break
		}
		if !d.rd.Watching(fileuri.FromPath(p)) {
			delete(d.watched, p)
		}
	}
	return nil
}

// maxDrainerWatched bounds the paths a Drainer keeps for its notes; the
// reader bounds the documents it watches itself.
const maxDrainerWatched = 4096

// Drain returns what is new to this Drainer (see Drainer and
// Manager.Drain): nil, false when there is nothing at all.
func (d *Drainer) Drain() (*diag.Attachment, bool) {
	att, ok := d.rd.Drain()
	d.mu.Lock()
	watched := d.watched
	var keys []string
	notes := map[string]string{}
	d.m.mu.Lock()
	d.noteSeq = d.m.noteLog.since(d.noteSeq, func(key, note string) {
		if watched[key] {
			if _, dup := notes[key]; !dup {
				keys = append(keys, key)
			}
			notes[key] = note
		}
	})
	d.m.mu.Unlock()
	d.mu.Unlock()
	if len(keys) == 0 {
		return att, ok
	}
	sort.Strings(keys)
	if !ok {
		att = &diag.Attachment{Servers: []string{}, Files: []diag.FileDiagnostics{}}
	}
	for _, k := range keys {
		att.Notes = append(att.Notes, notes[k])
	}
	return att, true
}

// Close frees the Drainer's memory; it delivers nothing from then on.
func (d *Drainer) Close() {
	d.rd.Close()
	d.mu.Lock()
	d.watched = nil
	d.mu.Unlock()
}

// noteLog keeps the Manager's latest notes, numbered, for Drainers: the
// Manager's own notes are cleared by its Drain. Guarded by Manager.mu.
type noteLog struct {
	ring []loggedNote // at most maxLoggedNotes, oldest first from next
	next int
	seq  uint64 // the number of the latest note
}

type loggedNote struct {
	seq       uint64
	key, note string
}

// maxLoggedNotes bounds the notes kept for Drainers: a Drainer that
// drains less often than that many notes are made misses the older ones.
const maxLoggedNotes = 1024

func (l *noteLog) add(key, note string) {
	l.seq++
	n := loggedNote{seq: l.seq, key: key, note: note}
	if len(l.ring) < maxLoggedNotes {
		l.ring = append(l.ring, n)
		return
	}
	l.ring[l.next] = n
	l.next = (l.next + 1) % maxLoggedNotes
}

// since calls f for each note numbered after seq, oldest first, and
// returns the number of the latest.
func (l *noteLog) since(seq uint64, f func(key, note string)) uint64 {
	for i := range l.ring {
		n := l.ring[(l.next+i)%len(l.ring)]
		if n.seq > seq {
			f(n.key, n.note)
		}
	}
	return l.seq
}
