package main

import (
	"fmt"
	"strings"

	"github.com/idebridge/idebridge/cabi/abispec"
)

// pyCType is the ctypes type of one C parameter.
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

// pyLow writes the low-level wrapper _idb_x(...) of f: it converts
// arguments, calls the C function, raises on a nonzero status, and returns
// the out value (decoded, and freed in C).
func pyLow(b *buf, f abispec.Func) {
	var names, args []string
	for _, p := range pyInputs(f) {
		names = append(names, p.Name)
		switch p.Kind {
		case abispec.String, abispec.OptString:
			args = append(args, "_text_in("+p.Name+")")
		case abispec.JSON:
			args = append(args, "_json_in("+p.Name+")")
		case abispec.Bytes:
			args = append(args, "_"+p.Name, "len(_"+p.Name+")")
		default:
			args = append(args, p.Name)
		}
	}
	b.p("def _%s(%s):", f.Name, strings.Join(names, ", "))
	b.p("    lib = _load()")
	for _, p := range pyInputs(f) {
		if p.Kind == abispec.Bytes {
			b.p("    _%s = _bytes_in(%s)", p.Name, p.Name)
		}
	}
	out := ""
	if n := len(f.Params); n > 0 {
		switch f.Params[n-1].Kind {
		case abispec.OutString:
			b.p("    out = ctypes.c_void_p()")
			out = "string"
		case abispec.OutHandle, abispec.OutUint64:
			b.p("    out = ctypes.c_uint64()")
			out = "uint64"
		}
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
	case out == "string":
		b.p("    return _take_text(lib, out)")
	default:
		b.p("    return None")
	}
	b.p("")
	b.p("")
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
					sig = append(sig, fmt.Sprintf("%s: %s = None", fl.Py, or(fl.PyType, "Any")))
					if fl.PyDefault != "" {
						members = append(members, fmt.Sprintf("%q: (%s if %s is None else %s)", fl.JSON, fl.PyDefault, fl.Py, fl.Py))
						docs = append(docs, [2]string{fl.Py, fl.Doc + "; None sends " + fl.PyDefault})
					} else {
						members = append(members, fmt.Sprintf("%q: %s", fl.JSON, fl.Py))
						docs = append(docs, [2]string{fl.Py, fl.Doc + "; None for the default"})
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
				docs = append(docs, [2]string{bindName(p), p.Doc + " (a JSON-serialisable value, or a str holding JSON; None for the default)"})
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

// pyDoc writes a docstring at the given indentation.
func pyDoc(b *buf, indent string, f abispec.Func, docs [][2]string, isCtor bool) {
	f.Doc = pyEscape(f.Doc)
	f.ResultDoc = pyEscape(f.ResultDoc)
	for i := range docs {
		docs[i][1] = pyEscape(docs[i][1])
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
	if f.Blocking != "" {
		b.p("")
		for _, l := range wrap("Blocks until "+f.Blocking+".", 76-len(indent)) {
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
	for _, c := range abispec.Classes {
		all = append(all, c.Name)
	}
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
	b.p(`    """`)
	b.p("")
	b.p("    def __init__(self, message: str, status: int = IDB_ERROR, function: Optional[str] = None) -> None:")
	b.p("        super().__init__(message)")
	b.p("        self.status = status")
	b.p("        self.function = function")
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
	b.WriteString(pyRuntime)
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
	b.p("# Low-level wrappers: one per export that returns a status.")
	b.p("")
	b.p("")
	for _, f := range abispec.Funcs {
		if f.Binding == abispec.Internal {
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
		pyDoc(&b, "    ", f, docs, false)
		b.p("    return _%s(%s)", f.Name, strings.Join(call, ", "))
		b.p("")
		b.p("")
	}
	for _, c := range abispec.Classes {
		pyClass(&b, c)
	}
	// One trailing newline, as Python style checkers want.
	return []byte(strings.TrimRight(b.String(), "\n") + "\n")
}

func pyClass(b *buf, c abispec.Class) {
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
	b.p("    Use it as a context manager, or call %s() when done; the handle is", dtor.Method)
	b.p("    also released when the object is garbage-collected.")
	b.p(`    """`)
	b.p("")
	sig, call, docs := pySig(ctor)
	if ctor.Method == "__init__" {
		b.p("    def __init__(self%s) -> None:", prefixComma(sig))
		pyDoc(b, "        ", ctor, docs, true)
		b.p("        self._lock = threading.Lock()")
		b.p("        self._h = 0")
		b.p("        self._h = _%s(%s)", ctor.Name, strings.Join(call, ", "))
	} else {
		b.p("    def __init__(self) -> None:")
		b.p(`        raise TypeError("use %s.%s() to create a %s")`, c.Name, ctor.Method, c.Name)
		b.p("")
		b.p("    @classmethod")
		b.p("    def %s(cls%s) -> %q:", ctor.Method, prefixComma(sig), c.Name)
		pyDoc(b, "        ", ctor, docs, true)
		b.p("        self = object.__new__(cls)")
		b.p("        self._lock = threading.Lock()")
		b.p("        self._h = 0")
		b.p("        self._h = _%s(%s)", ctor.Name, strings.Join(call, ", "))
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
		b.p("")
		b.p("    def %s(self%s) -> %s:", f.Method, prefixComma(sig), pyReturnOf(f))
		pyDoc(b, "        ", f, docs, false)
		b.p("        return _%s(%s)", f.Name, strings.Join(call, ", "))
	}
	// The destructor: idempotent, takes the handle out under the lock.
	sig, call, docs = pySig(dtor)
	b.p("")
	b.p("    def %s(self%s) -> None:", dtor.Method, prefixComma(sig))
	pyDoc(b, "        ", dtor, docs, false)
	b.p("        with self._lock:")
	b.p("            h, self._h = self._h, 0")
	b.p("        if not h:")
	b.p("            return")
	call[0] = "h"
	b.p("        _%s(%s)", dtor.Name, strings.Join(call, ", "))
	if dtor.Method != "close" {
		b.p("")
		b.p("    def close(self) -> None:")
		b.p(`        """Same as %s() with its defaults; does nothing once closed."""`, dtor.Method)
		b.p("        self.%s()", dtor.Method)
	}
	b.p("")
	b.p("    def __enter__(self) -> %q:", c.Name)
	b.p("        return self")
	b.p("")
	b.p("    def __exit__(self, *exc: Any) -> None:")
	b.p("        self.close()")
	b.p("")
	b.p("    def __del__(self) -> None:")
	b.p(`        if getattr(self, "_h", 0) and _lib is not None:`)
	b.p("            try:")
	b.p("                self.close()")
	b.p("            except Exception:")
	b.p("                pass")
	b.p("")
	b.p("    def __repr__(self) -> str:")
	b.p(`        return "<idebridge.%s handle=0x%%016x>" %% self._h`, c.Name)
	b.p("")
	b.p("")
}

func prefixComma(sig []string) string {
	if len(sig) == 0 {
		return ""
	}
	return ", " + strings.Join(sig, ", ")
}

const pyPrelude = `"""idebridge: Python bindings of libidebridge.

Find the user's editor and drive it over MCP, and turn language-server
diagnostics into a small block of text for a model::

    import idebridge

    print(idebridge.version())
    with idebridge.Registry() as reg:
        reg.publish("gopls", {"uri": "file:///p/main.go", "diagnostics": []})
        print(reg.drain())

Every failure raises IdebridgeError (or a subclass) carrying the library's
message. Objects that hold a handle (Registry, IDEClient, LSPManager) are
context managers; close them when done.

The shared library is found through the IDEBRIDGE_LIB environment variable
(a path to the file), next to this package, or at build/libidebridge.so in
the source tree (built by ` + "`make lib`" + `).

Timeouts are in seconds: None means the function's default, a negative
number waits without limit, and a positive one is rounded up to whole
milliseconds.
"""

import builtins
import ctypes
import json
import math
import os
import sys
import threading
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
        os.path.join(os.path.dirname(here), name),
        os.path.normpath(os.path.join(here, "..", "..", "..", "build", name)),
    ]
    for path in tried:
        if os.path.exists(path):
            return path
    raise IdebridgeError(
        "cannot find %s: set IDEBRIDGE_LIB to its path or run ` + "`make lib`" + ` (looked at %s)"
        % (name, ", ".join(tried))
    )


def _load() -> ctypes.CDLL:
    """Loads the library once and declares its functions."""
    global _lib
    lib = _lib
    if lib is None:
        with _lib_lock:
            if _lib is None:
                loaded = ctypes.CDLL(_library_path())
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
    raise _ERRORS.get(status, IdebridgeError)(message, status, function)


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


def _json_in(value: Any) -> Optional[bytes]:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _options(members: Dict[str, Any]) -> Dict[str, Any]:
    return {k: (os.fspath(v) if isinstance(v, os.PathLike) else v) for k, v in members.items() if v is not None}


def _timeout_ms(timeout: Optional[float]) -> int:
    if timeout is None:
        return 0
    if timeout < 0 or math.isinf(timeout):
        return -1
    return max(1, math.ceil(timeout * 1000))


def _take_text(lib: ctypes.CDLL, out: ctypes.c_void_p) -> Optional[str]:
    """Decodes and frees a string the library returned (None for NULL)."""
    p = out.value
    if not p:
        return None
    try:
        return ctypes.string_at(p).decode("utf-8")
    finally:
        lib.idb_free(p)


def _take_json(lib: ctypes.CDLL, out: ctypes.c_void_p) -> Any:
    text = _take_text(lib, out)
    return None if text is None else json.loads(text)


`
