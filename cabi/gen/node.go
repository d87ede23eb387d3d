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

// jsLow writes the low-level wrapper of f.
func jsLow(b *buf, f abispec.Func) {
	var names, args []string
	for _, p := range pyInputs(f) {
		names = append(names, p.Name)
		switch p.Kind {
		case abispec.String, abispec.OptString:
			args = append(args, "textIn("+p.Name+")")
		case abispec.JSON:
			args = append(args, "jsonIn("+p.Name+")")
		case abispec.Bytes:
			args = append(args, "_"+p.Name, "_"+p.Name+".length")
		default:
			args = append(args, p.Name)
		}
	}
	b.p("function _%s(%s) {", f.Name, strings.Join(names, ", "))
	b.p("  const fns = load();")
	for _, p := range pyInputs(f) {
		if p.Kind == abispec.Bytes {
			b.p("  const _%s = bytesIn(%s);", p.Name, p.Name)
		}
	}
	out := ""
	if n := len(f.Params); n > 0 {
		switch f.Params[n-1].Kind {
		case abispec.OutString:
			out = "string"
		case abispec.OutHandle, abispec.OutUint64:
			out = "uint64"
		}
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

// jsSig returns the Node parameters of f's binding and the arguments for
// its low-level wrapper.
func jsSig(f abispec.Func) (params []jsParam, call []string, optsFields []abispec.Field) {
	hasFields := false
	for _, p := range f.Params {
		if len(p.Fields) > 0 {
			hasFields = true
		}
	}
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
			if hasFields {
				call = append(call, "toTimeoutMs(options.timeoutMs)")
			} else {
				params = append(params, jsParam{"timeoutMs", "number", "milliseconds to wait; omitted for " + or(f.DefaultTimeout, "the default") + ", negative or Infinity to wait without limit", true})
				call = append(call, "toTimeoutMs(timeoutMs)")
			}
		}
	}
	if hasFields {
		params = append(params, jsParam{"options", optionsTypeName(f), "options", true})
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

func jsReturn(f abispec.Func) string {
	if f.TSReturn != "" {
		return f.TSReturn
	}
	return "void"
}

// jsDoc writes a JSDoc comment.
func jsDoc(b *buf, indent string, f abispec.Func, params []jsParam, ctor bool, types bool) {
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
		for _, l := range wrap("Blocks until "+f.Blocking+".", 76-len(indent)) {
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
			tag = "@returns {" + jsReturn(f) + "} "
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
	for i, l := range wrap("@throws {IdebridgeError} "+strings.Join(raises, ", ")+".", 72-len(indent)) {
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
	b.p(" * `status` is the C status code and `function` the C function that failed.")
	b.p(" */")
	b.p("class IdebridgeError extends Error {")
	b.p("  /**")
	b.p("   * @param {string} message")
	b.p("   * @param {number} [status]")
	b.p("   * @param {string} [fn]")
	b.p("   */")
	b.p("  constructor(message, status = IDB_ERROR, fn = undefined) {")
	b.p("    super(message);")
	b.p("    this.name = new.target.name;")
	b.p("    /** @type {number} */")
	b.p("    this.status = status;")
	b.p("    /** @type {string | undefined} */")
	b.p("    this.function = fn;")
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
	b.WriteString(jsRuntime)
	b.p("")
	b.p("/** Declares every export with koffi. */")
	b.p("function declare(lib) {")
	b.p("  return {")
	for _, f := range abispec.Funcs {
		b.p("    %s: lib.func(%q),", f.Name, koffiProto(f))
	}
	b.p("  };")
	b.p("}")
	b.p("")
	b.p("// Low-level wrappers: one per export that returns a status.")
	b.p("")
	for _, f := range abispec.Funcs {
		if f.Binding != abispec.Internal {
			jsLow(&b, f)
		}
	}
	var exports []string
	for _, f := range abispec.Funcs {
		if f.Binding != abispec.Function {
			continue
		}
		params, call, _ := jsSig(f)
		jsDoc(&b, "", f, params, false, false)
		b.p("function %s(%s) {", camel(f.Method), jsParamList(params, false))
		b.p("  return _%s(%s);", f.Name, strings.Join(call, ", "))
		b.p("}")
		b.p("")
		exports = append(exports, camel(f.Method))
	}
	for _, c := range abispec.Classes {
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
	b.p(" * Call close() when done (it is idempotent).")
	b.p(" */")
	b.p("class %s {", c.Name)
	params, call, _ := jsSig(ctor)
	if ctor.Method == "__init__" {
		jsDoc(b, "  ", ctor, params, true, false)
		b.p("  constructor(%s) {", jsParamList(params, false))
		b.p("    /** @type {bigint} */")
		b.p("    this._h = _%s(%s);", ctor.Name, strings.Join(call, ", "))
		b.p("  }")
	} else {
		b.p("  /** @private Use %s.%s(). */", c.Name, camel(ctor.Method))
		b.p("  constructor(token, handle) {")
		b.p("    if (token !== INTERNAL) throw new TypeError('use %s.%s() to create a %s');", c.Name, camel(ctor.Method), c.Name)
		b.p("    /** @type {bigint} */")
		b.p("    this._h = handle;")
		b.p("  }")
		b.p("")
		jsDoc(b, "  ", ctor, params, true, false)
		b.p("  static %s(%s) {", camel(ctor.Method), jsParamList(params, false))
		b.p("    return new %s(INTERNAL, _%s(%s));", c.Name, ctor.Name, strings.Join(call, ", "))
		b.p("  }")
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
		params, call, _ := jsSig(f)
		b.p("")
		jsDoc(b, "  ", f, params, false, false)
		b.p("  %s(%s) {", camel(f.Method), jsParamList(params, false))
		b.p("    return _%s(%s);", f.Name, strings.Join(call, ", "))
		b.p("  }")
	}
	params, call, _ = jsSig(dtor)
	call[0] = "h"
	b.p("")
	jsDoc(b, "  ", dtor, params, false, false)
	b.p("  %s(%s) {", camel(dtor.Method), jsParamList(params, false))
	b.p("    const h = this._h;")
	b.p("    if (!h) return;")
	b.p("    this._h = 0n;")
	b.p("    _%s(%s);", dtor.Name, strings.Join(call, ", "))
	b.p("  }")
	if dtor.Method != "close" {
		b.p("")
		b.p("  /** Same as %s() with its defaults; does nothing once closed. */", camel(dtor.Method))
		b.p("  close() {")
		b.p("    this.%s();", camel(dtor.Method))
		b.p("  }")
	}
	b.p("}")
	b.p("if (typeof Symbol.dispose === 'symbol') {")
	b.p("  %s.prototype[Symbol.dispose] = function dispose() {", c.Name)
	b.p("    this.close();")
	b.p("  };")
	b.p("}")
	b.p("")
}

func nodeTS() []byte {
	var b buf
	b.p("// Code generated by cabi/gen from %s. DO NOT EDIT.", source)
	b.p("")
	b.p("// Types of the idebridge Node.js bindings (index.js).")
	b.p("")
	for _, s := range abispec.Statuses {
		b.p("/** %s */", s.Doc)
		b.p("export declare const %s: %d;", s.Name, s.Code)
	}
	b.p("")
	b.p("/** An idebridge call failed; `message` is the library's message. */")
	b.p("export declare class IdebridgeError extends Error {")
	b.p("  constructor(message: string, status?: number, fn?: string);")
	b.p("  /** The C status code. */")
	b.p("  readonly status: number;")
	b.p("  /** The C function that failed. */")
	b.p("  readonly function: string | undefined;")
	b.p("}")
	for _, s := range abispec.Statuses {
		if s.Class == "" || s.Class == "IdebridgeError" {
			continue
		}
		b.p("/** %s: %s */", s.Name, s.Doc)
		b.p("export declare class %s extends IdebridgeError {}", s.Class)
	}
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
		_, _, fields := jsSig(f)
		if fields == nil {
			continue
		}
		b.p("")
		b.p("/** Options of %s. */", jsName(f))
		b.p("export interface %s {", optionsTypeName(f))
		for _, fl := range fields {
			b.p("  /** %s. */", fl.Doc)
			b.p("  %s?: %s;", fl.JSON, or(fl.TS, "unknown"))
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
		params, _, _ := jsSig(f)
		b.p("")
		jsDoc(&b, "", f, params, false, true)
		b.p("export declare function %s(%s): %s;", camel(f.Method), jsParamList(params, true), jsReturn(f))
	}
	for _, c := range abispec.Classes {
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
		params, _, _ := jsSig(ctor)
		if ctor.Method == "__init__" {
			jsDoc(&b, "  ", ctor, params, true, true)
			b.p("  constructor(%s);", jsParamList(params, true))
		} else {
			b.p("  private constructor();")
			jsDoc(&b, "  ", ctor, params, true, true)
			b.p("  static %s(%s): %s;", camel(ctor.Method), jsParamList(params, true), c.Name)
		}
		b.p("  /** The C handle; 0n once closed. */")
		b.p("  readonly handle: bigint;")
		for _, f := range abispec.Funcs {
			if f.Class != c.Name || (f.Binding != abispec.Method && f.Binding != abispec.Destructor) {
				continue
			}
			params, _, _ := jsSig(f)
			jsDoc(&b, "  ", f, params, false, true)
			b.p("  %s(%s): %s;", camel(f.Method), jsParamList(params, true), jsReturn(f))
		}
		if dtor.Method != "close" {
			b.p("  /** Same as %s() with its defaults; does nothing once closed. */", camel(dtor.Method))
			b.p("  close(): void;")
		}
		b.p("  [Symbol.dispose](): void;")
		b.p("}")
	}
	return b.Bytes()
}

func jsName(f abispec.Func) string {
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
 * Find the user's editor and drive it over MCP, and turn language-server
 * diagnostics into a small block of text for a model:
 *
 *     const idebridge = require('idebridge');
 *     console.log(idebridge.version());
 *     const reg = new idebridge.Registry();
 *     try {
 *       reg.publish('gopls', { uri: 'file:///p/main.go', diagnostics: [] });
 *       console.log(reg.drain());
 *     } finally {
 *       reg.close();
 *     }
 *
 * Every failure throws IdebridgeError (or a subclass) carrying the
 * library's message. Calls are synchronous: a blocking call (connecting,
 * calling an IDE tool, waiting for diagnostics) blocks the event loop until
 * it returns or its timeout elapses, so give such calls a timeout or run
 * them in a worker thread.
 *
 * The shared library is found through the IDEBRIDGE_LIB environment
 * variable (a path to the file), next to this module, or at
 * build/libidebridge.so in the source tree (built by ` + "`make lib`" + `).
 * Timeouts are in milliseconds: omitted means the function's default,
 * negative or Infinity waits without limit.
 *
 * @module idebridge
 */

const fs = require('node:fs');
const path = require('node:path');
const koffi = require('koffi');
`

const jsRuntime = `
const INTERNAL = Symbol('idebridge.internal');

const LIB_NAMES = { darwin: 'libidebridge.dylib', win32: 'idebridge.dll' };

let fnsCache = null;

/** Returns the path of the shared library to load. */
function libraryPath() {
  if (process.env.IDEBRIDGE_LIB) return process.env.IDEBRIDGE_LIB;
  const name = LIB_NAMES[process.platform] || 'libidebridge.so';
  const tried = [
    path.join(__dirname, name),
    path.resolve(__dirname, '..', '..', 'build', name),
  ];
  for (const p of tried) {
    if (fs.existsSync(p)) return p;
  }
  throw new IdebridgeError(
    'cannot find ' + name + ': set IDEBRIDGE_LIB to its path or run ` + "`make lib`" + ` (looked at ' + tried.join(', ') + ')',
  );
}

/** Loads the library once and declares its functions. */
function load() {
  if (fnsCache === null) fnsCache = declare(koffi.load(libraryPath()));
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
  throw new Cls(message, status, fn);
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
`
