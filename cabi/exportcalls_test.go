package main

import "testing"

// moreExportCalls are the calls of exports listed in other files (the
// generated start functions, the agent API), merged into exportCalls.
var moreExportCalls []func(t *testing.T) map[string]func() C_int

// exportCalls returns a call of every export that returns a status, with
// harmless arguments, keyed by export name.
func exportCalls(t *testing.T) map[string]func() C_int {
	var out *C_char
	var n C_uint64
	calls := map[string]func() C_int{
		"idb_version":        func() C_int { return idb_version(&out) },
		"idb_handle_count":   func() C_int { return idb_handle_count(&n) },
		"idb_parse_lockfile": func() C_int { return idb_parse_lockfile(cstr(t, "1.lock"), cstr(t, "{}"), 2, &out) },
		"idb_path_to_local":  func() C_int { return idb_path_to_local(cstr(t, "/x"), nil, &out) },
		"idb_path_to_ide":    func() C_int { return idb_path_to_ide(cstr(t, "/x"), nil, &out) },
		"idb_registry_new":   func() C_int { return idb_registry_new(nil, &n) },
		"idb_registry_publish": func() C_int {
			return idb_registry_publish(1, cstr(t, "s"), cstr(t, "{}"))
		},
		"idb_registry_set_version":  func() C_int { return idb_registry_set_version(1, cstr(t, "u"), 1) },
		"idb_registry_drain":        func() C_int { return idb_registry_drain(1, &out) },
		"idb_registry_reset":        func() C_int { return idb_registry_reset(1, nil) },
		"idb_registry_stats":        func() C_int { return idb_registry_stats(1, &out) },
		"idb_registry_free":         func() C_int { return idb_registry_free(1) },
		"idb_render_attachment":     func() C_int { return idb_render_attachment(cstr(t, "{}"), nil, &out) },
		"idb_discover":              func() C_int { return idb_discover(cstr(t, `{"lockfileDirs":[]}`), 1, &out) },
		"idb_ide_connect":           func() C_int { return idb_ide_connect(cstr(t, `{"url":"ws://127.0.0.1:1/"}`), 1, &n) },
		"idb_ide_info":              func() C_int { return idb_ide_info(1, &out) },
		"idb_ide_tools":             func() C_int { return idb_ide_tools(1, 1, &out) },
		"idb_ide_call":              func() C_int { return idb_ide_call(1, cstr(t, "x"), nil, 1, &out) },
		"idb_ide_next_notification": func() C_int { return idb_ide_next_notification(1, 0, &out) },
		"idb_ide_close":             func() C_int { return idb_ide_close(1) },
		"idb_lsp_new":               func() C_int { return idb_lsp_new(cstr(t, "{}"), cstr(t, "."), nil, &n) },
		"idb_lsp_open":              func() C_int { return idb_lsp_open(1, cstr(t, "x"), 0) },
		"idb_lsp_change":            func() C_int { return idb_lsp_change(1, cstr(t, "x"), cstr(t, ""), 0) },
		"idb_lsp_save":              func() C_int { return idb_lsp_save(1, cstr(t, "x"), 0) },
		"idb_lsp_close_file":        func() C_int { return idb_lsp_close_file(1, cstr(t, "x"), 0) },
		"idb_lsp_settle":            func() C_int { return idb_lsp_settle(1, cstr(t, "x"), 0, &out) },
		"idb_lsp_drain":             func() C_int { return idb_lsp_drain(1, &out) },
		"idb_lsp_diagnose":          func() C_int { return idb_lsp_diagnose(1, cstr(t, `["x"]`), 0, &out) },
		"idb_lsp_servers":           func() C_int { return idb_lsp_servers(1, &out) },
		"idb_lsp_load_claude_code":  func() C_int { return idb_lsp_load_claude_code(1, nil, 0, &out) },
		"idb_lsp_shutdown":          func() C_int { return idb_lsp_shutdown(1, 0) },
		"idb_lsp_definition":        func() C_int { return idb_lsp_definition(1, nil, 0, &out) },
		"idb_lsp_declaration":       func() C_int { return idb_lsp_declaration(1, nil, 0, &out) },
		"idb_lsp_type_definition":   func() C_int { return idb_lsp_type_definition(1, nil, 0, &out) },
		"idb_lsp_implementation":    func() C_int { return idb_lsp_implementation(1, nil, 0, &out) },
		"idb_lsp_references":        func() C_int { return idb_lsp_references(1, nil, 0, &out) },
		"idb_lsp_hover":             func() C_int { return idb_lsp_hover(1, nil, 0, &out) },
		"idb_lsp_document_symbols":  func() C_int { return idb_lsp_document_symbols(1, nil, 0, &out) },
		"idb_lsp_workspace_symbols": func() C_int { return idb_lsp_workspace_symbols(1, nil, 0, &out) },
		"idb_lsp_prepare_call_hierarchy": func() C_int {
			return idb_lsp_prepare_call_hierarchy(1, nil, 0, &out)
		},
		"idb_lsp_incoming_calls": func() C_int { return idb_lsp_incoming_calls(1, nil, 0, &out) },
		"idb_lsp_outgoing_calls": func() C_int { return idb_lsp_outgoing_calls(1, nil, 0, &out) },
		"idb_lsp_prepare_type_hierarchy": func() C_int {
			return idb_lsp_prepare_type_hierarchy(1, nil, 0, &out)
		},
		"idb_lsp_supertypes":   func() C_int { return idb_lsp_supertypes(1, nil, 0, &out) },
		"idb_lsp_subtypes":     func() C_int { return idb_lsp_subtypes(1, nil, 0, &out) },
		"idb_lsp_rename":       func() C_int { return idb_lsp_rename(1, nil, 0, &out) },
		"idb_lsp_apply_rename": func() C_int { return idb_lsp_apply_rename(1, cstr(t, "{}"), 0, &out) },
	}
	for _, more := range moreExportCalls {
		for name, call := range more(t) {
			calls[name] = call
		}
	}
	return calls
}
