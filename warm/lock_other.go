//go:build !unix

package warm

import "context"

func tryLock(string) (func(), error) { return nil, ErrUnsupported }

func lock(context.Context, string) (func(), error) { return nil, ErrUnsupported }
