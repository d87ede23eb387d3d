package main

import (
	"runtime"
	"testing"
)

// BenchmarkAsyncCall compares a trivial blocking export called directly
// with the same export run as an asynchronous call (start, wait, result,
// free), and with its completion descriptor (what the event-loop forms of
// the bindings add). It counts everything but the cgo transitions, which
// the C, Python and Node benchmarks include.
func BenchmarkAsyncCall(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	opts := cstr(b, `{"lockfileDirs":[],"env":{}}`)
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			var out *C_char
			if st := idb_discover(opts, 0, &out); st != 0 {
				b.Fatal(st)
			}
			freeC(unsafePointer(out))
		}
	})
	b.Run("call", func(b *testing.B) {
		for b.Loop() {
			var call C_uint64
			if st := idb_discover_start(opts, 0, &call); st != 0 {
				b.Fatal(st)
			}
			if st := idb_call_wait(call, -1); st != 0 {
				b.Fatal(st)
			}
			var out *C_char
			if st := idb_call_result(call, &out); st != 0 {
				b.Fatal(st)
			}
			freeC(unsafePointer(out))
			idb_call_free(call)
		}
	})
	b.Run("call+fd", func(b *testing.B) {
		for b.Loop() {
			var call C_uint64
			if st := idb_discover_start(opts, 0, &call); st != 0 {
				b.Fatal(st)
			}
			var fd C_uint64
			if st := idb_call_fd(call, &fd); st != 0 {
				b.Fatal(st)
			}
			if st := idb_call_wait(call, -1); st != 0 {
				b.Fatal(st)
			}
			var out *C_char
			if st := idb_call_result(call, &out); st != 0 {
				b.Fatal(st)
			}
			freeC(unsafePointer(out))
			idb_call_free(call)
		}
	})
}
