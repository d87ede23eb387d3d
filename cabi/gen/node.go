package main

import (
	"fmt"
	"strings"

	"github.com/idebridge/idebridge/cabi/abispec"
)

// koffiProto is the koffi declaration of f: the C prototype with out
// parameters marked _Out_, returned strings as void * (so that the binding
// can free them), and byte buffers as const uint8_t *.
func koffiProto(f abispec.Func) string {
	var ps []string
	for _, p := range f.Params {
		switch p.Kind {
		case abispec.String, abispec.OptString, abispec.JSON:
			ps = append(ps, "const char *"+p.Name)
		case abispec.Bytes:
			ps = append(ps, "const uint8_t *"+p.Name, "size_t "+p.Name+"_len")
		case abispec.Handle:
			ps = append(ps, "uint64_t "+p.Name)
		case abispec.Int, abispec.TimeoutMS:
			ps = append(ps, "int64_t "+p.Name)
		case abispec.OutString:
			ps = append(ps, "_Out_ void **"+p.Name)
		case abispec.OutHandle, abispec.OutUint64:
			ps = append(ps, "_Out_ uint64_t *"+p.Name)
		case abispec.FreePtr:
			ps = append(ps, "void *"+p.Name)
		}
	}
	if len(ps) == 0 {
		ps = []string{"void"}
	}
	ret := "int "
	switch f.Return {
	case abispec.ReturnVoid:
		ret = "void "
	case abispec.ReturnString:
		ret = "void *"
	}
	return ret + f.Name + "(" + strings.Join(ps, ", ") + ")"
}

// jsArgs returns the parameter names of f's low-level wrapper, the lines
// converting them, and the C arguments.
func jsArgs(f abispec.Func) (names, prep, args []string) {
	for _, p := range pyInputs(f) {
		names = append(names, p.Name)
		switch p.Kind {
		case abispec.String, abispec.OptString:
			args = append(args, "textIn("+p.Name+")")
		case abispec.JSON:
			args = append(args, "jsonIn("+p.Name+")")
		case abispec.Bytes:
			prep = append(prep, fmt.Sprintf("const _%s = bytesIn(%s);", p.Name, p.Name))
			args = append(args, "_"+p.Name, "_"+p.Name+".length")
		default:
			args = append(args, p.Name)
		}
	}
	return names, prep, args
}

// jsDecoder names the runtime function decoding the result text of f's
// asynchronous call.
func jsDecoder(f abispec.Func) string {
	switch outKind(f) {
	case abispec.OutString:
		if f.Result == abispec.ResultJSON {
			return "decJSON"
		}
		return "decText"
	case abispec.OutHandle:
		return "decHandle"
	case abispec.OutUint64:
		return "decNumber"
	}
	return "decNone"
}

// jsLow writes the low-level wrapper of f: for a blocking function,
// _start_idb_x (starts its call, returns the call handle) and _idb_x (waits
// for the call, blocking; decodes its result).
func jsLow(b *buf, f abispec.Func) {
	names, prep, args := jsArgs(f)
	if isBlocking(f) {
		b.p("function _start_%s(%s) {", f.Name, strings.Join(names, ", "))
		b.p("  const fns = load();")
		for _, l := range prep {
			b.p("  %s", l)
		}
		b.p("  const out = [null];")
		b.p("  const status = fns.%s_start(%s);", f.Name, strings.Join(append(args, "out"), ", "))
		b.p("  if (status !== IDB_OK) raise(fns, status, %q);", f.Name+"_start")
		b.p("  return out[0];")
		b.p("}")
		b.p("")
		b.p("function _%s(%s) {", f.Name, strings.Join(names, ", "))
		b.p("  return %s(finishSync(load(), _start_%s(%s)));", jsDecoder(f), f.Name, strings.Join(names, ", "))
		b.p("}")
		b.p("")
		return
	}
	b.p("function _%s(%s) {", f.Name, strings.Join(names, ", "))
	b.p("  const fns = load();")
	for _, l := range prep {
		b.p("  %s", l)
	}
	out := ""
	switch outKind(f) {
	case abispec.OutString:
		out = "string"
	case abispec.OutHandle, abispec.OutUint64:
		out = "uint64"
	}
	if out != "" {
		b.p("  const out = [null];")
		args = append(args, "out")
	}
	b.p("  const status = fns.%s(%s);", f.Name, strings.Join(args, ", "))
	b.p("  if (status !== IDB_OK) raise(fns, status, %q);", f.Name)
	switch {
	case out == "uint64" && f.Binding == abispec.Constructor:
		b.p("  return BigInt(out[0]);")
	case out == "uint64":
		b.p("  return Number(out[0]);")
	case out == "string" && f.Result == abispec.ResultJSON:
		b.p("  return takeJSON(fns, out[0]);")
	case out == "string":
		b.p("  return takeText(fns, out[0]);")
	default:
		b.p("  return undefined;")
	}
	b.p("}")
	b.p("")
}

// jsParam is one parameter of a Node binding.
type jsParam struct {
	name, ts, doc string
	optional      bool
}

// Forms of a Node binding.
const (
	jsPlain = iota // a function that does not block
	jsSync         // the blocking form (xSync)
	jsAsync        // the Promise form of a blocking function
)

// jsFieldDoc is a field's documentation in the Node binding.
func jsFieldDoc(fl abispec.Field) string {
	if fl.Seconds {
		return fl.Doc + ", in milliseconds"
	}
	return fl.Doc
}

// jsSig returns the Node parameters of f's binding in the given form and
// the arguments for its low-level wrapper.
func jsSig(f abispec.Func, form int) (params []jsParam, call []string, optsFields []abispec.Field) {
	hasFields := false
	for _, p := range f.Params {
		if len(p.Fields) > 0 {
			hasFields = true
		}
	}
	hasTimeout := false
	for _, p := range pyInputs(f) {
		switch p.Kind {
		case abispec.Handle:
			call = append(call, "this._handle()")
		case abispec.String:
			params = append(params, jsParam{camel(bindName(p)), or(p.TS, "string"), p.Doc, false})
			call = append(call, camel(bindName(p)))
		case abispec.OptString:
			params = append(params, jsParam{camel(bindName(p)), or(p.TS, "string"), p.Doc, true})
			call = append(call, camel(bindName(p)))
		case abispec.Bytes:
			params = append(params, jsParam{camel(bindName(p)), or(p.TS, "string | Uint8Array"), p.Doc, false})
			call = append(call, camel(bindName(p)))
		case abispec.JSON:
			if len(p.Fields) > 0 {
				optsFields = p.Fields
				var members []string
				for _, fl := range p.Fields {
					if fl.JSDefault != "" {
						members = append(members, fmt.Sprintf("%s: options.%s ?? %s", fl.JSON, fl.JSON, fl.JSDefault))
					} else {
						members = append(members, fmt.Sprintf("%s: options.%s", fl.JSON, fl.JSON))
					}
				}
				call = append(call, "pick({"+strings.Join(members, ", ")+"})")
				continue
			}
			params = append(params, jsParam{camel(bindName(p)), or(p.TS, "unknown"), p.Doc + " (a JSON-serialisable value, or a string holding JSON)", !p.Required})
			call = append(call, camel(bindName(p)))
		case abispec.Int:
			params = append(params, jsParam{camel(bindName(p)), "number", p.Doc, false})
			call = append(call, camel(bindName(p)))
		case abispec.TimeoutMS:
			hasTimeout = true
			switch {
			case hasFields || form == jsAsync:
				call = append(call, "toTimeoutMs(options.timeoutMs)")
			default:
				params = append(params, jsParam{"timeoutMs", "number", "milliseconds to wait; omitted for " + or(f.DefaultTimeout, "the default") + ", negative or Infinity to wait without limit", true})
				call = append(call, "toTimeoutMs(timeoutMs)")
			}
		}
	}
	// The options object is optional unless a member is required.
	optionalOpts := true
	for _, fl := range optsFields {
		if fl.Required {
			optionalOpts = false
		}
	}
	switch {
	case hasFields && form == jsAsync:
		params = append(params, jsParam{"options", optionsTypeName(f) + " & AsyncOptions", "options; signal cancels the call", optionalOpts})
	case hasFields:
		params = append(params, jsParam{"options", optionsTypeName(f), "options", optionalOpts})
	case form == jsAsync:
		ts := "AsyncOptions"
		doc := "signal cancels the call"
		if hasTimeout {
			ts = "CallOptions"
			doc = "timeoutMs: milliseconds to wait (omitted for " + or(f.DefaultTimeout, "the default") + ", negative or Infinity to wait without limit); signal cancels the call"
		}
		params = append(params, jsParam{"options", ts, doc, true})
	}
	return params, call, optsFields
}

// optionsTypeName names the TypeScript interface of f's options object.
func optionsTypeName(f abispec.Func) string {
	name := f.Method
	if f.Class != "" && f.Binding == abispec.Constructor {
		name = f.Class + "_" + f.Method
	}
	name = camel(name)
	return strings.ToUpper(name[:1]) + name[1:] + "Options"
}

func jsReturn(f abispec.Func, form int) string {
	ret := or(f.TSReturn, "void")
	if f.Binding == abispec.Constructor {
		ret = f.Class
	}
	if form == jsAsync {
		return "Promise<" + ret + ">"
	}
	return ret
}

func jsFuncName(f abispec.Func) string {
	switch {
	case f.Binding == abispec.Function:
		return camel(f.Method) + "()"
	case factoryOf(f) != "":
		return factoryOf(f) + "." + camel(f.Method) + "()"
	case f.Method == "__init__":
		return "new " + f.Class + "()"
	}
	return f.Class + "." + camel(f.Method) + "()"
}

// jsDoc writes a JSDoc comment.
func jsDoc(b *buf, indent string, f abispec.Func, params []jsParam, form int, ctor bool, types bool) {
	f.Doc = bindingNames(f.Doc, jsFuncName)
	for i := range params {
		params[i].doc = bindingNames(params[i].doc, jsFuncName)
	}
	b.p("%s/**", indent)
	for _, l := range wrap(f.Doc, 76-len(indent)) {
		if l == "" {
			b.p("%s *", indent)
		} else {
			b.p("%s * %s", indent, l)
		}
	}
	if f.Blocking != "" {
		b.p("%s *", indent)
		note := "Blocks until " + f.Blocking + ": the event loop waits too."
		if form == jsAsync {
			note = "Resolves when " + f.Blocking + ", without blocking the event loop. Aborting the signal cancels the call (a pending edit review closes its diff tab) and rejects with the signal's reason once that is done."
		}
		for _, l := range wrap(note, 76-len(indent)) {
			b.p("%s * %s", indent, l)
		}
	}
	b.p("%s *", indent)
	for _, p := range params {
		name := p.name
		if p.optional {
			name = "[" + name + "]"
		}
		tag := "@param " + name
		if !types {
			tag = "@param {" + p.ts + "} " + name
		}
		for i, l := range wrap(tag+" "+p.doc+".", 72-len(indent)) {
			if i == 0 {
				b.p("%s * %s", indent, l)
			} else {
				b.p("%s *   %s", indent, l)
			}
		}
	}
	if out, ok := outString(f); ok && !ctor {
		ret := or(f.ResultDoc, out.Doc)
		if out.Null != "" {
			ret += "; null when " + out.Null
		}
		tag := "@returns "
		if !types {
			tag = "@returns {" + jsReturn(f, form) + "} "
		}
		for i, l := range wrap(tag+ret+".", 72-len(indent)) {
			if i == 0 {
				b.p("%s * %s", indent, l)
			} else {
				b.p("%s *   %s", indent, l)
			}
		}
	}
	var raises []string
	for _, c := range f.Statuses {
		raises = append(raises, abispec.StatusByCode(c).Class)
	}
	what := "@throws {IdebridgeError} "
	if form == jsAsync {
		what = "Rejects with an IdebridgeError: "
	}
	if f.JSConv == "editOutcome" {
		raises = append(raises, "ConflictError (the file changed on disk since the edit's base, so nothing was written; error.result is the outcome)")
	}
	for i, l := range wrap(what+strings.Join(raises, ", ")+".", 72-len(indent)) {
		if i == 0 {
			b.p("%s * %s", indent, l)
		} else {
			b.p("%s *   %s", indent, l)
		}
	}
	b.p("%s */", indent)
}

func jsParamList(params []jsParam, types bool) string {
	var ps []string
	for _, p := range params {
		switch {
		case types && p.optional:
			ps = append(ps, p.name+"?: "+p.ts)
		case types:
			ps = append(ps, p.name+": "+p.ts)
		case p.name == "options":
			ps = append(ps, "options = {}")
		default:
			ps = append(ps, p.name)
		}
	}
	return strings.Join(ps, ", ")
}

// jsConv wraps expr in f's conversion, if any.
func jsConv(f abispec.Func, expr string) string {
	if f.JSConv != "" {
		return f.JSConv + "(" + expr + ")"
	}
	return expr
}

// jsAsyncBody is the body of the Promise form of blocking f.
func jsAsyncBody(f abispec.Func, call []string, decode string) string {
	return fmt.Sprintf("return runAsync(options.signal, () => _start_%s(%s), (text) => %s);",
		f.Name, strings.Join(call, ", "), decode)
}

func nodeJS() []byte {
	var b buf
	b.p("// Code generated by cabi/gen from %s. DO NOT EDIT.", source)
	b.WriteString(jsPrelude)
	b.p("")
	b.p("// Status codes returned by the C functions.")
	for _, s := range abispec.Statuses {
		b.p("const %s = %d;", s.Name, s.Code)
	}
	b.p("")
	b.p("/**")
	b.p(" * An idebridge call failed; `message` is the library's message.")
	b.p(" * `status` is the C status code and `function` the C function that failed;")
	b.p(" * for a ToolError, `code` is the JSON-RPC error code of the IDE's answer")
	b.p(" * (0 for a result with isError) and `data` its data.")
	b.p(" */")
	b.p("class IdebridgeError extends Error {")
	b.p("  /**")
	b.p("   * @param {string} message")
	b.p("   * @param {number} [status]")
	b.p("   * @param {string} [fn]")
	b.p("   * @param {number} [code]")
	b.p("   * @param {unknown} [data]")
	b.p("   */")
	b.p("  constructor(message, status = IDB_ERROR, fn = undefined, code = undefined, data = undefined) {")
	b.p("    super(message);")
	b.p("    this.name = new.target.name;")
	b.p("    /** @type {number} */")
	b.p("    this.status = status;")
	b.p("    /** @type {string | undefined} */")
	b.p("    this.function = fn;")
	b.p("    /** @type {number | undefined} */")
	b.p("    this.code = code;")
	b.p("    /** @type {unknown} */")
	b.p("    this.data = data;")
	b.p("  }")
	b.p("}")
	for _, s := range abispec.Statuses {
		if s.Class == "" || s.Class == "IdebridgeError" {
			continue
		}
		b.p("")
		b.p("/** %s: %s */", s.Name, s.Doc)
		b.p("class %s extends IdebridgeError {}", s.Class)
	}
	b.p("")
	b.p("const ERRORS = {")
	for _, s := range abispec.Statuses {
		if s.Class != "" {
			b.p("  [%s]: %s,", s.Name, s.Class)
		}
	}
	b.p("};")
	b.p("")
	b.p("/** What the user called, by C function: an error says LSPManager.references, not idb_lsp_references. */")
	b.p("const NAMES = {")
	for _, f := range abispec.Funcs {
		if f.Binding == abispec.Internal || isInternalClass(f.Class) {
			continue
		}
		n := jsName(f)
		if f.Method == "__init__" {
			n = "new " + f.Class
		}
		b.p("  %s: %q,", f.Name, n)
		if isBlocking(f) {
			b.p("  %s_start: %q,", f.Name, n)
		}
	}
	b.p("};")
	b.p("")
	b.p("/** The library's message with its leading C function name replaced by what the user called. */")
	b.p("function userMessage(message) {")
	b.p("  const i = message.indexOf(': ');")
	b.p("  const head = i < 0 ? '' : message.slice(0, i);")
	b.p("  return Object.prototype.hasOwnProperty.call(NAMES, head) ? NAMES[head] + message.slice(i) : message;")
	b.p("}")
	b.WriteString(jsRuntime)
	b.p("")
	b.p("/**")
	b.p(" * Declares every export with koffi. Throws IdebridgeError, saying what to")
	b.p(" * do, if the library lacks one: it is not libidebridge, or an older build.")
	b.p(" */")
	b.p("function declare(lib, where) {")
	b.p("  const missing = [];")
	b.p("  const fn = (name, proto) => {")
	b.p("    try {")
	b.p("      return lib.func(proto);")
	b.p("    } catch (e) {")
	b.p("      if (!/Cannot find function/.test(e.message)) throw e;")
	b.p("      missing.push(name);")
	b.p("      return null;")
	b.p("    }")
	b.p("  };")
	b.p("  const fns = {")
	for _, f := range abispec.Funcs {
		b.p("    %s: fn(%q, %q),", f.Name, f.Name, koffiProto(f))
	}
	b.p("  };")
	b.p("  if (missing.includes('idb_version')) {")
	b.p("    throw new IdebridgeError(where + ' is not libidebridge: it has no idb_version');")
	b.p("  }")
	b.p("  if (missing.length > 0) {")
	b.p("    const shown = missing.slice(0, 5).join(', ') + (missing.length > 5 ? ', ...' : '');")
	b.p("    throw new IdebridgeError(")
	b.p("      where + ' is older than this package: it lacks ' + missing.length + ' of the ' + Object.keys(fns).length +")
	b.p("        ' functions the package calls (' + shown + '); rebuild it (make lib), reinstall the package, ' +")
	b.p("        'or set IDEBRIDGE_LIB to a library of the same build',")
	b.p("    );")
	b.p("  }")
	b.p("  return fns;")
	b.p("}")
	b.p("")
	b.p("// Low-level wrappers: one per export that returns a status (blocking")
	b.p("// ones run as asynchronous calls).")
	b.p("")
	for _, f := range abispec.Funcs {
		if f.Binding != abispec.Internal && !isInternalClass(f.Class) {
			jsLow(&b, f)
		}
	}
	var exports []string
	for _, f := range abispec.Funcs {
		if f.Binding != abispec.Function {
			continue
		}
		name := camel(f.Method)
		if !isBlocking(f) {
			params, call, _ := jsSig(f, jsPlain)
			jsDoc(&b, "", f, params, jsPlain, false, false)
			b.p("function %s(%s) {", name, jsParamList(params, false))
			b.p("  return %s;", jsConv(f, "_"+f.Name+"("+strings.Join(call, ", ")+")"))
			b.p("}")
			b.p("")
			exports = append(exports, name)
			continue
		}
		params, call, _ := jsSig(f, jsAsync)
		jsDoc(&b, "", f, params, jsAsync, false, false)
		b.p("function %s(%s) {", name, jsParamList(params, false))
		b.p("  %s", jsAsyncBody(f, call, jsConv(f, jsDecoder(f)+"(text)")))
		b.p("}")
		b.p("")
		params, call, _ = jsSig(f, jsSync)
		jsDoc(&b, "", f, params, jsSync, false, false)
		b.p("function %sSync(%s) {", name, jsParamList(params, false))
		b.p("  return %s;", jsConv(f, "_"+f.Name+"("+strings.Join(call, ", ")+")"))
		b.p("}")
		b.p("")
		exports = append(exports, name, name+"Sync")
	}
	for _, c := range boundClasses() {
		jsClass(&b, c)
		exports = append(exports, c.Name)
	}
	b.p("module.exports = {")
	for _, s := range abispec.Statuses {
		b.p("  %s,", s.Name)
	}
	b.p("  IdebridgeError,")
	for _, s := range abispec.Statuses {
		if s.Class != "" && s.Class != "IdebridgeError" {
			b.p("  %s,", s.Class)
		}
	}
	b.p("  ConflictError,")
	for _, e := range exports {
		b.p("  %s,", e)
	}
	b.p("};")
	return b.Bytes()
}

func jsClass(b *buf, c abispec.Class) {
	ctor := ctorOf(c.Name)
	dtor := destructorOf(c.Name)
	b.p("/**")
	for _, l := range wrap(c.Doc, 74) {
		if l == "" {
			b.p(" *")
		} else {
			b.p(" * %s", l)
		}
	}
	b.p(" *")
	if isBlocking(dtor) {
		b.p(" * Await %s() (or call close(), which blocks) when done; both are idempotent.", camel(dtor.Method))
	} else {
		b.p(" * Call close() when done (it is idempotent).")
	}
	b.p(" */")
	b.p("class %s {", c.Name)
	if parent := factoryOf(ctor); parent != "" {
		// Made by a method of parent, whose object it keeps alive.
		b.p("  /** @private Use %s.%s(). */", parent, camel(ctor.Method))
		b.p("  constructor(token, handle, parent) {")
		b.p("    if (token !== INTERNAL) throw new TypeError('use %s.%s() to create a %s');", parent, camel(ctor.Method), c.Name)
		b.p("    /** @type {bigint} */")
		b.p("    this._h = handle;")
		b.p("    this._parent = parent;")
		b.p("  }")
	} else if ctor.Method == "__init__" {
		params, call, _ := jsSig(ctor, jsPlain)
		jsDoc(b, "  ", ctor, params, jsPlain, true, false)
		b.p("  constructor(%s) {", jsParamList(params, false))
		b.p("    /** @type {bigint} */")
		b.p("    this._h = _%s(%s);", ctor.Name, strings.Join(call, ", "))
		b.p("  }")
	} else {
		name := camel(ctor.Method)
		b.p("  /** @private Use %s.%s(). */", c.Name, name)
		b.p("  constructor(token, handle) {")
		b.p("    if (token !== INTERNAL) throw new TypeError('use %s.%s() to create a %s');", c.Name, name, c.Name)
		b.p("    /** @type {bigint} */")
		b.p("    this._h = handle;")
		b.p("  }")
		b.p("")
		if isBlocking(ctor) {
			params, call, _ := jsSig(ctor, jsAsync)
			jsDoc(b, "  ", ctor, params, jsAsync, true, false)
			b.p("  static %s(%s) {", name, jsParamList(params, false))
			b.p("    %s", jsAsyncBody(ctor, call, "new "+c.Name+"(INTERNAL, decHandle(text))"))
			b.p("  }")
			b.p("")
			params, call, _ = jsSig(ctor, jsSync)
			jsDoc(b, "  ", ctor, params, jsSync, true, false)
			b.p("  static %sSync(%s) {", name, jsParamList(params, false))
			b.p("    return new %s(INTERNAL, _%s(%s));", c.Name, ctor.Name, strings.Join(call, ", "))
			b.p("  }")
		} else {
			params, call, _ := jsSig(ctor, jsPlain)
			jsDoc(b, "  ", ctor, params, jsPlain, true, false)
			b.p("  static %s(%s) {", name, jsParamList(params, false))
			b.p("    return new %s(INTERNAL, _%s(%s));", c.Name, ctor.Name, strings.Join(call, ", "))
			b.p("  }")
		}
	}
	b.p("")
	b.p("  /** The C handle as a bigint; 0n once closed. */")
	b.p("  get handle() {")
	b.p("    return this._h;")
	b.p("  }")
	b.p("")
	b.p("  /** @private */")
	b.p("  _handle() {")
	b.p("    if (!this._h) throw new ClosedError('%s is closed', IDB_ERR_CLOSED);", c.Name)
	b.p("    return this._h;")
	b.p("  }")
	for _, f := range abispec.Funcs {
		if f.Class != c.Name || f.Binding != abispec.Method {
			continue
		}
		name := camel(f.Method)
		if !isBlocking(f) {
			params, call, _ := jsSig(f, jsPlain)
			b.p("")
			jsDoc(b, "  ", f, params, jsPlain, false, false)
			b.p("  %s(%s) {", name, jsParamList(params, false))
			b.p("    return %s;", jsConv(f, "_"+f.Name+"("+strings.Join(call, ", ")+")"))
			b.p("  }")
			continue
		}
		params, call, _ := jsSig(f, jsAsync)
		b.p("")
		jsDoc(b, "  ", f, params, jsAsync, false, false)
		b.p("  %s(%s) {", name, jsParamList(params, false))
		b.p("    if (!this._h) return Promise.reject(new ClosedError('%s is closed', IDB_ERR_CLOSED));", c.Name)
		b.p("    %s", jsAsyncBody(f, call, jsConv(f, jsDecoder(f)+"(text)")))
		b.p("  }")
		params, call, _ = jsSig(f, jsSync)
		b.p("")
		jsDoc(b, "  ", f, params, jsSync, false, false)
		b.p("  %sSync(%s) {", name, jsParamList(params, false))
		b.p("    return %s;", jsConv(f, "_"+f.Name+"("+strings.Join(call, ", ")+")"))
		b.p("  }")
	}
	for _, f := range factories(c.Name) {
		params, call, _ := jsSig(f, jsPlain)
		b.p("")
		jsDoc(b, "  ", f, params, jsPlain, true, false)
		b.p("  %s(%s) {", camel(f.Method), jsParamList(params, false))
		b.p("    return new %s(INTERNAL, _%s(%s), this);", f.Class, f.Name, strings.Join(call, ", "))
		b.p("  }")
	}
	name := camel(dtor.Method)
	if isBlocking(dtor) {
		params, call, _ := jsSig(dtor, jsAsync)
		call[0] = "h"
		b.p("")
		jsDoc(b, "  ", dtor, params, jsAsync, false, false)
		b.p("  %s(%s) {", name, jsParamList(params, false))
		b.p("    const h = this._h;")
		b.p("    if (!h) return Promise.resolve();")
		b.p("    this._h = 0n;")
		b.p("    %s", jsAsyncBody(dtor, call, "undefined"))
		b.p("  }")
		params, call, _ = jsSig(dtor, jsSync)
		call[0] = "h"
		b.p("")
		jsDoc(b, "  ", dtor, params, jsSync, false, false)
		b.p("  %sSync(%s) {", name, jsParamList(params, false))
		b.p("    const h = this._h;")
		b.p("    if (!h) return;")
		b.p("    this._h = 0n;")
		b.p("    _%s(%s);", dtor.Name, strings.Join(call, ", "))
		b.p("  }")
		b.p("")
		b.p("  /** %sSync() with its defaults: blocks; does nothing once closed. */", name)
		b.p("  close() {")
		b.p("    this.%sSync();", name)
		b.p("  }")
	} else {
		params, call, _ := jsSig(dtor, jsPlain)
		call[0] = "h"
		b.p("")
		jsDoc(b, "  ", dtor, params, jsPlain, false, false)
		b.p("  %s(%s) {", name, jsParamList(params, false))
		b.p("    const h = this._h;")
		b.p("    if (!h) return;")
		b.p("    this._h = 0n;")
		b.p("    _%s(%s);", dtor.Name, strings.Join(call, ", "))
		b.p("  }")
		if dtor.Method != "close" {
			b.p("")
			b.p("  /** Same as %s() with its defaults; does nothing once closed. */", name)
			b.p("  close() {")
			b.p("    this.%s();", name)
			b.p("  }")
		}
	}
	b.p("}")
	b.p("if (typeof Symbol.dispose === 'symbol') {")
	b.p("  %s.prototype[Symbol.dispose] = function dispose() {", c.Name)
	b.p("    this.close();")
	b.p("  };")
	b.p("}")
	if isBlocking(dtor) {
		b.p("if (typeof Symbol.asyncDispose === 'symbol') {")
		b.p("  %s.prototype[Symbol.asyncDispose] = function asyncDispose() {", c.Name)
		b.p("    return this.%s();", name)
		b.p("  };")
		b.p("}")
	}
	b.p("")
}

// tsDecl writes the d.ts declaration of one function or method in form.
func tsDecl(b *buf, indent, prefix string, f abispec.Func, form int, ctor bool) {
	params, _, _ := jsSig(f, form)
	name := camel(f.Method)
	if form == jsSync {
		name += "Sync"
	}
	jsDoc(b, indent, f, params, form, ctor, true)
	b.p("%s%s%s(%s): %s;", indent, prefix, name, jsParamList(params, true), jsReturn(f, form))
}

func nodeTS() []byte {
	var b buf
	b.p("// Code generated by cabi/gen from %s. DO NOT EDIT.", source)
	b.p("")
	b.p("// Types of the idebridge Node.js bindings (index.js).")
	b.p("")
	b.p("// Symbol.dispose and Symbol.asyncDispose, as @types/node declares them,")
	b.p("// for projects whose lib predates them (the runtime has them from Node 20).")
	b.p("declare global {")
	b.p("  interface SymbolConstructor {")
	b.p("    readonly dispose: unique symbol;")
	b.p("    readonly asyncDispose: unique symbol;")
	b.p("  }")
	b.p("}")
	b.p("")
	for _, s := range abispec.Statuses {
		b.p("/** %s */", s.Doc)
		b.p("export declare const %s: %d;", s.Name, s.Code)
	}
	b.p("")
	b.p("/** An idebridge call failed; `message` is the library's message. */")
	b.p("export declare class IdebridgeError extends Error {")
	b.p("  constructor(message: string, status?: number, fn?: string, code?: number, data?: unknown);")
	b.p("  /** The C status code. */")
	b.p("  readonly status: number;")
	b.p("  /** The C function that failed. */")
	b.p("  readonly function: string | undefined;")
	b.p("  /** For a ToolError: the JSON-RPC error code of the IDE's answer (0 for a result with isError). */")
	b.p("  readonly code: number | undefined;")
	b.p("  /** For a ToolError: the data member of the IDE's error, if any. */")
	b.p("  readonly data: unknown;")
	b.p("}")
	for _, s := range abispec.Statuses {
		if s.Class == "" || s.Class == "IdebridgeError" {
			continue
		}
		b.p("/** %s: %s */", s.Name, s.Doc)
		b.p("export declare class %s extends IdebridgeError {}", s.Class)
	}
	b.p("/** An edit was not written: the file changed on disk since the edit's base. */")
	b.p("export declare class ConflictError extends IdebridgeError {")
	b.p("  /** The outcome; result.text is what would have been written. */")
	b.p("  readonly result: EditResult;")
	b.p("  readonly conflict: EditConflict;")
	b.p("}")
	b.p("")
	b.p("/** The options of every Promise form: signal cancels the call. */")
	b.p("export interface AsyncOptions {")
	b.p("  /** Aborting it cancels the call (a pending edit review closes its diff tab); the Promise rejects with the signal's reason. */")
	b.p("  signal?: AbortSignal;")
	b.p("}")
	b.p("")
	b.p("/** The options of the Promise forms of calls that take a timeout. */")
	b.p("export interface CallOptions extends AsyncOptions {")
	b.p("  /** Milliseconds to wait; omitted for the function's default, negative or Infinity to wait without limit. */")
	b.p("  timeoutMs?: number;")
	b.p("}")
	for _, t := range abispec.TSTypes {
		b.p("")
		b.p("/** %s */", t.Doc)
		if t.Alias {
			b.p("export type %s = %s;", t.Name, t.Body)
		} else {
			b.p("export interface %s %s", t.Name, t.Body)
		}
	}
	// Options interfaces.
	for _, f := range abispec.Funcs {
		if f.Binding == abispec.Internal {
			continue
		}
		_, _, fields := jsSig(f, jsPlain)
		if fields == nil {
			continue
		}
		b.p("")
		b.p("/** Options of %s. */", jsName(f))
		b.p("export interface %s {", optionsTypeName(f))
		for _, fl := range fields {
			b.p("  /** %s. */", jsFieldDoc(fl))
			if fl.Required {
				b.p("  %s: %s;", fl.JSON, or(fl.TS, "unknown"))
			} else {
				b.p("  %s?: %s;", fl.JSON, or(fl.TS, "unknown"))
			}
		}
		for _, p := range f.Params {
			if p.Kind == abispec.TimeoutMS {
				b.p("  /** Milliseconds to wait; omitted for %s, negative or Infinity to wait without limit. */", or(f.DefaultTimeout, "the default"))
				b.p("  timeoutMs?: number;")
			}
		}
		b.p("}")
	}
	for _, f := range abispec.Funcs {
		if f.Binding != abispec.Function {
			continue
		}
		b.p("")
		if !isBlocking(f) {
			tsDecl(&b, "", "export declare function ", f, jsPlain, false)
			continue
		}
		tsDecl(&b, "", "export declare function ", f, jsAsync, false)
		tsDecl(&b, "", "export declare function ", f, jsSync, false)
	}
	for _, c := range boundClasses() {
		ctor := ctorOf(c.Name)
		dtor := destructorOf(c.Name)
		b.p("")
		b.p("/**")
		for _, l := range wrap(c.Doc, 74) {
			if l == "" {
				b.p(" *")
			} else {
				b.p(" * %s", l)
			}
		}
		b.p(" */")
		b.p("export declare class %s {", c.Name)
		if factoryOf(ctor) != "" {
			b.p("  private constructor();")
		} else if ctor.Method == "__init__" {
			params, _, _ := jsSig(ctor, jsPlain)
			jsDoc(&b, "  ", ctor, params, jsPlain, true, true)
			b.p("  constructor(%s);", jsParamList(params, true))
		} else {
			b.p("  private constructor();")
			if isBlocking(ctor) {
				tsDecl(&b, "  ", "static ", ctor, jsAsync, true)
				tsDecl(&b, "  ", "static ", ctor, jsSync, true)
			} else {
				tsDecl(&b, "  ", "static ", ctor, jsPlain, true)
			}
		}
		b.p("  /** The C handle; 0n once closed. */")
		b.p("  readonly handle: bigint;")
		for _, f := range abispec.Funcs {
			if f.Class != c.Name || (f.Binding != abispec.Method && f.Binding != abispec.Destructor) {
				continue
			}
			if !isBlocking(f) {
				tsDecl(&b, "  ", "", f, jsPlain, false)
				continue
			}
			tsDecl(&b, "  ", "", f, jsAsync, false)
			tsDecl(&b, "  ", "", f, jsSync, false)
		}
		for _, f := range factories(c.Name) {
			tsDecl(&b, "  ", "", f, jsPlain, true)
		}
		if isBlocking(dtor) {
			b.p("  /** %sSync() with its defaults: blocks; does nothing once closed. */", camel(dtor.Method))
			b.p("  close(): void;")
			b.p("  [Symbol.asyncDispose](): Promise<void>;")
		} else if dtor.Method != "close" {
			b.p("  /** Same as %s() with its defaults; does nothing once closed. */", camel(dtor.Method))
			b.p("  close(): void;")
		}
		b.p("  [Symbol.dispose](): void;")
		b.p("}")
	}
	return b.Bytes()
}

func jsName(f abispec.Func) string {
	if p := factoryOf(f); p != "" {
		return p + "." + camel(f.Method)
	}
	if f.Class != "" {
		return f.Class + "." + camel(f.Method)
	}
	return camel(f.Method)
}

const jsPrelude = `
'use strict';

/**
 * idebridge: Node.js bindings of libidebridge.
 *
 * Find the user's editor and drive it over MCP (edit review in its diff
 * viewer, its diagnostics around an edit), and turn language-server
 * diagnostics into a small block of text for a model:
 *
 *     const idebridge = require('idebridge');
 *     const ide = await idebridge.IDEClient.connect({ timeoutMs: 10000 });
 *     try {
 *       const res = await ide.proposeEdit('main.go', newText, { signal });
 *       console.log(res.status, res.written);
 *     } finally {
 *       ide.close();
 *     }
 *
 * Everything that blocks (discovery, connecting, IDE tool calls, edit
 * review, language servers) returns a Promise and never blocks the event
 * loop: the library runs the call on a thread of its own and signals its
 * completion on a file descriptor that the event loop watches. An
 * AbortSignal (options.signal) cancels the call: a pending openDiff or edit
 * review closes its tab in the IDE and the Promise rejects with the
 * signal's reason. Each also has a blocking form named xSync. What does not
 * block (the diagnostics registry, paths, rendering) is synchronous.
 *
 * Every failure throws (or rejects with) IdebridgeError or a subclass
 * carrying the library's message; a ToolError also carries the IDE's
 * JSON-RPC error code. Durations are in milliseconds (timeoutMs: omitted
 * means the function's default, negative or Infinity waits without limit).
 *
 * The shared library is the one packed inside this package (built by npm
 * pack for the platform it ran on), unless the IDEBRIDGE_LIB environment
 * variable names another; in the source tree, build/libidebridge.so
 * (` + "`make lib`" + `) is used when the package has none.
 *
 * @module idebridge
 */

const fs = require('node:fs');
const path = require('node:path');
const { isMainThread } = require('node:worker_threads');
const koffi = require('koffi');
`

const jsRuntime = `
/** An edit was not written: the file changed on disk since the edit's base. */
class ConflictError extends IdebridgeError {
  /** @param {object} result the edit's outcome, with its conflict */
  constructor(result) {
    super(result.conflict.message, IDB_ERROR, undefined);
    /** The outcome; result.text is what would have been written. */
    this.result = result;
    this.conflict = result.conflict;
  }
}

const INTERNAL = Symbol('idebridge.internal');

const LIB_NAMES = { darwin: 'libidebridge.dylib', win32: 'idebridge.dll' };

let fnsCache = null;
let libHandle = null;

/** Returns the path of the shared library to load. */
function libraryPath() {
  if (process.env.IDEBRIDGE_LIB) return process.env.IDEBRIDGE_LIB;
  const name = LIB_NAMES[process.platform] || 'libidebridge.so';
  const tried = [
    path.join(__dirname, 'prebuilds', process.platform + '-' + process.arch, name),
    path.resolve(__dirname, '..', '..', 'build', name),
  ];
  for (const p of tried) {
    if (fs.existsSync(p)) return p;
  }
  throw new IdebridgeError(
    'cannot find ' + name + ' for ' + process.platform + '-' + process.arch +
      ': this package was packed on another platform, or without the library; ' +
      'set IDEBRIDGE_LIB to its path (looked at ' + tried.join(', ') + ')',
  );
}

/**
 * Keeps libuv's SIGCHLD handler installed for as long as the process lives.
 * libuv installs it without SA_ONSTACK when Node starts its first child
 * process and removes it when the last one has exited; the library's
 * children (language servers) signal the library's own threads, where a
 * handler without SA_ONSTACK runs on a goroutine's small stack and corrupts
 * the memory below it. With a listener the handler stays, so the library
 * gives it SA_ONSTACK once, when it loads. The listener does nothing and
 * does not keep the event loop alive. Worker threads cannot listen to
 * signals: the library then checks SIGCHLD's handler before every blocking
 * call, which leaves a window open (see cabi/sigchld_unix.go).
 */
function keepChildSignal() {
  if (process.platform !== 'win32' && isMainThread && !process.listeners('SIGCHLD').includes(ignoreSignal)) {
    process.on('SIGCHLD', ignoreSignal);
  }
}

function ignoreSignal() {}

/** Loads the library once and declares its functions. */
function load() {
  if (fnsCache === null) {
    keepChildSignal();
    const where = libraryPath();
    const lib = koffi.load(where);
    fnsCache = declare(lib, where);
    libHandle = lib;
  }
  return fnsCache;
}

function raise(fns, status, fn) {
  const p = fns.idb_last_error();
  let message = fn + ' failed with status ' + status;
  if (p) {
    try {
      message = koffi.decode(p, 'char', -1);
    } finally {
      fns.idb_free(p);
    }
  }
  const Cls = ERRORS[status] || IdebridgeError;
  throw new Cls(userMessage(message), status, fn);
}

/** Returns the error of a failed asynchronous call, from its JSON error. */
function callError(status, text) {
  let err = {};
  try {
    err = JSON.parse(text || '{}');
  } catch {
    err = { message: text };
  }
  const Cls = ERRORS[status] || IdebridgeError;
  return new Cls(userMessage(err.message || 'call failed with status ' + status), status, err.function, err.code, err.data);
}

function textIn(value) {
  return value === undefined ? null : value;
}

function bytesIn(value) {
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  if (value === undefined || value === null) return Buffer.alloc(0);
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

function jsonIn(value) {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

function pick(members) {
  const out = {};
  for (const [k, v] of Object.entries(members)) {
    if (v !== undefined && v !== null) out[k] = v;
  }
  return out;
}

function toTimeoutMs(ms) {
  if (ms === undefined || ms === null) return 0;
  if (ms < 0 || ms === Infinity) return -1;
  return Math.max(1, Math.ceil(ms));
}

/** Decodes and frees a string the library returned (null for NULL). */
function takeText(fns, p) {
  if (!p) return null;
  try {
    return koffi.decode(p, 'char', -1);
  } finally {
    fns.idb_free(p);
  }
}

function takeJSON(fns, p) {
  const text = takeText(fns, p);
  return text === null ? null : JSON.parse(text);
}

// Asynchronous calls: a blocking function runs as a call of the library
// (idb_*_start), whose outcome the call carries (any thread may read it).
// The Promise forms watch the call's descriptor on the event loop
// (koffi's uv_poll); the Sync forms wait for the result.

/** Reads and frees a completed call: its result text, or throws its error. */
function takeOutcome(fns, call) {
  const out = [null];
  let status;
  let text;
  try {
    status = fns.idb_call_result(call, out);
    text = takeText(fns, out[0]);
  } finally {
    fns.idb_call_free(call);
  }
  if (status !== IDB_OK) throw callError(status, text);
  return text;
}

// How long a waiter polls the call's descriptor before it sleeps. Waking a
// sleeping thread costs tens of microseconds on a busy or virtual machine,
// and calls waited for at once often complete sooner: polling the
// descriptor (with libc's poll, not the library, whose threads run the
// call) saves that.
const SPIN_NS = 100000n;

let pollFn;

/** libc's poll(2), found through the library's dependencies; null where absent. */
function libcPoll() {
  if (pollFn === undefined) {
    try {
      pollFn = libHandle.func('int poll(void *fds, unsigned long nfds, int timeout)');
    } catch {
      pollFn = null;
    }
  }
  return pollFn;
}

/** A struct pollfd waiting for fd to be readable. */
function pollfd(fd) {
  const b = Buffer.alloc(8);
  b.writeInt32LE(fd, 0);
  b.writeInt16LE(1, 4); // POLLIN
  return b;
}

/** Polls pfd for up to SPIN_NS; true once it is readable. */
function spinFd(poll, pfd) {
  const end = process.hrtime.bigint() + SPIN_NS;
  for (;;) {
    if (poll(pfd, 1, 0) > 0) return true;
    if (process.hrtime.bigint() >= end) return false;
  }
}

/** The call's completion descriptor, or null where there is none. */
function descriptor(fns, call) {
  const fd = [null];
  return fns.idb_call_fd(call, fd) === IDB_OK ? Number(fd[0]) : null;
}

/** Waits for a call, blocking, and returns its result text. */
function finishSync(fns, call) {
  const poll = libcPoll();
  const fd = poll ? descriptor(fns, call) : null;
  if (fd !== null) {
    const pfd = pollfd(fd);
    if (!spinFd(poll, pfd)) poll(pfd, 1, -1);
  }
  return takeOutcome(fns, call);
}

/** Resolves with a call's result text once it completes; aborting signal cancels it. */
function awaitCall(fns, call, signal) {
  return new Promise((resolve, reject) => {
    let poller = null;
    let timer = null;
    let settled = false;
    const onAbort = () => fns.idb_call_cancel(call);
    const finish = () => {
      if (settled) return;
      settled = true;
      if (poller) poller.close();
      if (timer) clearTimeout(timer);
      if (signal) signal.removeEventListener('abort', onAbort);
      try {
        resolve(takeOutcome(fns, call));
      } catch (e) {
        reject(e instanceof CancelledError && signal && signal.aborted ? signal.reason : e);
      }
    };
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
    const fd = descriptor(fns, call);
    if (fd !== null) {
      // A call that completes within microseconds is taken at once: the
      // loop waits that long instead of sleeping and being woken.
      const poll = libcPoll();
      if (poll && spinFd(poll, pollfd(fd))) {
        finish();
        return;
      }
      poller = koffi.node.poll(fd, { readable: true }, finish);
      return;
    }
    // No descriptors on this platform: poll the call every 5 ms.
    const tick = () => {
      if (fns.idb_call_wait(call, 0) === IDB_OK) finish();
      else timer = setTimeout(tick, 5);
    };
    tick();
  });
}

/** Starts a call and returns the Promise of its decoded result. */
function runAsync(signal, start, decode) {
  if (signal && signal.aborted) return Promise.reject(signal.reason);
  let call;
  try {
    call = start();
  } catch (e) {
    return Promise.reject(e);
  }
  return awaitCall(load(), call, signal).then(decode);
}

function decJSON(text) {
  return text === null ? null : JSON.parse(text);
}

function decText(text) {
  return text;
}

function decHandle(text) {
  return BigInt(text);
}

function decNumber(text) {
  return Number(text);
}

function decNone() {
  return undefined;
}

// Conversions named by the export table (JSConv).

function editOutcome(result) {
  if (result.conflict) throw new ConflictError(result);
  return result;
}

function cancelledCount(v) {
  return v.cancelled;
}

function removedPaths(v) {
  return v.removed;
}

function problemList(v) {
  return v.problems;
}
`
