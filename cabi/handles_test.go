package main

import (
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

func TestHandleTableAddGetRemove(t *testing.T) {
	tab := newHandleTable()
	a := tab.add(kindRegistry, "a")
	b := tab.add(kindIDE, "b")
	if a == 0 || b == 0 || a == b {
		t.Fatalf("handles %#x %#x: want distinct and nonzero", a, b)
	}
	if kind(a>>kindShift) != kindRegistry || kind(b>>kindShift) != kindIDE {
		t.Errorf("kind tags %#x %#x", a>>kindShift, b>>kindShift)
	}
	if a < 1<<32 {
		t.Errorf("handle %#x is a small integer", a)
	}
	if obj, err := tab.get(kindRegistry, a); err != nil || obj != "a" {
		t.Fatalf("get(a) = %v, %v", obj, err)
	}
	if _, err := tab.get(kindIDE, a); !errors.Is(err, errBadHandle) || !strings.Contains(err.Error(), "is a registry handle, not a IDE client handle") {
		t.Errorf("wrong kind: %v", err)
	}
	if _, err := tab.remove(kindIDE, a); !errors.Is(err, errBadHandle) {
		t.Errorf("remove with wrong kind: %v", err)
	}
	if tab.len() != 2 {
		t.Fatalf("len = %d after a wrong-kind remove, want 2", tab.len())
	}
	if obj, err := tab.remove(kindRegistry, a); err != nil || obj != "a" {
		t.Fatalf("remove(a) = %v, %v", obj, err)
	}
	if _, err := tab.get(kindRegistry, a); !errors.Is(err, errBadHandle) || !strings.Contains(err.Error(), "already freed") {
		t.Errorf("stale get: %v", err)
	}
	if _, err := tab.remove(kindRegistry, a); !errors.Is(err, errBadHandle) {
		t.Errorf("double remove: %v", err)
	}
	if _, err := tab.get(kindRegistry, 0); !errors.Is(err, errBadHandle) || !strings.Contains(err.Error(), "is 0") {
		t.Errorf("zero handle: %v", err)
	}
	if tab.len() != 1 {
		t.Errorf("len = %d, want 1", tab.len())
	}
}

func TestHandleTableNeverReuses(t *testing.T) {
	tab := newHandleTable()
	seen := map[uint64]bool{}
	for i := 0; i < 10000; i++ {
		h := tab.add(kindLSP, i)
		if seen[h] {
			t.Fatalf("handle %#x issued twice", h)
		}
		seen[h] = true
		if _, err := tab.remove(kindLSP, h); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHandleTableRandomHandlesMiss(t *testing.T) {
	tab := newHandleTable()
	for i := 0; i < 100; i++ {
		tab.add(kindRegistry, i)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100000; i++ {
		h := r.Uint64()
		if i < 1000 {
			h = uint64(i) // small integers, the likeliest stray values
		}
		if _, err := tab.get(kindRegistry, h); err == nil {
			t.Fatalf("random handle %#x resolved", h)
		}
	}
}

func TestHandleTableKeysDifferPerTable(t *testing.T) {
	// Two processes (two tables) give different first handles, so a handle
	// from one process is not valid in another by construction.
	a, b := newHandleTable(), newHandleTable()
	if a.add(kindRegistry, nil) == b.add(kindRegistry, nil) {
		t.Error("two tables issued the same first handle: the key is not random")
	}
}

func TestHandleTableConcurrent(t *testing.T) {
	tab := newHandleTable()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				h := tab.add(kindIDE, i)
				if obj, err := tab.get(kindIDE, h); err != nil || obj != i {
					t.Errorf("get = %v, %v", obj, err)
					return
				}
				if _, err := tab.remove(kindIDE, h); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := tab.len(); n != 0 {
		t.Errorf("len = %d after all removes", n)
	}
}
