package abispec

// Classes lists the handle classes, in the order the bindings define them.
var Classes = []Class{
	{
		Name: "Registry",
		Kind: "registry",
		Doc: "A diagnostics registry: feed it every textDocument/publishDiagnostics params a language server sends, " +
			"and once per turn drain what is new, deduplicated, sorted and bounded (10 per file, 30 in all by default). " +
			"It is safe for concurrent use, starts no threads and does no I/O.",
	},
}

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
	{
		Name: "idb_path_to_local",
		Doc: "Converts a path as an IDE running on Windows wrote it to the path an agent inside WSL sees: " +
			`C:\Users\me\p becomes /mnt/c/Users/me/p, and \\wsl$\<distro>\home\me becomes /home/me. ` +
			"A path it cannot convert is returned unchanged. Pure computation: it runs no wslpath.",
		Params: []Param{
			{Name: "path", Kind: String, Doc: "the IDE's path"},
			{Name: "options_json", Kind: JSON, Doc: "the WSL setup", Fields: wslFields},
			{Name: "out", Kind: OutString, Doc: "the agent's path"},
		},
		Statuses: []int{StArgument, StPanic},
		Result:   ResultText,
		Binding:  Function, Method: "path_to_local", PyReturn: "str", TSReturn: "string",
	},
	{
		Name: "idb_path_to_ide",
		Doc: "Converts an agent's path inside WSL to the path an IDE running on Windows expects: " +
			`/mnt/c/x becomes C:\x and any other absolute path becomes \\wsl$\<distro>\.... ` +
			"A path it cannot convert is returned unchanged. Pure computation: it runs no wslpath.",
		Params: []Param{
			{Name: "path", Kind: String, Doc: "the agent's path"},
			{Name: "options_json", Kind: JSON, Doc: "the WSL setup", Fields: wslFields},
			{Name: "out", Kind: OutString, Doc: "the IDE's path"},
		},
		Statuses: []int{StArgument, StPanic},
		Result:   ResultText,
		Binding:  Function, Method: "path_to_ide", PyReturn: "str", TSReturn: "string",
	},
	{
		Name: "idb_registry_new",
		Doc:  "Creates a diagnostics registry.",
		Params: []Param{
			{Name: "options_json", Kind: JSON, Doc: "the registry's limits and filters", Fields: registryFields},
			{Name: "out_handle", Kind: OutHandle, Doc: "the new registry's handle"},
		},
		Statuses: []int{StArgument, StPanic},
		Binding:  Constructor, Class: "Registry", Method: "__init__",
	},
	{
		Name: "idb_registry_publish",
		Doc: "Registers one textDocument/publishDiagnostics notification of a language server. " +
			"A newer publish of the same server for the same document replaces the pending one (publishes are whole sets); " +
			"an empty set clears what the server had pending for the document.",
		Params: []Param{
			{Name: "registry", Kind: Handle, Class: "Registry"},
			{Name: "server", Kind: String, Doc: `the server's name, e.g. "plugin:go:gopls"`},
			{Name: "params_json", Kind: JSON, Required: true, Doc: `the notification's params: {"uri", "version"?, "diagnostics": [...]} as LSP sends them`, TS: "PublishDiagnosticsParams | string"},
		},
		Statuses: []int{StHandle, StArgument, StPanic},
		Binding:  Method, Class: "Registry", Method: "publish",
	},
	{
		Name: "idb_registry_set_version",
		Doc: "Records the current version of an open document: publishes carrying an older version are dropped as stale, " +
			"and pending diagnostics of older versions are discarded.",
		Params: []Param{
			{Name: "registry", Kind: Handle, Class: "Registry"},
			{Name: "uri", Kind: String, Doc: "the document URI"},
			{Name: "version", Kind: Int, Doc: "the document's version"},
		},
		Statuses: []int{StHandle, StArgument, StPanic},
		Binding:  Method, Class: "Registry", Method: "set_version",
	},
	{
		Name: "idb_registry_drain",
		Doc: "Takes what is new since the last drain: deduplicated within the batch and against what was delivered before, " +
			"sorted by severity, and bounded by the limits.",
		Params: []Param{
			{Name: "registry", Kind: Handle, Class: "Registry"},
			{Name: "out", Kind: OutString, Doc: "the attachment as JSON", Null: "nothing new is pending"},
		},
		Statuses:  []int{StHandle, StArgument, StPanic},
		Result:    ResultJSON,
		ResultDoc: `the attachment {"servers", "files": [{"uri", "path", "diagnostics", "cut"}], "cut", "notes"}, the same JSON as idebridge diag --json`,
		Binding:   Method, Class: "Registry", Method: "drain", PyReturn: "Optional[Dict[str, Any]]", TSReturn: "Attachment | null",
	},
	{
		Name: "idb_registry_reset",
		Doc: "Forgets pending and delivered diagnostics, of one document or of all: after a reset, " +
			"diagnostics delivered before are delivered again when published again (use it when the conversation is compacted).",
		Params: []Param{
			{Name: "registry", Kind: Handle, Class: "Registry"},
			{Name: "uri", Kind: OptString, Doc: "the document URI, or NULL for every document"},
		},
		Statuses: []int{StHandle, StPanic},
		Binding:  Method, Class: "Registry", Method: "reset",
	},
	{
		Name: "idb_registry_stats",
		Doc:  "Returns the registry's cumulative counters (publishes accepted, rejected, stale, ...) and current sizes.",
		Params: []Param{
			{Name: "registry", Kind: Handle, Class: "Registry"},
			{Name: "out", Kind: OutString, Doc: "the counters as a JSON object"},
		},
		Statuses: []int{StHandle, StArgument, StPanic},
		Result:   ResultJSON,
		Binding:  Method, Class: "Registry", Method: "stats", PyReturn: "Dict[str, int]", TSReturn: "Record<string, number>",
	},
	{
		Name: "idb_registry_free",
		Doc:  "Frees a registry. The handle is invalid afterwards.",
		Params: []Param{
			{Name: "registry", Kind: Handle, Class: "Registry"},
		},
		Statuses: []int{StHandle, StPanic},
		Binding:  Destructor, Class: "Registry", Method: "close",
	},
	{
		Name: "idb_render_attachment",
		Doc: "Renders a drained attachment as the model-facing text block " +
			"(<new-diagnostics>...</new-diagnostics>), capped at 4,000 characters by default.",
		Params: []Param{
			{Name: "attachment_json", Kind: JSON, Required: true, Doc: "an attachment as returned by a drain", TS: "Attachment | string"},
			{Name: "options_json", Kind: JSON, Doc: "rendering options", Fields: []Field{
				{JSON: "projectDir", Py: "project_dir", PyType: "Optional[str]", TS: "string", Doc: "paths of files inside this directory are shown relative to it"},
				{JSON: "tag", Py: "tag", PyType: "Optional[str]", TS: "string", Doc: `the element wrapping the block (default "new-diagnostics")`},
				{JSON: "maxChars", Py: "max_chars", PyType: "Optional[int]", TS: "number", Doc: "the cap on the whole block in characters (default 4000; negative for none)"},
			}},
			{Name: "out", Kind: OutString, Doc: "the text block"},
		},
		Statuses: []int{StArgument, StPanic},
		Result:   ResultText,
		Binding:  Function, Method: "render_attachment", PyReturn: "str", TSReturn: "string",
	},
}

// wslFields are the options of the path conversions.
var wslFields = []Field{
	{JSON: "distro", Py: "distro", PyType: "Optional[str]", TS: "string", Doc: "the WSL distribution, as in WSL_DISTRO_NAME (empty: drive paths only)"},
	{JSON: "mountRoot", Py: "mount_root", PyType: "Optional[str]", TS: "string", Doc: `where the Windows drives are mounted (default "/mnt")`},
	{JSON: "uncHost", Py: "unc_host", PyType: "Optional[str]", TS: "string", Doc: `the host of the UNC paths written for files inside the distribution (default "wsl$")`},
}

// registryFields are the options of idb_registry_new.
var registryFields = []Field{
	{JSON: "maxPerFile", Py: "max_per_file", PyType: "Optional[int]", TS: "number", Doc: "the most diagnostics of one file in an attachment (default 10)"},
	{JSON: "maxTotal", Py: "max_total", PyType: "Optional[int]", TS: "number", Doc: "the most diagnostics in an attachment (default 30)"},
	{JSON: "maxPerPublish", Py: "max_per_publish", PyType: "Optional[int]", TS: "number", Doc: "the most diagnostics one publish keeps pending, most severe first (default 1000)"},
	{JSON: "maxDocuments", Py: "max_documents", PyType: "Optional[int]", TS: "number", Doc: "how many documents' delivered diagnostics are remembered (default 500)"},
	{JSON: "maxDeliveredPerDocument", Py: "max_delivered_per_document", PyType: "Optional[int]", TS: "number", Doc: "how many delivered diagnostics are remembered per document (default 2000)"},
	{JSON: "minSeverity", Py: "min_severity", PyType: "Optional[Union[str, int]]", TS: "string | number", Doc: `the least severe severity delivered: "Error", "Warning", "Information", "Hint" or 1 to 4 (default Hint: everything)`},
	{JSON: "dropUnnecessary", Py: "drop_unnecessary", PyType: "Optional[bool]", TS: "boolean", Doc: "drop diagnostics tagged Unnecessary (faded-out unused code)"},
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
	{Name: "Position", Doc: "A zero-based LSP position.", Body: `{
  line: number;
  character: number;
}`},
	{Name: "Range", Doc: "An LSP range, end exclusive.", Body: `{
  start: Position;
  end: Position;
}`},
	{
		Name: "Diagnostic",
		Doc:  "One diagnostic as the registry delivers it (Go: lspdiag.Diagnostic): LSP's shape, with code always a string.",
		Body: `{
  range: Range;
  /** 1 error, 2 warning, 3 information, 4 hint. */
  severity: number;
  code?: string;
  codeDescription?: string;
  source?: string;
  message: string;
  tags?: number[];
  relatedInformation?: { location: { uri: string; range: Range }; message: string }[];
}`,
	},
	{
		Name: "PublishDiagnosticsParams",
		Doc:  "The params of textDocument/publishDiagnostics as a language server sends them.",
		Body: `{
  uri: string;
  version?: number | null;
  diagnostics: Array<Omit<Diagnostic, "severity" | "code"> & { severity?: number | string; code?: string | number }>;
}`,
	},
	{
		Name: "FileDiagnostics",
		Doc:  "The new diagnostics of one document in an attachment (Go: lspdiag.FileDiagnostics).",
		Body: `{
  uri: string;
  path?: string;
  diagnostics: Diagnostic[];
  /** New diagnostics of this file left out by the limits. */
  cut: number;
}`,
	},
	{
		Name: "Attachment",
		Doc:  "What a drain hands out (Go: lspdiag.Attachment); the same JSON as idebridge diag --json.",
		Body: `{
  servers: string[];
  files: FileDiagnostics[];
  /** All new diagnostics left out by the limits. */
  cut: number;
  notes?: string[];
}`,
	},
}
