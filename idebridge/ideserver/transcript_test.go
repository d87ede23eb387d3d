package ideserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

// transcriptDir holds the wire transcripts recorded from the deployed
// programs (its README.md says which).
const transcriptDir = "../testdata/mcp"

// transcriptLine is one line of a transcript file.
type transcriptLine struct {
	Dir            string            `json:"dir"`
	Msg            json.RawMessage   `json:"msg"`
	UpgradeRequest map[string]string `json:"upgrade_request"`
}

// loadTranscript reads a transcript with the deployed workspace path
// /home/dev/proj replaced by ws.
func loadTranscript(t *testing.T, name, ws string) []transcriptLine {
	t.Helper()
	f, err := os.Open(filepath.Join(transcriptDir, name))
	if err != nil {
		t.Fatalf("transcript: %v", err)
	}
	defer f.Close()
	var out []transcriptLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := rewritePaths(sc.Bytes(), "/home/dev/proj", ws)
		var l transcriptLine
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("transcript line %s: %v", line, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// rewritePaths replaces a path in raw JSON, in both its plain and its
// slash-escaped (and doubly escaped, inside JSON texts) spellings.
func rewritePaths(b []byte, from, to string) []byte {
	b = bytes.ReplaceAll(b, []byte(from), []byte(to))
	esc := func(s string) string { return strings.ReplaceAll(s, "/", `\/`) }
	b = bytes.ReplaceAll(b, []byte(esc(from)), []byte(esc(to)))
	esc2 := func(s string) string { return strings.ReplaceAll(s, "/", `\\\/`) }
	return bytes.ReplaceAll(b, []byte(esc2(from)), []byte(esc2(to)))
}

// diagnosticsTool stands in for the getDiagnostics a language server would
// back, answering like the Neovim plugin without one.
var diagnosticsTool = ideserver.Tool{
	Tool: mcp.Tool{
		Name:        "getDiagnostics",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"uri":{"type":"string"}}}`),
	},
	Handler: func(_ context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
		var a struct{ URI string }
		if err := call.Bind(&a); err != nil {
			return nil, err
		}
		if strings.Contains(a.URI, "/no/such/") {
			p := strings.TrimPrefix(a.URI, "file://")
			return nil, &mcp.Error{Code: jsonrpc.CodeFileNotOpen, Message: "File not open", Data: json.RawMessage(`"File must be open to retrieve diagnostics: ` + p + `"`)}
		}
		return mcp.TextResult("[]"), nil
	},
}

// transport abstracts the two raw clients for the replay.
type replayClient interface {
	sendRaw([]byte)
	next() *jsonrpc.Message
}

type sseReplay struct{ *sseClient }

func (s sseReplay) sendRaw(b []byte) {
	if resp := s.postRaw(b, authHeader(s.token)); resp.StatusCode != http.StatusAccepted {
		s.t.Fatalf("POST: %s", resp.Status)
	}
}

func TestReplayReferenceAgent(t *testing.T) {
	for _, transport := range []string{"ws", "sse"} {
		t.Run(transport, func(t *testing.T) {
			ws := filepath.Join(t.TempDir(), "proj")
			writeFile(t, filepath.Join(ws, "main.go"), "package main\n\nfunc main() {}\n")
			lines := loadTranscript(t, "agent-claude-code-2.1.100.jsonl", ws)
			ev := newEvents()
			srv := startServer(t, &ideserver.Options{Transport: transport, WorkspaceFolders: []string{ws}, DiffPolicy: ideserver.AcceptDiffs, OnEvent: ev.hook})
			if err := srv.RegisterTool(diagnosticsTool); err != nil {
				t.Fatal(err)
			}
			var c replayClient
			if transport == "ws" {
				// Claude Code's upgrade request, token aside.
				up := lines[0].UpgradeRequest
				h := http.Header{}
				h.Set("User-Agent", up["User-Agent"])
				h.Set(mcp.AuthHeader, srv.AuthToken())
				conn, resp, err := dialRaw(srv.URL(), h, &websocket.Dialer{EnableCompression: strings.Contains(up["Sec-WebSocket-Extensions"], "permessage-deflate")})
				if err != nil {
					t.Fatalf("upgrade: %v %v", err, resp)
				}
				c = newClient(t, conn)
			} else {
				c = sseReplay{dialSSE(t, srv)}
			}
			answers := map[string]*jsonrpc.Message{}
			var proposed string
			for _, l := range lines[1:] {
				m, err := jsonrpc.Decode(l.Msg)
				if err != nil {
					t.Fatal(err)
				}
				if m.Method == "tools/call" && strings.Contains(string(m.Params), `"openDiff"`) {
					var p struct {
						Arguments struct {
							Contents string `json:"new_file_contents"`
						} `json:"arguments"`
					}
					json.Unmarshal(m.Params, &p)
					proposed = p.Arguments.Contents
				}
				c.sendRaw(l.Msg) // byte for byte
				if m.IsRequest() {
					a := c.next()
					if string(a.ID) != string(m.ID) {
						t.Fatalf("answer for id %s after request %s", a.ID, m.ID)
					}
					answers[string(m.ID)] = a
				}
			}
			var init struct {
				ProtocolVersion string
				Capabilities    struct{ Tools map[string]any }
				ServerInfo      struct{ Name string }
			}
			if err := json.Unmarshal(answers["0"].Result, &init); err != nil || init.ProtocolVersion != "2024-11-05" || init.Capabilities.Tools == nil || init.ServerInfo.Name == "" {
				t.Errorf("initialize answer %s", answers["0"].Result)
			}
			var list struct{ Tools []struct{ Name string } }
			json.Unmarshal(answers["1"].Result, &list)
			var names []string
			for _, tl := range list.Tools {
				names = append(names, tl.Name)
			}
			for _, want := range []string{"openDiff", "closeAllDiffTabs", "getDiagnostics", "openFile"} {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list lacks %s: %v", want, names)
				}
			}
			wantTexts := map[string][]string{
				"2": {"CLOSED_0_DIFF_TABS"},
				"3": {"[]"},
				"4": {"FILE_SAVED", proposed},
				"5": {"TAB_CLOSED"},
				"6": {"[]"},
				"7": {"[]"},
				"8": {"[]"},
				"9": {"CLOSED_0_DIFF_TABS"}, // close_tab closed the diff
			}
			for id, want := range wantTexts {
				a := answers[id]
				if a == nil || a.Error != nil {
					t.Errorf("id %s: %s", id, mustMarshal(a))
					continue
				}
				if got := decodeResult(t, a).texts(); !slices.Equal(got, want) {
					t.Errorf("id %s: %q, want %q", id, got, want)
				}
			}
			// The file is untouched: the agent writes it, not the IDE.
			if got := readFile(t, filepath.Join(ws, "main.go")); got != "package main\n\nfunc main() {}\n" {
				t.Errorf("main.go changed to %q", got)
			}
			ev.waitFor(t, ideserver.EventInitialized)
			if e := ev.waitFor(t, ideserver.EventIDEConnected); e.Client.PID != 5435 || e.Client.Name != "claude-code" || e.Client.Version != "2.1.100" {
				t.Errorf("client %+v", e.Client)
			}
		})
	}
}

// TestAnswersMatchNeovimPlugin sends what the Neovim transcript's client
// sent and compares our answers with the plugin's, after mapping paths.
func TestAnswersMatchNeovimPlugin(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws") // the plugin named its folder "ws"
	writeFile(t, filepath.Join(ws, "main.go"), "package main\n\nfunc main() { println(0) }\n")
	lines := loadTranscript(t, "ide-neovim-plugin.jsonl", ws)
	policy := ideserver.DiffPolicyFunc(func(_ context.Context, r *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
		if strings.HasSuffix(r.TabName, "-accept") {
			return ideserver.SaveDiff(r.NewContents), nil
		}
		return ideserver.DiffDecision{Action: ideserver.DiffReject}, nil
	})
	srv := startServer(t, &ideserver.Options{WorkspaceFolders: []string{ws}, DiffPolicy: policy, RefusePing: true})
	if err := srv.RegisterTool(diagnosticsTool); err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv)
	theirs := map[string]*jsonrpc.Message{}
	var ids []string
	for _, l := range lines {
		m, err := decodeServerMessage(l.Msg)
		if err != nil {
			t.Fatal(err)
		}
		if l.Dir == "ide->client" && m.IsResponse() {
			theirs[string(m.ID)] = m
		}
		if l.Dir == "client->ide" && m.IsRequest() {
			ids = append(ids, string(m.ID))
		}
	}
	ours := map[string]*jsonrpc.Message{}
	for _, l := range lines {
		if l.Dir != "client->ide" {
			continue
		}
		m, _ := jsonrpc.Decode(l.Msg)
		c.sendRaw(l.Msg)
		if m.IsRequest() {
			for {
				a := c.next()
				if a.IsNotification() {
					continue
				}
				ours[string(a.ID)] = a
				break
			}
		}
	}
	for _, id := range ids {
		want, got := theirs[id], ours[id]
		switch id {
		case "0":
			if !strings.Contains(string(got.Result), `"protocolVersion":"2024-11-05"`) {
				t.Errorf("initialize: %s", got.Result)
			}
			continue
		case "1":
			compareToolSchemas(t, want.Result, got.Result)
			continue
		case "10":
			// The plugin's close_tab after an accepted diff fails with an
			// error object inside result (a bug clients tolerate); ours
			// simply closes the tab.
			if texts := decodeResult(t, got).texts(); !slices.Equal(texts, []string{"TAB_CLOSED"}) {
				t.Errorf("close_tab after accept: %v", texts)
			}
			continue
		}
		if want.Error != nil {
			if !sameError(got.Error, want.Error) {
				t.Errorf("id %s: error %s, want %s", id, mustMarshal(got.Error), mustMarshal(want.Error))
			}
			continue
		}
		if got.Error != nil {
			t.Errorf("id %s: error %s, want result %s", id, mustMarshal(got.Error), want.Result)
			continue
		}
		w, g := decodeResult(t, want), decodeResult(t, got)
		if len(w.Content) != len(g.Content) {
			t.Errorf("id %s: %q, want %q", id, g.texts(), w.texts())
			continue
		}
		for i := range w.Content {
			wt, gt := w.Content[i].Text, g.Content[i].Text
			var wv, gv any
			if json.Unmarshal([]byte(wt), &wv) == nil && strings.HasPrefix(wt, "{") {
				if err := json.Unmarshal([]byte(gt), &gv); err != nil {
					t.Errorf("id %s: text %q is not JSON", id, gt)
				} else if !reflect.DeepEqual(wv, gv) {
					t.Errorf("id %s: JSON text %s, want %s", id, gt, wt)
				}
				if strings.Contains(wt, `\/`) != strings.Contains(gt, `\/`) {
					t.Errorf("id %s: slash escaping differs: %s vs %s", id, gt, wt)
				}
				continue
			}
			if wt != gt {
				t.Errorf("id %s: text %q, want %q", id, gt, wt)
			}
		}
	}
}

// compareToolSchemas checks that every tool both lists has the same
// argument names, types and required arguments as the deployed plugin.
func compareToolSchemas(t *testing.T, theirs, ours json.RawMessage) {
	t.Helper()
	type schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
		Type     string   `json:"type"`
	}
	parse := func(raw json.RawMessage) map[string]schema {
		var l struct {
			Tools []struct {
				Name        string `json:"name"`
				InputSchema schema `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatal(err)
		}
		m := map[string]schema{}
		for _, tl := range l.Tools {
			sort.Strings(tl.InputSchema.Required)
			m[tl.Name] = tl.InputSchema
		}
		return m
	}
	w, g := parse(theirs), parse(ours)
	shared := 0
	for name, ws := range w {
		gs, ok := g[name]
		if !ok {
			continue
		}
		shared++
		if !reflect.DeepEqual(ws, gs) {
			t.Errorf("tool %s schema %+v, want %+v", name, gs, ws)
		}
	}
	if shared < 7 {
		t.Errorf("only %d tools in common with the plugin", shared)
	}
}

// sameError compares JSON-RPC errors by value (data may differ in slash
// escaping only).
func sameError(a, b *jsonrpc.Error) bool {
	if a == nil || b == nil {
		return a == b
	}
	var ad, bd any
	json.Unmarshal(a.Data, &ad)
	json.Unmarshal(b.Data, &bd)
	return a.Code == b.Code && a.Message == b.Message && reflect.DeepEqual(ad, bd)
}
