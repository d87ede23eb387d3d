package ideserver_test

import (
	"bufio"
	"context"
	"os"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// BenchmarkToolCallStream is one tools/call round trip through ServeStream
// over two OS pipes, as an MCP client talks to a server it started over
// stdio; compare with BenchmarkToolCallWS, the same calls over WebSocket.
func BenchmarkToolCallStream(b *testing.B) {
	srv := newStreamServer(b, &ideserver.Options{NoDefaultTools: true})
	for _, tool := range []ideserver.Tool{
		{Tool: mcp.Tool{Name: "echo"}, Handler: echoHandler},
		{Tool: mcp.Tool{Name: "echoInline"}, Handler: echoHandler, Inline: true},
	} {
		if err := srv.RegisterTool(tool); err != nil {
			b.Fatal(err)
		}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeStream(context.Background(), inR, outW) }()
	defer func() {
		inW.Close()
		<-done
		inR.Close()
		outW.Close()
		outR.Close()
	}()
	replies := bufio.NewReaderSize(outR, 1<<20)
	for _, size := range echoSizes {
		req := append(append([]byte(nil), size.req...), '\n')
		b.Run(size.name, func(b *testing.B) {
			lat := make(latencies, 0, b.N)
			b.SetBytes(int64(len(req)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if _, err := inW.Write(req); err != nil {
					b.Fatal(err)
				}
				if _, err := replies.ReadSlice('\n'); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			lat.report(b)
		})
	}
}
