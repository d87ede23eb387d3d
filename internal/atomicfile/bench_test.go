package atomicfile

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeOneByOne is how a rename was written before WriteAll: each file on
// its own (compare, temporary file, fsync, rename, directory fsync), a
// failure leaving the files before it written. Kept as the benchmark's
// baseline.
func writeOneByOne(changes []Change) error {
	for _, c := range changes {
		if err := legacyWrite(c.Path, c.Data, c.Base); err != nil {
			return err
		}
	}
	return nil
}

func legacyWrite(path string, data []byte, expect *State) error {
	old, err := os.Stat(path)
	if err != nil {
		return err
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	tmpName := filepath.Join(filepath.Dir(path), tempPrefix+filepath.Base(path)+"-"+hex.EncodeToString(r[:])+".tmp")
	tmp, err := os.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmpName)
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(old.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	keepOwner(tmp, old)
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	now, err := Stat(path)
	if err != nil {
		return err
	}
	if now.SHA256 != expect.SHA256 {
		return errors.New("conflict")
	}
	if err := os.Rename(tmpName, path); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// BenchmarkRenameWrite writes a rename of n files of about 4 KB (two
// directories), flipping each between two texts, all at once (WriteAll)
// and one by one as before. ns/op is one whole rename.
func BenchmarkRenameWrite(b *testing.B) {
	for _, n := range []int{2, 50} {
		for _, how := range []string{"one-by-one", "WriteAll"} {
			b.Run(fmt.Sprintf("files=%d/%s", n, how), func(b *testing.B) {
				dir := b.TempDir()
				texts := [2][]byte{[]byte(strings.Repeat("func Area() float64 { return 1 }\n", 120)), []byte(strings.Repeat("func Size() float64 { return 1 }\n", 120))}
				var states [2]*State
				for i, text := range texts {
					sum := sha256.Sum256(text)
					states[i] = &State{Exists: true, Size: int64(len(text)), SHA256: hex.EncodeToString(sum[:])}
				}
				paths := make([]string, n)
				for i := range paths {
					paths[i] = filepath.Join(dir, fmt.Sprint("d", i%2), fmt.Sprintf("f%d.go", i))
					if err := os.MkdirAll(filepath.Dir(paths[i]), 0o755); err != nil {
						b.Fatal(err)
					}
					if err := os.WriteFile(paths[i], texts[0], fs.FileMode(0o644)); err != nil {
						b.Fatal(err)
					}
				}
				changes := make([]Change, n)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					from, to := i%2, (i+1)%2
					for j := range changes {
						changes[j] = Change{Path: paths[j], Data: texts[to], Base: states[from]}
					}
					var err error
					if how == "WriteAll" {
						err = WriteAll(changes, &Options{Roots: []string{dir}})
					} else {
						err = writeOneByOne(changes)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
