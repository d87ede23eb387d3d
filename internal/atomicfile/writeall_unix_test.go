//go:build unix

package atomicfile

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestWriteAllLinkSwapRace writes a project file again and again while a
// swapper replaces it, in a tight loop, by a symbolic link to a file
// outside the project with the same text, and back. However the swaps
// fall between the check, the staging and the rename, the file outside is
// never written: confined by Roots (WriteAll), or by the identity its
// base records (Write, as edit review calls it). Before, the very first
// writes went through the link.
func TestWriteAllLinkSwapRace(t *testing.T) {
	top := t.TempDir()
	proj, out := filepath.Join(top, "proj"), filepath.Join(top, "out")
	const text = "package p\n"
	files(t, proj, map[string]string{"a.go": text})
	files(t, out, map[string]string{"secret.go": text})
	a, secret := filepath.Join(proj, "a.go"), filepath.Join(out, "secret.go")
	sum := sha256.Sum256([]byte(text))
	contentOnly := &State{Path: a, Exists: true, Size: int64(len(text)), SHA256: hex.EncodeToString(sum[:])}
	// The base of the edit, read while a.go is the project's file.
	_, base, err := Read(a)
	if err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		link, file := filepath.Join(proj, ".swap-link"), filepath.Join(proj, ".swap-file")
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = os.Symlink(secret, link)
			_ = os.Rename(link, a)
			_ = os.WriteFile(file, []byte(text), 0o644)
			_ = os.Rename(file, a)
		}
	}()
	var written, refused int
	for i := 0; i < 2000; i++ {
		// Confined by the roots, with a base that records no identity
		// (a conflict on content alone would not catch the link).
		err := WriteAll([]Change{{Path: a, Data: []byte("written\n"), Base: contentOnly}}, &Options{Roots: []string{proj}})
		if err == nil {
			written++
		} else {
			refused++
		}
		// Unconfined, as edit review writes: the base's identity keeps
		// the write off the file outside. (It may succeed on a.go: a
		// file put back under its name can reuse the freed inode of
		// the one the base was read from, with the same text.)
		_ = Write(a, []byte("written\n"), base)
		if got, _ := os.ReadFile(secret); string(got) != text {
			close(stop)
			wg.Wait()
			t.Fatalf("write %d wrote the file outside the project: %q", i, got)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d written in the project, %d refused", written, refused)
	if refused == 0 {
		t.Errorf("no write met a swap (%d written): the test shows nothing", written)
	}
}
