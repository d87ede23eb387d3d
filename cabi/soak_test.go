package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"unsafe"
)

// BenchmarkRegistrySoak drives one registry through the exports with 1M
// distinct document URIs, as a long-lived agent sees files come and go: for
// each URI a version (idb_registry_set_version) and a publish of one
// diagnostic, a drain every 100 URIs (its JSON freed) and, with
// reset=10k, a full reset (idb_registry_reset with NULL) every 10,000. It
// reports the Go heap in use after a collection and the process's resident
// set at 100k, 500k and 1M URIs: per-URI state is bounded, so all three
// should be about equal.
//
//	go test ./cabi -run '^$' -bench RegistrySoak -benchtime 1x
func BenchmarkRegistrySoak(b *testing.B) {
	for _, reset := range []int{10_000, 0} {
		name := "reset=never"
		if reset > 0 {
			name = fmt.Sprintf("reset=%dk", reset/1000)
		}
		b.Run(name, func(b *testing.B) { soak(b, reset) })
	}
}

// soak runs BenchmarkRegistrySoak, resetting every reset URIs (0: never).
func soak(b *testing.B, reset int) {
	const total = 1_000_000
	marks := []int{100_000, 500_000, 1_000_000}
	var h C_uint64
	if st := idb_registry_new(nil, &h); st != 0 {
		b.Fatalf("idb_registry_new: %d %s", st, lastError())
	}
	defer idb_registry_free(h)
	server := cstr(b, "plugin:go:gopls")
	heap := map[int]float64{}
	rss := map[int]float64{}
	b.ReportAllocs()
	for b.Loop() {
		for i := 1; i <= total; i++ {
			uri := fmt.Sprintf("file:///home/dev/proj/pkg%04d/file%07d.go", i%1000, i)
			params := `{"uri":"` + uri + `","version":1,"diagnostics":[{"range":{"start":{"line":3,"character":1},"end":{"line":3,"character":9}},"severity":1,"source":"compiler","message":"undefined: thing` + strconv.Itoa(i%64) + `"}]}`
			cu, cp := cString(uri), cString(params)
			if st := idb_registry_set_version(h, cu, 1); st != 0 {
				b.Fatalf("set_version: %d %s", st, lastError())
			}
			if st := idb_registry_publish(h, server, cp); st != 0 {
				b.Fatalf("publish: %d %s", st, lastError())
			}
			freeC(unsafe.Pointer(cu))
			freeC(unsafe.Pointer(cp))
			if i%100 == 0 {
				var out *C_char
				if st := idb_registry_drain(h, &out); st != 0 || out == nil {
					b.Fatalf("drain: %d %s", st, lastError())
				}
				freeC(unsafePointer(out))
			}
			if reset > 0 && i%reset == 0 {
				if st := idb_registry_reset(h, nil); st != 0 {
					b.Fatalf("reset: %d %s", st, lastError())
				}
			}
			for _, m := range marks {
				if i == m {
					b.StopTimer()
					runtime.GC()
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					heap[m] = max(heap[m], float64(ms.HeapInuse)/(1<<20))
					rss[m] = max(rss[m], residentMB(b))
					b.StartTimer()
				}
			}
		}
	}
	for _, m := range marks {
		b.ReportMetric(heap[m], fmt.Sprintf("heap-MB@%dk", m/1000))
		b.ReportMetric(rss[m], fmt.Sprintf("rss-MB@%dk", m/1000))
	}
	b.ReportMetric(0, "ns/op")
}

// residentMB returns the process's resident set size (VmRSS) in MiB.
func residentMB(b *testing.B) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatalf("the soak measures VmRSS from /proc/self/status: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:")); ok {
			f := bytes.Fields(rest)
			kb, err := strconv.ParseFloat(string(f[0]), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb / 1024
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0
}
