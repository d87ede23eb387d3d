//go:build !unix

package warm

import "syscall"

func detached() *syscall.SysProcAttr { return nil }
