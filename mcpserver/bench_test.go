package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/lsp"
	"github.com/idebridge/idebridge/mcp"
)

// BenchmarkStructuredOverhead measures what structured output adds to a
// warm navigation call on gopls, in this repository (a module of
// realistic size): each iteration makes the tool call as a client does
// (arguments decoded, the path confined, the server asked, the answer
// rendered, the structured result built and encoded) and, in alternating
// order, the same call answering text only (the same steps without the
// structured result). It reports both medians in milliseconds and their
// ratio.
func BenchmarkStructuredOverhead(b *testing.B) {
	repo, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	env := testEnv(b)
	if c := os.Getenv("GOPLSCACHE"); c != "" {
		env = append(env, "GOPLSCACHE="+c) // a warm cache across runs
	}
	s := newTestServer(b, repo, &Options{NoIDE: true, Env: env})
	n := &navigator{m: s.srv.Manager(), p: s.srv.project}
	ops := []struct {
		tool string
		op   lsp.NavOp
		args posArgs
	}{
		{"hover", lsp.OpHover, posArgs{File: "diag/diagnostic.go", Line: 139, Symbol: "Diagnostic"}},
		{"definition", lsp.OpDefinition, posArgs{File: "mcpserver/diag.go", Line: 141, Symbol: "Diagnostic"}},
		{"references", lsp.OpReferences, posArgs{File: "diag/diagnostic.go", Line: 139, Symbol: "Diagnostic"}},
	}
	for _, op := range ops {
		b.Run(op.tool, func(b *testing.B) {
			raw, _ := json.Marshal(op.args)
			tool := s.tools[op.tool]
			full := func() *mcp.ToolResult {
				ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
				defer cancel()
				res, err := tool.Handler(ctx, &ideserver.ToolCall{Name: op.tool, Arguments: raw})
				if err != nil || res.IsError {
					b.Fatalf("%s: %v %s", op.tool, err, res.Text())
				}
				return res
			}
			textOnly := func() {
				ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
				defer cancel()
				var a posArgs
				if err := json.Unmarshal(raw, &a); err != nil {
					b.Fatal(err)
				}
				pos, bad := a.pos(n.p, op.tool)
				if bad != nil {
					b.Fatal(bad.Text())
				}
				res, err := n.m.Navigate(ctx, lsp.NavRequest{Op: op.op, At: pos, IncludeDeclaration: true})
				if err != nil {
					b.Fatal(err)
				}
				c := &converter{f: n.p.filter()}
				c.scrub(res)
				_, _ = json.Marshal(mcp.TextResult(res.Render(&lsp.NavRenderOptions{ProjectDir: n.p.dir})))
			}
			for range 5 { // warm: the package loaded, the file open
				full()
				textOnly()
			}
			res := full()
			var st struct {
				Status string `json:"status"`
				Total  int    `json:"total"`
			}
			_ = json.Unmarshal(res.StructuredContent, &st)
			if st.Status != statusComplete {
				b.Fatalf("%s on warm gopls: %s", op.tool, res.StructuredContent)
			}
			var withSt, without []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				one := func() { t := time.Now(); full(); withSt = append(withSt, time.Since(t)) }
				two := func() { t := time.Now(); textOnly(); without = append(without, time.Since(t)) }
				if i%2 == 0 {
					one()
					two()
				} else {
					two()
					one()
				}
			}
			b.StopTimer()
			med := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
			b.ReportMetric(float64(med(withSt).Microseconds())/1000, "structured-median-ms")
			b.ReportMetric(float64(med(without).Microseconds())/1000, "text-median-ms")
			b.ReportMetric(float64(med(withSt))/float64(med(without)), "median-ratio")
			b.ReportMetric(float64(st.Total), "locations")
		})
	}
}

// BenchmarkConfine measures the confinement of one path argument (links
// resolved, the file opened and checked on its descriptor): what every
// tool call pays before it asks a server.
func BenchmarkConfine(b *testing.B) {
	repo, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	p, err := newProject(repo, []string{repo})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if _, bad := p.confine("diag/diagnostic.go"); bad != nil {
			b.Fatal(bad.Text())
		}
	}
}
