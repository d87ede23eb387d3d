// Package archtest holds the test that keeps ARCHITECTURE.md true: it reads
// the imports of every Go file in the module (every build tag, tests
// included) and fails on an arrow the drawing forbids, and it asks the go
// command for the real dependency graph of the packages that must stay
// small (idebridge without lsp, lspdiag or sourcegraph/jsonrpc2; diag and
// mcp on the standard library alone). The package has no code of its own.
package archtest
