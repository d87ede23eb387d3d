package main

/*
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

// The asynchronous call a library thread is running, in C thread-local
// storage: the exports that call runs read it (callContext, fail) on the
// same thread, since the call's goroutine is locked to it. 0 on every
// other thread, so a blocking export called from C behaves as before.
static pthread_key_t idb_call_key;
static pthread_once_t idb_call_once = PTHREAD_ONCE_INIT;

static void idb_call_make_key(void) { pthread_key_create(&idb_call_key, free); }

// The slot is a malloc'd uint64_t (a handle does not fit a pointer on
// 32-bit platforms), freed by the key's destructor when the thread exits.
static void idb__set_current_call(uint64_t h) {
	pthread_once(&idb_call_once, idb_call_make_key);
	uint64_t *slot = pthread_getspecific(idb_call_key);
	if (slot == NULL) {
		if (h == 0 || (slot = malloc(sizeof *slot)) == NULL) {
			return;
		}
		pthread_setspecific(idb_call_key, slot);
	}
	*slot = h;
}

static uint64_t idb__current_call(void) {
	pthread_once(&idb_call_once, idb_call_make_key);
	uint64_t *slot = pthread_getspecific(idb_call_key);
	return slot ? *slot : 0;
}
*/
import "C"

// setCurrentCall records h as the call the calling thread runs (0: none).
// The caller must be locked to its OS thread.
func setCurrentCall(h uint64) {
	C.idb__set_current_call(C.uint64_t(h))
}

// currentCallHandle returns the call the calling thread runs, or 0.
func currentCallHandle() uint64 {
	return uint64(C.idb__current_call())
}
