package lsp

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/idebridge/idebridge/diag"
)

// TestDrainersShareOneGopls: three clients of one Manager (the default
// Drain and two Drainers), each opening and settling a file of the same
// gopls, each get every diagnostic of their own files once, whoever
// drained first. gopls diagnoses its workspace (it publishes for files
// nobody opened), so a client also gets the file only another opened,
// as a Manager of its own would give it.
func TestDrainersShareOneGopls(t *testing.T) {
	gopls := goplsForTest(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.22\n")
	broken := filepath.Join(dir, "broken.go")
	writeFile(t, broken, "package main\n\nfunc main() {\n\tvar x int = \"hello\"\n\t_ = x\n}\n")
	other := filepath.Join(dir, "other", "other.go")
	writeFile(t, other, "package other\n\nvar Y int = \"no\"\n")
	m := newManager(t, []ServerConfig{GoplsConfig(gopls, dir)}, &ManagerOptions{
		ProjectDir: dir, Env: goplsEnviron(t), SettleTimeout: time.Minute,
	})
	ctx := context.Background()
	open := func(d *Drainer, path string) {
		t.Helper()
		if err := m.Open(ctx, path); err != nil {
			t.Fatal(err)
		}
		if d != nil {
			if err := d.Watch(path); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := m.SettleWith(ctx, path, &SettleOptions{WaitForProgress: true}); err != nil {
			t.Fatal(err)
		}
	}
	files := func(att *diag.Attachment) []string {
		var fs []string
		if att != nil {
			for _, f := range att.Files {
				fs = append(fs, filepath.Base(f.Path))
			}
		}
		return fs
	}

	// The default client opens broken.go and drains it.
	open(nil, broken)
	if att, ok := m.Drain(); !ok || !slices.Contains(files(att), "broken.go") {
		t.Fatalf("default drain: %v", files(att))
	}
	// A second client opens it too: the default drain took it, not from
	// this client.
	a := m.NewDrainer(nil)
	open(a, broken)
	att, ok := a.Drain()
	if !ok || !slices.Contains(files(att), "broken.go") || !strings.Contains(att.Render(nil), `cannot use "hello"`) {
		t.Fatalf("drainer a: %v", att.Render(nil))
	}
	if att, ok := a.Drain(); ok {
		t.Errorf("drainer a again: %s", att.Render(nil))
	}
	// A third opens other.go only, and gets broken.go too, which gopls
	// diagnoses with its workspace.
	b := m.NewDrainer(nil)
	open(b, other)
	att, _ = b.Drain()
	if got := files(att); !cmp.Equal(got, []string{"broken.go", "other.go"}) {
		t.Errorf("drainer b: %v, want broken.go and other.go", got)
	}
	a.Close()
	if att, ok := a.Drain(); ok {
		t.Errorf("closed drainer: %s", att.Render(nil))
	}
	b.Close()
}
