package ideserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestIsLoopbackHostHeader(t *testing.T) {
	for h, want := range map[string]bool{
		"127.0.0.1:8080": true, "127.0.0.1": true, "localhost:1": true, "LOCALHOST:1": true,
		"localhost.:1": true, "[::1]:9": true, "[::1]": true, "127.9.9.9:80": true,
		"": false, "example.com": false, "example.com:80": false, "127.0.0.1.nip.io:80": false,
		"localhost.evil.example": false, "[::2]:9": false, "10.0.0.1:80": false, "127.0.0.1:": true,
		"[::ffff:127.0.0.1]:1": true, "0.0.0.0:80": false, "::1": true, "evil.example:": false,
	} {
		if got := isLoopbackHostHeader(h); got != want {
			t.Errorf("isLoopbackHostHeader(%q) = %v, want %v", h, got, want)
		}
	}
}

func TestIsLoopbackOrigin(t *testing.T) {
	for o, want := range map[string]bool{
		"http://localhost:3000": true, "https://127.0.0.1": true, "ws://[::1]:5": true,
		"null": false, "": false, "file://": false, "chrome-extension://abc": false,
		"http://localhost.evil.example": false, "http://evil.example": false, "http://user@evil.example": false,
		"http://127.0.0.1@evil.example": false,
	} {
		if got := isLoopbackOrigin(o); got != want {
			t.Errorf("isLoopbackOrigin(%q) = %v, want %v", o, got, want)
		}
	}
}

func TestCursorRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 2, 99, 1 << 20} {
		got, ok := decodeCursor(encodeCursor(n))
		if !ok || got != n {
			t.Errorf("cursor %d: %d %v", n, got, ok)
		}
	}
	for _, bad := range []string{"", "x", "b2Zmc2V0Oi0x" /* offset:-1 */, "b2Zmc2V0Og" /* offset: */, "MTI" /* 12 */} {
		if _, ok := decodeCursor(bad); ok {
			t.Errorf("cursor %q accepted", bad)
		}
	}
}

func TestSSEEventSplitsLines(t *testing.T) {
	rec := httptest.NewRecorder()
	c := &sseConn{w: rec, rc: http.NewResponseController(rec), writeTimeout: 1, done: make(chan struct{})}
	if err := c.writeEvent("message", []byte("{\"a\":\n1}\r\n")); err != nil {
		t.Fatal(err)
	}
	if got, want := rec.Body.String(), "event: message\ndata: {\"a\":\ndata: 1}\ndata: \n\n"; got != want {
		t.Errorf("event %q, want %q", got, want)
	}
	c.close(0, "")
	if err := c.writeMessage([]byte("x")); err == nil {
		t.Error("write after close succeeded")
	}
}

func TestEditorBoundsResolvedTabs(t *testing.T) {
	e := newEditor()
	for i := range maxResolvedTabs + 10 {
		_, cancel := context.WithCancelCause(context.Background())
		tab := e.openTab(string(rune('a'+i%26))+string(rune(i)), cancel)
		e.resolve(tab)
	}
	if n := e.closeAll(ErrDiffClosed); n != maxResolvedTabs {
		t.Errorf("%d tabs kept, want %d", n, maxResolvedTabs)
	}
}
