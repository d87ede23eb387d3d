// Package lsp benchmarks lspdiag against real gopls: the latency from a
// change to settled, drained diagnostics, side by side with a minimal raw
// jsonrpc2 client that waits for the matching publishDiagnostics; the time
// from opening a file to its first diagnostics; and resident memory with 50
// documents open. The code is in the _test.go files; run
//
//	cd benchmarks && go test ./lsp -run '^$' -bench . -benchtime 200x
//
// gopls comes from $GOPLS, PATH or $(go env GOPATH)/bin.
package lsp
