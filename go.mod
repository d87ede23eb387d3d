module github.com/idebridge/idebridge

go 1.24.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/gorilla/websocket v1.5.3
	github.com/hashicorp/golang-lru/v2 v2.0.7
	github.com/sourcegraph/jsonrpc2 v0.2.3
	golang.org/x/text v0.30.0
)
