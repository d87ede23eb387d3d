package idebridge

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/idebridge/idebridge/lockfile"
)

// BenchmarkDiscover200 discovers and validates 200 lockfiles for the working
// directory, 10 of them for live loopback listeners and 190 for closed
// ports, with real files, real pids and real TCP probes.
//
//   - concurrent: the defaults (probes in parallel; a refused connection
//     answers at once).
//   - serial: Concurrency 1, for comparison.
//   - filtered: the 190 closed ports never answer (as behind a firewall
//     that drops packets, which loopback cannot be made to do: a scripted
//     dialer waits out the 500 ms probe timeout). Probing concurrently
//     bounds the run by about one timeout instead of 190.
func BenchmarkDiscover200(b *testing.B) {
	s := newDiscoverSetup(b)
	open := map[int]bool{}
	now := time.Now()
	for i := range 200 {
		port := 0
		if i%20 == 0 {
			port = listenLoopback(b)
			open[port] = true
		} else {
			port = closedPort(b)
		}
		writeLock(b, s.ideDir, &lockfile.Lockfile{
			Port: port, PID: os.Getpid(), IDEName: "Visual Studio Code", Transport: "ws",
			AuthToken: "token", WorkspaceFolders: []string{"/some/other/folder", s.proj},
		}, now.Add(-time.Duration(i)*time.Second))
	}
	filtered := func(ctx context.Context, network, addr string) (net.Conn, error) {
		_, portStr, _ := net.SplitHostPort(addr)
		port, _ := net.LookupPort("tcp", portStr)
		if open[port] {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}

	for _, bc := range []struct {
		name string
		opts func(*DiscoverOptions)
	}{
		{"concurrent", func(*DiscoverOptions) {}},
		{"serial", func(o *DiscoverOptions) { o.Concurrency = 1 }},
		{"filtered", func(o *DiscoverOptions) { o.Dial = filtered }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			opts := s.opts()
			bc.opts(opts)
			for b.Loop() {
				cands, err := Discover(context.Background(), opts)
				if err != nil {
					b.Fatal(err)
				}
				if len(cands) != 200 || len(ValidCandidates(cands)) != len(open) {
					b.Fatalf("%d candidates, %d valid; want 200, %d", len(cands), len(ValidCandidates(cands)), len(open))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/discover")
		})
	}
}
