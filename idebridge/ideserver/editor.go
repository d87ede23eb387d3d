package ideserver

import (
	"context"
	"slices"
	"sync"

	"github.com/idebridge/idebridge/diag"
)

// maxResolvedTabs bounds the diff tabs kept after their openDiff was
// answered and before the agent closes them, against a client that never
// calls close_tab.
const maxResolvedTabs = 256

// editor is the state a real IDE keeps in its UI, for the default tools:
// the open files (most recent last, the active one), their selections,
// and the diff tabs.
type editor struct {
	mu       sync.Mutex
	closed   bool
	open     []string
	sels     map[string]*selection // by open file
	latest   *selection
	tabs     map[string]*diffTab
	resolved []string // names of resolved tabs, oldest first
}

// selection is the selection in one file: 0-based lines, UTF-16 columns,
// as editors report them.
type selection struct {
	path       string
	text       string
	start, end diag.Position
}

type diffTab struct {
	name    string
	pending bool
	cancel  context.CancelCauseFunc
}

func newEditor() *editor {
	return &editor{tabs: map[string]*diffTab{}, sels: map[string]*selection{}}
}

// maxOpenFiles bounds the files the editor remembers as open.
const maxOpenFiles = 1000

// openFile records path as open and active, with sel selected in it (nil:
// the selection it had, or the cursor at its start).
func (e *editor) openFile(path string, sel *selection) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.open = slices.DeleteFunc(e.open, func(p string) bool { return p == path })
	e.open = append(e.open, path)
	if len(e.open) > maxOpenFiles {
		delete(e.sels, e.open[0])
		e.open = e.open[1:]
	}
	if sel != nil {
		e.sels[path] = sel
	} else if e.sels[path] == nil {
		e.sels[path] = &selection{path: path}
	}
	e.latest = e.sels[path]
}

// current returns the active file's selection; nil when no file is open.
func (e *editor) current() *selection {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.open) == 0 {
		return nil
	}
	return e.sels[e.open[len(e.open)-1]]
}

// latestSelection returns the most recent selection in any file.
func (e *editor) latestSelection() *selection {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.latest
}

func (e *editor) openFiles() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.open)
}

func (e *editor) isOpen(path string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Contains(e.open, path)
}

// openTab opens a pending diff tab whose context cancel is cancel. A pending
// tab of the same name is closed first (its openDiff is rejected). After
// shutdown the tab is closed at once.
func (e *editor) openTab(name string, cancel context.CancelCauseFunc) *diffTab {
	t := &diffTab{name: name, pending: true, cancel: cancel}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		cancel(ErrServerClosed)
		return t
	}
	if old := e.tabs[name]; old != nil {
		e.dropLocked(old, ErrDiffClosed)
	}
	e.tabs[name] = t
	return t
}

// resolve marks t answered; the tab stays until closed.
func (e *editor) resolve(t *diffTab) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !t.pending {
		return
	}
	t.pending = false
	if e.tabs[t.name] != t {
		return
	}
	e.resolved = append(e.resolved, t.name)
	if len(e.resolved) > maxResolvedTabs {
		if old := e.tabs[e.resolved[0]]; old != nil && !old.pending {
			delete(e.tabs, old.name)
		}
		e.resolved = e.resolved[1:]
	}
}

// closeTab closes the named diff tab (rejecting it if pending) and reports
// whether there was one.
func (e *editor) closeTab(name string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.tabs[name]
	if t == nil {
		return false
	}
	e.dropLocked(t, ErrDiffClosed)
	return true
}

// closeAll closes every diff tab, rejecting pending ones, and returns how
// many there were.
func (e *editor) closeAll(cause error) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := len(e.tabs)
	for _, t := range e.tabs {
		e.dropLocked(t, cause)
	}
	return n
}

// shutdown rejects every pending diff and refuses new ones.
func (e *editor) shutdown() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	for _, t := range e.tabs {
		e.dropLocked(t, ErrServerClosed)
	}
}

func (e *editor) dropLocked(t *diffTab, cause error) {
	if e.tabs[t.name] == t {
		delete(e.tabs, t.name)
	}
	if !t.pending {
		e.resolved = slices.DeleteFunc(e.resolved, func(n string) bool { return n == t.name })
	}
	t.cancel(cause)
}
