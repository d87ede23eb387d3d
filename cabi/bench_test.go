package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		reg := lspdiag.NewRegistry(nil)
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
		reg := lspdiag.NewRegistry(nil)
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
		reg := lspdiag.NewRegistry(nil)
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
