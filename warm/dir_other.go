//go:build !unix

package warm

import "os"

func checkDir(string) error { return ErrUnsupported }

func ownedByMe(os.FileInfo) bool { return false }
