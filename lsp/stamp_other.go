//go:build !unix

package lsp

import "os"

// inode is 0 where stat has no inode number; size and time remain.
func inode(os.FileInfo) uint64 { return 0 }
