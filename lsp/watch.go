package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/idebridge/idebridge/internal/fileuri"
)

// Files changed by something other than the agent (a formatter, a shell
// command, a git checkout) must reach the servers before Settle and Drain
// speak: open documents are compared with their files on disk, and the
// files matching the watchers a server registered (client/registerCapability
// for workspace/didChangeWatchedFiles) are polled, so that, for instance,
// gopls learns of a changed go.mod.
//
// Polling is exact and needs no platform support: a change made before
// Settle is seen by it. Its cost is bounded: at most maxWatchedEntries
// files and directories are tracked per server, only inside the server's
// workspace folder and the project directory, and version-control and
// dependency directories (skippedDirs) are not entered.

// maxWatchedEntries bounds the files and directories a server's watchers
// track.
const maxWatchedEntries = 20000

// skippedDirs are directories the watchers never enter.
var skippedDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, "node_modules": true, "__pycache__": true}

// Watch kinds (LSP WatchKind) and file change types (FileChangeType).
const (
	watchCreate = 1
	watchChange = 2
	watchDelete = 4

	fileCreated = 1
	fileChanged = 2
	fileDeleted = 3
)

// fileStamp is what a stat says about a file's contents changing.
type fileStamp struct {
	size  int64
	mtime time.Time
	ino   uint64
	ok    bool
}

func stampOf(fi os.FileInfo) fileStamp {
	return fileStamp{size: fi.Size(), mtime: fi.ModTime(), ino: inode(fi), ok: true}
}

// fileWatcher is one registered watcher, compiled.
type fileWatcher struct {
	base string // the directory the pattern is relative to; "" for an absolute pattern
	g    *glob
	kind int
}

// matches reports whether the watcher covers path for a change of type t.
func (w *fileWatcher) matches(path string, t int) bool {
	bit := map[int]int{fileCreated: watchCreate, fileChanged: watchChange, fileDeleted: watchDelete}[t]
	if w.kind&bit == 0 {
		return false
	}
	p := filepath.ToSlash(path)
	if w.base != "" {
		rel, err := filepath.Rel(w.base, path)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return false
		}
		p = filepath.ToSlash(rel)
	}
	return w.g.match(p)
}

// fileEvent is one entry of didChangeWatchedFiles.
type fileEvent struct {
	URI  string `json:"uri"`
	Type int    `json:"type"`
}

// watcher polls the files a server's watchers cover.
type watcher struct {
	// mu is held by a scan from registration until it is done, so that a
	// poll always starts from a complete baseline.
	mu       sync.Mutex
	roots    []string // directories that may be scanned
	regs     map[string][]fileWatcher
	files    map[string]fileStamp // tracked files
	dirs     map[string]fileStamp // tracked directories
	limited  bool
	warned   bool
	warnFunc func(msg string, args ...any)
}

func newWatcher(roots []string, warn func(string, ...any)) *watcher {
	return &watcher{roots: roots, regs: map[string][]fileWatcher{}, files: map[string]fileStamp{},
		dirs: map[string]fileStamp{}, warnFunc: warn}
}

// parseWatchers reads DidChangeWatchedFilesRegistrationOptions.
func parseWatchers(raw json.RawMessage, folder string) []fileWatcher {
	var o struct {
		Watchers []struct {
			GlobPattern json.RawMessage `json:"globPattern"`
			Kind        *int            `json:"kind"`
		} `json:"watchers"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return nil
	}
	var out []fileWatcher
	for _, w := range o.Watchers {
		fw := fileWatcher{kind: watchCreate | watchChange | watchDelete}
		if w.Kind != nil {
			fw.kind = *w.Kind
		}
		var pattern string
		var rel struct {
			BaseURI json.RawMessage `json:"baseUri"`
			Pattern string          `json:"pattern"`
		}
		if json.Unmarshal(w.GlobPattern, &pattern) == nil {
			if filepath.IsAbs(pattern) || strings.HasPrefix(pattern, "/") {
				fw.base = ""
			} else {
				fw.base = folder
			}
		} else if json.Unmarshal(w.GlobPattern, &rel) == nil {
			// baseUri is a URI, or a WorkspaceFolder {uri, name}.
			var u string
			var wf struct {
				URI string `json:"uri"`
			}
			if json.Unmarshal(rel.BaseURI, &u) != nil {
				if json.Unmarshal(rel.BaseURI, &wf) != nil {
					continue
				}
				u = wf.URI
			}
			p, ok := fileuri.ToPath(u)
			if !ok {
				continue
			}
			fw.base, pattern = filepath.Clean(p), rel.Pattern
		} else {
			continue
		}
		g, err := compileGlob(pattern)
		if err != nil {
			continue
		}
		fw.g = g
		out = append(out, fw)
	}
	return out
}

// register adds or replaces a registration and rescans in the background;
// the scan holds w.mu, taken here, until it is done.
func (w *watcher) register(id string, ws []fileWatcher) {
	w.mu.Lock()
	w.regs[id] = ws
	go func() {
		defer w.mu.Unlock()
		w.rescan()
	}()
}

func (w *watcher) unregister(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.regs[id]; ok {
		delete(w.regs, id)
		w.rescan()
	}
}

// covered reports whether some watcher covers path for change type t.
// Call with w.mu held.
func (w *watcher) covered(path string, t int) bool {
	for _, ws := range w.regs {
		for i := range ws {
			if ws[i].matches(path, t) {
				return true
			}
		}
	}
	return false
}

// scanRoots returns the directories to scan: the bases of the watchers
// that lie inside the roots, and the roots themselves for patterns without
// a base. Call with w.mu held.
func (w *watcher) scanRoots() []string {
	set := map[string]bool{}
	for _, ws := range w.regs {
		for _, fw := range ws {
			if fw.base == "" {
				for _, r := range w.roots {
					set[r] = true
				}
				continue
			}
			for _, r := range w.roots {
				if isWithin(fw.base, r) {
					set[fw.base] = true
				}
			}
		}
	}
	var out []string
	for d := range set {
		out = append(out, d)
	}
	sort.Strings(out)
	// Drop roots inside other roots.
	var top []string
	for _, d := range out {
		if len(top) == 0 || !isWithin(d, top[len(top)-1]) {
			top = append(top, d)
		}
	}
	return top
}

func isWithin(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// rescan rebuilds the tracked set for the current registrations. Files
// tracked before keep their stamps, so a change made since the last poll
// is still reported. Call with w.mu held.
func (w *watcher) rescan() {
	oldFiles, oldDirs := w.files, w.dirs
	w.files, w.dirs, w.limited = map[string]fileStamp{}, map[string]fileStamp{}, false
	if len(w.regs) == 0 {
		return
	}
	for _, r := range w.scanRoots() {
		w.walk(r, nil)
	}
	for p := range w.files {
		if st, ok := oldFiles[p]; ok {
			w.files[p] = st
		}
	}
	for p := range w.dirs {
		if st, ok := oldDirs[p]; ok {
			w.dirs[p] = st
		}
	}
}

// walk tracks dir and what lies beneath it; with events, files found are
// reported as created. Call with w.mu held.
func (w *watcher) walk(dir string, events *[]fileEvent) {
	if len(w.files)+len(w.dirs) >= maxWatchedEntries {
		w.limit()
		return
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return
	}
	w.dirs[dir] = stampOf(fi)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			if !skippedDirs[e.Name()] {
				w.walk(p, events)
			}
			continue
		}
		if !e.Type().IsRegular() {
			continue
		}
		if _, ok := w.files[p]; ok {
			continue
		}
		if !w.covered(p, fileCreated) && !w.covered(p, fileChanged) && !w.covered(p, fileDeleted) {
			continue
		}
		if len(w.files)+len(w.dirs) >= maxWatchedEntries {
			w.limit()
			return
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		w.files[p] = stampOf(fi)
		if events != nil && w.covered(p, fileCreated) {
			*events = append(*events, fileEvent{URI: fileuri.FromPath(p), Type: fileCreated})
		}
	}
}

func (w *watcher) limit() {
	w.limited = true
	if !w.warned && w.warnFunc != nil {
		w.warned = true
		w.warnFunc("lsp: too many files to watch; changes beyond the first ones are not reported to the server", "limit", maxWatchedEntries)
	}
}

// poll returns the changes since the last poll (or the scan), and tracks
// them. Open documents' contents reach the server as didChange, so their
// changes are left out (skip); their creation and deletion are not.
func (w *watcher) poll(skip map[string]bool) []fileEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.regs) == 0 {
		return nil
	}
	var events []fileEvent
	// Directories whose entries changed: new files and directories.
	dirs := make([]string, 0, len(w.dirs))
	for d := range w.dirs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		old, ok := w.dirs[d]
		if !ok {
			continue // removed with its parent
		}
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() {
			w.dropDir(d, &events)
			continue
		}
		if st := stampOf(fi); st != old {
			w.dirs[d] = st
			ents, err := os.ReadDir(d)
			if err != nil {
				continue
			}
			for _, e := range ents {
				p := filepath.Join(d, e.Name())
				if e.IsDir() {
					if _, tracked := w.dirs[p]; !tracked && !skippedDirs[e.Name()] {
						w.walk(p, &events)
					}
					continue
				}
				if _, tracked := w.files[p]; tracked || !e.Type().IsRegular() {
					continue
				}
				if !w.covered(p, fileCreated) && !w.covered(p, fileChanged) && !w.covered(p, fileDeleted) {
					continue
				}
				if len(w.files)+len(w.dirs) >= maxWatchedEntries {
					w.limit()
					break
				}
				if fi, err := e.Info(); err == nil {
					w.files[p] = stampOf(fi)
					if w.covered(p, fileCreated) {
						events = append(events, fileEvent{URI: fileuri.FromPath(p), Type: fileCreated})
					}
				}
			}
		}
	}
	// Tracked files: changed or gone.
	files := make([]string, 0, len(w.files))
	for p := range w.files {
		files = append(files, p)
	}
	sort.Strings(files)
	for _, p := range files {
		old := w.files[p]
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			delete(w.files, p)
			if w.covered(p, fileDeleted) {
				events = append(events, fileEvent{URI: fileuri.FromPath(p), Type: fileDeleted})
			}
			continue
		}
		if st := stampOf(fi); st != old {
			w.files[p] = st
			if !skip[p] && w.covered(p, fileChanged) {
				events = append(events, fileEvent{URI: fileuri.FromPath(p), Type: fileChanged})
			}
		}
	}
	return events
}

// dropDir forgets a directory that is gone, reporting its files deleted.
func (w *watcher) dropDir(d string, events *[]fileEvent) {
	for p := range w.dirs {
		if isWithin(p, d) {
			delete(w.dirs, p)
		}
	}
	for p := range w.files {
		if isWithin(p, d) {
			delete(w.files, p)
			if w.covered(p, fileDeleted) {
				*events = append(*events, fileEvent{URI: fileuri.FromPath(p), Type: fileDeleted})
			}
		}
	}
}
