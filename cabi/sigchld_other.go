//go:build !unix

package main

// guardChildSignal has nothing to do where there is no SIGCHLD.
func guardChildSignal() {}
