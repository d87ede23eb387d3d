package idebridge_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/idebridge/ideserver"
)

// BenchmarkProposeEdit is one whole review against a headless IDE that
// accepts at once, over WebSocket on loopback: state of the file,
// openDiff, the atomic write, close_tab. "apply" is ApplyEdit on the same
// file (the write alone), so the difference is the protocol's cost.
func BenchmarkProposeEdit(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "main.go")
	if err := os.WriteFile(path, []byte("package main\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("review", func(b *testing.B) {
		srv, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{dir}, NoLockfile: true, DiffPolicy: ideserver.AcceptDiffs})
		if err != nil {
			b.Fatal(err)
		}
		ctx := b.Context()
		if err := srv.Start(ctx); err != nil {
			b.Fatal(err)
		}
		defer srv.Close()
		c, err := idebridge.DialURL(ctx, srv.URL(), srv.AuthToken(), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		r := idebridge.NewReviewer(c, nil)
		for i := 0; b.Loop(); i++ {
			res, err := r.ProposeEdit(ctx, idebridge.EditRequest{Path: path, NewText: "package main\n// " + strconv.Itoa(i) + "\n"})
			if err != nil || !res.Written {
				b.Fatalf("%+v, %v", res, err)
			}
		}
	})
	b.Run("apply", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := idebridge.ApplyEdit(idebridge.EditRequest{Path: path, NewText: "package main\n// " + strconv.Itoa(i) + "\n"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWriteFileAtomic compares the atomic, durable write with
// os.WriteFile (neither atomic nor flushed) for a 10 KB file.
func BenchmarkWriteFileAtomic(b *testing.B) {
	data := make([]byte, 10<<10)
	path := filepath.Join(b.TempDir(), "f.txt")
	b.Run("atomic", func(b *testing.B) {
		for b.Loop() {
			if err := idebridge.WriteFileAtomic(path, data, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("os.WriteFile", func(b *testing.B) {
		for b.Loop() {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	})
}
