// Package deps pins the module's third-party dependencies while the packages that use them are written; it is removed once they are all imported for real.
package deps

import (
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/gorilla/websocket"
	_ "github.com/hashicorp/golang-lru/v2"
	_ "github.com/sourcegraph/jsonrpc2"
	_ "golang.org/x/text/unicode/norm"
)
