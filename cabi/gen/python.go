package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/idebridge/idebridge/cabi/abispec"
)

// Output path of the asyncio module of the Python package.
const pythonAioPath = "bindings/python/idebridge/aio.py"

// pyCTypes are the ctypes types of one parameter.
func pyCTypes(p abispec.Param) []string {
	switch p.Kind {
	case abispec.String, abispec.OptString, abispec.JSON:
		return []string{"ctypes.c_char_p"}
	case abispec.Bytes:
		return []string{"ctypes.c_char_p", "ctypes.c_size_t"}
	case abispec.Handle:
		return []string{"ctypes.c_uint64"}
	case abispec.Int, abispec.TimeoutMS:
		return []string{"ctypes.c_int64"}
	case abispec.OutString:
		return []string{"ctypes.POINTER(ctypes.c_void_p)"}
	case abispec.OutHandle, abispec.OutUint64:
		return []string{"ctypes.POINTER(ctypes.c_uint64)"}
	case abispec.FreePtr:
		return []string{"ctypes.c_void_p"}
	}
	panic("unknown kind")
}

func pyRestype(f abispec.Func) string {
	switch f.Return {
	case abispec.ReturnVoid:
		return "None"
	case abispec.ReturnString:
		return "ctypes.c_void_p"
	}
	return "ctypes.c_int"
}

// pyInputs are the parameters the low-level wrapper takes: every parameter
// but the out parameter, one per Param (a Bytes buffer is one).
func pyInputs(f abispec.Func) []abispec.Param {
	var in []abispec.Param
	for _, p := range f.Params {
		switch p.Kind {
		case abispec.OutString, abispec.OutHandle, abispec.OutUint64:
		default:
			in = append(in, p)
		}
	}
	return in
}

// isBlocking reports whether f is a blocking function of the bindings:
// the bindings run it as an asynchronous call (start, wait, result).
func isBlocking(f abispec.Func) bool {
	return f.Blocking != "" && f.Binding != abispec.Internal && f.AsyncOf == ""
}

// outKind returns the kind of f's out parameter, or -1 for none.
func outKind(f abispec.Func) abispec.Kind {
	if n := len(f.Params); n > 0 {
		switch k := f.Params[n-1].Kind; k {
		case abispec.OutString, abispec.OutHandle, abispec.OutUint64:
			return k
		}
	}
	return -1
}

// pyArgs returns the parameter names of the low-level wrapper of f, the
// lines converting them, and the C arguments.
func pyArgs(f abispec.Func) (names, prep, args []string) {
	for _, p := range pyInputs(f) {
		names = append(names, p.Name)
		switch p.Kind {
		case abispec.String, abispec.OptString:
			args = append(args, "_text_in("+p.Name+")")
		case abispec.JSON:
			args = append(args, "_json_in("+p.Name+")")
		case abispec.Bytes:
			prep = append(prep, fmt.Sprintf("_%s = _bytes_in(%s)", p.Name, p.Name))
			args = append(args, "_"+p.Name, "len(_"+p.Name+")")
		default:
			args = append(args, p.Name)
		}
	}
	return names, prep, args
}

// pyDecoder names the runtime function decoding the result text of f's
// asynchronous call.
func pyDecoder(f abispec.Func) string {
	switch outKind(f) {
	case abispec.OutString:
		if f.Result == abispec.ResultJSON {
			return "_dec_json"
		}
		return "_dec_text"
	case abispec.OutHandle, abispec.OutUint64:
		return "_dec_int"
	}
	return "_dec_none"
}

// pyLow writes the low-level wrapper _idb_x(...) of f. A function that
// returns promptly calls the C function and raises on a nonzero status. A
// blocking one also gets _start_idb_x(...), which starts its asynchronous
// call and returns the call's handle; _idb_x then waits for the call
// (interruptibly: Ctrl-C cancels it) and decodes its result.
func pyLow(b *buf, f abispec.Func) {
	names, prep, args := pyArgs(f)
	if isBlocking(f) {
		b.p("def _start_%s(%s):", f.Name, strings.Join(names, ", "))
		b.p("    lib = _load()")
		for _, l := range prep {
			b.p("    %s", l)
		}
		b.p("    call = ctypes.c_uint64()")
		b.p("    status = lib.%s_start(%s)", f.Name, strings.Join(append(args, "ctypes.byref(call)"), ", "))
		b.p("    if status != IDB_OK:")
		b.p("        _raise(lib, status, %q)", f.Name+"_start")
		b.p("    return call.value")
		b.p("")
		b.p("")
		b.p("def _%s(%s):", f.Name, strings.Join(names, ", "))
		b.p("    return %s(_finish(_start_%s(%s)))", pyDecoder(f), f.Name, strings.Join(names, ", "))
		b.p("")
		b.p("")
		return
	}
	b.p("def _%s(%s):", f.Name, strings.Join(names, ", "))
	b.p("    lib = _load()")
	for _, l := range prep {
		b.p("    %s", l)
	}
	out := ""
	switch outKind(f) {
	case abispec.OutString:
		b.p("    out = ctypes.c_void_p()")
		out = "string"
	case abispec.OutHandle, abispec.OutUint64:
		b.p("    out = ctypes.c_uint64()")
		out = "uint64"
	}
	if out != "" {
		args = append(args, "ctypes.byref(out)")
	}
	b.p("    status = lib.%s(%s)", f.Name, strings.Join(args, ", "))
	b.p("    if status != IDB_OK:")
	b.p("        _raise(lib, status, %q)", f.Name)
	switch {
	case out == "uint64":
		b.p("    return out.value")
	case out == "string" && f.Result == abispec.ResultJSON:
		b.p("    return _take_json(lib, out)")
	case out == "string" && f.Params[len(f.Params)-1].Null == "":
		b.p("    return _take_str(lib, out)")
	case out == "string":
		b.p("    return _take_text(lib, out)")
	default:
		b.p("    return None")
	}
	b.p("")
	b.p("")
}

// pyFieldDoc is a field's documentation in the Python binding.
func pyFieldDoc(fl abispec.Field) string {
	if fl.Seconds {
		return fl.Doc + ", in seconds"
	}
	return fl.Doc
}

// pySig returns the Python signature parts of f's binding (without self),
// and the arguments to pass to the low-level wrapper.
func pySig(f abispec.Func) (sig []string, call []string, docs [][2]string) {
	for _, p := range pyInputs(f) {
		switch p.Kind {
		case abispec.Handle:
			call = append(call, "self._handle()")
		case abispec.String:
			sig = append(sig, fmt.Sprintf("%s: %s", bindName(p), or(p.PyType, "str")))
			call = append(call, bindName(p))
			docs = append(docs, [2]string{bindName(p), p.Doc})
		case abispec.OptString:
			sig = append(sig, fmt.Sprintf("%s: %s = None", bindName(p), or(p.PyType, "Optional[str]")))
			call = append(call, bindName(p))
			docs = append(docs, [2]string{bindName(p), p.Doc + "; None when omitted"})
		case abispec.Bytes:
			sig = append(sig, fmt.Sprintf("%s: %s", bindName(p), or(p.PyType, "Union[bytes, str]")))
			call = append(call, bindName(p))
			docs = append(docs, [2]string{bindName(p), p.Doc})
		case abispec.JSON:
			if len(p.Fields) > 0 {
				var members []string
				for _, fl := range p.Fields {
					if fl.Required {
						sig = append(sig, fmt.Sprintf("%s: %s", fl.Py, or(fl.PyType, "Any")))
						members = append(members, fmt.Sprintf("%q: %s", fl.JSON, fl.Py))
						docs = append(docs, [2]string{fl.Py, pyFieldDoc(fl)})
						continue
					}
					sig = append(sig, fmt.Sprintf("%s: %s = None", fl.Py, or(fl.PyType, "Any")))
					val := fl.Py
					if fl.Seconds {
						val = "_ms_opt(" + fl.Py + ")"
					}
					if fl.PyDefault != "" {
						members = append(members, fmt.Sprintf("%q: (%s if %s is None else %s)", fl.JSON, fl.PyDefault, fl.Py, val))
						docs = append(docs, [2]string{fl.Py, pyFieldDoc(fl) + "; None sends " + fl.PyDefault})
					} else {
						members = append(members, fmt.Sprintf("%q: %s", fl.JSON, val))
						docs = append(docs, [2]string{fl.Py, pyFieldDoc(fl)})
					}
				}
				call = append(call, "_options({"+strings.Join(members, ", ")+"})")
				continue
			}
			typ := or(p.PyType, "Any")
			if p.Required {
				sig = append(sig, fmt.Sprintf("%s: %s", bindName(p), typ))
				docs = append(docs, [2]string{bindName(p), p.Doc + " (a JSON-serialisable value, or a str holding JSON)"})
			} else {
				sig = append(sig, fmt.Sprintf("%s: %s = None", bindName(p), typ))
				docs = append(docs, [2]string{bindName(p), p.Doc + " (a JSON-serialisable value, or a str holding JSON)"})
			}
			call = append(call, bindName(p))
		case abispec.Int:
			sig = append(sig, fmt.Sprintf("%s: int", bindName(p)))
			call = append(call, bindName(p))
			docs = append(docs, [2]string{bindName(p), p.Doc})
		case abispec.TimeoutMS:
			sig = append(sig, "timeout: Optional[float] = None")
			call = append(call, "_timeout_ms(timeout)")
			def := or(f.DefaultTimeout, "the default")
			docs = append(docs, [2]string{"timeout", "seconds to wait; None for " + def + ", a negative number to wait without limit"})
		}
	}
	// Required arguments come before those with a default (stable).
	sort.SliceStable(sig, func(i, j int) bool {
		return !strings.Contains(sig[i], " = ") && strings.Contains(sig[j], " = ")
	})
	return sig, call, docs
}

// bindName is a parameter's name in the bindings: its C name without the
// _json suffix (args_json is args), since the bindings take values.
func bindName(p abispec.Param) string {
	return strings.TrimSuffix(p.Name, "_json")
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// pyEscape escapes text for a Python docstring.
func pyEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"""`, `\"\"\"`)
}

// bindingNames rewrites the C names of bound functions in doc into their
// names in a binding (name gives it), so that a Python docstring says
// file_state() where the table says idb_file_state.
func bindingNames(doc string, name func(abispec.Func) string) string {
	return idbName.ReplaceAllStringFunc(doc, func(m string) string {
		if f, ok := abispec.FuncByName(m); ok && f.Binding != abispec.Internal {
			return name(f)
		}
		return m
	})
}

var idbName = regexp.MustCompile(`\bidb_[a-z0-9_]+\b`)

// pyFieldNames rewrites the JSON names of f's option members in doc into
// their Python keyword names (maxLocations is max_locations in Python).
func pyFieldNames(f abispec.Func, doc string) string {
	for _, p := range f.Params {
		for _, fl := range p.Fields {
			if fl.JSON != fl.Py {
				doc = regexp.MustCompile(`\b`+regexp.QuoteMeta(fl.JSON)+`\b`).ReplaceAllString(doc, fl.Py)
			}
		}
	}
	return doc
}

func pyName(f abispec.Func) string {
	switch {
	case f.Binding == abispec.Function:
		return f.Method + "()"
	case factoryOf(f) != "":
		return factoryOf(f) + "." + f.Method + "()"
	case f.Method == "__init__":
		return f.Class + "()"
	}
	return f.Class + "." + f.Method + "()"
}

// convRaises documents the exceptions a result conversion raises.
var convRaises = map[string]string{
	"_edit_outcome": "ConflictError: the file changed on disk since the edit's base, so nothing was written; its result is the outcome (result.text is what would have been written).",
}

// pyDoc writes a docstring at the given indentation.
func pyDoc(b *buf, indent string, f abispec.Func, docs [][2]string, isCtor, async bool) {
	f.Doc = pyEscape(pyFieldNames(f, bindingNames(f.Doc, pyName)))
	f.ResultDoc = pyEscape(pyFieldNames(f, f.ResultDoc))
	for i := range docs {
		docs[i][1] = pyEscape(pyFieldNames(f, bindingNames(docs[i][1], pyName)))
	}
	lines := wrap(f.Doc, 76-len(indent))
	b.p(`%s"""%s`, indent, lines[0])
	for _, l := range lines[1:] {
		if l == "" {
			b.p("")
		} else {
			b.p("%s%s", indent, l)
		}
	}
	if len(docs) > 0 {
		b.p("")
		b.p("%sArgs:", indent)
		for _, d := range docs {
			for i, l := range wrap(d[0]+": "+d[1]+".", 72-len(indent)) {
				if i == 0 {
					b.p("%s    %s", indent, l)
				} else {
					b.p("%s        %s", indent, l)
				}
			}
		}
	}
	if p, ok := outString(f); ok && !isCtor {
		ret := or(f.ResultDoc, p.Doc)
		if f.PyConv != "" {
			ret = f.PyReturn + ", made from " + ret
		}
		if p.Null != "" {
			ret += "; None when " + p.Null
		}
		b.p("")
		b.p("%sReturns:", indent)
		for _, l := range wrap(ret+".", 72-len(indent)) {
			b.p("%s    %s", indent, l)
		}
	}
	var raises []string
	for _, c := range f.Statuses {
		raises = append(raises, abispec.StatusByCode(c).Class)
	}
	b.p("")
	b.p("%sRaises:", indent)
	for i, l := range wrap("IdebridgeError: on failure, as one of "+strings.Join(raises, ", ")+".", 72-len(indent)) {
		if i == 0 {
			b.p("%s    %s", indent, l)
		} else {
			b.p("%s        %s", indent, l)
		}
	}
	if r := convRaises[f.PyConv]; r != "" {
		for i, l := range wrap(r, 72-len(indent)) {
			if i == 0 {
				b.p("%s    %s", indent, l)
			} else {
				b.p("%s        %s", indent, l)
			}
		}
	}
	if f.Blocking != "" {
		b.p("")
		note := "Blocks until " + f.Blocking + "; Ctrl-C (KeyboardInterrupt) cancels it."
		if async {
			note = "Completes when " + f.Blocking + ". Cancelling the awaiting task cancels the call (and undoes what the IDE still shows) before CancelledError propagates."
		}
		for _, l := range wrap(note, 76-len(indent)) {
			b.p("%s%s", indent, l)
		}
	}
	b.p(`%s"""`, indent)
}

func pyReturnOf(f abispec.Func) string {
	if f.PyReturn != "" {
		return f.PyReturn
	}
	return "None"
}

// pyCall is the expression that runs f with the low-level arguments call:
// its result, decoded and converted. In the async module a blocking
// function's call is awaited.
func pyCall(f abispec.Func, call []string, async bool) string {
	args := strings.Join(call, ", ")
	expr := "_" + f.Name + "(" + args + ")"
	if async && isBlocking(f) {
		expr = pyDecoder(f) + "(await _await(_start_" + f.Name + "(" + args + ")))"
	}
	if f.PyConv != "" {
		expr = f.PyConv + "(" + expr + ")"
	}
	return expr
}

// pyTypeNames are the names the generated modules import from
// idebridge.types: the typed results, their converters, ConflictError.
func pyTypeNames() []string {
	seen := map[string]bool{}
	var names []string
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, f := range abispec.Funcs {
		add(f.PyConv)
	}
	return names
}

// pyPublicTypes are the public names of idebridge.types the package
// re-exports.
var pyPublicTypes = []string{
	"AutoConnectDecision", "Attachment", "Candidate", "CodeAction", "CodeActions", "ConflictError", "Content", "DiagnosedFile", "Diagnosis", "Diagnostic",
	"DiagnosticsSnapshot", "EditApplied", "EditCheck", "EditCheckFile", "EditConflict", "EditResult", "EditStatus", "FileDiagnostics", "FileState",
	"Freshness", "IDEInfo", "IDEWaitResult", "LSPServerStatus", "Lockfile",
	"NavAnswer", "NavCall", "NavCallHierarchy", "NavCallItem", "NavHover", "NavLocation", "NavLocations",
	"NavRenameApplied", "NavRenameFile", "NavRenameFileOutcome", "NavRenameProposal", "NavSymbol", "NavSymbols",
	"NavTypeHierarchy", "NavTypeItem", "NewDiagnostics",
	"Notification", "Position", "Range", "ServerInfo", "SettleResult", "Severity", "SymbolSource", "Tool", "ToolResult",
}

func python() []byte {
	var b buf
	b.p("# Code generated by cabi/gen from %s. DO NOT EDIT.", source)
	b.p("")
	b.WriteString(pyPrelude)
	b.p("__all__ = [")
	var all []string
	for _, s := range abispec.Statuses {
		all = append(all, s.Name)
	}
	all = append(all, "IdebridgeError")
	for _, s := range abispec.Statuses {
		if s.Class != "" && s.Class != "IdebridgeError" {
			all = append(all, s.Class)
		}
	}
	for _, f := range abispec.Funcs {
		if f.Binding == abispec.Function {
			all = append(all, f.Method)
		}
	}
	for _, c := range boundClasses() {
		all = append(all, c.Name)
	}
	all = append(all, pyPublicTypes...)
	for _, a := range all {
		b.p("    %q,", a)
	}
	b.p("]")
	b.p("")
	b.p("# Status codes returned by the C functions.")
	for _, s := range abispec.Statuses {
		b.p("%s = %d", s.Name, s.Code)
	}
	b.p("")
	b.p("")
	b.p("class IdebridgeError(Exception):")
	b.p(`    """An idebridge call failed; str(error) is the library's message.`)
	b.p("")
	b.p("    Attributes:")
	b.p("        status: the C status code (IDB_ERROR, IDB_ERR_HANDLE, ...).")
	b.p("        function: the C function that failed, e.g. \"idb_registry_publish\".")
	b.p("        code: for a ToolError, the JSON-RPC error code of the IDE's answer")
	b.p("            (e.g. -32601 for an unknown tool; 0 for a result with isError);")
	b.p("            None otherwise.")
	b.p("        data: the data member of the IDE's error, if any.")
	b.p(`    """`)
	b.p("")
	b.p("    def __init__(")
	b.p("        self,")
	b.p("        message: str,")
	b.p("        status: int = IDB_ERROR,")
	b.p("        function: Optional[str] = None,")
	b.p("        code: Optional[int] = None,")
	b.p("        data: Any = None,")
	b.p("    ) -> None:")
	b.p("        super().__init__(message)")
	b.p("        self.status = status")
	b.p("        self.function = function")
	b.p("        self.code = code")
	b.p("        self.data = data")
	for _, s := range abispec.Statuses {
		if s.Class == "" || s.Class == "IdebridgeError" {
			continue
		}
		b.p("")
		b.p("")
		if s.PyBuiltin != "" {
			b.p("class %s(IdebridgeError, builtins.%s):", s.Class, s.PyBuiltin)
		} else {
			b.p("class %s(IdebridgeError):", s.Class)
		}
		b.p(`    """%s: %s"""`, s.Name, s.Doc)
	}
	b.p("")
	b.p("")
	b.p("_ERRORS = {")
	for _, s := range abispec.Statuses {
		if s.Class != "" {
			b.p("    %s: %s,", s.Name, s.Class)
		}
	}
	b.p("}")
	b.p("")
	b.p("# The typed results (hand-written in types.py, which uses the errors above).")
	b.p("from .types import (  # noqa: E402")
	for _, n := range append(append([]string{}, pyPublicTypes...), pyTypeNames()...) {
		b.p("    %s,", n)
	}
	b.p(")")
	b.p("")
	b.WriteString(pyRuntime)
	b.p("# What the user called, by C function: an error says IDEClient.connect,")
	b.p("# not idb_ide_connect.")
	b.p("_NAMES = {")
	for _, f := range abispec.Funcs {
		if f.Binding == abispec.Internal || isInternalClass(f.Class) {
			continue
		}
		n := strings.TrimSuffix(pyName(f), "()")
		b.p("    %q: %q,", f.Name, n)
		if isBlocking(f) {
			b.p("    %q: %q,", f.Name+"_start", n)
		}
	}
	b.p("}")
	b.p("")
	b.p("")
	b.p("def _user_message(message: str) -> str:")
	b.p(`    """The library's message with its leading C function name, if any,`)
	b.p(`    replaced by the name of what the user called."""`)
	b.p(`    head, sep, rest = message.partition(": ")`)
	b.p(`    if sep and head in _NAMES:`)
	b.p(`        return _NAMES[head] + ": " + rest`)
	b.p(`    return message`)
	b.p("")
	b.p("")
	b.p("# Every export this package calls, to refuse a library of another build.")
	b.p("_EXPORTS = (")
	for _, f := range abispec.Funcs {
		b.p("    %q,", f.Name)
	}
	b.p(")")
	b.p("")
	b.p("")
	b.p("def _check_exports(lib: ctypes.CDLL, path: str) -> None:")
	b.p(`    """Raises IdebridgeError, saying what to do, if the library lacks an`)
	b.p(`    export this package calls: it is not libidebridge, or an older build."""`)
	b.p("    missing = [name for name in _EXPORTS if not hasattr(lib, name)]")
	b.p("    if not missing:")
	b.p("        return")
	b.p(`    if "idb_version" in missing:`)
	b.p(`        raise IdebridgeError("%%s is not libidebridge: it has no idb_version" %% path)`)
	b.p(`    shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")`)
	b.p("    raise IdebridgeError(")
	b.p(`        "%%s is older than this package: it lacks %%d of the %%d functions the package calls (%%s); "`)
	b.p(`        "rebuild it (make lib), reinstall the package, or set IDEBRIDGE_LIB to a library of the same build"`)
	b.p("        %% (path, len(missing), len(_EXPORTS), shown)")
	b.p("    )")
	b.p("")
	b.p("")
	b.p("def _declare(lib: ctypes.CDLL) -> None:")
	b.p(`    """Declares argtypes and restype of every export."""`)
	for _, f := range abispec.Funcs {
		var ts []string
		for _, p := range f.Params {
			ts = append(ts, pyCTypes(p)...)
		}
		b.p("    lib.%s.argtypes = [%s]", f.Name, strings.Join(ts, ", "))
		b.p("    lib.%s.restype = %s", f.Name, pyRestype(f))
	}
	b.p("")
	b.p("")
	b.p("# Low-level wrappers: one per export that returns a status (blocking")
	b.p("# ones run as asynchronous calls, see _finish).")
	b.p("")
	b.p("")
	for _, f := range abispec.Funcs {
		if f.Binding == abispec.Internal || isInternalClass(f.Class) {
			continue
		}
		pyLow(&b, f)
	}
	for _, f := range abispec.Funcs {
		if f.Binding != abispec.Function {
			continue
		}
		sig, call, docs := pySig(f)
		b.p("def %s(%s) -> %s:", f.Method, strings.Join(sig, ", "), pyReturnOf(f))
		pyDoc(&b, "    ", f, docs, false, false)
		b.p("    return %s", pyCall(f, call, false))
		b.p("")
		b.p("")
	}
	for _, c := range boundClasses() {
		pyClass(&b, c, false)
	}
	// One trailing newline, as Python style checkers want.
	return []byte(strings.TrimRight(b.String(), "\n") + "\n")
}

// classHasBlocking reports whether a class has a blocking constructor,
// method or destructor.
func classHasBlocking(c abispec.Class) bool {
	for _, f := range abispec.Funcs {
		if f.Class == c.Name && isBlocking(f) {
			return true
		}
	}
	return false
}

// pyClass writes a class; with async, the asyncio form of it, whose
// blocking methods are coroutines.
func pyClass(b *buf, c abispec.Class, async bool) {
	ctor := ctorOf(c.Name)
	dtor := destructorOf(c.Name)
	b.p("class %s:", c.Name)
	lines := wrap(pyEscape(c.Doc), 72)
	b.p(`    """%s`, lines[0])
	for _, l := range lines[1:] {
		if l == "" {
			b.p("")
		} else {
			b.p("    %s", l)
		}
	}
	b.p("")
	switch {
	case async && isBlocking(dtor):
		b.p("    Use it as an async context manager, or await %s() when done; the", dtor.Method)
		b.p("    handle is also released when the object is garbage-collected.")
	case async:
		b.p("    Use it as an (async) context manager, or call %s() when done; the", dtor.Method)
		b.p("    handle is also released when the object is garbage-collected.")
	default:
		b.p("    Use it as a context manager, or call %s() when done; the handle is", dtor.Method)
		b.p("    also released when the object is garbage-collected.")
	}
	b.p(`    """`)
	b.p("")
	b.p("    _lock: threading.Lock")
	b.p("    _h: int")
	parent := factoryOf(ctor)
	if parent != "" {
		b.p("    _parent: Any")
	}
	b.p("")
	sig, call, docs := pySig(ctor)
	ctorAwait := async && isBlocking(ctor)
	if parent != "" {
		// Made by a method of parent, whose object it keeps alive.
		b.p("    def __init__(self) -> None:")
		b.p(`        raise TypeError("use %s.%s() to create a %s")`, parent, ctor.Method, c.Name)
		b.p("")
		b.p("    @staticmethod")
		b.p("    def _adopt(h: int, parent: Any) -> %q:", c.Name)
		b.p("        self = object.__new__(%s)", c.Name)
		b.p("        self._lock = threading.Lock()")
		b.p("        self._h = h")
		b.p("        self._parent = parent")
		b.p("        return self")
	} else if ctor.Method == "__init__" && !ctorAwait {
		b.p("    def __init__(self%s) -> None:", prefixComma(sig))
		pyDoc(b, "        ", ctor, docs, true, false)
		b.p("        self._lock = threading.Lock()")
		b.p("        self._h = 0")
		b.p("        self._h = %s", pyCall(ctor, call, false))
	} else {
		b.p("    def __init__(self) -> None:")
		b.p(`        raise TypeError("use %s.%s() to create a %s")`, c.Name, ctor.Method, c.Name)
		b.p("")
		b.p("    @classmethod")
		def := "def"
		if ctorAwait {
			def = "async def"
		}
		b.p("    %s %s(cls%s) -> %q:", def, ctor.Method, prefixComma(sig), c.Name)
		pyDoc(b, "        ", ctor, docs, true, ctorAwait)
		b.p("        h = %s", pyCall(ctor, call, async))
		b.p("        self = object.__new__(cls)")
		b.p("        self._lock = threading.Lock()")
		b.p("        self._h = h")
		b.p("        return self")
	}
	b.p("")
	b.p("    @property")
	b.p("    def handle(self) -> int:")
	b.p(`        """The C handle; 0 once closed."""`)
	b.p("        return self._h")
	b.p("")
	b.p("    def _handle(self) -> int:")
	b.p("        h = self._h")
	b.p("        if not h:")
	b.p(`            raise ClosedError("%s is closed", IDB_ERR_CLOSED)`, c.Name)
	b.p("        return h")
	for _, f := range abispec.Funcs {
		if f.Class != c.Name || f.Binding != abispec.Method {
			continue
		}
		sig, call, docs := pySig(f)
		aw := async && isBlocking(f)
		def := "def"
		if aw {
			def = "async def"
		}
		b.p("")
		b.p("    %s %s(self%s) -> %s:", def, f.Method, prefixComma(sig), pyReturnOf(f))
		pyDoc(b, "        ", f, docs, false, aw)
		b.p("        return %s", pyCall(f, call, async))
	}
	// The objects of other classes its methods make.
	for _, f := range factories(c.Name) {
		sig, call, docs := pySig(f)
		b.p("")
		b.p("    def %s(self%s) -> %q:", f.Method, prefixComma(sig), f.Class)
		pyDoc(b, "        ", f, docs, true, false)
		b.p("        return %s._adopt(%s, self)", f.Class, pyCall(f, call, false))
	}
	// The destructor: idempotent, takes the handle out under the lock.
	sig, call, docs = pySig(dtor)
	aw := async && isBlocking(dtor)
	def := "def"
	if aw {
		def = "async def"
	}
	// In idebridge.aio a close() that does not block returns _CLOSED, so
	// that both ide.close() and await ide.close() work.
	closedRet, closedType, closedNote := "", "None", ""
	if async {
		closedRet, closedType = "return _CLOSED", "Awaitable[None]"
		closedNote = "It closes at once; awaiting the result (await x.close()) is allowed and returns at once."
	}
	b.p("")
	if aw || dtor.Method != "close" {
		b.p("    %s %s(self%s) -> None:", def, dtor.Method, prefixComma(sig))
	} else {
		b.p("    %s %s(self%s) -> %s:", def, dtor.Method, prefixComma(sig), closedType)
		if closedNote != "" {
			dtor.Doc += " " + closedNote
		}
	}
	pyDoc(b, "        ", dtor, docs, false, aw)
	b.p("        with self._lock:")
	b.p("            h, self._h = self._h, 0")
	call[0] = "h"
	if aw {
		b.p("        if not h:")
		b.p("            return")
		b.p("        await _await(_start_%s(%s))", dtor.Name, strings.Join(call, ", "))
	} else if dtor.Method != "close" {
		b.p("        if not h:")
		b.p("            return")
		b.p("        _%s(%s)", dtor.Name, strings.Join(call, ", "))
	} else {
		b.p("        if h:")
		b.p("            _%s(%s)", dtor.Name, strings.Join(call, ", "))
		if closedRet != "" {
			b.p("        %s", closedRet)
		}
	}
	if dtor.Method != "close" {
		b.p("")
		b.p("    def close(self) -> %s:", closedType)
		if closedNote != "" {
			b.p(`        """%s() with its defaults, blocking; does nothing once closed.`, dtor.Method)
			for _, l := range wrap(closedNote, 68) {
				b.p("        %s", l)
			}
			b.p(`        """`)
		} else {
			b.p(`        """%s() with its defaults, blocking; does nothing once closed."""`, dtor.Method)
		}
		b.p("        with self._lock:")
		b.p("            h, self._h = self._h, 0")
		b.p("        if h:")
		b.p("            _%s(%s)", dtor.Name, strings.Join(call[:1], ", ")+strings.Repeat(", 0", len(call)-1))
		if closedRet != "" {
			b.p("        %s", closedRet)
		}
	}
	b.p("")
	b.p("    def __enter__(self) -> %q:", c.Name)
	b.p("        return self")
	b.p("")
	b.p("    def __exit__(self, *exc: Any) -> None:")
	b.p("        self.close()")
	if async {
		b.p("")
		b.p("    async def __aenter__(self) -> %q:", c.Name)
		b.p("        return self")
		b.p("")
		b.p("    async def __aexit__(self, *exc: Any) -> None:")
		if aw {
			b.p("        await self.%s()", dtor.Method)
		} else {
			b.p("        self.close()")
		}
	}
	b.p("")
	b.p("    def __del__(self) -> None:")
	b.p(`        if getattr(self, "_h", 0) and _library_loaded():`)
	b.p("            try:")
	b.p("                self.close()")
	b.p("            except Exception:")
	b.p("                pass")
	b.p("")
	b.p("    def __repr__(self) -> str:")
	b.p(`        return "<idebridge.%s%s handle=0x%%016x>" %% self._h`, map[bool]string{true: "aio.", false: ""}[async], c.Name)
	b.p("")
	b.p("")
}

func prefixComma(sig []string) string {
	if len(sig) == 0 {
		return ""
	}
	return ", " + strings.Join(sig, ", ")
}

// pythonAio writes idebridge/aio.py: the asyncio API. Blocking functions
// and methods are coroutines that wait for their call without a thread
// (the call's descriptor on the event loop); the rest are the package's
// own.
func pythonAio() []byte {
	var b buf
	b.p("# Code generated by cabi/gen from %s. DO NOT EDIT.", source)
	b.p("")
	b.WriteString(pyAioPrelude)
	var fromPkg []string
	var all []string
	for _, f := range abispec.Funcs {
		if f.Binding != abispec.Function {
			continue
		}
		if !isBlocking(f) {
			fromPkg = append(fromPkg, f.Method)
		}
		all = append(all, f.Method)
	}
	for _, c := range boundClasses() {
		if !classHasBlocking(c) {
			fromPkg = append(fromPkg, c.Name)
		}
		all = append(all, c.Name)
	}
	// The private names the coroutines use.
	priv := map[string]bool{}
	var privs []string
	addPriv := func(n string) {
		if !priv[n] {
			priv[n] = true
			privs = append(privs, n)
		}
	}
	for _, n := range []string{"ClosedError", "IdebridgeError", "IDB_ERR_CLOSED", "IDB_OK", "_library_loaded", "_load", "_raise", "_descriptor", "_spin", "_options", "_timeout_ms", "_ms_opt", "_outcome", "_dec_json", "_dec_text", "_dec_int", "_dec_none"} {
		addPriv(n)
	}
	for _, f := range abispec.Funcs {
		if f.Binding == abispec.Internal || isInternalClass(f.Class) {
			continue
		}
		if f.Binding == abispec.Function && !isBlocking(f) {
			continue
		}
		if f.Class != "" && !classHasBlocking(classByName(f.Class)) {
			continue
		}
		if isBlocking(f) {
			addPriv("_start_" + f.Name)
		} else {
			addPriv("_" + f.Name)
		}
		if f.Binding == abispec.Destructor && isBlocking(f) {
			addPriv("_" + f.Name) // close()
		}
		if f.PyConv != "" {
			addPriv(f.PyConv)
		}
	}
	b.p("from . import (  # noqa: F401 - the package's own, re-exported")
	for _, n := range fromPkg {
		b.p("    %s,", n)
	}
	for _, n := range privs {
		b.p("    %s,", n)
	}
	b.p(")")
	b.p("from .types import (  # noqa: F401 - the annotations' types")
	for _, n := range pyPublicTypes {
		b.p("    %s,", n)
	}
	b.p(")")
	b.p("")
	b.p("__all__ = [")
	for _, a := range all {
		b.p("    %q,", a)
	}
	b.p("]")
	b.p("")
	b.WriteString(pyAioRuntime)
	for _, f := range abispec.Funcs {
		if f.Binding != abispec.Function || !isBlocking(f) {
			continue
		}
		sig, call, docs := pySig(f)
		b.p("async def %s(%s) -> %s:", f.Method, strings.Join(sig, ", "), pyReturnOf(f))
		pyDoc(&b, "    ", f, docs, false, true)
		b.p("    return %s", pyCall(f, call, true))
		b.p("")
		b.p("")
	}
	for _, c := range boundClasses() {
		if classHasBlocking(c) {
			pyClass(&b, c, true)
		}
	}
	return []byte(strings.TrimRight(b.String(), "\n") + "\n")
}

const pyPrelude = `"""idebridge: Python bindings of libidebridge.

Find the user's editor and drive it over MCP (edit review in its diff
viewer, its diagnostics around an edit), and turn language-server
diagnostics into a small block of text for a model::

    import idebridge

    with idebridge.IDEClient.connect(timeout=10) as ide:  # the only usable IDE
        res = ide.propose_edit("main.go", new_text)         # the user decides
        print(res.status, res.written)

    with idebridge.Registry() as reg:
        reg.publish("gopls", {"uri": "file:///p/main.go", "diagnostics": []})
        print(reg.drain())

The same API with coroutines is idebridge.aio: cancelling an awaiting task
cancels the call (a pending edit review closes its diff tab) and leaves the
connection usable.

Every failure raises IdebridgeError (or a subclass) carrying the library's
message; a ToolError also carries the IDE's JSON-RPC error code. Objects
that hold a handle (Registry, IDEClient, LSPManager) are context managers;
close them when done. Results are typed (idebridge.types): dataclasses and
enums.

An optional argument left at None takes the default its description
gives (or the library's). Every duration is in seconds, as a float: None
means the function's default, a negative number waits without limit, and
a positive one is rounded up to whole milliseconds. Ctrl-C interrupts any
blocking call (it is cancelled, as in idebridge.aio).

The shared library is the one installed inside this package (pip builds
it), unless the IDEBRIDGE_LIB environment variable names another; in the
source tree, build/libidebridge.so (` + "`make lib`" + `) is used when the package
has none.
"""

import builtins
import ctypes
import json
import math
import os
import select
import sys
import threading
import time
from typing import Any, Dict, List, Optional, Union

`

const pyRuntime = `
_LIB_NAMES = {"darwin": "libidebridge.dylib", "win32": "idebridge.dll"}

_lib: Optional[ctypes.CDLL] = None
_lib_lock = threading.Lock()


def _library_path() -> str:
    """Returns the path of the shared library to load."""
    env = os.environ.get("IDEBRIDGE_LIB")
    if env:
        return env
    name = _LIB_NAMES.get(sys.platform, "libidebridge.so")
    here = os.path.dirname(os.path.abspath(__file__))
    tried = [
        os.path.join(here, name),
        os.path.normpath(os.path.join(here, "..", "..", "..", "build", name)),
    ]
    for path in tried:
        if os.path.exists(path):
            return path
    raise IdebridgeError(
        "cannot find %s: reinstall the package (pip builds the library into it), "
        "or set IDEBRIDGE_LIB to its path (looked at %s)" % (name, ", ".join(tried))
    )


def _library_loaded() -> bool:
    """Reports whether the library was loaded (a handle can exist)."""
    return _lib is not None


def _load() -> ctypes.CDLL:
    """Loads the library once and declares its functions."""
    global _lib
    lib = _lib
    if lib is None:
        with _lib_lock:
            if _lib is None:
                path = _library_path()
                loaded = ctypes.CDLL(path)
                _check_exports(loaded, path)
                _declare(loaded)
                _lib = loaded
            lib = _lib
    return lib


def _raise(lib: ctypes.CDLL, status: int, function: str) -> None:
    """Raises the exception for a nonzero status, with the thread's last error."""
    p = lib.idb_last_error()
    if p:
        try:
            message = ctypes.string_at(p).decode("utf-8", "replace")
        finally:
            lib.idb_free(p)
    else:
        message = "%s failed with status %d" % (function, status)
    raise _ERRORS.get(status, IdebridgeError)(_user_message(message), status, function)


def _raise_call(status: int, text: Optional[str]) -> None:
    """Raises the exception for a failed asynchronous call, from its JSON error."""
    try:
        err = json.loads(text or "{}")
    except ValueError:
        err = {"message": text}
    raise _ERRORS.get(status, IdebridgeError)(
        _user_message(err.get("message") or "call failed with status %d" % status),
        status,
        err.get("function"),
        err.get("code"),
        err.get("data"),
    )


def _text_in(value: Any) -> Optional[bytes]:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    return os.fspath(value).encode("utf-8")


def _bytes_in(value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    if value is None:
        return b""
    return bytes(value)


def _json_default(value: Any) -> Any:
    to_json = getattr(value, "_to_json", None)
    if to_json is None:
        raise TypeError("%r is not JSON serialisable" % (value,))
    return to_json()


def _json_in(value: Any) -> Optional[bytes]:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_json_default).encode("utf-8")


def _options(members: Dict[str, Any]) -> Dict[str, Any]:
    return {k: (os.fspath(v) if isinstance(v, os.PathLike) else v) for k, v in members.items() if v is not None}


def _timeout_ms(timeout: Optional[float]) -> int:
    if timeout is None:
        return 0
    if timeout < 0 or math.isinf(timeout):
        return -1
    return max(1, math.ceil(timeout * 1000))


def _ms_opt(seconds: Optional[float]) -> Optional[int]:
    """Converts an optional duration option: None stays None (the default),
    0 stays 0 (the default), negative is -1 (none)."""
    if seconds is None:
        return None
    if seconds < 0 or math.isinf(seconds):
        return -1
    if seconds == 0:
        return 0
    return max(1, math.ceil(seconds * 1000))


def _take_text(lib: ctypes.CDLL, out: ctypes.c_void_p) -> Optional[str]:
    """Decodes and frees a string the library returned (None for NULL)."""
    p = out.value
    if not p:
        return None
    try:
        return ctypes.string_at(p).decode("utf-8")
    finally:
        lib.idb_free(p)


def _take_str(lib: ctypes.CDLL, out: ctypes.c_void_p) -> str:
    """_take_text for a function that always returns a string."""
    text = _take_text(lib, out)
    return "" if text is None else text


def _take_json(lib: ctypes.CDLL, out: ctypes.c_void_p) -> Any:
    text = _take_text(lib, out)
    return None if text is None else json.loads(text)


# Asynchronous calls. A blocking function runs as a call of the library
# (idb_*_start) whose outcome the call carries: the synchronous API waits
# for it in slices of _POLL_MS, so that a signal handler (Ctrl-C) runs
# between slices; idebridge.aio watches its descriptor on the event loop.

_POLL_MS = 50
# How long a cancelled call may take to undo what the IDE still shows (an
# edit's close_tab is bounded by 5 seconds).
_CANCEL_GRACE = 6.0


# How long a waiter polls the call's descriptor before it sleeps. Waking a
# sleeping thread costs tens of microseconds on a busy or virtual machine,
# and calls waited for at once often complete sooner: polling the
# descriptor (not the library, whose threads run the call) saves that.
_SPIN = 100e-6


def _descriptor(lib: ctypes.CDLL, call: int) -> Optional[int]:
    """The call's completion descriptor, or None where there is none."""
    if not hasattr(select, "poll"):
        return None
    out = ctypes.c_uint64()
    if lib.idb_call_fd(call, ctypes.byref(out)) != IDB_OK:
        return None
    return out.value


def _spin(poller: Any) -> bool:
    """Polls for up to _SPIN seconds; True once the descriptor is readable."""
    deadline = time.perf_counter() + _SPIN
    while not poller.poll(0):
        if time.perf_counter() >= deadline:
            return False
    return True


def _finish(call: int) -> Optional[str]:
    """Waits for a call, interruptibly, and returns its result text."""
    lib = _load()
    try:
        fd = _descriptor(lib, call)
        if fd is not None:
            # Sleep on the descriptor in slices, so that a signal handler
            # (Ctrl-C) runs between them.
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            if not _spin(poller):
                while not poller.poll(_POLL_MS):
                    pass
        else:
            while True:
                status = lib.idb_call_wait(call, _POLL_MS)
                if status == IDB_OK:
                    break
                if status != IDB_ERR_TIMEOUT:
                    _raise(lib, status, "idb_call_wait")
    except BaseException:
        # Ctrl-C, or any exception a signal handler raised: cancel the
        # call and give it a moment to finish (a second Ctrl-C stops
        # waiting).
        lib.idb_call_cancel(call)
        try:
            deadline = time.monotonic() + _CANCEL_GRACE
            while lib.idb_call_wait(call, _POLL_MS) != IDB_OK and time.monotonic() < deadline:
                pass
        finally:
            lib.idb_call_free(call)
        raise
    return _outcome(lib, call)


def _outcome(lib: ctypes.CDLL, call: int) -> Optional[str]:
    """Reads and frees a completed call: its result text, or raises its error."""
    out = ctypes.c_void_p()
    try:
        status = lib.idb_call_result(call, ctypes.byref(out))
        text = _take_text(lib, out)
    finally:
        lib.idb_call_free(call)
    if status != IDB_OK:
        _raise_call(status, text)
    return text


def _dec_json(text: Optional[str]) -> Any:
    return None if text is None else json.loads(text)


def _dec_text(text: Optional[str]) -> Optional[str]:
    return text


def _dec_int(text: Optional[str]) -> int:
    return int(text or "0")


def _dec_none(text: Optional[str]) -> None:
    return None


`

const pyAioPrelude = `"""idebridge.aio: the asyncio API of idebridge.

The same functions and classes as the idebridge package, with coroutines
for everything that blocks (discovery, connecting, IDE tool calls, edit
review, settling language servers)::

    import asyncio
    from idebridge import aio

    async def main() -> None:
        async with await aio.IDEClient.connect(timeout=10) as ide:
            review = asyncio.ensure_future(ide.propose_edit("main.go", text))
            ...
            review.cancel()  # closes the diff tab; ide stays usable

A coroutine waits without a thread: the library signals the call's
completion on a file descriptor the event loop watches (loop.add_reader;
loops without it, such as Windows' proactor, poll every 5 ms instead).
Cancelling the awaiting task cancels the call: a pending openDiff or edit
review closes its tab in the IDE, and CancelledError propagates once that
is done. What does not block (Registry, parse_lockfile, render_attachment,
...) is the package's own, re-exported.
"""

import asyncio
import ctypes
import os
import select
import threading
from typing import Any, Awaitable, Dict, Generator, List, Optional, Union

`

const pyAioRuntime = `

class _Closed:
    """What close() returns: it has already closed, and awaiting it (await
    ide.close(), as a coroutine API invites) returns at once."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield

    def __repr__(self) -> str:
        return "<closed>"


_CLOSED = _Closed()

async def _await(call: int) -> Optional[str]:
    """Waits for a call on the running event loop and returns its result
    text; cancelling the awaiting task cancels the call first."""
    lib = _load()
    try:
        try:
            await _completion(lib, call, None)
        except asyncio.CancelledError:
            lib.idb_call_cancel(call)
            await _completion(lib, call, _CANCEL_GRACE)
            raise
    except BaseException:
        lib.idb_call_free(call)
        raise
    return _outcome(lib, call)


_CANCEL_GRACE = 6.0


async def _completion(lib: Any, call: int, timeout: Optional[float]) -> None:
    """Returns when the call has completed, or after timeout seconds."""
    loop = asyncio.get_running_loop()
    fd = _descriptor(lib, call)
    if fd is None:  # no descriptors on this platform
        await _poll(lib, call, timeout)
        return
    # A call that completes within microseconds is taken at once: the
    # loop waits that long instead of sleeping and being woken.
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    if _spin(poller):
        return
    fut = loop.create_future()

    def ready() -> None:
        if not fut.done():
            fut.set_result(None)

    try:
        loop.add_reader(fd, ready)
    except NotImplementedError:
        await _poll(lib, call, timeout)
        return
    timer = loop.call_later(timeout, ready) if timeout is not None else None
    try:
        await fut
    finally:
        loop.remove_reader(fd)
        if timer is not None:
            timer.cancel()


async def _poll(lib: Any, call: int, timeout: Optional[float]) -> None:
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    while lib.idb_call_wait(call, 0) != IDB_OK:
        if deadline is not None and loop.time() >= deadline:
            return
        await asyncio.sleep(0.005)


`
