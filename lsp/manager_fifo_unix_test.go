//go:build unix

package lsp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/idebridge/idebridge/internal/safefile"
)

// A FIFO or a device under a document's name is refused, not waited on:
// Open (which reads the file) fails with safefile.ErrNotRegular, Change
// (which reads the file only to follow later edits on disk) returns, and
// a regular file under the same manager still opens.
func TestManagerRefusesFIFOs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.s")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.s")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fine := filepath.Join(dir, "fine.s")
	if err := os.WriteFile(fine, []byte("ok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, []ServerConfig{scriptConfig("script", ".s")}, testOptions(dir))
	for _, tc := range []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Open", func(ctx context.Context) error { return m.Open(ctx, fifo) }},
		{"Change", func(ctx context.Context) error { return m.Change(ctx, fifo, "text\n") }},
		{"Open of a link to /dev/zero", func(ctx context.Context) error { return m.Open(ctx, zero) }},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		done := make(chan error, 1)
		go func() { done <- tc.call(ctx) }()
		select {
		case err := <-done:
			// Change has its text; it only gives up following the file.
			if tc.name != "Change" && !errors.Is(err, safefile.ErrNotRegular) {
				t.Errorf("%s: %v, want an error matching safefile.ErrNotRegular", tc.name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s on a FIFO still blocked after 10 s", tc.name)
		}
		cancel()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.Open(ctx, fine); err != nil {
		t.Fatalf("Open of a regular file after the FIFO: %v", err)
	}
}

// Configuration files that are FIFOs (a .lsp.json given on the command
// line, Claude Code's settings and installed-plugins files) are reported
// as errors naming the file, not waited on.
func TestConfigFIFOsAreRefused(t *testing.T) {
	dir := t.TempDir()
	lspJSON := filepath.Join(dir, "lsp.json")
	configDir := filepath.Join(dir, "claude")
	if err := os.MkdirAll(filepath.Join(configDir, "plugins"), 0o700); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(configDir, "settings.json")
	installed := filepath.Join(configDir, filepath.FromSlash(InstalledPluginsFile))
	for _, p := range []string{lspJSON, settings, installed} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan []error, 2)
	go func() {
		_, errs := LoadFile(lspJSON, nil)
		done <- errs
	}()
	go func() {
		done <- LoadClaudeCode(&ClaudeCodeOptions{ProjectDir: dir, ConfigDir: configDir, Env: []string{}}).Errors
	}()
	for i := 0; i < 2; i++ {
		select {
		case errs := <-done:
			found := false
			for _, err := range errs {
				var ce *ConfigError
				if errors.As(err, &ce) && errors.Is(err, safefile.ErrNotRegular) {
					found = true
				}
			}
			if !found {
				t.Errorf("errors %v: none is a *ConfigError matching safefile.ErrNotRegular", errs)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a configuration FIFO was still being read after 10 s")
		}
	}
}
