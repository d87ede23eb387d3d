package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idebridge/idebridge/lspdiag"
)

// publish10 returns testdata/publish10.json: one publishDiagnostics params
// with 10 diagnostics, the unit of the registry benchmarks here, in
// cabi/test/abi_test.c (bench) and in bindings/python/bench.py.
func publish10(b *testing.B) string {
	data, err := os.ReadFile(filepath.Join("testdata", "publish10.json"))
	if err != nil {
		b.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

// BenchmarkRegistryPublish10 compares one publish of 10 diagnostics through
// the Go API with the same publish through the export (everything the
// export adds but the cgo transition itself, which the C benchmark counts).
func BenchmarkRegistryPublish10(b *testing.B) {
	params := publish10(b)
	b.Run("go", func(b *testing.B) {
		reg := newGoRegistry(b)
		raw := json.RawMessage(params)
		b.ReportAllocs()
		for b.Loop() {
			if err := reg.Publish("plugin:go:gopls", raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("abi", func(b *testing.B) {
		var h C_uint64
		if st := idb_registry_new(nil, &h); st != 0 {
			b.Fatal(st)
		}
		defer idb_registry_free(h)
		server, p := cstr(b, "plugin:go:gopls"), cstr(b, params)
		b.ReportAllocs()
		for b.Loop() {
			if st := idb_registry_publish(h, server, p); st != 0 {
				b.Fatal(st)
			}
		}
	})
}

// BenchmarkRegistryPublishDrain10 is one turn: publish 10 diagnostics,
// drain them (through the ABI: as JSON, freed), and reset so that the next
// turn delivers them again.
func BenchmarkRegistryPublishDrain10(b *testing.B) {
	params := publish10(b)
	b.Run("go", func(b *testing.B) {
		reg := newGoRegistry(b)
		raw := json.RawMessage(params)
		b.ReportAllocs()
		for b.Loop() {
			if err := reg.Publish("plugin:go:gopls", raw); err != nil {
				b.Fatal(err)
			}
			if att, ok := reg.Drain(); !ok || att.Count() != 10 {
				b.Fatal("drain")
			}
			reg.ResetAll()
		}
	})
	b.Run("go+json", func(b *testing.B) {
		reg := newGoRegistry(b)
		raw := json.RawMessage(params)
		b.ReportAllocs()
		for b.Loop() {
			if err := reg.Publish("plugin:go:gopls", raw); err != nil {
				b.Fatal(err)
			}
			att, ok := reg.Drain()
			if !ok {
				b.Fatal("drain")
			}
			if _, err := json.Marshal(att); err != nil {
				b.Fatal(err)
			}
			reg.ResetAll()
		}
	})
	b.Run("abi", func(b *testing.B) {
		var h C_uint64
		if st := idb_registry_new(nil, &h); st != 0 {
			b.Fatal(st)
		}
		defer idb_registry_free(h)
		server, p := cstr(b, "plugin:go:gopls"), cstr(b, params)
		b.ReportAllocs()
		for b.Loop() {
			if st := idb_registry_publish(h, server, p); st != 0 {
				b.Fatal(st)
			}
			var out *C_char
			if st := idb_registry_drain(h, &out); st != 0 || out == nil {
				b.Fatal(st)
			}
			freeC(unsafePointer(out))
			idb_registry_reset(h, nil)
		}
	})
}

// BenchmarkRegistryPublish10Ratio alternates batches of the Go call and the
// export on the same machine moments apart, so that load from elsewhere
// affects both alike, and reports the median ratio of their times per
// publish as abi/go (the goal: under 3). The cgo transition itself
// is not included; cabi/test/abi_test.c bench measures it from C.
func BenchmarkRegistryPublish10Ratio(b *testing.B) {
	params := publish10(b)
	reg := newGoRegistry(b)
	raw := json.RawMessage(params)
	var h C_uint64
	if st := idb_registry_new(nil, &h); st != 0 {
		b.Fatal(st)
	}
	defer idb_registry_free(h)
	server, p := cstr(b, "plugin:go:gopls"), cstr(b, params)
	const batch = 100
	var ratios []float64
	var goTotal, abiTotal time.Duration
	for b.Loop() {
		t0 := time.Now()
		for i := 0; i < batch; i++ {
			if err := reg.Publish("plugin:go:gopls", raw); err != nil {
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		for i := 0; i < batch; i++ {
			if st := idb_registry_publish(h, server, p); st != 0 {
				b.Fatal(st)
			}
		}
		t2 := time.Now()
		goTotal += t1.Sub(t0)
		abiTotal += t2.Sub(t1)
		ratios = append(ratios, float64(t2.Sub(t1))/float64(t1.Sub(t0)))
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "abi/go")
	b.ReportMetric(float64(goTotal.Nanoseconds())/float64(b.N*batch), "go-ns/publish")
	b.ReportMetric(float64(abiTotal.Nanoseconds())/float64(b.N*batch), "abi-ns/publish")
	b.ReportMetric(0, "ns/op")
}

// newGoRegistry returns lspdiag.NewRegistry(nil), the Go API the exports
// are compared with.
func newGoRegistry(tb testing.TB) *lspdiag.Registry {
	reg, err := lspdiag.NewRegistry(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return reg
}
