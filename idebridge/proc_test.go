package idebridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestIDEBridgeHelperProcess is not a test: it is the body of the child
// processes that startLiveProcess starts (the os/exec test idiom). It
// stays alive until its standard input closes.
func TestIDEBridgeHelperProcess(t *testing.T) {
	if os.Getenv("IDEBRIDGE_HELPER_PROCESS") != "1" {
		return
	}
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// startLiveProcess starts a child that lives until the test ends and
// returns its pid. It is alive but not an ancestor of the test.
func startLiveProcess(t testing.TB) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestIDEBridgeHelperProcess$")
	cmd.Env = append(os.Environ(), "IDEBRIDGE_HELPER_PROCESS=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

// deadPID runs a child to completion and returns its (now unused) pid.
func deadPID(t testing.TB) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestSystemInspectorAlive(t *testing.T) {
	ctx := context.Background()
	live := startLiveProcess(t)
	for _, tt := range []struct {
		name string
		pid  int
		want bool
	}{
		{"self", os.Getpid(), true},
		{"parent", os.Getppid(), true},
		{"live child", live, true},
		{"pid 1 (may belong to root)", 1, true},
		{"dead child", deadPID(t), false},
		{"zero", 0, false},
		{"negative", -5, false},
	} {
		got, err := (systemInspector{}).Alive(ctx, tt.pid)
		if err != nil || got != tt.want {
			t.Errorf("%s: Alive(%d) = %v, %v; want %v", tt.name, tt.pid, got, err, tt.want)
		}
	}
}

func TestSystemInspectorParent(t *testing.T) {
	ctx := context.Background()
	if got, err := (systemInspector{}).Parent(ctx, os.Getpid()); err != nil || got != os.Getppid() {
		t.Errorf("Parent(self) = %d, %v; want %d", got, err, os.Getppid())
	}
	live := startLiveProcess(t)
	if got, err := (systemInspector{}).Parent(ctx, live); err != nil || got != os.Getpid() {
		t.Errorf("Parent(child) = %d, %v; want %d", got, err, os.Getpid())
	}
	dead := deadPID(t)
	if got, err := (systemInspector{}).Parent(ctx, dead); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Parent(dead %d) = %d, %v; want ErrNoProcess", dead, got, err)
	}
	if _, err := (systemInspector{}).Parent(ctx, 0); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Parent(0) = %v", err)
	}

	// The real walk from a child: the test process, then its parent.
	chain, err := ancestors(ctx, systemInspector{}, live)
	if err != nil {
		t.Fatal(err)
	}
	if len(chain) < 2 || chain[0] != os.Getpid() || chain[1] != os.Getppid() {
		t.Errorf("ancestors(child) = %v, want [%d %d ...]", chain, os.Getpid(), os.Getppid())
	}
}

// treeInspector simulates a process tree: parents maps pid to parent,
// dead lists pids that are gone.
type treeInspector struct {
	parents map[int]int
	dead    map[int]bool
}

func (ti treeInspector) Alive(_ context.Context, pid int) (bool, error) {
	_, known := ti.parents[pid]
	return known && !ti.dead[pid], nil
}

func (ti treeInspector) Parent(_ context.Context, pid int) (int, error) {
	p, ok := ti.parents[pid]
	if !ok {
		return 0, fmt.Errorf("parent of %d: %w", pid, ErrNoProcess)
	}
	return p, nil
}

// chain builds a tree 100 -> 101 -> ... -> 100+n-1 -> 1 (each the parent of
// the one before).
func chain(n int) treeInspector {
	ti := treeInspector{parents: map[int]int{1: 0}}
	for i := 0; i < n; i++ {
		parent := 100 + i + 1
		if i == n-1 {
			parent = 1
		}
		ti.parents[100+i] = parent
	}
	return ti
}

func TestAncestors(t *testing.T) {
	ctx := context.Background()
	got, err := ancestors(ctx, chain(4), 100)
	if diff := cmp.Diff([]int{101, 102, 103, 1}, got); diff != "" || err != nil {
		t.Errorf("short chain (-want +got):\n%s err %v", diff, err)
	}
	got, _ = ancestors(ctx, chain(30), 100)
	if len(got) != MaxAncestors || got[MaxAncestors-1] != 100+MaxAncestors {
		t.Errorf("long chain walked %v, want exactly %d parents", got, MaxAncestors)
	}
	loop := treeInspector{parents: map[int]int{5: 6, 6: 5}}
	if got, _ := ancestors(ctx, loop, 5); len(got) != MaxAncestors {
		t.Errorf("a loop walked %v", got)
	}
	self := treeInspector{parents: map[int]int{7: 7}}
	if got, err := ancestors(ctx, self, 7); len(got) != 0 || err != nil {
		t.Errorf("own parent: %v, %v", got, err)
	}
	broken := treeInspector{parents: map[int]int{100: 101}}
	got, err = ancestors(ctx, broken, 100)
	if !errors.Is(err, ErrNoProcess) || len(got) != 1 || got[0] != 101 {
		t.Errorf("broken chain = %v, %v", got, err)
	}
}
