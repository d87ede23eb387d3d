// Package lsp benchmarks lspdiag against real gopls: the latency from a
// change to settled, drained diagnostics, side by side with a minimal raw
// jsonrpc2 client that waits for the matching publishDiagnostics; the time
// from opening a file to its first diagnostics; resident memory with 50
// documents open; and navigation (nav_bench_test.go): each operation
// through the Manager against the raw client's bare request, and
// references to widely used identifiers (latency, locations, rendered
// size). The code is in the _test.go files; run
//
//	cd benchmarks && go test ./lsp -run '^$' -bench . -benchtime 200x
//
// gopls comes from $GOPLS, PATH or $(go env GOPATH)/bin.
package lsp
