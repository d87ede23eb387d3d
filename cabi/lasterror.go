package main

/*
#cgo LDFLAGS: -pthread
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// The last error message of each thread lives in C thread-local storage:
// a cgo callback runs on the C thread that called the export, so C code it
// calls sees that thread's slot. The key's destructor frees the message when
// the thread exits, so threads that come and go leak nothing.
static pthread_key_t idb_err_key;
static pthread_once_t idb_err_once = PTHREAD_ONCE_INIT;

static void idb_err_make_key(void) { pthread_key_create(&idb_err_key, free); }

// idb__set_error takes ownership of msg (allocated with malloc).
__attribute__((visibility("hidden"))) void idb__set_error(char *msg) {
	pthread_once(&idb_err_once, idb_err_make_key);
	char *old = pthread_getspecific(idb_err_key);
	pthread_setspecific(idb_err_key, msg);
	free(old);
}

// idb_last_error and idb_free are written in C: they never enter the Go
// runtime, so they cannot panic and cost no cgo transition.

// idb_last_error returns a malloc'd copy of this thread's message, or NULL.
__attribute__((visibility("default"))) char *idb_last_error(void) {
	pthread_once(&idb_err_once, idb_err_make_key);
	const char *msg = pthread_getspecific(idb_err_key);
	return msg ? strdup(msg) : NULL;
}

// idb_free frees a string the library returned.
__attribute__((visibility("default"))) void idb_free(void *p) { free(p); }
*/
import "C"

import "unsafe"

// setThreadError records msg as the calling thread's last error. It must
// run on the thread that made the call: inside an export, it does.
func setThreadError(msg string) {
	C.idb__set_error(C.CString(msg))
}

// threadError returns a malloc'd copy of the calling thread's last error,
// or nil (idb_last_error).
func threadError() *C.char {
	return C.idb_last_error()
}

// freeC frees memory the library returned (idb_free).
func freeC(p unsafe.Pointer) {
	C.idb_free(p)
}
