package abispec

// Classes lists the handle classes, in the order the bindings define them.
var Classes = []Class{
	{
		Name: "LSPManager",
		Kind: "LSP manager",
		Doc: "Starts language servers from plugin LSP configuration, keeps the files an agent touches in sync with them, " +
			"and hands out their new diagnostics once per turn. Servers start lazily and are supervised; shutdown stops them all. " +
			"Calls are safe from several threads at once.",
	},
	{
		Name: "IDEClient",
		Kind: "IDE client",
		Doc: "A connection to the MCP server of the user's IDE: list and call its tools and read its notifications. " +
			"Calls are safe from several threads at once. The connection never reconnects: after it is lost, calls fail with ClosedError; connect again.",
	},
	{
		Name: "EditSet",
		Kind: "edit set",
		Doc: "Edits checked by the language servers before they are written: stage edits (nothing is written; the servers get them as unsaved text), " +
			"check what they introduce and resolve in the diagnostics of the edited files and of the files that depend on them, " +
			"then apply them (every file written, or none) or discard them (the servers are put back on the disk's text). " +
			"Made from an LSPManager (its edit_set method); freeing it discards what is still staged. Calls are safe from several threads at once; they run one at a time.",
	},
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
		Doc: "Counts the live handles (registries, IDE clients, LSP managers, edit sets, asynchronous calls) of the whole process.\n\n" +
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
		Binding:   Function, Method: "parse_lockfile", PyReturn: "Lockfile", PyConv: "_lockfile", TSReturn: "Lockfile",
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
		Name: "idb_discover",
		Doc: "Finds the IDEs announced by lockfiles and checks each one: workspace folders against the working directory, " +
			"the IDE's process, its ancestry when running in an IDE's terminal, and its port. " +
			"Returns every lockfile found, usable or not, each with the reasons why not.",
		Params: []Param{
			{Name: "options_json", Kind: JSON, Doc: "where and how to look", Fields: discoverFields},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "the candidates as a JSON array"},
		},
		Statuses:       []int{StError, StTimeout, StArgument, StPanic},
		Blocking:       "every lockfile has been checked (port probes take at most 500 ms each, run concurrently) or the timeout elapses",
		DefaultTimeout: "10 seconds",
		Result:         ResultJSON,
		ResultDoc:      `an array of candidates {"port", "ideName", "transport", "workspaceFolders", "pid", "url", "valid", "reasons", "message", "path", "runningInWindows"?}, the same JSON as idebridge ide list --json`,
		Binding:        Function, Method: "discover", PyReturn: "List[Candidate]", PyConv: "_candidates", TSReturn: "Candidate[]",
	},
	{
		Name: "idb_ide_connect",
		Doc: "Connects to an IDE's MCP server and completes the handshake. With a url, connects there; " +
			"otherwise discovers the IDEs (as idb_discover) and connects to the one on the given port, " +
			"or, without a port, to the only usable one: none or several give IDB_ERR_NOT_FOUND with the reasons.",
		Params: []Param{
			{Name: "options_json", Kind: JSON, Doc: "which IDE and how to talk to it", Fields: connectFields},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out_handle", Kind: OutHandle, Doc: "the new IDE client's handle"},
		},
		Statuses:       []int{StError, StTimeout, StNotFound, StArgument, StPanic},
		Blocking:       "the handshake is done or the timeout elapses (with wait, it first polls discovery once a second)",
		DefaultTimeout: "35 seconds",
		Binding:        Constructor, Class: "IDEClient", Method: "connect",
	},
	{
		Name: "idb_ide_info",
		Doc:  "Returns what the IDE said about itself in the handshake.",
		Params: []Param{
			{Name: "client", Kind: Handle, Class: "IDEClient"},
			{Name: "out", Kind: OutString, Doc: "the IDE's description as a JSON object"},
		},
		Statuses:  []int{StHandle, StArgument, StPanic},
		Result:    ResultJSON,
		ResultDoc: `{"serverInfo": {"name", "version"}, "protocolVersion", "instructions"?, "capabilities"?}`,
		Binding:   Method, Class: "IDEClient", Method: "info", PyReturn: "IDEInfo", PyConv: "_ide_info", TSReturn: "IDEInfo",
	},
	{
		Name: "idb_ide_tools",
		Doc:  "Lists the tools the IDE offers (following pagination).",
		Params: []Param{
			{Name: "client", Kind: Handle, Class: "IDEClient"},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "the tools as a JSON array"},
		},
		Statuses:       []int{StError, StHandle, StTimeout, StArgument, StClosed, StTool, StPanic},
		Blocking:       "the IDE answers or the timeout elapses",
		DefaultTimeout: "the client's call timeout (30 seconds unless callTimeoutMs says otherwise)",
		Result:         ResultJSON,
		ResultDoc:      `an array of tools {"name", "title"?, "description"?, "inputSchema"?, ...} as the IDE sent them`,
		Binding:        Method, Class: "IDEClient", Method: "tools", PyReturn: "List[Tool]", PyConv: "_tools", TSReturn: "Tool[]",
	},
	{
		Name: "idb_ide_call",
		Doc: "Calls one IDE tool. A tool failure (a JSON-RPC error, a result with isError, or an error object in place of a result) " +
			"gives IDB_ERR_TOOL with the IDE's message. openDiff waits for the user: by default it has no deadline.",
		Params: []Param{
			{Name: "client", Kind: Handle, Class: "IDEClient"},
			{Name: "name", Kind: String, Doc: `the tool's name, e.g. "getDiagnostics"`},
			{Name: "args_json", Kind: JSON, Doc: "the tool's arguments as a JSON object (NULL for none)", TS: "Record<string, unknown> | string"},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "the tool's result as JSON"},
		},
		Statuses:       []int{StError, StHandle, StTimeout, StArgument, StClosed, StTool, StPanic},
		Blocking:       "the IDE answers or the timeout elapses",
		DefaultTimeout: "the client's call timeout (30 seconds unless callTimeoutMs says otherwise), and no limit for openDiff",
		Result:         ResultJSON,
		ResultDoc:      `the result {"content": [{"type": "text", "text"}, ...], "structuredContent"?}`,
		Binding:        Method, Class: "IDEClient", Method: "call", PyReturn: "ToolResult", PyConv: "_tool_result", TSReturn: "ToolResult",
		CancelHook: "closeDiffOnCancel",
	},
	{
		Name: "idb_ide_next_notification",
		Doc: "Takes the next notification the IDE sent (selection_changed, at_mentioned, log_event, or any other), " +
			"waiting for one up to the timeout. Notifications are queued as they arrive (the oldest are dropped beyond notificationBuffer).",
		Params: []Param{
			{Name: "client", Kind: Handle, Class: "IDEClient"},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: `the notification {"method", "params"} as JSON`, Null: "no notification arrived within the timeout"},
		},
		Statuses:       []int{StHandle, StArgument, StClosed, StPanic},
		Blocking:       "a notification arrives, the connection ends, or the timeout elapses",
		DefaultTimeout: "no waiting (only what is already queued)",
		Result:         ResultJSON,
		Binding:        Method, Class: "IDEClient", Method: "next_notification", PyReturn: "Optional[Notification]", PyConv: "_notification", TSReturn: "Notification | null",
	},
	{
		Name: "idb_ide_close",
		Doc: "Closes the connection and frees the client: calls pending on other threads fail with IDB_ERR_CLOSED. " +
			"The handle is invalid afterwards.",
		Params: []Param{
			{Name: "client", Kind: Handle, Class: "IDEClient"},
		},
		Statuses: []int{StHandle, StPanic},
		Binding:  Destructor, Class: "IDEClient", Method: "close",
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
			"an empty set clears what the server had pending for the document. " +
			"Params of the wrong shape are an error; a diagnostic of the wrong shape (a severity outside 1 to 4, a negative position, ...) " +
			"is dropped, the others kept, and the next drain notes it.",
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
			"sorted by severity, and bounded by the limits. Its cut counts the new diagnostics it does not show, " +
			"those the per-publish cap dropped included; its notes say which servers' invalid diagnostics were dropped.",
		Params: []Param{
			{Name: "registry", Kind: Handle, Class: "Registry"},
			{Name: "out", Kind: OutString, Doc: "the attachment as JSON", Null: "nothing new is pending and there is nothing to note"},
		},
		Statuses:  []int{StHandle, StArgument, StPanic},
		Result:    ResultJSON,
		ResultDoc: `the attachment {"servers", "files": [{"uri", "path", "diagnostics", "cut"}], "cut", "notes"}, the same JSON as the "attachment" member of idebridge diag --json`,
		Binding:   Method, Class: "Registry", Method: "drain", PyReturn: "Optional[Attachment]", PyConv: "_attachment", TSReturn: "Attachment | null",
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
		Name: "idb_lsp_new",
		Doc: "Creates a language-server manager from a plugin LSP configuration. " +
			"No server starts until a file needs it; its diagnostics feed a registry of the manager's own.",
		Params: []Param{
			{Name: "config_json", Kind: JSON, Required: true, Doc: `the servers, as the content of a .lsp.json (not its path: see configFile): {"name": {"command", "extensionToLanguage", "args"?, "env"?, "settings"?, ...}}`, TS: "Record<string, LSPServerConfig> | string"},
			{Name: "project_dir", Kind: String, Doc: "the project directory (CLAUDE_PROJECT_DIR, and the servers' default workspace folder)"},
			{Name: "options_json", Kind: JSON, Doc: "the manager's settings", Fields: lspFields},
			{Name: "out_handle", Kind: OutHandle, Doc: "the new manager's handle"},
		},
		Statuses: []int{StError, StArgument, StPanic},
		Binding:  Constructor, Class: "LSPManager", Method: "__init__",
	},
	{
		Name: "idb_lsp_open",
		Doc: "Opens a file in its language server with the file's contents on disk, starting the server if needed. " +
			"For a file already open, sends the contents as a change when they differ.",
		Params: []Param{
			{Name: "manager", Kind: Handle, Class: "LSPManager"},
			{Name: "path", Kind: String, Doc: "the file's path"},
			{Name: "timeout_ms", Kind: TimeoutMS},
		},
		Statuses:       lspStatuses,
		Blocking:       "the notification is sent (after starting and initializing the server when needed) or the timeout elapses",
		DefaultTimeout: "60 seconds",
		Binding:        Method, Class: "LSPManager", Method: "open",
	},
	{
		Name: "idb_lsp_change",
		Doc:  "Sends the full new text of a file (opening it first when needed); the document's version increases by one.",
		Params: []Param{
			{Name: "manager", Kind: Handle, Class: "LSPManager"},
			{Name: "path", Kind: String, Doc: "the file's path"},
			{Name: "text", Kind: String, Doc: "the file's new text"},
			{Name: "timeout_ms", Kind: TimeoutMS},
		},
		Statuses:       lspStatuses,
		Blocking:       "the notification is sent or the timeout elapses",
		DefaultTimeout: "60 seconds",
		Binding:        Method, Class: "LSPManager", Method: "change",
	},
	{
		Name: "idb_lsp_save",
		Doc:  "Tells the server that a file was saved, first syncing the file's contents on disk like idb_lsp_open.",
		Params: []Param{
			{Name: "manager", Kind: Handle, Class: "LSPManager"},
			{Name: "path", Kind: String, Doc: "the file's path"},
			{Name: "timeout_ms", Kind: TimeoutMS},
		},
		Statuses:       lspStatuses,
		Blocking:       "the notifications are sent or the timeout elapses",
		DefaultTimeout: "60 seconds",
		Binding:        Method, Class: "LSPManager", Method: "save",
	},
	{
		Name: "idb_lsp_close_file",
		Doc: "Closes a file in its server (didClose) and drops its pending diagnostics; those already delivered are remembered, " +
			"so reopening it unchanged delivers nothing again. Closing a file that is not open does nothing.",
		Params: []Param{
			{Name: "manager", Kind: Handle, Class: "LSPManager"},
			{Name: "path", Kind: String, Doc: "the file's path"},
			{Name: "timeout_ms", Kind: TimeoutMS},
		},
		Statuses:       lspStatuses,
		Blocking:       "the notification is sent or the timeout elapses",
		DefaultTimeout: "60 seconds",
		Binding:        Method, Class: "LSPManager", Method: "close_file",
	},
	{
		Name: "idb_lsp_settle",
		Doc: "Waits until the diagnostics of an open file are known to be current, and says how it knew: its server answered a pull " +
			"for the file's latest version (\"pulled\"), published for it (\"published\"), reported its work done (\"progress-ended\"), " +
			"or, for a server that sends no versions, published after the change and then stayed quiet for the period learned for it (\"quiet\"). " +
			"A file just opened is never current before its server reported on it. Running out of time is not an error: " +
			"the result says \"timed-out\" and the next drain notes that the file's diagnostics are unknown or may be stale.",
		Params: []Param{
			{Name: "manager", Kind: Handle, Class: "LSPManager"},
			{Name: "path", Kind: String, Doc: "the file's path"},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "the outcome as a JSON object"},
		},
		Statuses:       lspStatuses,
		Blocking:       "the diagnostics are current or the timeout elapses",
		DefaultTimeout: "the manager's settle timeout (10 seconds unless settleTimeoutMs says otherwise)",
		Result:         ResultJSON,
		ResultDoc:      `{"path", "uri", "server", "version", "freshness", "fresh", "elapsedNs", "reason", "status"}`,
		Binding:        Method, Class: "LSPManager", Method: "settle", PyReturn: "SettleResult", PyConv: "_settle_result", TSReturn: "SettleResult",
	},
	{
		Name: "idb_lsp_drain",
		Doc: "Takes the diagnostics that are new since the last drain, as idb_registry_drain does, " +
			"with notes saying which files' diagnostics may be stale or incomplete.",
		Params: []Param{
			{Name: "manager", Kind: Handle, Class: "LSPManager"},
			{Name: "out", Kind: OutString, Doc: "the attachment as JSON", Null: "there is nothing new and nothing to note"},
		},
		Statuses:  []int{StHandle, StArgument, StPanic},
		Result:    ResultJSON,
		ResultDoc: `the attachment, the same JSON as the "attachment" member of idebridge diag --json`,
		Binding:   Method, Class: "LSPManager", Method: "drain", PyReturn: "Optional[Attachment]", PyConv: "_attachment", TSReturn: "Attachment | null",
	},
	{
		Name: "idb_lsp_diagnose",
		Doc: "Answers the diagnostics of files, whole: opens each in its server (those not open before are closed again at the end), " +
			"waits until its diagnostics are known to be current (as idb_lsp_settle does, waiting for the server's work-done progress), " +
			"and returns every diagnostic of the files that stands, with a delivered memory of the call's own: " +
			"what idb_lsp_drain delivered before, here or to another client, is answered again, and idb_lsp_drain is not affected. " +
			"It is what idebridge diag prints, and it works on a manager opened with \"runtime\": true, on the runtime's shared servers. " +
			"A file no server serves, or that cannot be opened, is an error of that file in the answer, not of the call.",
		Params: []Param{
			{Name: "manager", Kind: Handle, Class: "LSPManager"},
			{Name: "files_json", Kind: JSON, Required: true, Doc: "the files, as a JSON array of paths (relative to the manager's project directory, or absolute), at most 1000",
				PyType: "Union[List[str], str]", TS: "string[] | string"},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "the answer as a JSON object"},
		},
		Statuses:       lspStatuses,
		Blocking:       "every file's diagnostics are known or the timeout elapses",
		DefaultTimeout: "2 minutes",
		Result:         ResultJSON,
		ResultDoc: `{"attachment": the attachment as idb_lsp_drain's (null when there is nothing), "files": [{"path", "server"?, ` +
			`"settle"? (as idb_lsp_settle's; its "status" says whether "no diagnostics" can be said), "error"?, "noServer"?}] in the call's order}`,
		Binding: Method, Class: "LSPManager", Method: "diagnose", PyReturn: "Diagnosis", PyConv: "_diagnosis", TSReturn: "Diagnosis",
	},
	{
		Name: "idb_lsp_servers",
		Doc:  "Returns a snapshot of every configured server: its state, process id, restarts and extensions.",
		Params: []Param{
			{Name: "manager", Kind: Handle, Class: "LSPManager"},
			{Name: "out", Kind: OutString, Doc: "the servers as a JSON array"},
		},
		Statuses:  []int{StHandle, StArgument, StPanic},
		Result:    ResultJSON,
		ResultDoc: `an array of {"name", "state", "pid"?, "restarts", "positionEncoding"?, "extensions"}`,
		Binding:   Method, Class: "LSPManager", Method: "servers", PyReturn: "List[LSPServerStatus]", PyConv: "_server_statuses", TSReturn: "LSPServerStatus[]",
	},
	{
		Name: "idb_lsp_load_claude_code",
		Doc: "Replaces the manager's servers with those Claude Code would load for the project: the language servers of the plugins " +
			"installed for it (plugins/installed_plugins.json) and enabled by enabledPlugins in the user, project and local settings, " +
			"later scopes winning, each read from its install path with its marketplace entry. Servers are named \"plugin:<plugin>:<server>\". " +
			"The project's own settings and its project- and local-scoped installs count only if the user trusted the project in Claude Code " +
			"(projects[<git root or project>].hasTrustDialogAccepted in .claude.json), or with trustProject; the result's trust says what was ignored. " +
			"Running servers whose configuration is unchanged keep running; others are stopped. No server starts until a file needs it.\n\n" +
			"It fails only for a bad handle or options: problems with the installation (unreadable files, invalid entries, extension conflicts) " +
			"are in the result's errors, and every plugin is in its plugins with the reason when it contributes nothing.",
		Params: []Param{
			{Name: "manager", Kind: Handle, Class: "LSPManager"},
			{Name: "options_json", Kind: JSON, Doc: "where the installation is", Fields: claudeCodeFields},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "what was loaded, as a JSON object"},
		},
		Statuses:       []int{StHandle, StTimeout, StArgument, StClosed, StPanic},
		Blocking:       "the servers that are no longer configured have stopped",
		DefaultTimeout: "the servers' own shutdown timeouts",
		Result:         ResultJSON,
		ResultDoc: `{"configDir", "projectDir", "servers": [{"name", "plugin", "marketplace", "file", "root", "extensions", "command", "args", "resolved"?, "commandError"?, "installHint"?}], ` +
			`"plugins": [{"id", "name", "marketplace", "enabled", "enabledScope"?, "enabledFile"?, "installed", "installScope"?, "projectPath"?, "root"?, "version"?, "servers", "extensions", "reason"?, "ignoredFile"?, "ignoredEnabled"?}], ` +
			`"trust": {"trusted", "source"?, "key"?, "file"?, "reason"?, "ignored"?: [{"scope", "file", "entries"}], "ignoredInstalls"?}, "unlisted", "errors": [string]}`,
		Binding: Method, Class: "LSPManager", Method: "load_claude_code", PyReturn: "Dict[str, Any]", TSReturn: "ClaudeCodeReport",
	},
	{
		Name: "idb_lsp_shutdown",
		Doc: "Stops every server (a graceful shutdown within the timeout, then their process groups are killed, so nothing is left behind) " +
			"and frees the manager. The handle is invalid afterwards, even when the timeout elapsed.",
		Params: []Param{
			{Name: "manager", Kind: Handle, Class: "LSPManager"},
			{Name: "timeout_ms", Kind: TimeoutMS},
		},
		Statuses:       []int{StHandle, StTimeout, StPanic},
		Blocking:       "every server has stopped",
		DefaultTimeout: "the servers' own shutdown timeouts (5 seconds each unless configured)",
		Binding:        Destructor, Class: "LSPManager", Method: "shutdown",
	},
	// Navigation on the manager's servers (cabi/export_nav.go).
	navFunc("definition", "Where the symbol at a place is defined (textDocument/definition)."+navPageDoc, withFields(navPosFields, navPageFields...), "NavLocations"),
	navFunc("declaration", "Where the symbol at a place is declared (textDocument/declaration): in C and C++ the header's declaration rather than the definition."+navPageDoc,
		withFields(navPosFields, navPageFields...), "NavLocations"),
	navFunc("type_definition", "Where the type of the symbol at a place is defined (textDocument/typeDefinition)."+navPageDoc, withFields(navPosFields, navPageFields...), "NavLocations"),
	navFunc("implementation", "The implementations of the interface, abstract method or virtual function at a place (textDocument/implementation)."+navPageDoc,
		withFields(navPosFields, navPageFields...), "NavLocations"),
	navFunc("references", "The references to the symbol at a place (textDocument/references), sorted by file and position."+navPageDoc,
		withFields(navPosFields, append([]Field{{JSON: "includeDeclaration", Py: "include_declaration", PyType: "Optional[bool]", TS: "boolean", Doc: "include the declaration (default: no)"}}, navPageFields...)...), "NavLocations"),
	navFunc("hover", "What the server shows when hovering over a place (textDocument/hover), as Markdown.", navPosFields, "NavHover"),
	navFunc("document_symbols", "The symbols declared in a file, as a tree (textDocument/documentSymbol).", []Field{navPathField, navMaxField}, "NavSymbols"),
	navFunc("workspace_symbols", "The symbols of the workspace matching a query (workspace/symbol): from the server of path when given "+
		"(started and given the file when needed), else from every running server."+navPageDoc, []Field{
		{JSON: "query", Py: "query", PyType: "str", TS: "string", Required: true, Doc: "the query (a name or part of one)"},
		{JSON: "path", Py: "path", PyType: "Optional[str]", TS: "string", Doc: "a file whose server to ask (default: every running server)"},
		navMaxField, navPageFields[0], navPageFields[1],
	}, "NavSymbols"),
	navFunc("prepare_call_hierarchy", "The call hierarchy items at a place (textDocument/prepareCallHierarchy): the function or method named there.", navPosFields, "NavCallHierarchy"),
	navFunc("incoming_calls", "The callers of the function or method at a place, with the call sites (callHierarchy/incomingCalls)."+navPageDoc,
		withFields(navPosFields, navPageFields...), "NavCallHierarchy"),
	navFunc("outgoing_calls", "What the function or method at a place calls, with the call sites (callHierarchy/outgoingCalls)."+navPageDoc,
		withFields(navPosFields, navPageFields...), "NavCallHierarchy"),
	navFunc("prepare_type_hierarchy", "The type hierarchy items at a place (textDocument/prepareTypeHierarchy): the type named there. "+
		"A server that offers no type hierarchy fails with IDB_ERR.", navPosFields, "NavTypeHierarchy"),
	navFunc("supertypes", "The direct supertypes of the type at a place: the classes it extends, the interfaces it implements "+
		"(prepareTypeHierarchy, then typeHierarchy/supertypes). A server that offers no type hierarchy fails with IDB_ERR."+navPageDoc,
		withFields(navPosFields, navPageFields...), "NavTypeHierarchy"),
	navFunc("subtypes", "The direct subtypes of the type at a place: the classes that extend it, the types that implement the interface "+
		"(prepareTypeHierarchy, then typeHierarchy/subtypes). A server that offers no type hierarchy fails with IDB_ERR."+navPageDoc,
		withFields(navPosFields, navPageFields...), "NavTypeHierarchy"),
	navFunc("rename", "Asks the server how to rename the symbol at a place (textDocument/rename) and returns its edit as proposed file texts "+
		"with a unified diff. Nothing is written: pass the result to apply_rename (idb_lsp_apply_rename).",
		append(navPosFields[:len(navPosFields):len(navPosFields)], Field{JSON: "newName", Py: "new_name", PyType: "str", TS: "string", Required: true, Doc: "the new name"}), "NavRenameProposal"),
	{
		Name: "idb_lsp_apply_rename",
		Doc: "Writes the files of a rename proposal (as idb_lsp_rename returned it), all or none: " +
			"when a file changed on disk since the proposal (or was replaced, even by a link), or one cannot be written, " +
			"nothing is written (files already replaced are put back) and the call fails with IDB_ERR naming that file. " +
			"A proposal with a file outside the manager's roots (option roots; default the project directory) is refused whole, naming those files. " +
			"The files written that are open in their servers are synced with them.",
		Params: []Param{
			{Name: "manager", Kind: Handle, Class: "LSPManager"},
			{Name: "proposal_json", Kind: JSON, Required: true, Doc: "the proposal idb_lsp_rename returned", PyType: "NavRenameProposal", TS: "NavRenameProposal | string"},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "each file's outcome, as a JSON object"},
		},
		Statuses:       lspStatuses,
		Blocking:       "every file is written or refused",
		DefaultTimeout: "no limit",
		Result:         ResultJSON,
		ResultDoc:      `{"files": [{"path", "status" ("written")}], "written", "text"}`,
		Binding:        Method, Class: "LSPManager", Method: "apply_rename", PyReturn: "NavRenameApplied", PyConv: "_nav_rename_applied", TSReturn: "NavRenameApplied",
	},
	{
		Name: "idb_render_attachment",
		Doc: "Renders a drained attachment as the model-facing text block " +
			"(<new-diagnostics>...</new-diagnostics>), capped at 4,000 characters by default.",
		Params: []Param{
			{Name: "attachment_json", Kind: JSON, Required: true, Doc: "an attachment as returned by a drain", PyType: "Union[Attachment, Dict[str, Any], str]", TS: "Attachment | string"},
			{Name: "options_json", Kind: JSON, Doc: "rendering options", Fields: renderFields},
			{Name: "out", Kind: OutString, Doc: "the text block"},
		},
		Statuses: []int{StArgument, StPanic},
		Result:   ResultText,
		Binding:  Function, Method: "render_attachment", PyReturn: "str", TSReturn: "string",
	},

	// The agent API: edit review, diagnostics around an edit, typed
	// getDiagnostics, auto-connect, stale lockfiles, and the LSP manager's
	// reload (cabi/export_review.go, export_editdiag.go,
	// export_autoconnect.go, export_lspreload.go).
	{
		Name: "idb_ide_propose_edit",
		Doc: "Shows a proposed edit of one file in the IDE's diff viewer (openDiff), waits until the user acts, and applies the outcome: " +
			"accepted (FILE_SAVED: the IDE's final text, which the user may have edited, is written), tab closed (TAB_CLOSED: the proposal is written), " +
			"rejected (DIFF_REJECTED) or anything else (the file is untouched); then closes the tab. The write is atomic and keeps the file's mode. " +
			"When the file changed on disk since the edit's base (by default, since the proposal), nothing is written and the result says so in \"conflict\". " +
			"Edits proposed through one client are cancelled together by idb_ide_cancel_all_edits; " +
			"cancelling the asynchronous form (idb_call_cancel) closes the edit's tab and leaves the file untouched.",
		Params: []Param{
			{Name: "client", Kind: Handle, Class: "IDEClient"},
			{Name: "path", Kind: String, Doc: "the file to change (it need not exist: the edit creates it)"},
			{Name: "new_text", Kind: Bytes, Doc: "the proposed content of the whole file", PyType: "Union[str, bytes]", TS: "string | Uint8Array"},
			{Name: "options_json", Kind: JSON, Doc: "the edit's options", Fields: editFields},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "the outcome as a JSON object"},
		},
		Statuses:       []int{StError, StHandle, StTimeout, StArgument, StClosed, StTool, StPanic},
		Blocking:       "the user accepts, rejects or closes the diff in the IDE, the edits are cancelled, or the timeout elapses",
		DefaultTimeout: "no limit: the user takes as long as they like",
		Result:         ResultJSON,
		ResultDoc:      editResultDoc,
		Binding:        Method, Class: "IDEClient", Method: "propose_edit", PyReturn: "EditResult", PyConv: "_edit_outcome", TSReturn: "EditResult", JSConv: "editOutcome",
	},
	{
		Name: "idb_ide_cancel_all_edits",
		Doc: "Cancels every edit under review through this client, as the user's ESC does: calls closeAllDiffTabs once and ends the pending " +
			"idb_ide_propose_edit calls, which return \"rejected\" with \"cancelled\" true and their files untouched. " +
			"closeAllDiffTabs is called even when nothing is pending, since the IDE may still show tabs (call it at the start of each user turn).",
		Params: []Param{
			{Name: "client", Kind: Handle, Class: "IDEClient"},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "how many edits were cancelled, as JSON"},
		},
		Statuses:       []int{StError, StHandle, StTimeout, StArgument, StClosed, StTool, StPanic},
		Blocking:       "the IDE answers closeAllDiffTabs or the timeout elapses",
		DefaultTimeout: "the client's call timeout (30 seconds unless callTimeoutMs says otherwise)",
		Result:         ResultJSON,
		ResultDoc:      `{"cancelled": N}`,
		Binding:        Method, Class: "IDEClient", Method: "cancel_all_edits", PyReturn: "int", PyConv: "_cancelled_count", TSReturn: "number", JSConv: "cancelledCount",
	},
	{
		Name: "idb_apply_edit",
		Doc: "Writes an edit directly, without an IDE (when none is connected): atomically, keeping the file's mode, " +
			"and refusing, with the result's \"conflict\" saying why, when the file no longer matches the edit's base.",
		Params: []Param{
			{Name: "path", Kind: String, Doc: "the file to change (it need not exist)"},
			{Name: "new_text", Kind: Bytes, Doc: "the new content of the whole file", PyType: "Union[str, bytes]", TS: "string | Uint8Array"},
			{Name: "options_json", Kind: JSON, Doc: "the edit's options", Fields: editFields[1:]},
			{Name: "out", Kind: OutString, Doc: "the outcome as a JSON object"},
		},
		Statuses:  []int{StError, StArgument, StPanic},
		Result:    ResultJSON,
		ResultDoc: editResultDoc,
		Binding:   Function, Method: "apply_edit", PyReturn: "EditResult", PyConv: "_edit_outcome", TSReturn: "EditResult", JSConv: "editOutcome",
	},
	{
		Name: "idb_file_state",
		Doc: "Records what a file looks like now (whether it exists, its size, modification time, mode and SHA-256), " +
			"to pass as an edit's base when the agent read the file earlier than it proposes the edit. A missing file is a state too.",
		Params: []Param{
			{Name: "path", Kind: String, Doc: "the file"},
			{Name: "out", Kind: OutString, Doc: "the state as a JSON object"},
		},
		Statuses:  []int{StError, StArgument, StPanic},
		Result:    ResultJSON,
		ResultDoc: `{"path", "exists", "size", "modTime", "mode", "sha256"?, "id"?}`,
		Binding:   Function, Method: "file_state", PyReturn: "FileState", PyConv: "_file_state", TSReturn: "FileState",
	},
	{
		Name: "idb_ide_snapshot_diagnostics",
		Doc: "Before an edit, takes the IDE's diagnostics of a file (getDiagnostics with its URI) and the file's text. " +
			"A file the IDE has not open has none yet. Pass the snapshot to idb_ide_new_diagnostics after the edit.",
		Params: []Param{
			{Name: "client", Kind: Handle, Class: "IDEClient"},
			{Name: "path", Kind: String, Doc: "the file about to be edited"},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "the snapshot as a JSON object"},
		},
		Statuses:       []int{StError, StHandle, StTimeout, StArgument, StClosed, StTool, StPanic},
		Blocking:       "the IDE answers or the timeout elapses",
		DefaultTimeout: "the client's call timeout (30 seconds unless callTimeoutMs says otherwise)",
		Result:         ResultJSON,
		ResultDoc:      `{"path", "uri", "text", "diagnostics": [...], "taken"}`,
		Binding:        Method, Class: "IDEClient", Method: "snapshot_diagnostics", PyReturn: "DiagnosticsSnapshot", PyConv: "_snapshot", TSReturn: "DiagnosticsSnapshot",
	},
	{
		Name: "idb_ide_new_diagnostics",
		Doc: "After an edit, fetches the file's diagnostics again and returns those the edit introduced: diagnostics of the snapshot " +
			"that only moved because lines were inserted or deleted above them are not new (the file's old and new text are lined up), " +
			"and those the IDE reports under the URIs of the file's diff views count as the file's. " +
			"The result includes the model-facing <new-diagnostics> block, empty when nothing is new.",
		Params: []Param{
			{Name: "client", Kind: Handle, Class: "IDEClient"},
			{Name: "snapshot_json", Kind: JSON, Required: true, Doc: "the snapshot idb_ide_snapshot_diagnostics returned", PyType: "DiagnosticsSnapshot", TS: "DiagnosticsSnapshot | string"},
			{Name: "options_json", Kind: JSON, Doc: "how to render the block", Fields: renderFields},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "the new diagnostics as a JSON object"},
		},
		Statuses:       []int{StError, StHandle, StTimeout, StArgument, StClosed, StTool, StPanic},
		Blocking:       "the IDE answers or the timeout elapses",
		DefaultTimeout: "the client's call timeout (30 seconds unless callTimeoutMs says otherwise)",
		Result:         ResultJSON,
		ResultDoc:      `{"path", "uri", "diagnostics": [...], "moved", "rendered"}`,
		Binding:        Method, Class: "IDEClient", Method: "new_diagnostics", PyReturn: "NewDiagnostics", PyConv: "_new_diagnostics", TSReturn: "NewDiagnostics",
	},
	{
		Name: "idb_ide_get_diagnostics",
		Doc: "Asks the IDE for the diagnostics of one file, or of every file it has open, and decodes its answer: " +
			"severities as numbers (1 error to 4 hint) whichever way the IDE wrote them, codes as text, paths as the agent sees them.",
		Params: []Param{
			{Name: "client", Kind: Handle, Class: "IDEClient"},
			{Name: "path", Kind: OptString, Doc: "a file's path or file:// URI, or NULL for every file the IDE has open"},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "the diagnostics as a JSON array"},
		},
		Statuses:       []int{StError, StHandle, StTimeout, StArgument, StClosed, StTool, StPanic},
		Blocking:       "the IDE answers or the timeout elapses",
		DefaultTimeout: "the client's call timeout (30 seconds unless callTimeoutMs says otherwise)",
		Result:         ResultJSON,
		ResultDoc:      `an array of {"uri", "path"?, "diagnostics": [...]}`,
		Binding:        Method, Class: "IDEClient", Method: "get_diagnostics", PyReturn: "List[FileDiagnostics]", PyConv: "_file_diagnostics_list", TSReturn: "FileDiagnostics[]",
	},
	{
		Name: "idb_should_auto_connect",
		Doc: "Decides, as Claude Code does, whether to connect to an IDE without being asked: a falsy CLAUDE_CODE_AUTO_CONNECT_IDE (0, false, no, off) " +
			"turns it off whatever else asks; otherwise the caller's own setting, running in an IDE's terminal, CLAUDE_CODE_SSE_PORT, " +
			"or a truthy CLAUDE_CODE_AUTO_CONNECT_IDE turns it on. The result says which rule decided.",
		Params: []Param{
			{Name: "options_json", Kind: JSON, Doc: "the caller's setting and the environment", Fields: []Field{
				{JSON: "requested", Py: "requested", PyType: "Optional[bool]", TS: "boolean", Doc: "the caller's own setting (an autoConnectIde configuration key or an --ide flag)"},
				{JSON: "env", Py: "env", PyType: "Optional[Dict[str, str]]", TS: "Record<string, string>", Doc: envDoc, PyDefault: "dict(os.environ)", JSDefault: "{ ...process.env }"},
			}},
			{Name: "out", Kind: OutString, Doc: "the decision as a JSON object"},
		},
		Statuses:  []int{StArgument, StPanic},
		Result:    ResultJSON,
		ResultDoc: `{"autoConnect", "why"}`,
		Binding:   Function, Method: "should_auto_connect", PyReturn: "AutoConnectDecision", PyConv: "_auto_connect_decision", TSReturn: "AutoConnectDecision",
	},
	{
		Name: "idb_wait_for_ide",
		Doc: "Looks for exactly one usable IDE, running discovery every poll interval until one is the only usable one, as auto-connect does. " +
			"When the time runs out with none or several usable, it fails with IDB_ERR_NOT_FOUND and a message listing every lockfile seen, " +
			"why each was or was not usable, and the directories searched. Connect to the candidate with idb_ide_connect and its port.",
		Params: []Param{
			{Name: "options_json", Kind: JSON, Doc: "where and how to look", Fields: append(discoverFields[:len(discoverFields):len(discoverFields)],
				Field{JSON: "pollIntervalMs", Py: "poll_interval", PyType: "Optional[float]", TS: "number", Seconds: true, Doc: "how often discovery runs (default 1 second)"})},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "the candidate and every lockfile of the last look, as JSON"},
		},
		Statuses:       []int{StError, StTimeout, StNotFound, StArgument, StPanic},
		Blocking:       "exactly one IDE is usable or the timeout (how long to look) elapses",
		DefaultTimeout: "30 seconds",
		Result:         ResultJSON,
		ResultDoc:      `{"candidate": {...}, "candidates": [...]}, candidates as idb_discover returns them`,
		Binding:        Function, Method: "wait_for_ide", PyReturn: "IDEWaitResult", PyConv: "_wait_result", TSReturn: "IDEWaitResult",
	},
	{
		Name: "idb_remove_stale",
		Doc: "Discovers the IDE lockfiles and deletes the stale ones, by the rules deployed agents follow: a lockfile that does not parse, " +
			"one whose IDE process is gone (outside WSL), and one without a pid whose port refuses connections. " +
			"Each condition is checked again at removal, and a lockfile rewritten since it was listed, or refused for its permissions, is kept. " +
			"Listing (idb_discover) never deletes anything; this is the only function that does.",
		Params: []Param{
			{Name: "options_json", Kind: JSON, Doc: "where to look", Fields: discoverFields},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "the paths removed, as JSON"},
		},
		Statuses:       []int{StError, StTimeout, StArgument, StPanic},
		Blocking:       "every lockfile has been checked and the stale ones removed, or the timeout elapses",
		DefaultTimeout: "10 seconds",
		Result:         ResultJSON,
		ResultDoc:      `{"removed": ["path", ...]}`,
		Binding:        Function, Method: "remove_stale", PyReturn: "List[str]", PyConv: "_removed", TSReturn: "string[]", JSConv: "removedPaths",
	},
	{
		Name: "idb_lsp_reload",
		Doc: "Replaces the manager's configuration (plugins changed): servers whose configuration vanished or changed are stopped and their documents forgotten, " +
			"servers whose configuration is unchanged keep running with their documents, and new servers start on first use. " +
			"The configuration is read as idb_lsp_new read the first (same project directory and user options).",
		Params: []Param{
			{Name: "manager", Kind: Handle, Class: "LSPManager"},
			{Name: "config_json", Kind: JSON, Required: true, Doc: "the servers, as a .lsp.json document", TS: "Record<string, LSPServerConfig> | string"},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "the new configuration's problems, as JSON"},
		},
		Statuses:       []int{StHandle, StTimeout, StArgument, StClosed, StPanic},
		Blocking:       "the servers that changed have stopped or the timeout elapses",
		DefaultTimeout: "60 seconds",
		Result:         ResultJSON,
		ResultDoc:      `{"problems": ["message", ...]} (extension conflicts; empty when none)`,
		Binding:        Method, Class: "LSPManager", Method: "reload", PyReturn: "List[str]", PyConv: "_problems", TSReturn: "string[]", JSConv: "problemList",
	},

	// Verified edits: an edit set stages edits in the manager's servers,
	// checks what they break or fix, then discards or writes them; and
	// what an editing agent asks the servers besides (cabi/export_edit.go).
	{
		Name: "idb_edit_set_new",
		Doc: "Creates an empty edit set on a manager: edits staged in it reach the manager's servers as unsaved text, " +
			"are checked against the diagnostics of the text on disk, and are then written all at once or discarded. " +
			"One set at a time has edits staged on a manager: another set's idb_edit_set_stage waits until the first is applied, " +
			"discarded or freed (or its own timeout ends), so free a set when done with it. After the manager is shut down, " +
			"the set's calls fail with IDB_ERR_CLOSED, and freeing it still succeeds.",
		Params: []Param{
			{Name: "manager", Kind: Handle, Class: "LSPManager"},
			{Name: "out_handle", Kind: OutHandle, Doc: "the new edit set's handle"},
		},
		Statuses: []int{StHandle, StArgument, StPanic},
		Binding:  Constructor, Class: "EditSet", Method: "edit_set",
	},
	{
		Name: "idb_edit_set_stage",
		Doc: "Stages edits: applies them in order to the staged texts of their files (a file's first edit to its text on disk) " +
			"and sends the results to the files' servers as unsaved changes; nothing is written. " +
			"Before that it records the diagnostics the disk's text has in the files the edits may affect " +
			"(those that reference the symbols whose declarations the edits touch, and the other files of the edited files' directories), " +
			"the baseline idb_edit_set_check compares with. Stage several times to add edits; they are judged together.\n\n" +
			"An edit that cannot be applied (old_string occurring not exactly once, an unknown symbol, a delete of a symbol still referenced, " +
			"a file that does not exist) fails the call with IDB_ERROR naming the edit: none of its edits is staged, those staged before stay. " +
			"Edits that are not a JSON array of edits, or whose members do not go together, fail with IDB_ERR_ARGUMENT and stage nothing.",
		Params: []Param{
			{Name: "set", Kind: Handle, Class: "EditSet"},
			{Name: "edits_json", Kind: JSON, Required: true, Doc: editsDoc, PyType: "Union[List[Dict[str, Any]], str]", TS: "EditItem[] | string"},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "the staged files, as a JSON array"},
		},
		Statuses:       lspStatuses,
		Blocking:       "the edits are staged (after starting servers and waiting for the baseline diagnostics) or the timeout elapses",
		DefaultTimeout: "2 minutes",
		Result:         ResultJSON,
		ResultDoc:      `["path", ...]: the absolute paths of every file staged so far, in the order first staged`,
		Binding:        Method, Class: "EditSet", Method: "stage", PyReturn: "List[str]", TSReturn: "string[]",
	},
	{
		Name: "idb_edit_set_check",
		Doc: "Checks the staged edits: waits until the diagnostics of every checked file are known for the staged texts " +
			"(as idb_lsp_settle does) and returns, per file, the diagnostics introduced and resolved against those of the text on disk: " +
			"the edited files, then their dependents, at most 50 files (\"unchecked\" counts the dependents left out). " +
			"Each file says how far its diagnostics can be trusted (\"complete\", \"partial\", \"unknown\", \"server-down\"). Nothing is written.",
		Params: []Param{
			{Name: "set", Kind: Handle, Class: "EditSet"},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "the check as a JSON object"},
		},
		Statuses:       lspStatuses,
		Blocking:       "the diagnostics of every checked file are known or the timeout elapses",
		DefaultTimeout: "2 minutes",
		Result:         ResultJSON,
		ResultDoc:      editCheckDoc,
		Binding:        Method, Class: "EditSet", Method: "check", PyReturn: "EditCheck", PyConv: "_edit_check", TSReturn: "EditCheck",
	},
	{
		Name: "idb_edit_set_diff",
		Doc: "Returns the unified diff of every staged file against its text on disk, paths relative to the manager's project directory " +
			"(\"\" when nothing is staged). It waits for a call on the same set that is still running on another thread.",
		Params: []Param{
			{Name: "set", Kind: Handle, Class: "EditSet"},
			{Name: "out", Kind: OutString, Doc: "the diff"},
		},
		Statuses: []int{StHandle, StArgument, StPanic},
		Result:   ResultText,
		Binding:  Method, Class: "EditSet", Method: "diff", PyReturn: "str", TSReturn: "string",
	},
	{
		Name: "idb_edit_set_discard",
		Doc: "Drops every staged edit and puts the servers back on the disk's text, so that their next diagnostics are the disk's " +
			"and the next idb_lsp_drain delivers none of the staged text's. The set is then empty and usable again; nothing was written.",
		Params: []Param{
			{Name: "set", Kind: Handle, Class: "EditSet"},
			{Name: "timeout_ms", Kind: TimeoutMS},
		},
		Statuses:       lspStatuses,
		Blocking:       "the servers have the disk's text again and their diagnostics of it are known, or the timeout elapses",
		DefaultTimeout: "60 seconds",
		Binding:        Method, Class: "EditSet", Method: "discard",
	},
	{
		Name: "idb_edit_set_apply",
		Doc: "Writes every staged file, all or none, directly (no IDE review): each file must still be what it was on disk when first staged " +
			"and lie inside the manager's roots (option roots; default the project directory); otherwise nothing is written, " +
			"the call fails with IDB_ERROR naming the file, and the edits stay staged (discard them, or apply again). " +
			"After the write the servers are told the files were saved and the written files are checked again: the result's check " +
			"is what the write changed in the diagnostics. When that check fails, the files are written all the same: " +
			"the result says so in \"checkError\" and its check is null. The set is then empty.",
		Params: []Param{
			{Name: "set", Kind: Handle, Class: "EditSet"},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "what was written, as a JSON object"},
		},
		Statuses:       lspStatuses,
		Blocking:       "the files are written and checked, or refused, or the timeout elapses",
		DefaultTimeout: "2 minutes",
		Result:         ResultJSON,
		ResultDoc:      `{"written": ["path", ...], "check": {...} | null, "checkError"?, "text"}: check as idb_edit_set_check returns it, with the diff written`,
		Binding:        Method, Class: "EditSet", Method: "apply", PyReturn: "EditApplied", PyConv: "_edit_applied", TSReturn: "EditApplied",
	},
	{
		Name: "idb_edit_set_free",
		Doc: "Discards what is staged (as idb_edit_set_discard) and frees the edit set. The handle is invalid afterwards, " +
			"even when the discard failed or timed out. A set whose manager was shut down is freed without error.",
		Params: []Param{
			{Name: "set", Kind: Handle, Class: "EditSet"},
			{Name: "timeout_ms", Kind: TimeoutMS},
		},
		Statuses:       lspStatuses,
		Blocking:       "the discard is done (at once when nothing is staged) or the timeout elapses",
		DefaultTimeout: "60 seconds",
		Binding:        Destructor, Class: "EditSet", Method: "free",
	},
	{
		Name: "idb_lsp_code_actions",
		Doc: "The code actions the server of a file offers for a line: quick fixes for the diagnostics on it (a missing import, ...), " +
			"organize imports, refactorings; of the file as it is on disk, or as staged while an edit set has it. " +
			"Stage one in an edit set as {\"file\", \"line\", \"fix\": its title}.",
		Params: []Param{
			{Name: "manager", Kind: Handle, Class: "LSPManager"},
			{Name: "request_json", Kind: JSON, Doc: "the file and line", Fields: []Field{
				navPathField,
				{JSON: "line", Py: "line", PyType: "int", TS: "number", Required: true, Doc: "the 1-based line"},
			}},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "the code actions as a JSON object"},
		},
		Statuses:       lspStatuses,
		Blocking:       "the server answered (after starting, initializing and loading when needed) or the timeout elapses",
		DefaultTimeout: "60 seconds",
		Result:         ResultJSON,
		ResultDoc: `{"op", "server", "incomplete"?, "reason"?, "status", "path", "line", "actions": [{"title", "kind"?, "preferred"?, "fixes"?, "disabled"?}]}: ` +
			`"fixes" are the messages of the diagnostics an action fixes, "disabled" why the server cannot apply it here`,
		Binding: Method, Class: "LSPManager", Method: "code_actions", PyReturn: "CodeActions", PyConv: "_code_actions", TSReturn: "CodeActions",
	},
	{
		Name: "idb_lsp_symbol_source",
		Doc: "The current text of a symbol's declaration in a file, by name path (\"Square.Area\", \"main\"; \"[2]\" after the path " +
			"picks the second of several), found through the server's document symbols: of the file as it is on disk, or as staged " +
			"while an edit set has it. An unknown symbol fails with IDB_ERROR naming the symbols there are.",
		Params: []Param{
			{Name: "manager", Kind: Handle, Class: "LSPManager"},
			{Name: "request_json", Kind: JSON, Doc: "the file and the symbol", Fields: []Field{
				navPathField,
				{JSON: "symbol", Py: "symbol", PyType: "str", TS: "string", Required: true, Doc: "the symbol's name path: Type.Method, a function's name, ..."},
			}},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "the symbol's text as a JSON object"},
		},
		Statuses:       lspStatuses,
		Blocking:       "the server answered (after starting, initializing and loading when needed) or the timeout elapses",
		DefaultTimeout: "60 seconds",
		Result:         ResultJSON,
		ResultDoc:      `{"path", "symbol", "line", "endLine", "text"}: 1-based lines; text from the start of the declaration's first line to its end`,
		Binding:        Method, Class: "LSPManager", Method: "symbol_source", PyReturn: "SymbolSource", PyConv: "_symbol_source", TSReturn: "SymbolSource",
	},
}

// editsDoc documents the edits an edit set stages (lsp.EditItem).
const editsDoc = `the edits, a JSON array of objects, each one of: {"file", "old_string", "new_string"} (old_string occurs exactly once in the file as staged so far; ` +
	`new_string "" deletes it), {"file", "new_text"} (the whole new text), {"file", "symbol", "body"} (a symbol's new body, by name path: "Square.Area", "main"), ` +
	`{"file", "symbol", "action", "text"?} (action "replace", "insert_before", "insert_after" or "delete"; a delete is refused while the symbol is still referenced, unless "force": true), ` +
	`{"file", "format": true} (formatted by its server), {"file", "line", "fix"} (the code action titled fix at the 1-based line, see idb_lsp_code_actions). ` +
	`The same JSON as the items of the MCP tools' edits and of idebridge edit's EDITS.json; relative paths are relative to the process's working directory`

// editCheckDoc documents an edit set's check.
const editCheckDoc = `{"files": [{"path", "edited", "server"?, "introduced": [diagnostic, ...], "resolved": [...], "status", "reason"?}], ` +
	`"introduced", "resolved", "unchecked", "status", "diff", "text"}: the same JSON as idebridge edit check --json, with "text", its rendering for a model ` +
	`(each file with a change, + introduced and - resolved, then what was checked and how far it can be trusted); introduced diagnostics have the staged text's positions, resolved ones the disk's`

// renderFields are the options of the model-facing block's rendering.
var renderFields = []Field{
	{JSON: "projectDir", Py: "project_dir", PyType: "Optional[str]", TS: "string", Doc: "paths of files inside this directory are shown relative to it"},
	{JSON: "tag", Py: "tag", PyType: "Optional[str]", TS: "string", Doc: `the element wrapping the block (default "new-diagnostics")`},
	{JSON: "maxChars", Py: "max_chars", PyType: "Optional[int]", TS: "number", Doc: "the cap on the whole block in characters (default 4000; negative for none)"},
}

// editFields are the options of an edit (idb_apply_edit takes all but the
// first).
var editFields = []Field{
	{JSON: "tabName", Py: "tab_name", PyType: "Optional[str]", TS: "string", Doc: `the diff tab's name (default "<basename>-<uuid4>")`},
	{JSON: "base", Py: "base", PyType: "Optional[FileState]", TS: "FileState", Doc: "the file's state the edit was computed from (idb_file_state when the agent read it); the edit is written only if the file still has this content (default: its state when the edit is proposed)"},
}

// editResultDoc documents an edit's outcome.
const editResultDoc = `{"path", "status": "accepted" | "tab_closed" | "rejected" | "not_accepted" | "applied", "written", "text", "bytes", ` +
	`"userModified"?, "created"?, "cancelled"?, "viaIDE", "tabName"?, "ideAnswer"?, "closeTabError"?, "conflict"?: {"message", "expected", "actual"}}: ` +
	`"text" is what was written, or would have been when a conflict stopped the write`

// envDoc documents the env option of discovery and connection.
const envDoc = "the environment to read (CLAUDE_CONFIG_DIR, HOME, CLAUDE_CODE_SSE_PORT, ...); " +
	"default: the process environment as the library saw it when it was loaded (the Python and Node bindings send the current one)"

// discoverFields are the options of idb_discover.
var discoverFields = []Field{
	{JSON: "cwd", Py: "cwd", PyType: "Optional[str]", TS: "string", Doc: "the agent's working directory, which an IDE's workspace must contain (default: the process's)"},
	{JSON: "env", Py: "env", PyType: "Optional[Dict[str, str]]", TS: "Record<string, string>", Doc: envDoc, PyDefault: "dict(os.environ)", JSDefault: "{ ...process.env }"},
	{JSON: "lockfileDirs", Py: "lockfile_dirs", PyType: "Optional[List[str]]", TS: "string[]", Doc: "the lockfile directories to scan (default: from the environment)"},
	{JSON: "allowInsecure", Py: "allow_insecure", PyType: "Optional[bool]", TS: "boolean", Doc: "use lockfiles that others could write (refused by default)"},
}

// connectFields are the options of idb_ide_connect.
var connectFields = []Field{
	{JSON: "port", Py: "port", PyType: "Optional[int]", TS: "number", Doc: "the IDE's port (its lockfile's name); default: the only usable IDE"},
	{JSON: "cwd", Py: "cwd", PyType: "Optional[str]", TS: "string", Doc: "the agent's working directory, which the IDE's workspace must contain (default: the process's)"},
	{JSON: "env", Py: "env", PyType: "Optional[Dict[str, str]]", TS: "Record<string, string>", Doc: envDoc, PyDefault: "dict(os.environ)", JSDefault: "{ ...process.env }"},
	{JSON: "lockfileDirs", Py: "lockfile_dirs", PyType: "Optional[List[str]]", TS: "string[]", Doc: "the lockfile directories to scan (default: from the environment)"},
	{JSON: "url", Py: "url", PyType: "Optional[str]", TS: "string", Doc: "connect to this ws:// or http:// URL instead of discovering"},
	{JSON: "authToken", Py: "auth_token", PyType: "Optional[str]", TS: "string", Doc: "the auth token to send with url"},
	{JSON: "wait", Py: "wait", PyType: "Optional[bool]", TS: "boolean", Doc: "poll discovery once a second until the IDE is usable, within the timeout"},
	{JSON: "callTimeoutMs", Py: "call_timeout", PyType: "Optional[float]", TS: "number", Seconds: true, Doc: "the default timeout of tool calls (default 30 seconds; negative for none)"},
	{JSON: "pingIntervalMs", Py: "ping_interval", PyType: "Optional[float]", TS: "number", Seconds: true, Doc: "the keep-alive interval (default 15 seconds; negative for none)"},
	{JSON: "notificationBuffer", Py: "notification_buffer", PyType: "Optional[int]", TS: "number", Doc: "how many notifications are queued before the oldest is dropped (default 256, at most 65536; negative: none are queued)"},
	{JSON: "clientName", Py: "client_name", PyType: "Optional[str]", TS: "string", Doc: "the clientInfo name sent to the IDE (default \"idebridge\")"},
}

// navFunc describes the navigation export idb_lsp_<op>: request_json holds
// the place and the operation's arguments.
func navFunc(op, doc string, fields []Field, tsReturn string) Func {
	return Func{
		Name: "idb_lsp_" + op,
		Doc: doc + " The file is opened in its server (started when needed) or brought up to date with the disk. " +
			"A server still loading the workspace is waited for (at most 30 seconds), and an answer it gave while loading " +
			"says so (\"incomplete\": true and a \"reason\"), never that there is nothing.",
		Params: []Param{
			{Name: "manager", Kind: Handle, Class: "LSPManager"},
			{Name: "request_json", Kind: JSON, Doc: "the place and the operation's arguments", Fields: fields},
			{Name: "timeout_ms", Kind: TimeoutMS},
			{Name: "out", Kind: OutString, Doc: "the result as a JSON object"},
		},
		Statuses:       lspStatuses,
		Blocking:       "the server answered (after starting, initializing and loading when needed) or the timeout elapses",
		DefaultTimeout: "60 seconds",
		Result:         ResultJSON,
		ResultDoc: `the answer (the same JSON as idebridge lsp ... --json) with "text", its rendering for a model: ` +
			`paths relative to the project, path:line:col with each location's source line, at most maxLocations (100) of them`,
		Binding: Method, Class: "LSPManager", Method: op, PyReturn: tsReturn, TSReturn: tsReturn, PyConv: navConv[tsReturn],
	}
}

// navConv names the Python converter of each navigation result.
var navConv = map[string]string{
	"NavLocations": "_nav_locations", "NavHover": "_nav_hover", "NavSymbols": "_nav_symbols",
	"NavCallHierarchy": "_nav_call_hierarchy", "NavRenameProposal": "_nav_rename_proposal", "NavTypeHierarchy": "_nav_type_hierarchy",
}

// navPathField, navMaxField and navPosFields are the members of a
// navigation request.
var (
	navPathField = Field{JSON: "path", Py: "path", PyType: "str", TS: "string", Required: true, Doc: "the file"}
	navMaxField  = Field{JSON: "maxLocations", Py: "max_locations", PyType: "Optional[int]", TS: "number", Doc: "how many locations, symbols or calls the text shows (default 100; negative for all)"}
	navPosFields = []Field{
		navPathField,
		{JSON: "line", Py: "line", PyType: "int", TS: "number", Required: true, Doc: "the 1-based line"},
		{JSON: "column", Py: "column", PyType: "Optional[int]", TS: "number", Doc: "the 1-based column, counted in characters (Unicode code points); or give symbol"},
		{JSON: "symbol", Py: "symbol", PyType: "Optional[str]", TS: "string", Doc: "the symbol's text on the line, when no column is given (a qualified name names its last part)"},
		{JSON: "occurrence", Py: "occurrence", PyType: "Optional[int]", TS: "number", Doc: "which occurrence of symbol on the line, 1-based, when it occurs more than once"},
		navMaxField,
	}
)

// navPageFields page a list of locations, workspace symbols, calls or
// types; navPageDoc says so.
var navPageFields = []Field{
	{JSON: "offset", Py: "offset", PyType: "Optional[int]", TS: "number", Doc: "answer from this 0-based entry of the whole answer on (default 0)"},
	{JSON: "limit", Py: "limit", PyType: "Optional[int]", TS: "number", Doc: "answer at most this many entries (default: all from offset on)"},
}

const navPageDoc = " With offset or limit, the answer is a page of the whole: \"total\" is always the whole answer's count and \"offset\" " +
	"the index of the page's first entry; the text says which part it shows."

// withFields is fields with more appended, fields unchanged.
func withFields(fields []Field, more ...Field) []Field {
	return append(fields[:len(fields):len(fields)], more...)
}

// lspStatuses are the statuses of the LSP document operations.
var lspStatuses = []int{StError, StHandle, StTimeout, StNotFound, StArgument, StClosed, StPanic}

// lspFields are the options of idb_lsp_new.
var lspFields = []Field{
	{JSON: "maxOpenDocuments", Py: "max_open_documents", PyType: "Optional[int]", TS: "number", Doc: "how many documents stay open in servers; the least recently used is closed to make room (default 50)"},
	{JSON: "quietPeriodMs", Py: "quiet_period", PyType: "Optional[float]", TS: "number", Seconds: true, Doc: "the shortest silence a settle waits for after the publish answering a change, from a server that sends no versions; it waits longer for a server measured to need it (default 0.05 seconds)"},
	{JSON: "settleTimeoutMs", Py: "settle_timeout", PyType: "Optional[float]", TS: "number", Seconds: true, Doc: "the longest a settle waits (default 10 seconds)"},
	{JSON: "startupTimeoutMs", Py: "startup_timeout", PyType: "Optional[float]", TS: "number", Seconds: true, Doc: "the startup timeout of servers whose configuration sets none (default 30 seconds)"},
	{JSON: "shutdownTimeoutMs", Py: "shutdown_timeout", PyType: "Optional[float]", TS: "number", Seconds: true, Doc: "the shutdown timeout of servers whose configuration sets none (default 5 seconds)"},
	{JSON: "waitForProgress", Py: "wait_for_progress", PyType: "Optional[bool]", TS: "boolean", Doc: "make settle wait for the server's work-done progress to end, not only for a publish"},
	{JSON: "userConfig", Py: "user_config", PyType: "Optional[Dict[str, str]]", TS: "Record<string, string>", Doc: "non-sensitive user options for ${user_config.KEY} in the configuration"},
	{JSON: "safeMode", Py: "safe_mode", PyType: "Optional[bool]", TS: "boolean", Doc: "safe mode: start no language server at all; document operations fail with IDB_ERR_NOT_FOUND"},
	{JSON: "configFile", Py: "config_file", PyType: "Optional[str]", TS: "string", Doc: "the path of a .lsp.json file whose servers are added to those of config (pass {} as config to use the file alone); ${CLAUDE_PLUGIN_ROOT} in it is the file's directory"},
	{JSON: "roots", Py: "roots", PyType: "Optional[List[str]]", TS: "string[]", Doc: "the directories a rename may write in, symbolic links resolved; a rename with a file outside them is refused whole (default: the project directory; [\"/\"] allows any)"},
	{JSON: "runtime", Py: "runtime", PyType: "Optional[bool]", TS: "boolean", Doc: "go through the user's shared runtime (the one `idebridge mcp` uses, started if none runs): the navigation calls (not rename) and servers go to the project's language servers there, shared with every other client and warm between calls; " +
		"the calls that need servers of the caller's own (documents, settle, drain, edit sets, rename, reload, load_claude_code) fail with IDB_ERR_ARGUMENT, and so does any option above that sets the servers' behaviour; shutdown ends the session, not the shared servers. With it, this call waits for the runtime to answer (starting it included; at most a minute) (default: servers in this process)"},
	{JSON: "runtimeCommand", Py: "runtime_command", PyType: "Optional[str]", TS: "string", Doc: "with runtime: the idebridge command whose runtime to use, of the same version as this library; it is started as `runtimeCommand runtime serve` when none runs (default: idebridge in PATH)"},
	{JSON: "runtimeDir", Py: "runtime_dir", PyType: "Optional[str]", TS: "string", Doc: "with runtime: the runtime directory (default: $IDEBRIDGE_RUNTIME_DIR, else $XDG_RUNTIME_DIR/idebridge, else the temporary directory's idebridge-UID)"},
}

// claudeCodeFields are the options of idb_lsp_load_claude_code.
var claudeCodeFields = []Field{
	{JSON: "projectDir", Py: "project_dir", PyType: "Optional[str]", TS: "string", Doc: "the project whose settings and project-scoped installs count (default: the manager's project directory)"},
	{JSON: "configDir", Py: "config_dir", PyType: "Optional[str]", TS: "string", Doc: "Claude Code's configuration directory (default: CLAUDE_CONFIG_DIR from env, else ~/.claude)"},
	{JSON: "env", Py: "env", PyType: "Optional[Dict[str, str]]", TS: "Record<string, string>", Doc: "the environment to read (CLAUDE_CONFIG_DIR, HOME, PATH for the commands); " +
		"default: the process environment as the library saw it when it was loaded (the Python and Node bindings send the current one)", PyDefault: "dict(os.environ)", JSDefault: "{ ...process.env }"},
	{JSON: "userConfig", Py: "user_config", PyType: "Optional[Dict[str, str]]", TS: "Record<string, string>", Doc: "non-sensitive plugin user options for ${user_config.KEY}"},
	{JSON: "trustProject", Py: "trust_project", PyType: "Optional[bool]", TS: "boolean", Doc: "let the project's own settings and project-scoped installs count even though Claude Code has no record of the user trusting the project (default: only a trusted project's do)"},
}

// wslFields are the options of the path conversions.
var wslFields = []Field{
	{JSON: "distro", Py: "distro", PyType: "Optional[str]", TS: "string", Doc: "the WSL distribution, as in WSL_DISTRO_NAME (empty: drive paths only)"},
	{JSON: "mountRoot", Py: "mount_root", PyType: "Optional[str]", TS: "string", Doc: `where the Windows drives are mounted (default "/mnt")`},
	{JSON: "uncHost", Py: "unc_host", PyType: "Optional[str]", TS: "string", Doc: `the host of the UNC paths written for files inside the distribution (default "wsl$")`},
}

// registryFields are the options of idb_registry_new.
var registryFields = []Field{
	{JSON: "maxPerFile", Py: "max_per_file", PyType: "Optional[int]", TS: "number", Doc: "the most diagnostics of one file in an attachment (default 10; negative for no limit)"},
	{JSON: "maxTotal", Py: "max_total", PyType: "Optional[int]", TS: "number", Doc: "the most diagnostics in an attachment (default 30; negative for no limit)"},
	{JSON: "maxPerPublish", Py: "max_per_publish", PyType: "Optional[int]", TS: "number", Doc: "the most diagnostics one publish keeps pending, most severe first; the new ones beyond count in the attachment's cut (default 1000; must be positive)"},
	{JSON: "maxDocuments", Py: "max_documents", PyType: "Optional[int]", TS: "number", Doc: "how many documents are remembered (delivered diagnostics, version, last publishes) besides those with diagnostics pending, the least recently used forgotten first (default 500; must be positive)"},
	{JSON: "maxDeliveredPerDocument", Py: "max_delivered_per_document", PyType: "Optional[int]", TS: "number", Doc: "how many delivered diagnostics are remembered per document (default 2000; must be positive)"},
	{JSON: "minSeverity", Py: "min_severity", PyType: "Optional[Union[str, int]]", TS: "string | number", Doc: `the least severe severity delivered: "Error", "Warning", "Information", "Hint" or 1 to 4 (default Hint: everything)`},
	{JSON: "dropUnnecessary", Py: "drop_unnecessary", PyType: "Optional[bool]", TS: "boolean", Doc: "drop diagnostics tagged Unnecessary (faded-out unused code)"},
}

// TSTypes are the TypeScript declarations of the JSON shapes that cross
// the ABI; their members are the JSON tags of the Go types named in Doc.
var TSTypes = []TSType{
	{
		Name: "NavLocation",
		Doc:  "A place a server answered with (Go: lsp.Location): 1-based lines and columns, columns in characters, the end exclusive.",
		Body: `{
  /** The file's absolute path; "" for a URI that is not a file. */
  path: string;
  uri: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  /** The source line at line, without its line break. */
  text: string;
}`,
	},
	{
		Name: "NavAnswer",
		Doc:  "What every navigation result says about how it was answered (Go: lsp.Answer), and its rendering for a model.",
		Body: `{
  op: string;
  server: string;
  /** The place asked about, resolved to a column. */
  at?: NavLocation;
  /** The server had not finished loading the workspace: the result may be missing entries. */
  incomplete?: boolean;
  reason?: string;
  /** "complete", or "partial" when incomplete. Say "found no ..." only for "complete". */
  status: string;
  /** The result as a model reads it. */
  text: string;
}`,
	},
	{
		Name:  "NavLocations",
		Doc:   "The result of definition, declaration, type_definition, implementation and references (Go: lsp.Locations).",
		Body:  `NavAnswer & { locations: NavLocation[]; total: number; offset?: number }`,
		Alias: true,
	},
	{
		Name:  "NavHover",
		Doc:   "The result of hover (Go: lsp.Hover).",
		Body:  `NavAnswer & { markdown: string; range?: NavLocation }`,
		Alias: true,
	},
	{
		Name: "NavSymbol",
		Doc:  "A symbol (Go: lsp.Symbol); kind is LSP's SymbolKind number.",
		Body: `{
  name: string;
  kind: number;
  detail?: string;
  container?: string;
  location: NavLocation;
  endLine?: number;
  children?: NavSymbol[];
}`,
	},
	{
		Name:  "NavSymbols",
		Doc:   "The result of document_symbols and workspace_symbols (Go: lsp.Symbols).",
		Body:  `NavAnswer & { path?: string; query?: string; symbols: NavSymbol[]; total: number; offset?: number }`,
		Alias: true,
	},
	{
		Name: "NavCallItem",
		Doc:  "A function or method of a call hierarchy (Go: lsp.CallItem).",
		Body: `{ name: string; kind: number; detail?: string; location: NavLocation }`,
	},
	{
		Name:  "NavCallHierarchy",
		Doc:   "The result of prepare_call_hierarchy, incoming_calls and outgoing_calls (Go: lsp.CallHierarchy).",
		Body:  `NavAnswer & { items: NavCallItem[]; calls?: { item: NavCallItem; sites: NavLocation[] }[]; total: number; offset?: number }`,
		Alias: true,
	},
	{
		Name: "NavTypeItem",
		Doc:  "A type of a type hierarchy (Go: lsp.TypeItem); kind is LSP's SymbolKind number.",
		Body: `{ name: string; kind: number; detail?: string; location: NavLocation }`,
	},
	{
		Name:  "NavTypeHierarchy",
		Doc:   "The result of prepare_type_hierarchy, supertypes and subtypes (Go: lsp.TypeHierarchy).",
		Body:  `NavAnswer & { items: NavTypeItem[]; types?: NavTypeItem[]; total: number; offset?: number }`,
		Alias: true,
	},
	{
		Name: "NavRenameProposal",
		Doc:  "The result of rename (Go: lsp.RenameProposal): nothing is written yet.",
		Body: `NavAnswer & {
  newName: string;
  files: { path: string; edits: number; oldText: string; newText: string; diff: string; base: Record<string, unknown> }[];
  diff: string;
}`,
		Alias: true,
	},
	{
		Name: "NavRenameApplied",
		Doc:  "The outcome of apply_rename (Go: lsp.RenameApplied).",
		Body: `{ files: { path: string; status: string; error?: string }[]; written: number; text: string }`,
	},
	{
		Name: "EditItem",
		Doc:  "One edit an edit set stages (Go: lsp.EditItem): give file and exactly one of old_string with new_string, new_text, symbol with body or action, format, or fix with line.",
		Body: `{
  /** The file's path. */
  file: string;
  /** Text that occurs exactly once in the file as staged so far, replaced by new_string ("" deletes it). */
  old_string?: string;
  new_string?: string;
  /** The file's whole new text. */
  new_text?: string;
  /** A symbol by name path ("Square.Area", "main"; "[2]" picks the second of several). */
  symbol?: string;
  /** The symbol's new body (what goes between its braces, or its indented block). */
  body?: string;
  /** What to do to symbol with text; delete is refused while the symbol is still referenced, unless force. */
  action?: "body" | "replace" | "insert_before" | "insert_after" | "delete";
  text?: string;
  force?: boolean;
  /** Format the file with its server. */
  format?: boolean;
  /** The title of a code action at line (LSPManager.codeActions), or a part of it naming one. */
  fix?: string;
  /** The 1-based line of fix. */
  line?: number;
}`,
	},
	{
		Name: "EditCheckFile",
		Doc:  "What staged edits change in one file's diagnostics (Go: lsp.FileCheck).",
		Body: `{
  path: string;
  /** False for a file that depends on the edited ones. */
  edited: boolean;
  /** The server that serves it; absent when none does. */
  server?: string;
  /** Diagnostics the edits bring, with the staged text's positions. */
  introduced: Diagnostic[];
  /** Diagnostics the edits remove, with the disk's positions. */
  resolved: Diagnostic[];
  /** "complete", "partial", "unknown" or "server-down": how far the file's diagnostics, before and after, can be trusted. */
  status: string;
  reason?: string;
}`,
	},
	{
		Name: "EditCheck",
		Doc:  "The check of an edit set (Go: lsp.EditCheck), the same JSON as idebridge edit check --json, with its rendering.",
		Body: `{
  /** The edited files, then their dependents. */
  files: EditCheckFile[];
  introduced: number;
  resolved: number;
  /** Dependents left out by the bound of 50 files checked. */
  unchecked: number;
  /** The least trustworthy status of the files. */
  status: string;
  /** The unified diff of the edits. */
  diff: string;
  /** The check as a model reads it. */
  text: string;
}`,
	},
	{
		Name: "EditApplied",
		Doc:  "What an edit set's apply wrote (Go: lsp.EditApplied), with its rendering.",
		Body: `{
  /** The files written, in the order first staged. */
  written: string[];
  /** What the write changed in the diagnostics; null when that check failed (see checkError). */
  check: EditCheck | null;
  /** Why the check after the write failed; the files are written all the same. */
  checkError?: string;
  /** The outcome as a model reads it. */
  text: string;
}`,
	},
	{
		Name: "CodeAction",
		Doc:  "A change a server offers at a place (Go: lsp.CodeAction); stage it as {file, line, fix: title}.",
		Body: `{
  title: string;
  /** "quickfix", "refactor.extract", "source.organizeImports", ... */
  kind?: string;
  /** The fix the server recommends. */
  preferred?: boolean;
  /** The messages of the diagnostics it fixes. */
  fixes?: string[];
  /** Why the server offers it but cannot apply it here. */
  disabled?: string;
}`,
	},
	{
		Name: "CodeActions",
		Doc:  "The result of code_actions (Go: lsp.CodeActions).",
		Body: `{
  op: string;
  server: string;
  /** The place asked about. */
  at?: NavLocation;
  /** The server had not finished loading the workspace: actions may be missing. */
  incomplete?: boolean;
  reason?: string;
  /** "complete", or "partial" when incomplete. */
  status: string;
  path: string;
  line: number;
  actions: CodeAction[];
}`,
	},
	{
		Name: "SymbolSource",
		Doc:  "The result of symbol_source (Go: lsp.SymbolSource).",
		Body: `{
  path: string;
  /** The name path as found. */
  symbol: string;
  /** The declaration's first and last lines, 1-based. */
  line: number;
  endLine: number;
  /** The declaration's text, from the start of its first line. */
  text: string;
}`,
	},
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
		Doc:  "One diagnostic as the registry delivers it (Go: diag.Diagnostic): LSP's shape, with code always a string.",
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
		Doc:  "The new diagnostics of one document in an attachment (Go: diag.FileDiagnostics).",
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
		Doc:  "What a drain hands out (Go: diag.Attachment); the same JSON as the \"attachment\" member of idebridge diag --json.",
		Body: `{
  servers: string[];
  files: FileDiagnostics[];
  /** All new diagnostics left out by the limits. */
  cut: number;
  notes?: string[];
}`,
	},
	{
		Name: "Candidate",
		Doc:  "One lockfile found by discovery (Go: idebridge.Candidate); the same JSON as idebridge ide list --json.",
		Body: `{
  port: number;
  ideName: string;
  transport: "ws" | "sse";
  workspaceFolders: string[] | null;
  pid: number;
  /** Where to connect: ws://host:port/ or http://host:port/sse. */
  url: string;
  /** True when every check passed. */
  valid: boolean;
  /** Machine-readable reasons why it is not usable. */
  reasons: ("parse_error" | "workspace_mismatch" | "pid_dead" | "not_ancestor" | "port_closed" | "insecure_permissions" | string)[] | null;
  /** One human sentence: why it is or is not usable. */
  message: string;
  path: string;
  runningInWindows?: boolean;
}`,
	},
	{
		Name: "IDEInfo",
		Doc:  "What the IDE said about itself in the MCP handshake.",
		Body: `{
  serverInfo: { name: string; version: string; title?: string };
  protocolVersion: string;
  instructions?: string;
  capabilities?: Record<string, unknown>;
}`,
	},
	{
		Name: "Tool",
		Doc:  "One tool the IDE offers (Go: mcp.Tool).",
		Body: `{
  name: string;
  title?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}`,
	},
	{
		Name: "ToolResult",
		Doc:  "A tools/call result (Go: mcp.ToolResult).",
		Body: `{
  content: Array<{ type: string; text?: string; [key: string]: unknown }>;
  structuredContent?: unknown;
  isError?: boolean;
}`,
	},
	{
		Name: "Notification",
		Doc:  "A notification from the IDE (Go: idebridge.Notification), params as sent.",
		Body: `{
  method: string;
  params?: unknown;
}`,
	},
	{
		Name: "LSPServerConfig",
		Doc:  "One server of a .lsp.json document.",
		Body: `{
  command: string;
  extensionToLanguage: Record<string, string>;
  args?: string[];
  transport?: "stdio" | "socket";
  env?: Record<string, string>;
  initializationOptions?: unknown;
  settings?: unknown;
  workspaceFolder?: string;
  startupTimeout?: number;
  shutdownTimeout?: number;
  restartOnCrash?: boolean;
  maxRestarts?: number;
  diagnostics?: boolean;
}`,
	},
	{
		Name: "SettleResult",
		Doc:  "The outcome of a settle (Go: lsp.SettleResult).",
		Body: `{
  path: string;
  uri: string;
  server: string;
  version: number;
  /** How the diagnostics were known to be current ("pulled", "published", "progress-ended", "quiet"), or "timed-out". */
  freshness: string;
  /** Whether the diagnostics are known to be current: true for "pulled", "published", "progress-ended" and "quiet". */
  fresh: boolean;
  elapsedNs: number;
  /** The same in words: "published for version 3", "no publish for it from pyright within 10s". */
  reason: string;
  /** "complete", "partial" (the server was still at work; reason says on what), "unknown" (nothing reported in time), or "server-down". Say "no diagnostics" only for "complete". */
  status: string;
}`,
	},
	{
		Name: "DiagnosedFile",
		Doc:  "One file of a diagnose: its server and settle, or why it could not be diagnosed.",
		Body: `{
  path: string;
  server?: string;
  /** Absent when the file could not be opened or settled (see error). */
  settle?: SettleResult;
  error?: string;
  /** The error is that no configured server serves the file. */
  noServer?: boolean;
}`,
	},
	{
		Name: "Diagnosis",
		Doc:  "What diagnose answers: every diagnostic of the files that stands, and each file's outcome in the call's order.",
		Body: `{
  attachment: Attachment | null;
  files: DiagnosedFile[];
}`,
	},
	{
		Name: "LSPServerStatus",
		Doc:  "A snapshot of one configured server (Go: lsp.ServerStatus).",
		Body: `{
  name: string;
  state: string;
  pid?: number;
  restarts: number;
  positionEncoding?: string;
  extensions: string[];
}`,
	},
	{
		Name: "ClaudeCodeReport",
		Doc:  "What idb_lsp_load_claude_code loaded (Go: lsp.ClaudeCodeConfig, lsp.PluginStatus).",
		Body: `{
  configDir: string;
  projectDir: string;
  servers: { name: string; plugin: string; marketplace: string; file: string; root: string; extensions: Record<string, string>; command: string; args: string[]; resolved?: string; commandError?: string; installHint?: string }[];
  plugins: { id: string; name: string; marketplace: string; enabled: boolean; enabledScope?: string; enabledFile?: string; installed: boolean; installScope?: string; projectPath?: string; root?: string; version?: string; servers: string[]; extensions: string[]; reason?: string; ignoredFile?: string; ignoredEnabled?: boolean }[];
  /** Whether the project's own settings and project-scoped installs counted (Go: lsp.ProjectTrust). */
  trust: { trusted: boolean; source?: string; key?: string; file?: string; reason?: string; ignored?: { scope: string; file: string; entries: number }[]; ignoredInstalls?: string[] };
  /** enabledPlugins entries naming no installed plugin that plugins does not list. */
  unlisted: number;
  errors: string[];
}`,
	},
	// The agent API's shapes.
	{
		Name: "FileState",
		Doc:  "What a file looked like at one moment (Go: idebridge.FileState); pass it back as an edit's base.",
		Body: `{
  path: string;
  exists: boolean;
  size: number;
  /** RFC 3339. */
  modTime: string;
  mode: number;
  sha256?: string;
  /** The file's identity (device and inode), opaque: a write against this state replaces only this file. */
  id?: string;
}`,
	},
	{
		Name:  "EditStatus",
		Doc:   "What became of an edit: accepted (FILE_SAVED, the IDE's final text written), tab_closed (TAB_CLOSED, the proposal written), rejected (DIFF_REJECTED, or cancelled), not_accepted (another answer), applied (written without an IDE).",
		Alias: true,
		Body:  `"accepted" | "tab_closed" | "rejected" | "not_accepted" | "applied"`,
	},
	{
		Name: "EditConflict",
		Doc:  "Why an edit was not written: the file changed on disk since the edit's base.",
		Body: `{
  message: string;
  expected: FileState;
  actual: FileState;
}`,
	},
	{
		Name: "EditResult",
		Doc:  "The outcome of an edit (Go: idebridge.EditResult).",
		Body: `{
  path: string;
  status: EditStatus;
  /** True when the file now holds text. */
  written: boolean;
  /** What was written, or would have been when a conflict stopped the write; "" when nothing was to be written. */
  text: string;
  bytes: number;
  /** The user edited the proposal in the diff view before accepting it. */
  userModified?: boolean;
  created?: boolean;
  /** Ended by cancelAllEdits (status is then "rejected"). */
  cancelled?: boolean;
  viaIDE: boolean;
  tabName?: string;
  /** The IDE's answer, for "not_accepted". */
  ideAnswer?: string;
  closeTabError?: string;
  /** Set when the file changed on disk: nothing was written (the Promise rejects with a ConflictError carrying this result). */
  conflict?: EditConflict;
}`,
	},
	{
		Name: "DiagnosticsSnapshot",
		Doc:  "A file's IDE diagnostics before an edit, with its text; give it back to newDiagnostics after the edit.",
		Body: `{
  path: string;
  uri: string;
  text: string;
  diagnostics: Diagnostic[];
  /** RFC 3339. */
  taken: string;
}`,
	},
	{
		Name: "NewDiagnostics",
		Doc:  "The diagnostics an edit introduced into one file (Go: idebridge.NewDiagnostics), with the model-facing block.",
		Body: `{
  path: string;
  uri: string;
  /** Most severe first, then by position. */
  diagnostics: Diagnostic[];
  /** Diagnostics that only moved with the lines around them (not in diagnostics). */
  moved: number;
  /** The <new-diagnostics> block; "" when nothing is new. */
  rendered: string;
}`,
	},
	{
		Name: "AutoConnectDecision",
		Doc:  "Whether to connect to an IDE without being asked, and which rule decided.",
		Body: `{
  autoConnect: boolean;
  why: string;
}`,
	},
	{
		Name: "IDEWaitResult",
		Doc:  "The only usable IDE, and every lockfile of the last look.",
		Body: `{
  candidate: Candidate;
  candidates: Candidate[];
}`,
	},
}
