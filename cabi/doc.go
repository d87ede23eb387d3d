// Command cabi is libidebridge: idebridge as a C shared library, for agents
// written in any language with a C FFI.
//
// Build it with `make lib` (or `make install`, which installs it with its
// header and a pkg-config file), and include cabi/include/idebridge.h.
// Python and Node.js bindings generated from the same description live in
// bindings/python and bindings/node.
//
// The rules of the ABI:
//
//   - Objects (registries, IDE clients, LSP managers, edit sets) cross as opaque,
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
//   - As for any Go library, a signal handler the host installs after
//     loading it must have SA_ONSTACK: the handler may run on one of the
//     library's threads, and without SA_ONSTACK it runs on a goroutine's
//     small stack and corrupts the memory below it. SIGCHLD matters most,
//     since the library's children (language servers) signal the threads
//     that started them: the library gives SIGCHLD's handler SA_ONSTACK
//     when it loads and at the start of every blocking call
//     (sigchld_unix.go), and the Node binding keeps the handler libuv
//     installs, without SA_ONSTACK, for good.
//
// The exports are described once, in package cabi/abispec; cabi/gen writes
// the header and the bindings from that description:
//
//go:generate go run ./gen
package main
