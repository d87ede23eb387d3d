package ideserver_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

// Issue 19 row 8: over stdio, a string of a message longer than it may be
// where it stands (a member name, the tool's name, the id, an argument
// past its schema's maxLength) is refused with a bounded text naming it,
// under the request's id; text arguments of megabytes that no bound
// covers are served byte for byte, escapes and all, whatever the order of
// the members.
func TestStreamOverlongStrings(t *testing.T) {
	srv := newStreamServer(t, &ideserver.Options{NoDefaultTools: true})
	ran := registerWrite(t, srv)
	c := serveStream(t, testContext(t), srv)
	big := strings.Repeat("z", 1<<20)

	// Served: a text of 3 MiB with escapes, before and after the name.
	text, want := bigText()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":{"path":"a.txt","text":` + mustMarshal(text) + `}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{"text":` + mustMarshal(text) + `,"path":"a.txt"},"name":"write"}}`,
	} {
		c.writeLine(line)
		m := c.next()
		if r := decodeResult(t, m); m.Error != nil || r.IsError || len(r.texts()) != 1 || r.texts()[0] != want {
			t.Fatalf("a 3 MiB text: %.300s", mustMarshal(m))
		}
	}

	for _, tc := range []struct {
		name, line string
		id         string // the answer's id
		isError    bool   // an isError result, not a JSON-RPC error
		says       string
	}{
		{"tool name", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + big + `"}}`, "3", false, "params.name is"},
		{"path over maxLength", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"write","arguments":{"path":"` + big + `"}}}`, "4", true, "the argument path is"},
		{"path before the name", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{"path":"` + big + `"},"name":"write"}}`, "5", true, "the argument path is"},
		{"argument name", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"write","arguments":{"` + big + `":1}}}`, "6", true, "a member name in params.arguments is"},
		{"unknown argument", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write","arguments":{"other":"` + big + `"}}}`, "7", true, "the argument other is"},
		{"unknown tool", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"arguments":{"path":"` + big + `"},"name":"nope"}}`, "10", false, "Tool not found: nope"},
		{"method", `{"jsonrpc":"2.0","id":8,"method":"` + big + `"}`, "8", false, "method is"},
		{"id", `{"jsonrpc":"2.0","id":"` + big + `","method":"ping"}`, "null", false, "id is"},
		{"_meta", `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"x":"` + big + `"}}}`, "9", false, "params._meta.x is"},
	} {
		c.writeLine(tc.line)
		m := c.next()
		raw := mustMarshal(m)
		if len(raw) > 8<<10 || string(m.ID) != tc.id && !(tc.id == "null" && len(m.ID) == 0) {
			t.Errorf("%s: answer of %d bytes: %.300s", tc.name, len(raw), raw)
			continue
		}
		var got string
		if tc.isError {
			r := decodeResult(t, m)
			if m.Error != nil || !r.IsError {
				t.Errorf("%s: not an isError result: %.300s", tc.name, raw)
				continue
			}
			got = strings.Join(r.texts(), "\n")
		} else {
			if m.Error == nil {
				t.Errorf("%s: not an error: %.300s", tc.name, raw)
				continue
			}
			got = m.Error.Message + " " + string(m.Error.Data)
		}
		if !strings.Contains(got, tc.says) || tc.name != "unknown tool" && (!strings.Contains(got, "zzzz") || !strings.Contains(got, "(1048576 bytes)")) {
			t.Errorf("%s: the answer does not name the string, its start and size: %s", tc.name, got)
		}
	}
	if *ran != 2 {
		t.Errorf("the tool ran %d times, want 2 (the refused calls never reach it)", *ran)
	}
	// The session goes on.
	if m := c.call(mcp.MethodListTools, nil); m.Error != nil {
		t.Fatalf("tools/list after: %s", mustMarshal(m))
	}
}

// registerWrite registers the tool "write", whose path argument has a
// maxLength of 100 and whose text argument has none; it answers the path
// and the text's SHA-256. The count of its runs is returned.
func registerWrite(t *testing.T, srv *ideserver.Server) *int {
	ran := new(int)
	mustRegister(t, srv, ideserver.Tool{
		Tool: mcp.Tool{Name: "write", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"path":{"type":"string","maxLength":100},"text":{"type":"string"}},"additionalProperties":false}`)},
		Inline: true,
		Handler: func(_ context.Context, c *ideserver.ToolCall) (*mcp.ToolResult, error) {
			*ran++
			var a struct{ Path, Text string }
			if err := c.Bind(&a); err != nil {
				return nil, err
			}
			sum := sha256.Sum256([]byte(a.Text))
			return mcp.TextResult(a.Path + " " + hex.EncodeToString(sum[:])), nil
		},
	})
	return ran
}

// bigText returns 3 MiB of text with every kind of escape, and what
// write answers for it at path a.txt.
func bigText() (text, answer string) {
	text = strings.Repeat("line \"quoted\" \\ tab\t é 😀 \u2028\n", 100_000)
	sum := sha256.Sum256([]byte(text))
	return text, "a.txt " + hex.EncodeToString(sum[:])
}

// Issue 19 row 8 over Streamable HTTP: a body with a string too long for
// its place is refused as over stdio, whether its length was declared or
// not; a body with 3 MiB of text is served byte for byte, both ways.
func TestStreamableHTTPOverlongStrings(t *testing.T) {
	srv := newStreamServer(t, &ideserver.Options{NoDefaultTools: true})
	ran := registerWrite(t, srv)
	h := serveHTTPTCP(t, srv)
	resp, body := h.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	sid := resp.Header.Get(mcp.HeaderSessionID)
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	post := func(body string, chunked bool) *jsonrpc.Message {
		t.Helper()
		var r io.Reader = strings.NewReader(body)
		if chunked {
			r = struct{ io.Reader }{r} // no length said
		}
		req, _ := http.NewRequest(http.MethodPost, h.url, r)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Authorization", "Bearer "+h.token)
		req.Header.Set(mcp.HeaderSessionID, sid)
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatalf("POST: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		m, err := jsonrpc.Decode(b)
		if err != nil || len(b) > 8<<10 {
			t.Fatalf("answer %d of %d bytes: %.300s", resp.StatusCode, len(b), b)
		}
		return m
	}
	text, want := bigText()
	big := strings.Repeat("z", 1<<20)
	for _, chunked := range []bool{false, true} {
		m := post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{"path":"a.txt","text":`+mustMarshal(text)+`}}}`, chunked)
		if r := decodeResult(t, m); m.Error != nil || r.IsError || len(r.texts()) != 1 || r.texts()[0] != want {
			t.Errorf("a 3 MiB text (chunked %v): %.300s", chunked, mustMarshal(m))
		}
		m = post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{"path":"`+big+`"},"name":"write"}}`, chunked)
		if r := decodeResult(t, m); string(m.ID) != "3" || !r.IsError || !strings.Contains(strings.Join(r.texts(), ""), "the argument path is \"zzz") {
			t.Errorf("a 1 MiB path (chunked %v): %.300s", chunked, mustMarshal(m))
		}
		m = post(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"`+big+`"}}`, chunked)
		if string(m.ID) != "4" || m.Error == nil || !strings.Contains(string(m.Error.Data), "params.name is") || !strings.Contains(string(m.Error.Data), "(1048576 bytes)") {
			t.Errorf("a 1 MiB tool name (chunked %v): %.300s", chunked, mustMarshal(m))
		}
	}
	if *ran != 2 {
		t.Errorf("the tool ran %d times, want 2", *ran)
	}
}
