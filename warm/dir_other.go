//go:build !unix

package warm

func checkDir(string) error { return ErrUnsupported }
