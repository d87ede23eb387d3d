// Command cabi is libidebridge: idebridge as a C shared library, for agents
// written in any language with a C FFI.
//
// Build it with `make lib` (or `make install`), and include
// cabi/include/idebridge.h. Python and Node.js bindings generated from the
// same description live in bindings/python and bindings/node.
//
// # Building
//
// Every build of the library (make lib and install, the Python package's
// backend, the Node package's build script) passes
//
//	-ldflags=-X=runtime.godebugDefault=<go list -f {{.DefaultGODEBUG}} ./cabi>,asyncpreemptoff=1
//
// which turns asynchronous preemption off in the library's Go runtime and
// keeps the go command's own GODEBUG defaults; GODEBUG in the environment
// still overrides it. Built with Go 1.26 and left on, the library driven
// from Node (koffi calls it from a stack of its own) corrupted goroutine
// stacks: 9 of 117 runs of bindings/test/node_package_test.js crashed, in
// runtime.stackalloc on a stack free-list word of 0x206 (the RFLAGS value
// asyncPreempt pushes) or in a traceback of a corrupted stack; none of 24
// runs crashed with the library built by Go 1.25, none of 54 with
// preemption off. The library has no loop that needs preempting: its
// goroutines block on channels and I/O.
//
// The rules of the ABI:
//
//   - Objects (registries, IDE clients, LSP managers) cross as opaque,
//     nonzero uint64_t handles from a locked table; no Go pointer ever
//     crosses. A zero, stale, random or wrong-kind handle gives
//     IDB_ERR_HANDLE, never a crash.
//   - Structured data crosses as UTF-8 JSON text in the shapes the command
//     line prints with --json. Strings returned by the library are freed
//     only with idb_free.
//   - Every export (but idb_free and idb_last_error) returns an int status,
//     0 on success. A failing call stores its message for the calling
//     thread; idb_last_error returns a copy. Panics are recovered into
//     IDB_ERR_PANIC. Nothing in the library exits the process.
//   - Blocking calls take a timeout in milliseconds: 0 means the
//     function's documented default, negative means no timeout.
//   - Every blocking function idb_X has an asynchronous twin idb_X_start,
//     generated from the table (start_gen.go): it returns a call handle at
//     once; idb_call_wait, idb_call_fd (a descriptor for event loops),
//     idb_call_result, idb_call_cancel and idb_call_free finish it. The
//     call carries its outcome, error included, so any thread may read it
//     (export_async.go).
//
// The exports are described once, in package cabi/abispec; cabi/gen writes
// the header and the bindings from that description:
//
//go:generate go run ./gen
package main
