package atomicfile

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Change is one file of a WriteAll.
type Change struct {
	// Path is the file; a relative path is taken relative to the working
	// directory. Symbolic links in it are resolved when the write is
	// checked: a link's target is replaced, the link stays.
	Path string
	// Data is the file's new content.
	Data []byte
	// Base is the state the change was computed from (Read, Stat): the
	// file is written only while it still has this content and, when
	// Base records one, this identity. A Base with Exists false creates
	// the file, which must not exist. Nil writes over whatever is there
	// when the write is checked, but only over that same file.
	Base *State
}

// Options adjust WriteAll. A nil *Options, and the zero value, confine
// nothing.
type Options struct {
	// Roots, when not empty, are the only directories the write may
	// touch: each file, its symbolic links resolved, must lie inside one
	// of them (resolved too), or nothing is written and the error is an
	// *OutsideError naming every such file. Each file's directory is then
	// opened through its root (os.Root), so that a directory swapped for
	// a link out of the root after the check is refused as well.
	Roots []string
}

// ErrOutside is matched (errors.Is) by every *OutsideError.
var ErrOutside = errors.New("file outside the roots")

// OutsideError reports a WriteAll refused because some of its files lie
// outside Options.Roots. Nothing was written.
type OutsideError struct {
	// Paths are the files outside, as given, with the place a symbolic
	// link led to in parentheses when it differs.
	Paths []string
	// Roots are the roots, resolved.
	Roots []string
}

func (e *OutsideError) Error() string {
	what := "a file lies"
	if len(e.Paths) > 1 {
		what = fmt.Sprintf("%d files lie", len(e.Paths))
	}
	return fmt.Sprintf("%s outside %s: %s; nothing was written",
		what, strings.Join(e.Roots, ", "), strings.Join(e.Paths, ", "))
}

// Is makes every OutsideError match ErrOutside.
func (e *OutsideError) Is(target error) bool { return target == ErrOutside }

// WriteError reports a WriteAll that wrote nothing: Path is the file that
// stopped it, Err why (a *ConflictError when the file changed, else the
// failed operation, which names the file). Files it had already replaced
// were put back as they were, except those in Unrestored.
type WriteError struct {
	// Path is the file that stopped the write, absolute, as given.
	Path string
	// Err is why.
	Err error
	// Files counts the files of the write.
	Files int
	// Restored counts the files that had been replaced and were put back.
	Restored int
	// Unrestored are the files that had been replaced and could not be
	// put back, each with where its old content is; empty when the
	// rollback was complete.
	Unrestored []Leftover
}

// Leftover is a file a failed WriteAll could not put back.
type Leftover struct {
	// Path is the file, which now holds its new content (or, for a file
	// the write created, still exists).
	Path string
	// Old is the staged file holding its old content ("" for a file the
	// write created); rename it over Path to restore it.
	Old string
	// Err is why it could not be put back.
	Err error
}

func (e *WriteError) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	if e.Files > 1 {
		fmt.Fprintf(&b, "; none of the %d files was written", e.Files)
		switch {
		case e.Restored == 1:
			b.WriteString(" (the one already replaced was put back)")
		case e.Restored > 1:
			fmt.Fprintf(&b, " (the %d already replaced were put back)", e.Restored)
		}
	}
	for _, l := range e.Unrestored {
		if l.Old != "" {
			fmt.Fprintf(&b, "; %s could not be put back (%v): its old content is in %s", l.Path, l.Err, l.Old)
		} else {
			fmt.Fprintf(&b, "; %s, which the write created, could not be removed (%v)", l.Path, l.Err)
		}
	}
	return b.String()
}

// Unwrap returns Err.
func (e *WriteError) Unwrap() error { return e.Err }

// WriteAll writes every change, or none. In order:
//
//  1. check: each path is resolved (symbolic links followed) and, with
//     Options.Roots, confined; then each file is opened without following
//     a link, through a descriptor of its directory, and must be a regular
//     file (or absent, for a Base that says so) matching its Base;
//  2. stage: each new text is written beside its file as
//     .idebridge-TXID-NAME.new, flushed to disk, with the old file's mode
//     and (where permitted) owner; each old file but the last gets a
//     second name, .idebridge-TXID-NAME.old, to put it back from;
//  3. verify: each file is checked again (content and identity);
//  4. move: each staged file is renamed over its file, right after
//     checking that the name still refers to the file checked.
//
// When any step fails, the files already moved are put back, the staged
// files are removed, and the error is a *WriteError naming the file that
// stopped the write (wrapping a *ConflictError when that file changed);
// files outside Options.Roots give an *OutsideError before anything is
// opened. See the package documentation for what a crash between two
// renames leaves and how to recover. Two changes of one file (after
// resolving links) are an error.
func WriteAll(changes []Change, opts *Options) error {
	var roots []string
	if opts != nil {
		roots = opts.Roots
	}
	t := &txn{dirs: map[string]*os.Root{}}
	defer t.close()
	if err := t.checkAll(changes, roots); err != nil {
		return err
	}
	for i, f := range t.files {
		// Nothing can fail after the last move: it needs no way back.
		if err := t.stage(f, i < len(t.files)-1); err != nil {
			return t.fail(f, err)
		}
	}
	for _, f := range t.files {
		if err := t.verify(f); err != nil {
			return t.fail(f, err)
		}
	}
	for _, f := range t.files {
		if err := t.move(f); err != nil {
			return t.fail(f, err)
		}
	}
	t.finish()
	return nil
}

// Check is WriteAll's first step alone: it returns the error WriteAll
// would return at its check (an *OutsideError, or a *WriteError naming
// the first file that is no longer its Base, or cannot be opened), and
// writes nothing. A caller that writes its files one by one (a review
// where the user decides each file) uses it to refuse the whole set
// before asking about any.
func Check(changes []Change, opts *Options) error {
	var roots []string
	if opts != nil {
		roots = opts.Roots
	}
	t := &txn{dirs: map[string]*os.Root{}}
	defer t.close()
	return t.checkAll(changes, roots)
}

// checkAll plans the write and checks every file.
func (t *txn) checkAll(changes []Change, roots []string) error {
	if err := t.plan(changes, roots); err != nil {
		return err
	}
	for _, f := range t.files {
		if err := t.check(f); err != nil {
			return t.fail(f, err)
		}
	}
	return nil
}

// txn is one WriteAll.
type txn struct {
	id     string
	roots  []txRoot
	dirs   map[string]*os.Root // by resolved directory
	opened []*os.Root          // to close
	files  []*txFile
}

type txRoot struct {
	path string
	r    *os.Root
}

// txFile is one file of a txn.
type txFile struct {
	ch     *Change
	abs    string // as given, absolute
	target string // symbolic links resolved
	dir    *os.Root
	name   string
	cur    *State      // as checked
	old    fs.FileInfo // the checked file's descriptor's; nil when creating
	staged string      // name in dir of the new content, until moved
	backup string      // name in dir of the old content
	moved  bool
}

// plan resolves and confines every path and opens their directories.
func (t *txn) plan(changes []Change, roots []string) error {
	var r [6]byte
	_, _ = rand.Read(r[:])
	t.id = hex.EncodeToString(r[:])
	for _, root := range roots {
		abs, err := filepath.Abs(root)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		var rr *os.Root
		if err == nil {
			rr, err = os.OpenRoot(abs)
		}
		if err != nil {
			return fmt.Errorf("opening the root %s: %w", root, err)
		}
		t.opened = append(t.opened, rr)
		t.roots = append(t.roots, txRoot{abs, rr})
	}
	seen := map[string]string{}
	var outside []string
	for i := range changes {
		c := &changes[i]
		abs, err := filepath.Abs(c.Path)
		if err != nil {
			return &WriteError{Path: c.Path, Err: fmt.Errorf("writing %s: %w", c.Path, err), Files: len(changes)}
		}
		target, err := resolve(abs)
		if err != nil {
			return &WriteError{Path: abs, Err: fmt.Errorf("writing %s: %w", abs, err), Files: len(changes)}
		}
		if prev, ok := seen[target]; ok {
			return &WriteError{Path: abs, Err: fmt.Errorf("writing %s: it is the file %s too, changed twice", abs, prev), Files: len(changes)}
		}
		seen[target] = abs
		f := &txFile{ch: c, abs: abs, target: target, name: filepath.Base(target)}
		if len(t.roots) > 0 && t.rootOf(target) == nil {
			if target != abs {
				outside = append(outside, abs+" ("+target+")")
			} else {
				outside = append(outside, abs)
			}
		}
		t.files = append(t.files, f)
	}
	if len(outside) > 0 {
		var rs []string
		for _, r := range t.roots {
			rs = append(rs, r.path)
		}
		return &OutsideError{Paths: outside, Roots: rs}
	}
	for _, f := range t.files {
		d, err := t.openDir(filepath.Dir(f.target))
		if err != nil {
			return t.fail(f, fmt.Errorf("writing %s: opening its directory: %w", f.abs, err))
		}
		f.dir = d
	}
	return nil
}

// resolve follows the symbolic links of abs; a file that does not exist
// resolves through its directory.
func resolve(abs string) (string, error) {
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
		d, err := filepath.EvalSymlinks(filepath.Dir(abs))
		if err != nil {
			return "", err
		}
		return filepath.Join(d, filepath.Base(abs)), nil
	} else if err != nil {
		return "", err
	}
	target, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("following its symbolic link: %w", err)
	}
	return target, nil
}

// rootOf returns the root target lies in, or nil.
func (t *txn) rootOf(target string) *txRoot {
	for i := range t.roots {
		if rel, err := filepath.Rel(t.roots[i].path, target); err == nil && rel != "." && filepath.IsLocal(rel) {
			return &t.roots[i]
		}
	}
	return nil
}

// openDir opens dir, through its root when confined.
func (t *txn) openDir(dir string) (*os.Root, error) {
	if d, ok := t.dirs[dir]; ok {
		return d, nil
	}
	var d *os.Root
	var err error
	if len(t.roots) == 0 {
		d, err = os.OpenRoot(dir)
	} else {
		// dir lies in a root (plan checked its files): opened through
		// the root's descriptor, it cannot lead out of it.
		r := t.rootOf(filepath.Join(dir, "x"))
		rel, _ := filepath.Rel(r.path, dir)
		d, err = r.r.OpenRoot(rel)
	}
	if err != nil {
		return nil, err
	}
	t.opened = append(t.opened, d)
	t.dirs[dir] = d
	return d, nil
}

// look opens f's name in its directory without following a link and
// returns its state; a name that is not there is a state too.
func (f *txFile) look() (*State, fs.FileInfo, error) {
	st := &State{Path: f.abs}
	li, err := f.dir.Lstat(f.name)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("writing %s: %w", f.abs, err)
	}
	if li.Mode()&fs.ModeSymlink != 0 {
		return nil, nil, f.conflict("its name now holds a symbolic link, which is not followed")
	}
	if !li.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("writing %s: not a regular file (%v)", f.abs, li.Mode().Type())
	}
	// Root follows a link swapped in after the Lstat (within the
	// directory): the identities of the name and of the descriptor must
	// agree.
	h, err := f.dir.OpenFile(f.name, readFlags, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("writing %s: %w", f.abs, err)
	}
	defer h.Close()
	info, err := h.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("writing %s: %w", f.abs, err)
	}
	if !info.Mode().IsRegular() || fileID(info) != fileID(li) {
		return nil, nil, f.conflict("another file was put under its name while it was checked")
	}
	sum := sha256.New()
	n, err := io.Copy(sum, h)
	if err != nil {
		return nil, nil, fmt.Errorf("writing %s: reading it: %w", f.abs, err)
	}
	st.Exists, st.Size, st.ModTime, st.Mode = true, n, info.ModTime(), info.Mode()
	st.SHA256, st.ID = hex.EncodeToString(sum.Sum(nil)), fileID(info)
	return st, info, nil
}

// conflict is a *ConflictError for f saying why.
func (f *txFile) conflict(reason string) *ConflictError {
	expect := f.ch.Base
	if expect == nil {
		expect = f.cur
	}
	return &ConflictError{Path: f.abs, Expected: expect, Text: string(f.ch.Data), Reason: reason}
}

// check records the file's state and compares it with its Base.
func (t *txn) check(f *txFile) error {
	st, info, err := f.look()
	if err != nil {
		return err
	}
	if b := f.ch.Base; b != nil && !sameFile(b, st) {
		return &ConflictError{Path: f.abs, Expected: b, Actual: st, Text: string(f.ch.Data)}
	}
	f.cur, f.old = st, info
	return nil
}

// stage writes the new content beside the file and, with backup, gives
// the old file a second name to put it back from.
func (t *txn) stage(f *txFile, backup bool) error {
	prefix := tempPrefix + t.id + "-" + f.name
	perm := fs.FileMode(0o600)
	if f.old == nil {
		perm = 0o666 // a new file: the umask applies, as os.WriteFile
	}
	w, err := f.dir.OpenFile(prefix+".new", os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("writing %s: staging its new text: %w", f.abs, err)
	}
	f.staged = prefix + ".new"
	if err := writeStaged(w, f.ch.Data, f.old); err != nil {
		return fmt.Errorf("writing %s: staging its new text: %w", f.abs, err)
	}
	if !backup || f.old == nil {
		return nil
	}
	if err := link(f.dir, f.name, prefix+".old"); err == nil {
		f.backup = prefix + ".old"
		return nil
	}
	// No hard link here (an immutable file, a file system without
	// them): a copy of the checked file.
	if err := f.copyOld(prefix + ".old"); err != nil {
		return fmt.Errorf("writing %s: keeping its old text: %w", f.abs, err)
	}
	return nil
}

// writeStaged writes data to w and closes it, with old's mode and owner
// when it replaces a file.
func writeStaged(w *os.File, data []byte, old fs.FileInfo) error {
	_, err := w.Write(data)
	if err == nil && old != nil {
		if err = w.Chmod(old.Mode().Perm() | old.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
			err = fmt.Errorf("keeping its mode: %w", err)
		} else {
			keepOwner(w, old)
		}
	}
	if err == nil {
		err = w.Sync()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}

// copyOld copies the checked file to name, for putting it back.
func (f *txFile) copyOld(name string) error {
	r, err := f.dir.OpenFile(f.name, readFlags, 0)
	if err != nil {
		return err
	}
	defer r.Close()
	if info, err := r.Stat(); err != nil || fileID(info) != f.cur.ID {
		return errors.New("the file was replaced while it was copied")
	}
	w, err := f.dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	f.backup = name
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return writeStaged(w, nil, f.old)
}

// verify checks, once everything is staged, that the file is still the
// one checked.
func (t *txn) verify(f *txFile) error {
	st, _, err := f.look()
	if err != nil {
		return err
	}
	if !sameFile(f.cur, st) || st.ID != f.cur.ID {
		expect := f.ch.Base
		if expect == nil {
			expect = f.cur
		}
		return &ConflictError{Path: f.abs, Expected: expect, Actual: st, Text: string(f.ch.Data)}
	}
	return nil
}

// move renames the staged file over the file, after checking that the
// name still refers to the file checked (or to nothing, for a new file).
func (t *txn) move(f *txFile) error {
	li, err := f.dir.Lstat(f.name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if f.cur.Exists {
			return &ConflictError{Path: f.abs, Expected: f.cur, Actual: &State{Path: f.abs}, Text: string(f.ch.Data)}
		}
	case err != nil:
		return fmt.Errorf("writing %s: %w", f.abs, err)
	case !f.cur.Exists:
		return &ConflictError{Path: f.abs, Expected: f.cur, Actual: &State{Path: f.abs, Exists: true, Size: li.Size(), Mode: li.Mode()}, Text: string(f.ch.Data)}
	case li.Mode()&fs.ModeSymlink != 0 || fileID(li) != f.cur.ID:
		return f.conflict("another file was put under its name while it was written")
	}
	if err := rename(f.dir, f.staged, f.name); err != nil {
		return fmt.Errorf("writing %s: replacing it: %w", f.abs, err)
	}
	f.staged, f.moved = "", true
	return nil
}

// fail undoes what was done and returns the error for a write stopped at
// f by err.
func (t *txn) fail(f *txFile, err error) error {
	we := &WriteError{Path: f.abs, Err: err, Files: len(t.files)}
	for i := len(t.files) - 1; i >= 0; i-- {
		g := t.files[i]
		if !g.moved {
			continue
		}
		var rerr error
		if g.backup != "" {
			rerr = rename(g.dir, g.backup, g.name)
		} else {
			rerr = g.dir.Remove(g.name)
		}
		if rerr != nil {
			l := Leftover{Path: g.abs, Err: rerr}
			if g.backup != "" {
				l.Old = filepath.Join(filepath.Dir(g.target), g.backup)
			}
			we.Unrestored = append(we.Unrestored, l)
			g.backup = "" // kept, for the user
			continue
		}
		g.backup = ""
		we.Restored++
	}
	t.cleanup()
	return we
}

// cleanup removes the staged files left.
func (t *txn) cleanup() {
	for _, f := range t.files {
		if f.staged != "" {
			_ = f.dir.Remove(f.staged)
			f.staged = ""
		}
		if f.backup != "" {
			_ = f.dir.Remove(f.backup)
			f.backup = ""
		}
	}
}

// finish flushes the renames to disk and removes the old files' second
// names.
func (t *txn) finish() {
	for _, d := range t.dirs {
		if h, err := d.Open("."); err == nil {
			// Failure only weakens durability, never atomicity.
			_ = h.Sync()
			h.Close()
		}
	}
	t.cleanup()
}

func (t *txn) close() {
	for _, r := range t.opened {
		r.Close()
	}
}

// tempPrefix starts the names of the files a write stages: hidden, and
// recognisable as ours.
const tempPrefix = ".idebridge-"
