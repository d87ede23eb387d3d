//go:build go1.25

package atomicfile

import "os"

// rename and link work through the directory's descriptor (Go 1.25).
func rename(d *os.Root, old, new string) error { return d.Rename(old, new) }

func link(d *os.Root, old, new string) error { return d.Link(old, new) }
