package main

import "testing"

// exportCalls returns a call of every export that returns a status, with
// harmless arguments, keyed by export name.
func exportCalls(t *testing.T) map[string]func() C_int {
	var out *C_char
	var n C_uint64
	return map[string]func() C_int{
		"idb_version":        func() C_int { return idb_version(&out) },
		"idb_handle_count":   func() C_int { return idb_handle_count(&n) },
		"idb_parse_lockfile": func() C_int { return idb_parse_lockfile(cstr(t, "1.lock"), cstr(t, "{}"), 2, &out) },
	}
}
