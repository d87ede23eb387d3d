package fuzz

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

// serverConn is a live server and one client connection to it.
type serverConn struct {
	srv      *ideserver.Server
	c        *websocket.Conn
	sentinel string // an id no input can guess
}

func startFuzzServer(f *testing.F) *serverConn {
	srv, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{f.TempDir()}, NoLockfile: true, DiffPolicy: ideserver.RejectDiffs})
	if err != nil {
		f.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	d := websocket.Dialer{Subprotocols: []string{"mcp"}, Proxy: nil}
	c, _, err := d.Dial(srv.URL(), http.Header{mcp.AuthHeader: {srv.AuthToken()}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { c.Close() })
	var nonce [16]byte
	rand.Read(nonce[:])
	return &serverConn{srv: srv, c: c, sentinel: `"sentinel-` + hex.EncodeToString(nonce[:]) + `"`}
}

// FuzzServerMessage sends any bytes to a live IDE server as one WebSocket
// message, followed by a ping whose id no input can know, and checks the
// answers against a model of JSON-RPC: text that is not JSON gets one
// -32700 error with a null id; JSON that is not a message gets one -32600
// error with a null id; a request gets exactly one answer carrying its id
// byte for byte; a notification or a response gets none. Every message
// the server sends is well-formed, and the connection survives.
func FuzzServerMessage(f *testing.F) {
	sc := startFuzzServer(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := sc.c.WriteMessage(websocket.TextMessage, data); err != nil {
			t.Fatalf("write: %v", err)
		}
		ping := []byte(`{"jsonrpc":"2.0","id":` + sc.sentinel + `,"method":"ping"}`)
		if err := sc.c.WriteMessage(websocket.TextMessage, ping); err != nil {
			t.Fatalf("write ping: %v", err)
		}

		// The model.
		wantNullError := int64(0)
		var wantID json.RawMessage
		m, derr := jsonrpc.Decode(data)
		switch {
		case !json.Valid(data):
			wantNullError = jsonrpc.CodeParseError
		case derr != nil:
			wantNullError = jsonrpc.CodeInvalidRequest
		case m.IsRequest():
			wantID = m.ID
		}

		var gotSentinel bool
		var answers, nullErrors int
		for !gotSentinel || (wantID != nil && answers == 0) || (wantNullError != 0 && nullErrors == 0) {
			sc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, reply, err := sc.c.ReadMessage()
			if err != nil {
				t.Fatalf("after %q: read: %v", data, err)
			}
			var r jsonrpc.Message
			if err := json.Unmarshal(reply, &r); err != nil || r.JSONRPC != "2.0" {
				t.Fatalf("after %q: malformed message %q", data, reply)
			}
			switch {
			case r.Method != "":
				continue // a notification from the server
			case (r.Result == nil) == (r.Error == nil):
				t.Fatalf("after %q: response %q needs exactly one of result and error", data, reply)
			case string(r.ID) == sc.sentinel:
				if gotSentinel || string(r.Result) != "{}" {
					t.Fatalf("after %q: sentinel answered %q", data, reply)
				}
				gotSentinel = true
			case string(r.ID) == "null":
				if r.Error == nil || r.Error.Code != wantNullError {
					t.Fatalf("input %q: got %q, want error %d with a null id", data, reply, wantNullError)
				}
				nullErrors++
			case wantID != nil && bytes.Equal(r.ID, wantID):
				answers++
			default:
				t.Fatalf("input %q: unexpected answer %q (request id %s)", data, reply, wantID)
			}
		}
		if answers > 1 || nullErrors > 1 {
			t.Fatalf("input %q: %d answers, %d null-id errors", data, answers, nullErrors)
		}
	})
}
