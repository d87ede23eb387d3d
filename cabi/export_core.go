package main

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"github.com/idebridge/idebridge/lockfile"
)

// libVersion is the version idb_version reports.
const libVersion = "0.1.0"

// handles is the process-wide handle table.
var handles = newHandleTable()

//export idb_version
func idb_version(out **C.char) (st C.int) {
	const name = "idb_version"
	defer recoverPanic(name, &st)
	enter(name)
	if out == nil {
		return fail(name, argErr("out is NULL"))
	}
	setOut(out, libVersion)
	return 0
}

//export idb_handle_count
func idb_handle_count(out *C.uint64_t) (st C.int) {
	const name = "idb_handle_count"
	defer recoverPanic(name, &st)
	enter(name)
	if out == nil {
		return fail(name, argErr("out is NULL"))
	}
	*out = C.uint64_t(handles.len())
	return 0
}

//export idb_parse_lockfile
func idb_parse_lockfile(fileName *C.char, data *C.char, dataLen C.size_t, out **C.char) (st C.int) {
	const name = "idb_parse_lockfile"
	defer recoverPanic(name, &st)
	enter(name)
	if err := checkOut(out, "out"); err != nil {
		return fail(name, err)
	}
	fn, err := goString(fileName, "name")
	if err != nil {
		return fail(name, err)
	}
	b, err := goBytes(data, dataLen, "data")
	if err != nil {
		return fail(name, err)
	}
	lf, err := lockfile.Parse(fn, b)
	if err != nil {
		return fail(name, err)
	}
	return setOutJSON(name, out, lf)
}
