package mcpclient

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// TestNoProxyForIDEConnections: an IDE connection never goes through the
// proxy named by http_proxy, https_proxy or all_proxy. It runs in a child
// process, so that the proxy variables are read fresh (net/http caches them
// for the life of a process). The child reaches the loopback servers under
// the name "ide.test", which ProxyFromEnvironment would send to the proxy;
// the parent's recording proxy must see no connection.
func TestNoProxyForIDEConnections(t *testing.T) {
	if os.Getenv("IDEBRIDGE_PROXY_CHILD") == "1" {
		proxyChild(t)
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var proxied atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			proxied.Add(1)
			c.Close()
		}
	}()
	proxy := "http://" + ln.Addr().String()
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoProxyForIDEConnections$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "IDEBRIDGE_PROXY_CHILD=1",
		"http_proxy="+proxy, "HTTP_PROXY="+proxy, "https_proxy="+proxy, "HTTPS_PROXY="+proxy,
		"all_proxy="+proxy, "ALL_PROXY="+proxy, "no_proxy=", "NO_PROXY=")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if n := proxied.Load(); n != 0 {
		t.Fatalf("%d connection(s) went to the proxy", n)
	}
}

func proxyChild(t *testing.T) {
	// The environment must make net/http use the proxy for ide.test, or
	// this test proves nothing.
	if p, err := http.ProxyFromEnvironment(&http.Request{URL: &url.URL{Scheme: "http", Host: "ide.test:80"}}); p == nil || err != nil {
		t.Fatalf("proxy environment not in effect: %v, %v", p, err)
	}
	direct := DialFunc(nil).orDefault()
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, port, err := net.SplitHostPort(addr); err == nil && host == "ide.test" {
			addr = net.JoinHostPort("127.0.0.1", port)
		}
		return direct(ctx, network, addr)
	}

	ws := newRawWS(t, nil)
	c := mustDial(t, strings.Replace(ws.URL, "127.0.0.1", "ide.test", 1), "tok", testOptions{dial: dial})
	if _, err := callTool(testCtx(t), c, "echo", nil, 0); err != nil {
		t.Fatalf("WebSocket call: %v", err)
	}
	c.Close()

	sse := newSSEIDE(t)
	sse.Endpoint = strings.Replace(sse.srv.URL, "127.0.0.1", "ide.test", 1) + "/messages?sessionId=1"
	c = mustDial(t, strings.Replace(sse.URL, "127.0.0.1", "ide.test", 1), sse.Token, testOptions{dial: dial})
	if _, err := callTool(testCtx(t), c, "echo", nil, 0); err != nil {
		t.Fatalf("SSE call: %v", err)
	}
	c.Close()
}
