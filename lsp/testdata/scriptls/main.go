// Command scriptls is a scripted language server for package lsp's tests: it
// does on purpose what real servers do only by accident (crash at a chosen
// request, answer ContentModified, publish stale versions, flood, hang,
// ignore exit, write malformed frames, publish late or never or without
// versions, serve pull diagnostics, register file watchers). It speaks LSP
// over stdio and uses only the standard library, so that it can break the
// protocol at will.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

var (
	encoding         = flag.String("encoding", "", "position encoding to choose (default: the client's first)")
	logFile          = flag.String("log", "", "append every received message to this file")
	crashOn          = flag.Int("crash-on", 0, "exit 3 on the Nth test/ request")
	contentModified  = flag.Int("content-modified", 0, "answer the first N test/echo requests with ContentModified")
	stale            = flag.Bool("stale", false, "after each change's publish, publish again for the previous version")
	flood            = flag.Int("flood", 0, "publish N diagnostics on didOpen")
	noInit           = flag.Bool("no-init", false, "never answer initialize")
	ignoreExit       = flag.Bool("ignore-exit", false, "ignore shutdown's exit and start a grandchild")
	pidFile          = flag.String("pidfile", "", "write our pid here at start (with -ignore-exit, later our pid and the grandchild's)")
	malformed        = flag.Bool("malformed-on-open", false, "answer didOpen with a malformed frame")
	progress         = flag.Bool("progress", false, "report work-done progress around each analysis")
	quietChanges     = flag.Bool("quiet-changes", false, "publish nothing for didChange")
	hangProgress     = flag.Bool("hang-progress", false, "begin progress on each change and never end it or publish")
	askConfig        = flag.String("ask-config", "", "comma-separated sections to request with workspace/configuration after initialized")
	stderrText       = flag.String("stderr", "", "write this to stderr at start")
	sleep            = flag.Bool("sleep", false, "just sleep (the grandchild)")
	stopReading      = flag.Bool("stop-reading", false, "stop reading stdin after initialized")
	twoPhase         = flag.Duration("two-phase", 0, "publish errors first, then after this long everything (as gopls does with analysis)")
	invalid          = flag.Bool("invalid", false, "also publish a diagnostic of severity 99 and one at line -1 with each analysis")
	publishDelay     = flag.Duration("publish-delay", 0, "publish each analysis this long after the message it answers")
	neverPublish     = flag.Bool("never-publish", false, "never publish diagnostics")
	unversioned      = flag.Bool("unversioned", false, "publish without document versions")
	pull             = flag.Bool("pull", false, "offer pull diagnostics (diagnosticProvider) and publish nothing")
	pullDynamic      = flag.Bool("pull-dynamic", false, "offer pull diagnostics by client/registerCapability after initialized, and publish nothing")
	pullDelay        = flag.Duration("pull-delay", 0, "answer each pull this long after it arrives")
	pullCancel       = flag.Int("pull-cancel", 0, "answer the first N pulls with ServerCancelled (retrigger)")
	pullInterim      = flag.Int("pull-interim", 0, "before answering each pull, publish N diagnostics for another file, then an empty set for the document pulled (a partial result, as pyright publishes between the slices of its analysis)")
	refresh          = flag.Bool("refresh", false, "send workspace/diagnostic/refresh after each change")
	clearOnClose     = flag.Bool("clear-on-close", false, "publish an empty set without a version on didClose, as most servers do")
	watch            = flag.String("watch", "", "comma-separated glob patterns to register as file watchers after initialized")
	watchBase        = flag.Bool("watch-relative", false, "register the watchers as RelativePatterns on the workspace folder")
	loading          = flag.Duration("loading", 0, "after initialized, report a work-done progress \"Loading workspace\" that ends after this long (negative: never)")
	ownProgress      = flag.Bool("own-progress", false, "report a progress of our own (not the request's token) around each definition, ending it after the answer (as pylsp does)")
	navEmptyFor      = flag.Duration("nav-empty-for", 0, "answer definition with nothing until this long after the document was opened, reporting no progress (analysis not done)")
	busyOnChange     = flag.Duration("busy-on-change", 0, "with -status-loading: on each didChange say we are not quiescent, answer pulls empty, and say quiescent again this long later, then ask for a diagnostic refresh (as rust-analyzer does when it reloads the workspace)")
	pushCheck        = flag.Duration("push-check", 0, "with -pull: also publish, with versions, a checker's findings (\"check found CHECK\" for each CHECK): on didOpen at once, and on didSave under a created \"check\" progress that ends this long later with the publish and a diagnostic refresh (as rust-analyzer publishes cargo check's findings)")
	checkStart       = flag.Duration("check-start", 0, "with -push-check: begin the check this long after the save (cargo check starts about 130 ms after a save)")
	initDelay        = flag.Duration("init-delay", 0, "answer initialize this long after it arrives (a server slow to start, as a Node server on a busy machine)")
	emptyThenLoad    = flag.Duration("empty-then-load", 0, "on didOpen publish an empty set at once, then this long later create and begin an \"indexing\" progress, publish the real set 300ms on and end it")
	pullEmptyLoading = flag.Bool("pull-empty-while-loading", false, "with -loading or -status-loading, answer pulls with an empty set until the load has ended (as rust-analyzer does)")
	statusLoading    = flag.Duration("status-loading", 0, "when the client advertises experimental.serverStatusNotification, say after initialized that we are not quiescent, and quiescent this long later (as rust-analyzer does); the load ends then")
	stallProgress    = flag.Bool("stall-progress", false, "after initialized, begin an \"indexing\" progress, report 2/5 and 4/5, and never end it")
	otherFirst       = flag.Duration("other-first", 0, "on didChange, first begin and end a progress and publish for another file, then this long later begin and end one and publish the document's set (progress ends before each publish, as pylsp does)")
	modeFile         = flag.String("mode-file", "", "a file in the working directory: when it holds \"strict\", every USE is an error; re-read on didChangeWatchedFiles")
	defs             = flag.Bool("defs", false, "a line \"USE name\" is an error unless an open document has a line \"DEF name\"; each message's sets are computed when it arrives (a snapshot), for every open document, and published after -publish-delay")
	onlyChanged      = flag.Bool("only-changed", false, "with -defs: after a change, publish only the sets that differ from the last one published for their document (the changed document's too)")
)

// Flags for the process-tree and shutdown-order tests (proc_test.go).
var (
	exitDelay  = flag.Duration("exit-delay", 0, "on exit, wait this long, log \"exiting\", then exit 0")
	grandchild = flag.String("grandchild", "", "at start, fork a grandchild in a session of its own and write our pid and its pid (as the agent sees them) here")
)

type message struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      *json.RawMessage `json:"id,omitempty"`
	Method  string           `json:"method,omitempty"`
	Params  json.RawMessage  `json:"params,omitempty"`
	Result  json.RawMessage  `json:"result,omitempty"`
	Error   *rpcError        `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

var (
	outMu    sync.Mutex
	out      = bufio.NewWriter(os.Stdout)
	logMu    sync.Mutex
	logW     *os.File
	enc      = "utf-16"
	requests int
	echoes   int
	nextID   = 1000
	texts    = map[string]string{}
	versions = map[string]int{}
	pulls    int
	rootURI  string
	slowMu   sync.Mutex
	slow     = map[string]bool{} // pending test/slow ids
	textMu   sync.Mutex          // texts and versions, read by delayed answers
	// delayed runs the analyses of -publish-delay in order.
	delayed     = make(chan delayedJob, 1024)
	delayedOnce sync.Once
	openedAt    = map[string]time.Time{} // guarded by textMu
	loadDone    atomicBool
	statusOK    bool // the client takes experimental/serverStatus
	ownTokens   int
	checks      int
)

type delayedJob struct {
	due time.Time
	run func()
}

func main() {
	flag.Parse()
	if *sleep {
		time.Sleep(time.Hour)
		return
	}
	if *stderrText != "" {
		fmt.Fprintln(os.Stderr, *stderrText)
	}
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		logW = f
	}
	if *grandchild != "" {
		forkGrandchild(*grandchild)
	}
	if *pidFile != "" {
		os.WriteFile(*pidFile, []byte(fmt.Sprintf("%d\n", hostPID())), 0o600)
	}
	in := bufio.NewReader(os.Stdin)
	for {
		body, err := readFrame(in)
		if err != nil {
			logf("read error: %v", err)
			if *ignoreExit {
				time.Sleep(time.Hour)
			}
			os.Exit(0)
		}
		logRaw(body)
		var m message
		if err := json.Unmarshal(body, &m); err != nil {
			fmt.Fprintln(os.Stderr, "scriptls: bad message:", err)
			continue
		}
		handle(&m)
	}
}

func readFrame(r *bufio.Reader) ([]byte, error) {
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "content-length") {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if n < 0 {
		return nil, fmt.Errorf("no content-length")
	}
	body := make([]byte, n)
	_, err := io.ReadFull(r, body)
	return body, err
}

func send(v any) {
	data, _ := json.Marshal(v)
	outMu.Lock()
	defer outMu.Unlock()
	fmt.Fprintf(out, "Content-Length: %d\r\n\r\n", len(data))
	out.Write(data)
	out.Flush()
}

func reply(id *json.RawMessage, result any) {
	send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func replyErr(id *json.RawMessage, code int, msg string) {
	send(map[string]any{"jsonrpc": "2.0", "id": id, "error": rpcError{code, msg}})
}

func notify(method string, params any) {
	send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// request sends a request to the client; its response is logged when it
// comes.
func request(method string, params any) {
	nextID++
	send(map[string]any{"jsonrpc": "2.0", "id": nextID, "method": method, "params": params})
}

func logRaw(b []byte) {
	if logW == nil {
		return
	}
	logMu.Lock()
	defer logMu.Unlock()
	logW.Write(b)
	logW.Write([]byte("\n"))
}

func logf(format string, args ...any) {
	if logW == nil {
		return
	}
	b, _ := json.Marshal(map[string]string{"event": fmt.Sprintf(format, args...)})
	logRaw(b)
}

func handle(m *message) {
	if m.ID != nil && m.Method == "" {
		return // a response to one of our requests; logged already
	}
	if m.ID != nil && strings.HasPrefix(m.Method, "test/") {
		requests++
		if *crashOn > 0 && requests == *crashOn {
			fmt.Fprintf(os.Stderr, "scriptls: panic: crashing on request %d (%s) as scripted\n", requests, m.Method)
			os.Exit(3)
		}
	}
	switch m.Method {
	case "initialize":
		if *noInit {
			return
		}
		time.Sleep(*initDelay)
		var p struct {
			RootURI      string `json:"rootUri"`
			Capabilities struct {
				General struct {
					PositionEncodings []string `json:"positionEncodings"`
				} `json:"general"`
				Experimental struct {
					ServerStatusNotification bool `json:"serverStatusNotification"`
				} `json:"experimental"`
			} `json:"capabilities"`
		}
		json.Unmarshal(m.Params, &p)
		rootURI = p.RootURI
		statusOK = p.Capabilities.Experimental.ServerStatusNotification
		if *encoding != "" {
			enc = *encoding
		} else if len(p.Capabilities.General.PositionEncodings) > 0 {
			enc = p.Capabilities.General.PositionEncodings[0]
		}
		caps := map[string]any{
			"positionEncoding":   enc,
			"textDocumentSync":   map[string]any{"openClose": true, "change": 1, "save": map[string]any{}},
			"hoverProvider":      true,
			"definitionProvider": true,
		}
		if *pull {
			caps["diagnosticProvider"] = map[string]any{"identifier": "scriptls", "interFileDependencies": false, "workspaceDiagnostics": false}
		}
		reply(m.ID, map[string]any{
			"capabilities": caps,
			"serverInfo":   map[string]string{"name": "scriptls", "version": "1"},
		})
	case "initialized":
		if *askConfig != "" {
			var items []map[string]string
			for _, s := range strings.Split(*askConfig, ",") {
				if s == "-" {
					s = ""
				}
				items = append(items, map[string]string{"section": s})
			}
			request("workspace/configuration", map[string]any{"items": items})
		}
		if *pullDynamic {
			request("client/registerCapability", map[string]any{"registrations": []any{map[string]any{
				"id": "pull-1", "method": "textDocument/diagnostic",
				"registerOptions": map[string]any{"identifier": "scriptls", "documentSelector": nil, "interFileDependencies": true, "workspaceDiagnostics": false},
			}}})
		}
		if *watch != "" {
			var ws []any
			for _, pat := range strings.Split(*watch, ",") {
				var g any = pat
				if *watchBase {
					g = map[string]any{"baseUri": rootURI, "pattern": pat}
				}
				ws = append(ws, map[string]any{"globPattern": g})
			}
			request("client/registerCapability", map[string]any{"registrations": []any{map[string]any{
				"id": "watch-1", "method": "workspace/didChangeWatchedFiles", "registerOptions": map[string]any{"watchers": ws},
			}}})
		}
		if *loading != 0 {
			request("window/workDoneProgress/create", map[string]any{"token": "loading"})
			notify("$/progress", map[string]any{"token": "loading", "value": map[string]any{"kind": "begin", "title": "Loading workspace"}})
			if *loading > 0 {
				time.AfterFunc(*loading, func() {
					loadDone.set()
					notify("$/progress", map[string]any{"token": "loading", "value": map[string]any{"kind": "end"}})
				})
			}
		}
		if *statusLoading > 0 {
			if statusOK {
				notify("experimental/serverStatus", map[string]any{"health": "ok", "quiescent": false})
			}
			time.AfterFunc(*statusLoading, func() {
				loadDone.set()
				if statusOK {
					notify("experimental/serverStatus", map[string]any{"health": "ok", "quiescent": true})
				}
			})
		}
		if *stallProgress {
			request("window/workDoneProgress/create", map[string]any{"token": "stall"})
			notify("$/progress", map[string]any{"token": "stall", "value": map[string]any{"kind": "begin", "title": "indexing", "percentage": 0}})
			notify("$/progress", map[string]any{"token": "stall", "value": map[string]any{"kind": "report", "message": "2/5", "percentage": 40}})
			notify("$/progress", map[string]any{"token": "stall", "value": map[string]any{"kind": "report", "message": "4/5", "percentage": 80}})
		}
		if *stopReading {
			time.Sleep(time.Hour)
		}
		if *ignoreExit {
			cmd := exec.Command(os.Args[0], "-sleep")
			if err := cmd.Start(); err == nil && *pidFile != "" {
				os.WriteFile(*pidFile, []byte(fmt.Sprintf("%d %d\n", hostPID(), childHostPID(cmd.Process.Pid))), 0o600)
			}
		}
	case "shutdown":
		reply(m.ID, nil)
	case "exit":
		if *ignoreExit {
			logf("ignoring exit")
			return
		}
		if *exitDelay > 0 {
			time.Sleep(*exitDelay)
			logf("exiting")
		}
		os.Exit(0)
	case "textDocument/didOpen":
		var p struct {
			TextDocument struct {
				URI     string `json:"uri"`
				Version int    `json:"version"`
				Text    string `json:"text"`
			} `json:"textDocument"`
		}
		json.Unmarshal(m.Params, &p)
		if *malformed {
			outMu.Lock()
			out.WriteString("Content-Length: nonsense\r\n\r\n{}")
			out.Flush()
			outMu.Unlock()
			return
		}
		textMu.Lock()
		texts[p.TextDocument.URI] = p.TextDocument.Text
		versions[p.TextDocument.URI] = p.TextDocument.Version
		openedAt[p.TextDocument.URI] = time.Now()
		textMu.Unlock()
		if *pushCheck > 0 {
			publishCheck(p.TextDocument.URI, p.TextDocument.Version, p.TextDocument.Text)
		}
		if *emptyThenLoad > 0 {
			uri, v, text := p.TextDocument.URI, p.TextDocument.Version, p.TextDocument.Text
			publish(uri, v, []map[string]any{})
			time.AfterFunc(*emptyThenLoad, func() {
				request("window/workDoneProgress/create", map[string]any{"token": "indexing"})
				notify("$/progress", map[string]any{"token": "indexing", "value": map[string]any{"kind": "begin", "title": "indexing"}})
				time.Sleep(300 * time.Millisecond)
				publish(uri, v, diagnose(text))
				notify("$/progress", map[string]any{"token": "indexing", "value": map[string]any{"kind": "end"}})
			})
			return
		}
		if *flood > 0 {
			publishFlood(p.TextDocument.URI, p.TextDocument.Version, *flood)
			return
		}
		analyse(p.TextDocument.URI, p.TextDocument.Version, false)
	case "textDocument/didChange":
		var p struct {
			TextDocument struct {
				URI     string `json:"uri"`
				Version int    `json:"version"`
			} `json:"textDocument"`
			ContentChanges []struct {
				Text string `json:"text"`
			} `json:"contentChanges"`
		}
		json.Unmarshal(m.Params, &p)
		textMu.Lock()
		if n := len(p.ContentChanges); n > 0 {
			texts[p.TextDocument.URI] = p.ContentChanges[n-1].Text
		}
		versions[p.TextDocument.URI] = p.TextDocument.Version
		textMu.Unlock()
		if *refresh {
			defer request("workspace/diagnostic/refresh", nil)
		}
		if *busyOnChange > 0 && statusOK {
			loadDone.clear()
			notify("experimental/serverStatus", map[string]any{"health": "ok", "quiescent": false})
			time.AfterFunc(*busyOnChange, func() {
				loadDone.set()
				notify("experimental/serverStatus", map[string]any{"health": "ok", "quiescent": true})
				request("workspace/diagnostic/refresh", nil)
			})
		}
		if *hangProgress {
			token := fmt.Sprintf("hang-%d", p.TextDocument.Version)
			request("window/workDoneProgress/create", map[string]any{"token": token})
			notify("$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "begin", "title": "forever"}})
			return
		}
		if *otherFirst > 0 {
			uri, version := p.TextDocument.URI, p.TextDocument.Version
			endThenPublish := func(token, target string, diags []map[string]any) {
				request("window/workDoneProgress/create", map[string]any{"token": token})
				notify("$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "begin", "title": "lint"}})
				notify("$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "end"}})
				publish(target, version, diags)
			}
			endThenPublish(fmt.Sprintf("other-%d", version), uri+".other", []map[string]any{})
			textMu.Lock()
			text := texts[uri]
			textMu.Unlock()
			go func() {
				time.Sleep(*otherFirst)
				endThenPublish(fmt.Sprintf("own-lint-%d", version), uri, diagnose(text))
			}()
			return
		}
		if *quietChanges {
			if *progress { // work reported, nothing published
				token := fmt.Sprintf("q-%d", p.TextDocument.Version)
				request("window/workDoneProgress/create", map[string]any{"token": token})
				notify("$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "begin", "title": "checking"}})
				notify("$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "end"}})
			}
			return
		}
		analyse(p.TextDocument.URI, p.TextDocument.Version, *stale)
	case "textDocument/didSave":
		if *pushCheck > 0 {
			var p struct {
				TextDocument struct {
					URI string `json:"uri"`
				} `json:"textDocument"`
			}
			json.Unmarshal(m.Params, &p)
			uri := p.TextDocument.URI
			checks++
			token := fmt.Sprintf("check-%d", checks)
			time.AfterFunc(*checkStart, func() {
				request("window/workDoneProgress/create", map[string]any{"token": token})
				notify("$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "begin", "title": "check"}})
				time.AfterFunc(*pushCheck, func() {
					textMu.Lock()
					text, v := texts[uri], versions[uri]
					textMu.Unlock()
					publishCheck(uri, v, text)
					notify("$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "end"}})
					request("workspace/diagnostic/refresh", nil)
				})
			})
		}
	case "textDocument/didClose":
		var p struct {
			TextDocument struct {
				URI string `json:"uri"`
			} `json:"textDocument"`
		}
		json.Unmarshal(m.Params, &p)
		textMu.Lock()
		delete(texts, p.TextDocument.URI)
		delete(lastDefsSet, p.TextDocument.URI)
		delete(versions, p.TextDocument.URI)
		textMu.Unlock()
		if *clearOnClose {
			notify("textDocument/publishDiagnostics", map[string]any{"uri": p.TextDocument.URI, "diagnostics": []any{}})
		}
	case "workspace/didChangeWatchedFiles":
		// The mode file may have changed: analyse every open document
		// again, as servers do when a configuration file changes.
		textMu.Lock()
		var uris []string
		for u := range texts {
			uris = append(uris, u)
		}
		textMu.Unlock()
		sort.Strings(uris)
		for _, u := range uris {
			textMu.Lock()
			v := versions[u]
			textMu.Unlock()
			analyse(u, v, false)
		}
	case "textDocument/diagnostic":
		var p struct {
			TextDocument struct {
				URI string `json:"uri"`
			} `json:"textDocument"`
			PreviousResultID string `json:"previousResultId"`
		}
		json.Unmarshal(m.Params, &p)
		pulls++
		if pulls <= *pullCancel {
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{
				"code": -32802, "message": "server cancelled", "data": map[string]bool{"retriggerRequest": true}}})
			return
		}
		textMu.Lock()
		text, v := texts[p.TextDocument.URI], versions[p.TextDocument.URI]
		textMu.Unlock()
		id := m.ID
		if *pullInterim > 0 {
			publishFloodFor(strings.TrimSuffix(rootURI, "/")+"/elsewhere.s", 0, *pullInterim, false)
			publish(p.TextDocument.URI, v, []map[string]any{})
		}
		answer := func() {
			rid := strconv.Itoa(v)
			if p.PreviousResultID == rid {
				reply(id, map[string]any{"kind": "unchanged", "resultId": rid})
				return
			}
			items := diagnose(text)
			if *pullEmptyLoading && !loadDone.get() {
				items, rid = []map[string]any{}, "loading-"+rid
			}
			reply(id, map[string]any{"kind": "full", "resultId": rid, "items": items})
		}
		if *pullDelay > 0 {
			time.AfterFunc(*pullDelay, answer)
			return
		}
		answer()
	case "textDocument/definition":
		// The place asked about, with progress on the request's own
		// work-done token when it has one.
		var p struct {
			TextDocument struct {
				URI string `json:"uri"`
			} `json:"textDocument"`
			Position      json.RawMessage `json:"position"`
			WorkDoneToken json.RawMessage `json:"workDoneToken"`
		}
		json.Unmarshal(m.Params, &p)
		if *navEmptyFor > 0 {
			textMu.Lock()
			at, ok := openedAt[p.TextDocument.URI]
			textMu.Unlock()
			if !ok || time.Since(at) < *navEmptyFor {
				reply(m.ID, nil)
				return
			}
		}
		if *ownProgress {
			ownTokens++
			token := fmt.Sprintf("own-%d", ownTokens)
			request("window/workDoneProgress/create", map[string]any{"token": token})
			notify("$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "begin", "title": "Finding definition"}})
			defer func() {
				time.Sleep(50 * time.Millisecond)
				notify("$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "end"}})
			}()
		}
		if len(p.WorkDoneToken) > 0 {
			notify("$/progress", map[string]any{"token": p.WorkDoneToken, "value": map[string]any{"kind": "begin", "title": "Finding definition"}})
			defer notify("$/progress", map[string]any{"token": p.WorkDoneToken, "value": map[string]any{"kind": "end"}})
		}
		reply(m.ID, []any{map[string]any{"uri": p.TextDocument.URI, "range": map[string]any{"start": p.Position, "end": p.Position}}})
	case "textDocument/hover", "test/echo":
		if m.Method == "test/echo" {
			echoes++
			if echoes <= *contentModified {
				replyErr(m.ID, -32801, "content modified")
				return
			}
		}
		reply(m.ID, map[string]any{"echo": m.Params, "attempt": echoes})
	case "test/env":
		wd, _ := os.Getwd()
		reply(m.ID, map[string]string{
			"CLAUDE_PLUGIN_ROOT": os.Getenv("CLAUDE_PLUGIN_ROOT"),
			"CLAUDE_PLUGIN_DATA": os.Getenv("CLAUDE_PLUGIN_DATA"),
			"CLAUDE_PROJECT_DIR": os.Getenv("CLAUDE_PROJECT_DIR"),
			"SCRIPTLS_EXTRA":     os.Getenv("SCRIPTLS_EXTRA"),
			"cwd":                wd,
		})
	case "test/slow":
		slowMu.Lock()
		slow[string(*m.ID)] = true
		slowMu.Unlock()
	case "$/cancelRequest":
		var p struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(m.Params, &p)
		slowMu.Lock()
		pending := slow[string(p.ID)]
		delete(slow, string(p.ID))
		slowMu.Unlock()
		if pending {
			logf("cancelled %s", p.ID)
			id := json.RawMessage(p.ID)
			replyErr(&id, -32800, "request cancelled")
		}
	default:
		if m.ID != nil {
			replyErr(m.ID, -32601, "method not found: "+m.Method)
		}
	}
}

// diagnose finds a diagnostic for every "ERROR" (severity 1) and "WARN"
// (severity 2) in text, at its column in the chosen encoding, and with
// -mode-file, for every "USE" while the mode file says "strict".
func diagnose(text string) []map[string]any {
	strict := false
	if *modeFile != "" {
		data, _ := os.ReadFile(*modeFile)
		strict = strings.Contains(string(data), "strict")
	}
	diags := []map[string]any{}
	for i, line := range splitLines(text) {
		for _, w := range []struct {
			word string
			sev  int
			msg  string
		}{{"ERROR", 1, "found ERROR"}, {"WARN", 2, "found WARN"}, {"USE", 1, "USE in strict mode"}} {
			if w.word == "USE" && !strict {
				continue
			}
			for off := 0; ; {
				j := strings.Index(line[off:], w.word)
				if j < 0 {
					break
				}
				start := units(line[:off+j])
				end := units(line[:off+j+len(w.word)])
				diags = append(diags, map[string]any{
					"range": map[string]any{
						"start": map[string]int{"line": i, "character": start},
						"end":   map[string]int{"line": i, "character": end},
					},
					"severity": w.sev, "code": "E" + strconv.Itoa(w.sev), "source": "scriptls",
					"message": w.msg,
				})
				off += j + len(w.word)
			}
		}
	}
	return diags
}

// publish sends a publishDiagnostics, with the version unless -unversioned.
// publishCheck publishes, with its version, the checker's findings in
// text: one for each CHECK.
func publishCheck(uri string, version int, text string) {
	diags := []map[string]any{}
	for i, line := range splitLines(text) {
		for off := 0; ; {
			j := strings.Index(line[off:], "CHECK")
			if j < 0 {
				break
			}
			diags = append(diags, map[string]any{
				"range": map[string]any{
					"start": map[string]int{"line": i, "character": units(line[:off+j])},
					"end":   map[string]int{"line": i, "character": units(line[:off+j+5])},
				},
				"severity": 1, "source": "check", "message": "check found CHECK",
			})
			off += j + 5
		}
	}
	notify("textDocument/publishDiagnostics", map[string]any{"uri": uri, "version": version, "diagnostics": diags})
}

func publish(uri string, version int, diags []map[string]any) {
	p := map[string]any{"uri": uri, "diagnostics": diags}
	if !*unversioned {
		p["version"] = version
	}
	notify("textDocument/publishDiagnostics", p)
}

// analyse publishes the diagnostics of the document (see diagnose), after
// -publish-delay.
func analyse(uri string, version int, alsoStale bool) {
	if *neverPublish || *pull || *pullDynamic {
		return
	}
	if *defs {
		analyseDefs(uri)
		return
	}
	textMu.Lock()
	text := texts[uri]
	textMu.Unlock()
	run := func() {
		var token string
		if *progress {
			token = fmt.Sprintf("p-%d", version)
			request("window/workDoneProgress/create", map[string]any{"token": token})
			notify("$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "begin", "title": "analysing"}})
		}
		diags := diagnose(text)
		if *invalid {
			diags = append(diags, map[string]any{
				"range":    map[string]any{"start": map[string]int{"line": 0, "character": 0}, "end": map[string]int{"line": 0, "character": 1}},
				"severity": 99, "message": "severity out of range",
			}, map[string]any{
				"range":   map[string]any{"start": map[string]int{"line": -1, "character": 0}, "end": map[string]int{"line": 0, "character": 1}},
				"message": "negative line",
			})
		}
		if *twoPhase > 0 {
			errorsOnly := []map[string]any{}
			for _, d := range diags {
				if d["severity"] == 1 {
					errorsOnly = append(errorsOnly, d)
				}
			}
			publish(uri, version, errorsOnly)
			time.Sleep(*twoPhase)
		}
		publish(uri, version, diags)
		if alsoStale && version > 1 {
			notify("textDocument/publishDiagnostics", map[string]any{"uri": uri, "version": version - 1, "diagnostics": []map[string]any{{
				"range":    map[string]any{"start": map[string]int{"line": 0, "character": 0}, "end": map[string]int{"line": 0, "character": 1}},
				"severity": 1, "message": fmt.Sprintf("STALE diagnostic of version %d", version-1),
			}}})
		}
		if *progress {
			notify("$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "end"}})
		}
	}
	if *publishDelay > 0 {
		// In order, each after its delay, without holding up the reading
		// of messages.
		delayedOnce.Do(func() {
			go func() {
				for j := range delayed {
					time.Sleep(time.Until(j.due))
					j.run()
				}
			}()
		})
		delayed <- delayedJob{due: time.Now().Add(*publishDelay), run: run}
		return
	}
	run()
}

func publishFlood(uri string, version, n int) { publishFloodFor(uri, version, n, true) }

// publishFloodFor publishes n diagnostics for uri, with version when
// versioned.
func publishFloodFor(uri string, version, n int, versioned bool) {
	if *progress {
		token := fmt.Sprintf("flood-%d", version)
		request("window/workDoneProgress/create", map[string]any{"token": token})
		notify("$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "begin", "title": "flooding"}})
		defer notify("$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "end"}})
	}
	var b strings.Builder
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":%q,`, uri)
	if versioned {
		fmt.Fprintf(&b, `"version":%d,`, version)
	}
	b.WriteString(`"diagnostics":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"range":{"start":{"line":%d,"character":0},"end":{"line":%d,"character":1}},"severity":%d,"message":"flood %d","source":"scriptls"}`,
			i, i, 1+i%4, i)
	}
	b.WriteString("]}}")
	outMu.Lock()
	fmt.Fprintf(out, "Content-Length: %d\r\n\r\n", b.Len())
	out.WriteString(b.String())
	out.Flush()
	outMu.Unlock()
}

func splitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.Split(s, "\n")
}

// units counts s in the chosen encoding's code units.
func units(s string) int {
	switch enc {
	case "utf-8":
		return len(s)
	case "utf-32":
		return utf8.RuneCountInString(s)
	}
	n := 0
	for _, r := range s {
		if r > 0xFFFF {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// atomicBool is a flag set once, read from other goroutines.
type atomicBool struct {
	mu sync.Mutex
	v  bool
}

func (b *atomicBool) set() { b.mu.Lock(); b.v = true; b.mu.Unlock() }

func (b *atomicBool) clear() { b.mu.Lock(); b.v = false; b.mu.Unlock() }

func (b *atomicBool) get() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.v }

// lastDefsSet is, per document, the set -defs last published.
var lastDefsSet = map[string]string{}

// analyseDefs computes, now, the sets of every open document under -defs
// and publishes them (after -publish-delay, in order): the changed
// document's always, unless -only-changed and it is the same as the last
// one published for it; the others' only when they changed.
func analyseDefs(changed string) {
	textMu.Lock()
	defined := map[string]bool{}
	for _, text := range texts {
		for _, line := range splitLines(text) {
			if name, ok := strings.CutPrefix(line, "DEF "); ok {
				defined[strings.TrimSpace(name)] = true
			}
		}
	}
	type job struct {
		uri     string
		version int
		diags   []map[string]any
	}
	var jobs []job
	uris := make([]string, 0, len(texts))
	for u := range texts {
		uris = append(uris, u)
	}
	sort.Strings(uris)
	for i, u := range uris { // the changed document first
		if u == changed {
			copy(uris[1:i+1], uris[:i])
			uris[0] = changed
			break
		}
	}
	for _, u := range uris {
		diags := []map[string]any{}
		for i, line := range splitLines(texts[u]) {
			if name, ok := strings.CutPrefix(line, "USE "); ok && !defined[strings.TrimSpace(name)] {
				diags = append(diags, map[string]any{
					"range": map[string]any{
						"start": map[string]int{"line": i, "character": 0},
						"end":   map[string]int{"line": i, "character": units(line)},
					},
					"severity": 1, "source": "scriptls", "message": "undefined: " + strings.TrimSpace(name),
				})
			}
		}
		key, _ := json.Marshal(diags)
		last, seen := lastDefsSet[u]
		if seen && last == string(key) && (u != changed || *onlyChanged) {
			continue
		}
		lastDefsSet[u] = string(key)
		jobs = append(jobs, job{u, versions[u], diags})
	}
	textMu.Unlock()
	run := func() {
		for _, j := range jobs {
			publish(j.uri, j.version, j.diags)
		}
	}
	if *publishDelay > 0 {
		delayedOnce.Do(func() {
			go func() {
				for j := range delayed {
					time.Sleep(time.Until(j.due))
					j.run()
				}
			}()
		})
		delayed <- delayedJob{due: time.Now().Add(*publishDelay), run: run}
		return
	}
	run()
}
