package abispec

// Classes lists the handle classes, in the order the bindings define them.
var Classes = []Class{}

// Funcs lists every export, in the order the header declares them.
var Funcs = []Func{
	{
		Name: "idb_version",
		Doc:  "Returns the library version, e.g. \"0.1.0\".",
		Params: []Param{
			{Name: "out", Kind: OutString, Doc: "the version text"},
		},
		Statuses: []int{StArgument, StPanic},
		Result:   ResultText,
		Binding:  Function, Method: "version", PyReturn: "str", TSReturn: "string",
	},
	{
		Name: "idb_free",
		Doc: "Frees a string returned by the library (through an out parameter or by idb_last_error). " +
			"Passing NULL does nothing. Never pass a pointer the library did not return, and never free one twice.",
		Params:  []Param{{Name: "p", Kind: FreePtr, Doc: "the string to free, or NULL"}},
		Return:  ReturnVoid,
		Binding: Internal,
		InC:     true,
	},
	{
		Name: "idb_last_error",
		Doc: "Returns a copy of the message of the last error on the calling thread, or NULL when no call on this thread has failed yet.\n\n" +
			"Every failing call stores its message for the thread that made it; a successful call leaves it unchanged (like errno), " +
			"so read it right after a call that returned a nonzero status, on the same thread. Threads do not see each other's messages.",
		Return:  ReturnString,
		Binding: Internal,
		InC:     true,
	},
	{
		Name: "idb_handle_count",
		Doc: "Counts the live handles (registries, IDE clients, LSP managers) of the whole process.\n\n" +
			"Meant for leak checks in tests: after everything was freed or closed it is 0.",
		Params:   []Param{{Name: "out", Kind: OutUint64, Doc: "the count"}},
		Statuses: []int{StArgument, StPanic},
		Binding:  Function, Method: "handle_count", PyReturn: "int", TSReturn: "number",
	},
	{
		Name: "idb_parse_lockfile",
		Doc: "Parses an IDE lockfile from its file name and contents, as found in ~/.claude/ide.\n\n" +
			"The port comes from the name (\"<port>.lock\", a base name or a path). JSON content is the current format; " +
			"other text is the legacy format, one workspace folder per line.",
		Params: []Param{
			{Name: "name", Kind: String, Doc: "the lockfile's name or path, e.g. \"12345.lock\"", PyType: "str", TS: "string"},
			{Name: "data", Kind: Bytes, Doc: "the file contents (need not be NUL-terminated)", PyType: "Union[bytes, str]", TS: "string | Uint8Array"},
			{Name: "out", Kind: OutString, Doc: "the lockfile as JSON"},
		},
		Statuses:  []int{StError, StArgument, StPanic},
		Result:    ResultJSON,
		ResultDoc: "{\"port\", \"workspaceFolders\", \"pid\", \"ideName\", \"transport\", \"runningInWindows\", \"authToken\", \"legacy\", \"path\"} (zero-valued members other than port, workspaceFolders and transport are omitted)",
		Binding:   Function, Method: "parse_lockfile", PyReturn: "Dict[str, Any]", TSReturn: "Lockfile",
	},
}

// TSTypes are the TypeScript declarations of the JSON shapes that cross
// the ABI; their members are the JSON tags of the Go types named in Doc.
var TSTypes = []TSType{
	{
		Name: "Lockfile",
		Doc:  "A parsed IDE lockfile (Go: lockfile.Lockfile).",
		Body: `{
  port: number;
  workspaceFolders: string[] | null;
  pid?: number;
  ideName?: string;
  transport: "ws" | "sse";
  runningInWindows?: boolean;
  authToken?: string;
  legacy?: boolean;
  path?: string;
}`,
	},
}
