package main

/*
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
*/
import "C"

import (
	"bytes"
	"encoding/json"
	"unsafe"
)

// Aliases of the C types used by the exports, so that files without cgo
// (and tests, which cannot use cgo) can name them.
type (
	C_int    = C.int
	C_char   = C.char
	C_uint64 = C.uint64_t
	C_int64  = C.int64_t
	C_size   = C.size_t
)

// goString copies a required C string argument.
func goString(p *C.char, what string) (string, error) {
	if p == nil {
		return "", argErr("%s is NULL", what)
	}
	return C.GoString(p), nil
}

// goOptString copies an optional C string argument; NULL gives ok false.
func goOptString(p *C.char) (s string, ok bool) {
	if p == nil {
		return "", false
	}
	return C.GoString(p), true
}

// maxInt is the largest int.
const maxInt = int(^uint(0) >> 1)

// borrowBytes returns the bytes of a NUL-terminated C string without
// copying them. The slice is valid only during the export call, and only
// for callees that keep no reference to it (a JSON decoder, for instance).
func borrowBytes(p *C.char) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), int(C.strlen(p)))
}

// copyBytes returns a Go copy of the bytes of a NUL-terminated C string.
func copyBytes(p *C.char) []byte {
	return C.GoBytes(unsafe.Pointer(p), C.int(C.strlen(p)))
}

// decodeOptions decodes a JSON options argument into v, rejecting unknown
// members (a misspelt option is an error, not a silent default). NULL, an
// empty string and "null" leave v at its zero value: the defaults.
func decodeOptions(p *C.char, v any) error { return decodeParam(p, "options_json", v) }

// decodeParam decodes the JSON parameter name into v as decodeOptions does;
// its errors name the parameter.
func decodeParam(p *C.char, name string, v any) error {
	if p == nil {
		return nil
	}
	b := borrowBytes(p)
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return argErr("%s: %v", name, err)
	}
	if dec.More() {
		return argErr("%s: unexpected data after the JSON value", name)
	}
	return nil
}

// goBytes copies a (pointer, length) buffer argument. NULL is allowed only
// with length 0.
func goBytes(p *C.char, n C.size_t, what string) ([]byte, error) {
	if p == nil {
		if n != 0 {
			return nil, argErr("%s is NULL with length %d", what, uint64(n))
		}
		return []byte{}, nil
	}
	if uint64(n) > 1<<31-1 {
		return nil, argErr("%s length %d is too large", what, uint64(n))
	}
	return C.GoBytes(unsafe.Pointer(p), C.int(n)), nil
}

// checkOut returns an error when a required out parameter is NULL.
func checkOut[T any](p *T, what string) error {
	if p == nil {
		return argErr("%s is NULL", what)
	}
	return nil
}

// setOut stores a copy of s, allocated with malloc, in *out.
func setOut(out **C.char, s string) {
	*out = C.CString(s)
}

// setOutJSON stores v's JSON in *out and returns 0; a value that cannot be
// marshalled becomes the export's error.
func setOutJSON(name string, out **C.char, v any) C.int {
	js, err := json.Marshal(v)
	if err != nil {
		return fail(name, err)
	}
	setOutBytes(out, js)
	return 0
}

// setOutBytes stores a NUL-terminated malloc'd copy of b in *out.
func setOutBytes(out **C.char, b []byte) {
	p := C.malloc(C.size_t(len(b) + 1))
	buf := unsafe.Slice((*byte)(p), len(b)+1)
	copy(buf, b)
	buf[len(b)] = 0
	*out = (*C.char)(p)
}

// cString returns a malloc'd copy of s (for tests, which cannot use cgo).
func cString(s string) *C.char { return C.CString(s) }

// cGoString copies a C string (for tests).
func cGoString(p *C.char) string { return C.GoString(p) }

// unsafePointer converts a C string pointer for freeC (for tests).
func unsafePointer(p *C.char) unsafe.Pointer { return unsafe.Pointer(p) }
