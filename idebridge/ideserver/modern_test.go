package ideserver_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// modernMeta is params._meta of a 2026-07-28 request.
func modernMeta(version string) map[string]any {
	return map[string]any{
		mcp.MetaProtocolVersion:    version,
		mcp.MetaClientCapabilities: map[string]any{},
		mcp.MetaClientInfo:         map[string]any{"name": "modern-test", "version": "9"},
	}
}

func echoTool() ideserver.Tool {
	return ideserver.Tool{
		Tool: mcp.Tool{Name: "echo", Description: "says what it got"},
		Handler: func(_ context.Context, c *ideserver.ToolCall) (*mcp.ToolResult, error) {
			return mcp.TextResult(string(c.Arguments) + " from " + c.Client.Name + "@" + c.Client.ProtocolVersion), nil
		},
	}
}

// A 2026-07-28 client needs no handshake: server/discover, tools/list and
// tools/call are answered from what each request carries, every result
// with resultType and the server's identity, the cacheable ones with ttlMs
// and cacheScope; an unsupported version is -32022 with the supported
// list, and a request missing its capabilities -32602. A legacy client on
// the same stream still opens with initialize and gets legacy results.
func TestModernEraOverStream(t *testing.T) {
	srv := newStreamServer(t, &ideserver.Options{
		NoDefaultTools: true, ServerName: "srv", ServerVersion: "1.2",
		Instructions: "use echo", ToolsListTTL: 90 * time.Second,
	})
	mustRegister(t, srv, echoTool())
	c := serveStream(t, testContext(t), srv)

	type result struct {
		ResultType string `json:"resultType"`
		Meta       struct {
			ServerInfo mcp.Implementation `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
		TTL               *int64          `json:"ttlMs"`
		CacheScope        string          `json:"cacheScope"`
		SupportedVersions []string        `json:"supportedVersions"`
		Capabilities      json.RawMessage `json:"capabilities"`
		Instructions      string          `json:"instructions"`
		Tools             []mcp.Tool      `json:"tools"`
		Content           []mcp.Content   `json:"content"`
	}
	decode := func(raw json.RawMessage) result {
		t.Helper()
		var r result
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("result %s: %v", raw, err)
		}
		if r.ResultType != "complete" || r.Meta.ServerInfo != (mcp.Implementation{Name: "srv", Version: "1.2"}) {
			t.Errorf("result without resultType or serverInfo: %s", raw)
		}
		return r
	}

	m := c.call(mcp.MethodDiscover, map[string]any{"_meta": modernMeta(mcp.ModernProtocolVersion)})
	if m.Error != nil {
		t.Fatalf("server/discover: %+v", m.Error)
	}
	d := decode(m.Result)
	if d.SupportedVersions[0] != mcp.ModernProtocolVersion || !contains(d.SupportedVersions, mcp.ProtocolVersion) ||
		string(d.Capabilities) != `{"tools":{}}` || d.Instructions != "use echo" || d.TTL == nil || *d.TTL != 90000 || d.CacheScope != "private" {
		t.Errorf("server/discover: %s", m.Result)
	}

	var lists []json.RawMessage
	for range 2 {
		m = c.call(mcp.MethodListTools, map[string]any{"_meta": modernMeta(mcp.ModernProtocolVersion)})
		if m.Error != nil {
			t.Fatalf("tools/list: %+v", m.Error)
		}
		lists = append(lists, m.Result)
	}
	l := decode(lists[0])
	if len(l.Tools) != 1 || l.Tools[0].Name != "echo" || l.TTL == nil || *l.TTL != 90000 || l.CacheScope != "private" {
		t.Errorf("tools/list: %s", lists[0])
	}
	if string(lists[0]) != string(lists[1]) {
		t.Errorf("tools/list is not deterministic:\n%s\n%s", lists[0], lists[1])
	}

	m = c.call(mcp.MethodCallTool, map[string]any{"name": "echo", "arguments": map[string]int{"a": 1}, "_meta": modernMeta(mcp.ModernProtocolVersion)})
	if m.Error != nil {
		t.Fatalf("tools/call: %+v", m.Error)
	}
	if r := decode(m.Result); len(r.Content) != 1 || r.Content[0].Text != `{"a":1} from modern-test@2026-07-28` {
		t.Errorf("tools/call: %s", m.Result)
	}

	m = c.call(mcp.MethodListTools, map[string]any{"_meta": modernMeta("2099-01-01")})
	var data struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}
	if m.Error == nil || m.Error.Code != mcp.CodeUnsupportedProtocolVersion || json.Unmarshal(m.Error.Data, &data) != nil ||
		data.Requested != "2099-01-01" || !reflect.DeepEqual(data.Supported, d.SupportedVersions) {
		t.Errorf("unsupported version: %s", mustMarshal(m))
	}
	m = c.call(mcp.MethodListTools, map[string]any{"_meta": map[string]any{mcp.MetaProtocolVersion: mcp.ModernProtocolVersion}})
	if m.Error == nil || m.Error.Code != mcp.CodeInvalidParams {
		t.Errorf("no clientCapabilities: %s", mustMarshal(m))
	}
	m = c.call(mcp.MethodPing, map[string]any{"_meta": modernMeta(mcp.ModernProtocolVersion)})
	if m.Error == nil || m.Error.Code != mcp.CodeMethodNotFound {
		t.Errorf("modern ping (removed in 2026-07-28): %s", mustMarshal(m))
	}

	// A legacy client, same stream.
	m = c.call(mcp.MethodInitialize, map[string]any{"protocolVersion": mcp.ProtocolVersion, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "legacy", "version": "1"}})
	if m.Error != nil {
		t.Fatalf("initialize: %+v", m.Error)
	}
	m = c.call(mcp.MethodListTools, nil)
	var legacy map[string]json.RawMessage
	if m.Error != nil || json.Unmarshal(m.Result, &legacy) != nil || legacy["resultType"] != nil || legacy["ttlMs"] != nil || legacy["tools"] == nil {
		t.Errorf("legacy tools/list: %s", mustMarshal(m))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A call whose request carries a progress token gets notifications/progress
// from ReportProgress, increasing, rate-limited, all before its answer and
// none after; a call without a token gets none.
func TestProgressNotifications(t *testing.T) {
	srv := newStreamServer(t, &ideserver.Options{NoDefaultTools: true, ProgressInterval: -1})
	mustRegister(t, srv, ideserver.Tool{
		Tool: mcp.Tool{Name: "work"},
		Handler: func(ctx context.Context, _ *ideserver.ToolCall) (*mcp.ToolResult, error) {
			ideserver.ReportProgress(ctx, 1, 3, "loading")
			ideserver.ReportProgress(ctx, 1, 3, "not increasing: dropped")
			ideserver.ReportProgress(ctx, 2, 3, "")
			ideserver.ReportProgress(ctx, 3, 3, "done")
			return mcp.TextResult("ok"), nil
		},
	})
	c := serveStream(t, testContext(t), srv)
	for _, modern := range []bool{false, true} {
		meta := map[string]any{"progressToken": "tok"}
		if modern {
			meta = modernMeta(mcp.ModernProtocolVersion)
			meta["progressToken"] = 42
		}
		id := c.request(mcp.MethodCallTool, map[string]any{"name": "work", "_meta": meta})
		var got []string
		for {
			m := c.next()
			if m.IsNotification() {
				if m.Method != mcp.MethodProgress {
					t.Fatalf("notification %s", mustMarshal(m))
				}
				got = append(got, string(m.Params))
				continue
			}
			if string(m.ID) != string(id) || m.Error != nil {
				t.Fatalf("answer %s", mustMarshal(m))
			}
			break
		}
		tok := `"tok"`
		if modern {
			tok = "42"
		}
		want := []string{
			`{"progressToken":` + tok + `,"progress":1,"total":3,"message":"loading"}`,
			`{"progressToken":` + tok + `,"progress":2,"total":3}`,
			`{"progressToken":` + tok + `,"progress":3,"total":3,"message":"done"}`,
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("modern %v: progress\n%q\nwant\n%q", modern, got, want)
		}
	}
	// No token, no notification: the answer is the next message.
	m := c.call(mcp.MethodCallTool, map[string]any{"name": "work"})
	if m.Error != nil {
		t.Fatal(m.Error)
	}
}
