package main

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
)

// kind tags a handle with the type of object it names. The tag lives in the
// top byte of the handle, so a registry handle passed where an IDE client is
// expected is recognised and reported instead of being used.
type kind uint8

// Handle kinds. Zero is never used, so handle 0 is never valid.
const (
	kindRegistry kind = 0x52 // 'R'
	kindIDE      kind = 0x49 // 'I'
	kindLSP      kind = 0x4c // 'L'
	kindCall     kind = 0x43 // 'C': an asynchronous call (export_async.go)
	kindEditSet  kind = 0x45 // 'E': an edit set (export_edit.go)
)

func (k kind) String() string {
	switch k {
	case kindRegistry:
		return "registry"
	case kindIDE:
		return "IDE client"
	case kindLSP:
		return "LSP manager"
	case kindCall:
		return "call"
	case kindEditSet:
		return "edit set"
	}
	return fmt.Sprintf("kind 0x%02x", uint8(k))
}

// errBadHandle is wrapped by every handle lookup failure.
var errBadHandle = errors.New("bad handle")

const (
	kindShift = 56
	lowMask   = 1<<kindShift - 1
)

// handleTable maps opaque 64-bit handles to live objects.
//
// A handle is kind<<56 | (seq ^ key) & (1<<56-1), where seq counts up from 1
// and key is random per process: handles are never reused (a stale handle
// stays invalid), and a small integer or a value from another process hits a
// live handle only by a 1-in-2^56 chance per live handle.
type handleTable struct {
	mu   sync.RWMutex
	key  uint64
	seq  uint64
	objs map[uint64]any
}

func newHandleTable() *handleTable {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand never fails on supported platforms; a fixed key
		// still gives unique, never-reused handles.
		binary.LittleEndian.PutUint64(b[:], 0x9e3779b97f4a7c15)
	}
	return &handleTable{key: binary.LittleEndian.Uint64(b[:]) & lowMask, objs: make(map[uint64]any)}
}

// add stores obj under a new handle of kind k.
func (t *handleTable) add(k kind, obj any) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		t.seq++
		h := uint64(k)<<kindShift | (t.seq^t.key)&lowMask
		if _, taken := t.objs[h]; !taken {
			t.objs[h] = obj
			return h
		}
	}
}

// get returns the object of kind k named by h.
func (t *handleTable) get(k kind, h uint64) (any, error) {
	t.mu.RLock()
	obj, ok := t.objs[h]
	t.mu.RUnlock()
	if !ok {
		return nil, t.missing(k, h)
	}
	if got := kind(h >> kindShift); got != k {
		return nil, fmt.Errorf("%w: handle 0x%016x is a %s handle, not a %s handle", errBadHandle, h, got, k)
	}
	return obj, nil
}

// remove deletes h (of kind k) from the table and returns its object.
func (t *handleTable) remove(k kind, h uint64) (any, error) {
	t.mu.Lock()
	obj, ok := t.objs[h]
	if ok && kind(h>>kindShift) == k {
		delete(t.objs, h)
	}
	t.mu.Unlock()
	if !ok {
		return nil, t.missing(k, h)
	}
	if got := kind(h >> kindShift); got != k {
		return nil, fmt.Errorf("%w: handle 0x%016x is a %s handle, not a %s handle", errBadHandle, h, got, k)
	}
	return obj, nil
}

func (t *handleTable) missing(k kind, h uint64) error {
	if h == 0 {
		return fmt.Errorf("%w: %s handle is 0 (never valid)", errBadHandle, k)
	}
	return fmt.Errorf("%w: no live %s with handle 0x%016x (never issued, or already freed)", errBadHandle, k, h)
}

// len returns the number of live handles.
func (t *handleTable) len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.objs)
}
