//go:build !unix

package main

import "errors"

func newPipe() (r, w int, err error) {
	return -1, -1, errors.New("completion descriptors are not available on this platform: use idb_call_wait")
}

func signalPipe(int) {}

func closeFD(int) {}
