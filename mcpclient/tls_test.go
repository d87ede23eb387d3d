package mcpclient

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

// Deployed IDEs serve plain http and ws on loopback; https and wss go
// through the same code over crypto/tls, and these tests run them against
// real TLS servers.

// trusting returns a TLS config that trusts srv's certificate.
func trusting(srv *httptest.Server) *tls.Config {
	return &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
}

// TestSSEOverTLS: the handshake, calls that reuse kept-alive POST
// connections, concurrent calls (the shared reader interrupting TLS reads),
// a 2 MiB message each way, and a refused POST, all over https; and an
// untrusted certificate is refused.
func TestSSEOverTLS(t *testing.T) {
	s := startSSEIDE(t, true)
	s.PostStatus = func(m *jsonrpc.Message) int {
		if strings.Contains(string(m.Params), `"refuse"`) {
			return http.StatusBadRequest
		}
		return 0
	}
	if !strings.HasPrefix(s.URL, "https://") {
		t.Fatalf("server URL %s", s.URL)
	}
	c := mustDial(t, s.URL, s.Token, testOptions{tls: trusting(s.srv)})
	if init, err := initialize(testCtx(t), c); err != nil || init.ServerInfo.Name != "sse-ide" {
		t.Fatalf("initialize over https: %+v, %v", init, err)
	}
	for i := range 5 {
		r, err := callTool(testCtx(t), c, "echo", map[string]int{"i": i}, 0)
		if err != nil || r.Text() != `{"i":`+strconv.Itoa(i)+`}` {
			t.Fatalf("call %d: %+v, %v", i, r, err)
		}
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if _, err := callTool(testCtx(t), c, "echo", map[string]int{"w": w}, 0); err != nil {
					t.Errorf("concurrent call: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	big := strings.Repeat("tls record boundaries ", 2<<20/22)
	r, err := callTool(testCtx(t), c, "echo", map[string]string{"s": big}, 0)
	var back map[string]string
	if err != nil || json.Unmarshal([]byte(r.Text()), &back) != nil || back["s"] != big {
		t.Fatalf("2 MiB over https: %v", err)
	}
	if _, err := callTool(testCtx(t), c, "refuse", nil, 0); err == nil || !strings.Contains(err.Error(), "HTTP 400") || errors.Is(err, ErrConnectionLost) {
		t.Fatalf("refused POST over https: %v", err)
	}
	if _, err := callTool(testCtx(t), c, "echo", nil, 0); err != nil {
		t.Fatalf("after the refusal: %v", err)
	}

	_, err = DialSSE(testCtx(t), s.URL, &SSEOptions{AuthToken: s.Token})
	var unknown x509.UnknownAuthorityError
	if err == nil || !errors.As(err, &unknown) {
		t.Fatalf("untrusted certificate: %v, want an x509 error", err)
	}
}

// TestWebSocketOverTLS: wss through a real gorilla server behind
// httptest's TLS: calls, a 2 MiB message as one frame, and the server's
// ping answered.
func TestWebSocketOverTLS(t *testing.T) {
	pongs := make(chan string, 4)
	up := websocket.Upgrader{Subprotocols: []string{mcp.Subprotocol}}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(mcp.AuthHeader) != "tok" {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		ws.SetPongHandler(func(data string) error {
			pongs <- data
			return nil
		})
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			m, err := jsonrpc.Decode(data)
			if err != nil || !m.IsRequest() {
				continue
			}
			var p mcp.CallToolParams
			json.Unmarshal(m.Params, &p)
			res, _ := json.Marshal(mcp.TextResult(string(p.Arguments)))
			ws.WriteMessage(websocket.TextMessage, jsonrpc.AppendResult(nil, m.ID, res))
			if p.Name == "ping-me" {
				ws.WriteControl(websocket.PingMessage, []byte("over tls"), time.Now().Add(time.Second))
			}
		}
	}))
	defer srv.Close()
	url := "wss" + strings.TrimPrefix(srv.URL, "https") + "/"
	if _, err := dialConn(testCtx(t), url, "wrong", testOptions{tls: trusting(srv)}); !errors.Is(err, ErrAuthFailed) {
		t.Fatalf("wrong token over wss: %v, want ErrAuthFailed", err)
	}
	c := mustDial(t, url, "tok", testOptions{tls: trusting(srv)})
	for i := range 3 {
		if r, err := callTool(testCtx(t), c, "echo", map[string]int{"i": i}, 0); err != nil || !strings.Contains(r.Text(), `"i"`) {
			t.Fatalf("call %d over wss: %+v, %v", i, r, err)
		}
	}
	big := strings.Repeat("w", 2<<20)
	r, err := callTool(testCtx(t), c, "echo", map[string]string{"s": big}, 0)
	if err != nil || len(r.Text()) < len(big) {
		t.Fatalf("2 MiB over wss: %v", err)
	}
	if _, err := callTool(testCtx(t), c, "ping-me", nil, 0); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-pongs:
		if p != "over tls" {
			t.Errorf("pong %q", p)
		}
	case <-testCtx(t).Done():
		t.Fatal("no pong for the server's ping over wss")
	}
}
