package main

// Go asks pthread_getattr_np for the stack bounds of a C thread on every
// call into Go whose stack pointer lies outside the bounds it knows: on
// every call from koffi (Node), which runs C functions on a stack of its
// own. For the process's main thread, where Node runs, glibc answers by
// reading /proc/self/maps, about 90 microseconds a call. The link wraps
// pthread_getattr_np so that the main thread's answer is read once and
// kept (its stack does not move); other threads ask glibc as before,
// which is cheap for them. The wrap binds only this library's own calls,
// which are the runtime's (x_cgo_getstackbound in runtime/cgo), and that
// caller initialises attr before asking, so the cached answer only needs
// to set the stack on it.

/*
#cgo LDFLAGS: -Wl,--wrap=pthread_getattr_np
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

int __real_pthread_getattr_np(pthread_t thread, pthread_attr_t *attr);

static void *idb_main_stack_addr;
static size_t idb_main_stack_size;
static atomic_int idb_main_stack_known;

__attribute__((visibility("hidden"))) int __wrap_pthread_getattr_np(pthread_t thread, pthread_attr_t *attr) {
	if (!pthread_equal(thread, pthread_self()) || getpid() != (pid_t)syscall(SYS_gettid)) {
		return __real_pthread_getattr_np(thread, attr);
	}
	if (atomic_load(&idb_main_stack_known)) {
		return pthread_attr_setstack(attr, idb_main_stack_addr, idb_main_stack_size);
	}
	int err = __real_pthread_getattr_np(thread, attr);
	void *addr;
	size_t size;
	if (err == 0 && pthread_attr_getstack(attr, &addr, &size) == 0) {
		idb_main_stack_addr = addr;
		idb_main_stack_size = size;
		atomic_store(&idb_main_stack_known, 1);
	}
	return err;
}
*/
import "C"
