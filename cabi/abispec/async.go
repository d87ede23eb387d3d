package abispec

// The asynchronous form of the blocking functions.
//
// Every blocking function idb_X (Func.Blocking set) has a twin
// idb_X_start that takes the same inputs, returns at once, and hands back
// a call handle. The call runs on a thread of the library's own; the
// caller waits for it (idb_call_wait), polls a file descriptor that
// becomes readable when it completes (idb_call_fd, for event loops), reads
// its outcome (idb_call_result: the status, and the result or a JSON error
// that carries the message and, for tool errors, the JSON-RPC code), can
// cancel it (idb_call_cancel), and frees it (idb_call_free). The outcome is
// carried by the call, never by a thread, so any thread may start, wait
// for, read or cancel any call: what koffi's worker threads and asyncio's
// loop need.
//
// The derived idb_X_start functions are appended to Funcs by init below,
// so that everything iterating Funcs (the header, the bindings, the
// checks against cgo's exports) sees them.

// CallClass is the internal class of call handles.
const CallClass = "Call"

func init() {
	Classes = append(Classes, Class{
		Name:     CallClass,
		Kind:     "call",
		Doc:      "An asynchronous call started by an idb_*_start function.",
		Internal: true,
	})
	Funcs = append(Funcs, callFuncs...)
	Funcs = append(Funcs, deriveStarts(Funcs)...)
}

// callFuncs are the functions of call handles.
var callFuncs = []Func{
	{
		Name: "idb_call_wait",
		Doc: "Waits for an asynchronous call to complete. It returns IDB_OK once the call has completed, " +
			"whatever its own outcome (read that with idb_call_result), and IDB_ERR_TIMEOUT while it is still running. " +
			"Any thread may wait, and several may wait for the same call.",
		Params: []Param{
			{Name: "call", Kind: Handle, Class: CallClass},
			{Name: "timeout_ms", Kind: TimeoutMS},
		},
		Statuses:       []int{StHandle, StTimeout, StPanic},
		Blocking:       "the call completes or the timeout elapses",
		DefaultTimeout: "no waiting (it only says whether the call has completed)",
		Binding:        Internal, Class: CallClass,
	},
	{
		Name: "idb_call_result",
		Doc: "Returns the outcome of a completed asynchronous call: the status the blocking function would have returned. " +
			"On IDB_OK, *out receives what the blocking function would have stored in its out parameter: its JSON or text, " +
			"the new handle in decimal for a function that creates an object (the caller then owns it), " +
			"or NULL when the function gives nothing. On any other status, *out receives a JSON object " +
			`{"status", "function", "message", "code"?, "data"?}: the message idb_last_error would have given, ` +
			"and, when an IDE tool failed, the JSON-RPC error code and data of its answer. " +
			"Calling it again returns the same outcome in a new string.",
		Params: []Param{
			{Name: "call", Kind: Handle, Class: CallClass},
			{Name: "out", Kind: OutString, Doc: "the result, or the error as JSON", Null: "the call succeeded and gives nothing"},
		},
		Statuses: []int{StError, StHandle, StTimeout, StNotFound, StArgument, StClosed, StTool, StPanic, StCancelled},
		Blocking: "the call completes, when it has not yet (wait with idb_call_wait first to bound the wait)",
		Result:   ResultText,
		Binding:  Internal, Class: CallClass,
	},
	{
		Name: "idb_call_cancel",
		Doc: "Asks an asynchronous call to stop: its operation's context ends, so a pending IDE tool call, settle or " +
			"edit review returns soon, closing what the IDE still shows (an edit's diff tab), and the call then " +
			"completes with IDB_ERR_CANCELLED. A call that has already completed keeps its outcome. " +
			"Cancelling twice does nothing more.",
		Params:   []Param{{Name: "call", Kind: Handle, Class: CallClass}},
		Statuses: []int{StHandle, StPanic},
		Binding:  Internal, Class: CallClass,
	},
	{
		Name: "idb_call_fd",
		Doc: "Returns a file descriptor that becomes readable when the call completes (at once if it already has), " +
			"for event loops (poll, epoll, asyncio's add_reader, libuv's uv_poll). " +
			"The descriptor belongs to the call: do not read from it, and stop watching it before idb_call_free, which closes it. " +
			"Not available on Windows (IDB_ERROR).",
		Params: []Param{
			{Name: "call", Kind: Handle, Class: CallClass},
			{Name: "out", Kind: OutUint64, Doc: "the file descriptor"},
		},
		Statuses: []int{StError, StHandle, StArgument, StPanic},
		Binding:  Internal, Class: CallClass,
	},
	{
		Name: "idb_call_free",
		Doc: "Frees a call handle; a call still running is cancelled first and completes on its own. " +
			"An object a creating call made whose handle was never read with idb_call_result is released. " +
			"The handle is invalid afterwards.",
		Params:   []Param{{Name: "call", Kind: Handle, Class: CallClass}},
		Statuses: []int{StHandle, StPanic},
		Binding:  Destructor, Class: CallClass, Method: "free",
	},
}

// deriveStarts returns the idb_X_start twin of every blocking function of
// the bindings.
func deriveStarts(funcs []Func) []Func {
	var out []Func
	for _, f := range funcs {
		if f.Blocking == "" || f.Binding == Internal || f.AsyncOf != "" {
			continue
		}
		s := Func{
			Name: f.Name + "_start",
			Doc: "Starts " + f.Name + " as an asynchronous call and returns at once. " +
				"The call's outcome (idb_call_result) is what " + f.Name + " returns and stores. " +
				"The inputs are copied: they need not outlive this function.",
			Statuses: []int{StHandle, StArgument, StPanic},
			Binding:  Internal,
			Class:    CallClass,
			AsyncOf:  f.Name,
		}
		for _, p := range f.Params {
			switch p.Kind {
			case OutString, OutHandle, OutUint64:
				continue
			}
			s.Params = append(s.Params, p)
		}
		s.Params = append(s.Params, Param{Name: "out_call", Kind: OutHandle, Doc: "the new call's handle"})
		s.DefaultTimeout = f.DefaultTimeout
		out = append(out, s)
	}
	return out
}

// FuncByName returns the function called name, and whether there is one.
func FuncByName(name string) (Func, bool) {
	for _, f := range Funcs {
		if f.Name == name {
			return f, true
		}
	}
	return Func{}, false
}
