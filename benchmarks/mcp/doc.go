// Package mcp measures idebridge's MCP client and checks it against an
// independent implementation, the official Go MCP SDK
// (github.com/modelcontextprotocol/go-sdk), which lives in this separate
// module so that it never enters the library's dependency graph.
//
// The tests (run by `go test ./...` in benchmarks/) connect the client to
// the SDK's legacy SSE server: handshake, tools/list with pagination,
// tools/call with isError, server pings, progress notifications, and
// cancellation. The benchmarks compare, on loopback and with the servers
// in a child process so that -benchmem counts the client alone:
//
//   - BenchmarkWSCall, a tools/call round trip through idebridge's
//     WebSocket client, with BenchmarkWSRawEcho, the same bytes through a
//     bare gorilla WebSocket connection to the same server (the floor);
//   - BenchmarkSSECallOurs and BenchmarkSSECallSDK, idebridge's SSE client
//     and the SDK's, against the same SDK SSE server;
//   - BenchmarkWSCallVsRawEcho and BenchmarkSSECallOursVsSDK, the same pairs
//     alternated call by call, reporting both medians and their ratio
//     (robust to a machine whose load changes between benchmarks).
//
// Each reports p50 and p90 latencies and the client's CPU time per call.
// The figures are in benchmarks/README.md.
//
// Run
//
//	cd benchmarks && go test ./mcp -run '^$' -bench 'WS|SSE' -benchmem -count 5
package mcp
