//go:build unix

package main

// A child process signals its parent with SIGCHLD, and on Linux the parent
// is the thread that started it: for a language server, a thread of the Go
// runtime. A signal handler installed without SA_ONSTACK runs on whatever
// stack that thread is on, which may be a goroutine's stack of a few
// kilobytes; the kernel's signal frame (a few kilobytes with AVX-512 state)
// then overflows it, and the runtime crashes later in an unrelated place.
// The Go runtime gives the handlers installed before it loads SA_ONSTACK,
// but not those installed later: Node's libuv installs its SIGCHLD handler,
// without SA_ONSTACK, when Node starts its first child process, and removes
// it when the last one has exited. So the library gives a SIGCHLD handler
// SA_ONSTACK when it loads and before every blocking call (the calls that
// start and stop language servers), and the Node binding keeps libuv's
// handler installed for good (see bindings/node/index.js).

/*
#include <signal.h>
#include <stddef.h>

// idb_sigchld_onstack adds SA_ONSTACK to SIGCHLD's handler when one is
// installed without it, and says whether it changed anything.
static int idb_sigchld_onstack(void) {
	struct sigaction sa;
	if (sigaction(SIGCHLD, NULL, &sa) != 0 || (sa.sa_flags & SA_ONSTACK) != 0) {
		return 0;
	}
	if ((sa.sa_flags & SA_SIGINFO) == 0 && (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN)) {
		return 0;
	}
	sa.sa_flags |= SA_ONSTACK;
	return sigaction(SIGCHLD, &sa, NULL) == 0;
}
*/
import "C"

func init() { guardChildSignal() }

// guardChildSignal gives SIGCHLD's handler SA_ONSTACK if the host installed
// one without it since the last look: one sigaction call when nothing
// changed.
func guardChildSignal() { C.idb_sigchld_onstack() }
