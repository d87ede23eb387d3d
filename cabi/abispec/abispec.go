// Package abispec describes every function that libidebridge exports: its C
// signature, documentation, ownership rules, blocking behaviour, the status
// codes it returns and how the language bindings present it.
//
// It is the single source from which cabi/gen writes the C header
// (cabi/include/idebridge.h), the Python ctypes package
// (bindings/python/idebridge) and the Node.js koffi module (bindings/node).
// The exports themselves are written by hand in package cabi; a test there
// checks that their cgo signatures match this description.
package abispec

// Status is one status code returned by the exports.
type Status struct {
	Code int
	// Name is the C macro name, e.g. IDB_ERR_HANDLE.
	Name string
	// Class is the binding exception class raised for it ("" for IDB_OK).
	Class string
	// PyBuiltin names a Python built-in exception the Python class also
	// derives from, so that `except TimeoutError` catches it either way.
	PyBuiltin string
	Doc       string
}

// Status codes, in the order the header lists them.
const (
	StOK       = 0
	StError    = 1
	StHandle   = 2
	StTimeout  = 3
	StNotFound = 4
	StArgument = 5
	StClosed   = 6
	StTool     = 7
	StPanic    = 8
	// StCancelled is the status of an asynchronous call ended by
	// idb_call_cancel (async.go).
	StCancelled = 9
)

// Statuses lists every status code.
var Statuses = []Status{
	{StOK, "IDB_OK", "", "", "Success."},
	{StError, "IDB_ERROR", "IdebridgeError", "", "The operation failed; idb_last_error() says why."},
	{StHandle, "IDB_ERR_HANDLE", "HandleError", "", "The handle is 0, was never issued, was already freed, or names another kind of object."},
	{StTimeout, "IDB_ERR_TIMEOUT", "TimeoutError", "TimeoutError", "The timeout elapsed before the operation completed."},
	{StNotFound, "IDB_ERR_NOT_FOUND", "NotFoundError", "", "Nothing to act on: no usable IDE (none, or several and none chosen), no language server for the file, or the file is not open."},
	{StArgument, "IDB_ERR_ARGUMENT", "ArgumentError", "", "An argument is invalid: NULL where a value is required, malformed JSON, or an option out of range."},
	{StClosed, "IDB_ERR_CLOSED", "ClosedError", "", "The connection or manager was closed, or the connection was lost."},
	{StTool, "IDB_ERR_TOOL", "ToolError", "", "The IDE tool reported an error (a JSON-RPC error or a result with isError)."},
	{StPanic, "IDB_ERR_PANIC", "InternalError", "", "Internal error: a Go panic was recovered inside the call. The library stays usable; please report it."},
	{StCancelled, "IDB_ERR_CANCELLED", "CancelledError", "", "The asynchronous call was cancelled (idb_call_cancel) before it completed."},
}

// StatusByCode returns the status with the given code.
func StatusByCode(code int) Status {
	for _, s := range Statuses {
		if s.Code == code {
			return s
		}
	}
	panic("abispec: unknown status code")
}

// Kind is the kind of one parameter.
type Kind int

// Parameter kinds. Each maps to one C parameter, except Bytes (two).
const (
	// String is a required NUL-terminated UTF-8 string (const char *).
	String Kind = iota
	// OptString is a NUL-terminated UTF-8 string that may be NULL.
	OptString
	// JSON is a NUL-terminated UTF-8 JSON text (const char *); NULL means
	// the documented default (usually an empty object).
	JSON
	// Bytes is a byte buffer: const char *name, size_t name_len.
	Bytes
	// Handle is a uint64_t handle of Param.Class.
	Handle
	// Int is an int64_t number.
	Int
	// TimeoutMS is an int64_t timeout in milliseconds: 0 means the
	// function's default (Func.DefaultTimeout), negative means no timeout.
	TimeoutMS
	// OutString is a char ** receiving a string the caller frees with
	// idb_free.
	OutString
	// OutHandle is a uint64_t * receiving a new handle of Func.Class.
	OutHandle
	// OutUint64 is a uint64_t * receiving a number.
	OutUint64
	// FreePtr is the void * of idb_free.
	FreePtr
)

// Field is one member of a JSON options object, offered by the bindings as
// a keyword argument (Python) or an options property (Node).
type Field struct {
	// JSON is the member name in the JSON object, e.g. "cwd".
	JSON string
	// Py is the Python keyword name, e.g. "cwd".
	Py string
	// TS is the TypeScript type of the Node property, e.g. "string".
	TS string
	// PyType is the Python annotation, e.g. "Optional[str]".
	PyType string
	Doc    string
	// PyDefault and JSDefault are expressions the bindings send when the
	// caller gives nothing (empty: send nothing, the library's default).
	PyDefault, JSDefault string
	// Seconds marks a member in milliseconds that Python takes in seconds
	// (a float, like every duration of the Python binding) and converts.
	Seconds bool
	// Required members are required arguments in Python (before the
	// optional ones, without a default) and required properties in
	// TypeScript (the options object is then required too); PyType is
	// then not Optional.
	Required bool
}

// Param is one parameter.
type Param struct {
	Name string
	Kind Kind
	// Class is the handle class of a Handle parameter.
	Class string
	Doc   string
	// Fields, for a JSON parameter, makes the bindings build the object
	// from keyword arguments instead of taking it whole.
	Fields []Field
	// Required, for a JSON parameter taken whole, makes the bindings
	// require it (otherwise it defaults to None/undefined, sent as NULL).
	Required bool
	// PyType and TS are the binding types of a parameter taken whole
	// (String, OptString, JSON, Bytes).
	PyType, TS string
	// Null, for an OutString, says when the function stores NULL in it on
	// success ("nothing"); the bindings return None/null then. Empty: never.
	Null string
}

// Return is what the C function returns.
type Return int

// Returns.
const (
	// ReturnStatus is an int status code (every export but two).
	ReturnStatus Return = iota
	// ReturnVoid is void (idb_free).
	ReturnVoid
	// ReturnString is a char * the caller frees with idb_free, or NULL
	// (idb_last_error).
	ReturnString
)

// Result says how the bindings decode an OutString.
type Result int

// Results.
const (
	// ResultNone: the function has no OutString.
	ResultNone Result = iota
	// ResultText: the string is returned as text.
	ResultText
	// ResultJSON: the string is JSON and is decoded.
	ResultJSON
)

// Binding says how a function appears in the language bindings.
type Binding int

// Bindings.
const (
	// Function is a module-level function.
	Function Binding = iota
	// Constructor creates an object of Func.Class (it has an OutHandle).
	Constructor
	// Method is a method on Func.Class (its first parameter is the handle).
	Method
	// Destructor frees the handle: the class's close method calls it once.
	Destructor
	// Internal is used by the bindings' runtime only (idb_free,
	// idb_last_error).
	Internal
)

// Func describes one export.
type Func struct {
	// Name is the C symbol, e.g. "idb_registry_publish".
	Name string
	// Doc is the description, in paragraphs separated by blank lines.
	Doc    string
	Params []Param
	Return Return
	// Statuses lists the codes the function returns besides IDB_OK.
	Statuses []int
	// Blocking is empty for a call that returns promptly; otherwise it
	// says what the call waits for.
	Blocking string
	// DefaultTimeout documents the default for a timeout of 0.
	DefaultTimeout string
	// Result says how the bindings decode the OutString.
	Result Result
	// ResultDoc describes the returned string.
	ResultDoc string

	// Binding, Class and Method place the function in the bindings.
	// Method is the Python name (snake_case); Node uses its camelCase.
	Binding Binding
	Class   string
	Method  string
	// PyReturn and TSReturn are the binding return annotations.
	PyReturn, TSReturn string
	// InC marks a function written in C in cabi (not a Go //export), so
	// it does not appear in cgo's export header.
	InC bool

	// PyConv names the Python function (of the idebridge package) that
	// turns the decoded result into its typed form, e.g. "_candidates";
	// empty returns the decoded JSON as it is.
	PyConv string
	// JSConv names the function of the Node module's runtime that turns
	// the decoded result into what the binding returns (or throws, for
	// an edit stopped by a conflict); empty returns it as it is.
	JSConv string
	// CancelHook names a Go function of package cabi that the
	// asynchronous form calls, with the call's own copies of the inputs,
	// when the call ends cancelled or timed out: it undoes what the
	// peer still shows (an openDiff's tab).
	CancelHook string
	// AsyncOf, on an idb_*_start function derived by async.go, is the
	// blocking function it starts.
	AsyncOf string
}

// Class is one handle class of the bindings.
type Class struct {
	Name string
	// Kind is the handle kind used in messages ("registry").
	Kind string
	Doc  string
	// Internal marks a class the bindings' runtime uses without
	// presenting it (the asynchronous call): it has a destructor but is
	// made by several functions, and has no binding class.
	Internal bool
}

// TSType is a TypeScript declaration written into the Node module's
// index.d.ts, for the JSON shapes that cross the ABI.
type TSType struct {
	Name string
	Doc  string
	// Body is the declaration after "export interface Name " or
	// "export type Name = ".
	Body string
	// Alias makes it a type alias instead of an interface.
	Alias bool
}
