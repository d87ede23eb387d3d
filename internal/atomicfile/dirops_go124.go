//go:build !go1.25

package atomicfile

import (
	"os"
	"path/filepath"
)

// rename and link go by the directory's name before Go 1.25, whose
// os.Root has neither: a directory swapped between the check and the
// rename is then not noticed (the file's identity still is).
func rename(d *os.Root, old, new string) error {
	return os.Rename(filepath.Join(d.Name(), old), filepath.Join(d.Name(), new))
}

func link(d *os.Root, old, new string) error {
	return os.Link(filepath.Join(d.Name(), old), filepath.Join(d.Name(), new))
}
