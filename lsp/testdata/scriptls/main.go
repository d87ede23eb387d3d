// Command scriptls is a scripted language server for package lsp's tests: it
// does on purpose what real servers do only by accident (crash at a chosen
// request, answer ContentModified, publish stale versions, flood, hang,
// ignore exit, write malformed frames). It speaks LSP over stdio and uses
// only the standard library, so that it can break the protocol at will.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

var (
	encoding        = flag.String("encoding", "", "position encoding to choose (default: the client's first)")
	logFile         = flag.String("log", "", "append every received message to this file")
	crashOn         = flag.Int("crash-on", 0, "exit 3 on the Nth test/ request")
	contentModified = flag.Int("content-modified", 0, "answer the first N test/echo requests with ContentModified")
	stale           = flag.Bool("stale", false, "after each change's publish, publish again for the previous version")
	flood           = flag.Int("flood", 0, "publish N diagnostics on didOpen")
	noInit          = flag.Bool("no-init", false, "never answer initialize")
	ignoreExit      = flag.Bool("ignore-exit", false, "ignore shutdown's exit and start a grandchild")
	pidFile         = flag.String("pidfile", "", "write our pid and the grandchild's here")
	malformed       = flag.Bool("malformed-on-open", false, "answer didOpen with a malformed frame")
	progress        = flag.Bool("progress", false, "report work-done progress around each analysis")
	quietChanges    = flag.Bool("quiet-changes", false, "publish nothing for didChange")
	hangProgress    = flag.Bool("hang-progress", false, "begin progress on each change and never end it or publish")
	askConfig       = flag.String("ask-config", "", "comma-separated sections to request with workspace/configuration after initialized")
	stderrText      = flag.String("stderr", "", "write this to stderr at start")
	sleep           = flag.Bool("sleep", false, "just sleep (the grandchild)")
	stopReading     = flag.Bool("stop-reading", false, "stop reading stdin after initialized")
	twoPhase        = flag.Duration("two-phase", 0, "publish errors first, then after this long everything (as gopls does with analysis)")
	invalid         = flag.Bool("invalid", false, "also publish a diagnostic of severity 99 and one at line -1 with each analysis")
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
	slowMu   sync.Mutex
	slow     = map[string]bool{} // pending test/slow ids
)

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
		var p struct {
			Capabilities struct {
				General struct {
					PositionEncodings []string `json:"positionEncodings"`
				} `json:"general"`
			} `json:"capabilities"`
		}
		json.Unmarshal(m.Params, &p)
		if *encoding != "" {
			enc = *encoding
		} else if len(p.Capabilities.General.PositionEncodings) > 0 {
			enc = p.Capabilities.General.PositionEncodings[0]
		}
		reply(m.ID, map[string]any{
			"capabilities": map[string]any{
				"positionEncoding": enc,
				"textDocumentSync": map[string]any{"openClose": true, "change": 1, "save": map[string]any{}},
				"hoverProvider":    true,
			},
			"serverInfo": map[string]string{"name": "scriptls", "version": "1"},
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
		if *stopReading {
			time.Sleep(time.Hour)
		}
		if *ignoreExit {
			cmd := exec.Command(os.Args[0], "-sleep")
			if err := cmd.Start(); err == nil && *pidFile != "" {
				os.WriteFile(*pidFile, []byte(fmt.Sprintf("%d %d\n", os.Getpid(), cmd.Process.Pid)), 0o600)
			}
		}
	case "shutdown":
		reply(m.ID, nil)
	case "exit":
		if *ignoreExit {
			logf("ignoring exit")
			return
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
		texts[p.TextDocument.URI] = p.TextDocument.Text
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
		if n := len(p.ContentChanges); n > 0 {
			texts[p.TextDocument.URI] = p.ContentChanges[n-1].Text
		}
		if *hangProgress {
			token := fmt.Sprintf("hang-%d", p.TextDocument.Version)
			request("window/workDoneProgress/create", map[string]any{"token": token})
			notify("$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "begin", "title": "forever"}})
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
	case "textDocument/didClose":
		var p struct {
			TextDocument struct {
				URI string `json:"uri"`
			} `json:"textDocument"`
		}
		json.Unmarshal(m.Params, &p)
		delete(texts, p.TextDocument.URI)
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

// analyse publishes a diagnostic for every "ERROR" (severity 1) and
// "WARN" (severity 2) in the document, at its column in the chosen
// encoding.
func analyse(uri string, version int, alsoStale bool) {
	var token string
	if *progress {
		token = fmt.Sprintf("p-%d", version)
		request("window/workDoneProgress/create", map[string]any{"token": token})
		notify("$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "begin", "title": "analysing"}})
	}
	var diags []map[string]any
	for i, line := range splitLines(texts[uri]) {
		for _, w := range []struct {
			word string
			sev  int
		}{{"ERROR", 1}, {"WARN", 2}} {
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
					"message": fmt.Sprintf("found %s", w.word),
				})
				off += j + len(w.word)
			}
		}
	}
	if diags == nil {
		diags = []map[string]any{}
	}
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
		notify("textDocument/publishDiagnostics", map[string]any{"uri": uri, "version": version, "diagnostics": errorsOnly})
		time.Sleep(*twoPhase)
	}
	notify("textDocument/publishDiagnostics", map[string]any{"uri": uri, "version": version, "diagnostics": diags})
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

func publishFlood(uri string, version, n int) {
	if *progress {
		token := fmt.Sprintf("flood-%d", version)
		request("window/workDoneProgress/create", map[string]any{"token": token})
		notify("$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "begin", "title": "flooding"}})
		defer notify("$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "end"}})
	}
	var b strings.Builder
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":%q,"version":%d,"diagnostics":[`, uri, version)
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
