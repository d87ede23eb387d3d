//go:build unix

package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgotypes "github.com/mark3labs/mcp-go/mcp"
)

// mcp-go (github.com/mark3labs/mcp-go), an MCP implementation written
// apart from the official SDKs, drives idebridge as a user of that
// library would: over stdio (`idebridge mcp`) and over the shared
// runtime's Streamable HTTP (its TCP endpoint and token), each in both
// eras. Its client probes server/discover first (2026-07-28, each request
// standing alone) and, asked for 2025-11-25, initializes a legacy
// session. Each time: the era it asked for, every
// tool listed, gopls's answers to navigation and diagnostics with
// structured content, a path outside the project refused as a tool
// error; closing the HTTP legacy session ends it in the runtime.
func TestMCPGoClient(t *testing.T) {
	s := newScene(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*testTimeout)
	defer cancel()
	env := s.runtimeEnv(t)
	ep, stderr := s.runtimeHTTP(t, env)
	hc := &http.Client{Transport: bearer{token: ep.Token, base: http.DefaultTransport}}

	// httpSessions counts the runtime's HTTP sessions (a stdio client's
	// session ends when its process has gone, which this test does not
	// wait for).
	httpSessions := func() int {
		c := exec.Command(idebridgeBin(t), "runtime", "status", "--json")
		c.Env = env
		out, err := c.Output()
		var st struct {
			Projects []struct{ Sessions []struct{ Transport string } }
		}
		if err != nil || json.Unmarshal(out, &st) != nil {
			t.Fatalf("runtime status: %v\n%s", err, out)
		}
		n := 0
		for _, p := range st.Projects {
			for _, s := range p.Sessions {
				if s.Transport == "http" {
					n++
				}
			}
		}
		return n
	}

	for _, tc := range []struct {
		name    string
		http    bool
		legacy  bool
		version string
	}{
		{"stdio/modern", false, false, mcpgotypes.ProtocolVersion20260728},
		{"stdio/legacy", false, true, mcpgotypes.ProtocolVersion20251125},
		{"http/modern", true, false, mcpgotypes.ProtocolVersion20260728},
		{"http/legacy", true, true, mcpgotypes.ProtocolVersion20251125},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tr transport.Interface
			if tc.http {
				h, err := transport.NewStreamableHTTP(ep.URL, transport.WithHTTPBasicClient(hc))
				if err != nil {
					t.Fatal(err)
				}
				tr = h
			} else {
				tr = transport.NewStdio(idebridgeBin(t), env, "mcp", "--no-ide", "--project", s.dir)
			}
			c := mcpgo.NewClient(tr)
			if err := c.Start(ctx); err != nil {
				t.Fatalf("start: %v", err)
			}
			closed := false
			defer func() {
				if !closed {
					c.Close()
				}
			}()
			var ir mcpgotypes.InitializeRequest
			ir.Params.ClientInfo = mcpgotypes.Implementation{Name: "mcp-go-test", Version: "1.2.1"}
			if tc.legacy {
				// A legacy version asked for: no server/discover probe.
				ir.Params.ProtocolVersion = tc.version
			}
			res, err := c.Initialize(ctx, ir)
			if err != nil {
				t.Fatalf("initialize: %v\nruntime's stderr:\n%s", err, stderr)
			}
			if res.ProtocolVersion != tc.version || res.ServerInfo.Name != "idebridge" {
				t.Errorf("negotiated %q with %q, want %q with idebridge", res.ProtocolVersion, res.ServerInfo.Name, tc.version)
			}
			tools, err := c.ListTools(ctx, mcpgotypes.ListToolsRequest{})
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			for _, want := range toolNames {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list lacks %s: %v", want, names)
				}
			}

			callGo := func(wantErr bool, name string, args map[string]any) string {
				t.Helper()
				var req mcpgotypes.CallToolRequest
				req.Params.Name, req.Params.Arguments = name, args
				r, err := c.CallTool(ctx, req)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if len(r.Content) != 1 {
					t.Fatalf("%s: %d content blocks, want 1", name, len(r.Content))
				}
				text, ok := mcpgotypes.AsTextContent(r.Content[0])
				if !ok {
					t.Fatalf("%s: %T, want text", name, r.Content[0])
				}
				if r.IsError != wantErr {
					t.Errorf("%s %v: isError %v, want %v:\n%s", name, args, r.IsError, wantErr, text.Text)
				}
				if !wantErr && r.StructuredContent == nil {
					t.Errorf("%s %v: no structured content", name, args)
				}
				return text.Text
			}
			wantAll(t, "definition", callGo(false, "definition", map[string]any{"file": "main.go", "line": 7, "symbol": "greet", "occurrence": 2}), "greet.go:14:")
			wantAll(t, "hover", callGo(false, "hover", map[string]any{"file": "greet.go", "line": 12, "symbol": "Greet"}), "Greet says hi")
			wantAll(t, "references", callGo(false, "references", map[string]any{"file": "greet.go", "line": 14, "symbol": "greet"}), "main.go:7:")
			diags := callGo(false, "diagnostics", map[string]any{"files": []string{"broken.go"}})
			// Not known to be current (a cold gopls on a busy machine):
			// asked again, as a client does.
			for try := 0; try < 4 && strings.Contains(diags, "may be incomplete or stale"); try++ {
				diags = callGo(false, "diagnostics", map[string]any{"files": []string{"broken.go"}})
			}
			wantAll(t, "diagnostics", diags, "declared and not used: x")
			if text := callGo(true, "references", map[string]any{"file": "../elsewhere.go", "line": 1, "column": 1}); !strings.Contains(text, "outside the project") {
				t.Errorf("a path outside the project: %q, want a refusal saying so", text)
			}

			if tc.http && tc.legacy {
				if n := httpSessions(); n != 1 {
					t.Errorf("with mcp-go's legacy session open, the runtime counts %d HTTP sessions, want 1", n)
				}
				closed = true
				if err := c.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
				if n := httpSessions(); n != 0 {
					t.Errorf("after mcp-go closed its legacy session: %d HTTP sessions, want 0", n)
				}
			}
		})
	}
}
