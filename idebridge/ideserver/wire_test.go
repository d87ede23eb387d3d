package ideserver_test

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// rawConn is a minimal hand-written WebSocket client that shows the frames
// the server sends, which a real client library hides by reassembling them.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialFrames(t *testing.T, srv *ideserver.Server) *rawConn {
	t.Helper()
	addr := strings.TrimSuffix(strings.TrimPrefix(srv.URL(), "ws://"), "/")
	c, err := net.DialTimeout("tcp", addr, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var key [16]byte
	rand.Read(key[:])
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Sec-WebSocket-Key", base64.StdEncoding.EncodeToString(key[:]))
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Protocol", "mcp")
	req.Header.Set(mcp.AuthHeader, srv.AuthToken())
	if err := req.Write(c); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %s", resp.Status)
	}
	return &rawConn{t: t, c: c, br: br}
}

// writeFrame sends one masked client frame.
func (r *rawConn) writeFrame(opcode byte, fin bool, payload []byte) {
	r.t.Helper()
	b0 := opcode
	if fin {
		b0 |= 0x80
	}
	hdr := []byte{b0, 0}
	switch n := len(payload); {
	case n < 126:
		hdr[1] = 0x80 | byte(n)
	case n < 1<<16:
		hdr[1] = 0x80 | 126
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(n))
	default:
		hdr[1] = 0x80 | 127
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	var mask [4]byte
	rand.Read(mask[:])
	hdr = append(hdr, mask[:]...)
	masked := make([]byte, len(payload))
	for i, b := range payload {
		masked[i] = b ^ mask[i%4]
	}
	r.c.SetWriteDeadline(time.Now().Add(testTimeout))
	if _, err := r.c.Write(append(hdr, masked...)); err != nil {
		r.t.Fatal(err)
	}
}

type frame struct {
	fin     bool
	opcode  byte
	payload []byte
}

func (r *rawConn) readFrame() frame {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(testTimeout))
	var h [2]byte
	if _, err := io.ReadFull(r.br, h[:]); err != nil {
		r.t.Fatal(err)
	}
	if h[1]&0x80 != 0 {
		r.t.Fatal("server frame is masked")
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		io.ReadFull(r.br, b[:])
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		io.ReadFull(r.br, b[:])
		n = binary.BigEndian.Uint64(b[:])
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r.br, p); err != nil {
		r.t.Fatal(err)
	}
	return frame{fin: h[0]&0x80 != 0, opcode: h[0] & 0x0f, payload: p}
}

// readMessageFrame returns the next data frame, skipping pings.
func (r *rawConn) readMessageFrame() frame {
	for {
		f := r.readFrame()
		if f.opcode != 0x9 && f.opcode != 0xA {
			return f
		}
	}
}

func TestLargeMessagesAreSingleFrames(t *testing.T) {
	srv := startServer(t, &ideserver.Options{DiffPolicy: ideserver.AcceptDiffs})
	r := dialFrames(t, srv)

	// The server reassembles a fragmented client message.
	init := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	r.writeFrame(0x1, false, init[:20])
	r.writeFrame(0x0, false, init[20:50])
	r.writeFrame(0x0, true, init[50:])
	if f := r.readMessageFrame(); !f.fin || f.opcode != 0x1 || !strings.Contains(string(f.payload), `"protocolVersion":"2024-11-05"`) {
		t.Fatalf("initialize answer frame %+v", f)
	}

	// A 5 MiB openDiff in one frame; the answer, which carries the whole
	// text back, is one unfragmented frame too.
	text := strings.Repeat("0123456789abcdef", 5<<20/16)
	path := srv.WorkspaceFolders()[0] + "/big.txt"
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "openDiff", "arguments": openDiffArgs(path, text, "big")}})
	if len(req) < 5<<20 {
		t.Fatalf("request is only %d bytes", len(req))
	}
	r.writeFrame(0x1, true, req)
	f := r.readMessageFrame()
	if !f.fin || f.opcode != 0x1 {
		t.Fatalf("answer frame fin=%v opcode=%d: fragmented", f.fin, f.opcode)
	}
	m, err := decodeServerMessage(f.payload)
	if err != nil {
		t.Fatal(err)
	}
	if got := decodeResult(t, m).texts(); len(got) != 2 || got[0] != "FILE_SAVED" || got[1] != text {
		t.Fatalf("answer to the 5 MiB diff: %d texts, first %q", len(got), got[0])
	}
}

func TestMaxMessageSize(t *testing.T) {
	ev := newEvents()
	srv := startServer(t, &ideserver.Options{MaxMessageSize: 1 << 20, OnEvent: ev.hook})
	c := dial(t, srv)
	c.handshake(1)
	// Just under the limit is fine.
	if err := srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: "echo"}, Handler: echoHandler}); err != nil {
		t.Fatal(err)
	}
	c.next() // tools/list_changed
	under := strings.Repeat("y", 1<<20-200)
	if got := c.callTool("echo", map[string]any{"text": under}).texts(); !slices.Equal(got, []string{under}) {
		t.Fatal("echo under the limit failed")
	}
	big, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call",
		"params": map[string]any{"name": "echo", "arguments": map[string]any{"text": strings.Repeat("z", 2<<20)}}})
	// The server may close before the whole message is written.
	c.c.WriteMessage(websocket.TextMessage, big)
	for range c.in {
	}
	if err := <-c.errc; !isCloseCode(err, websocket.CloseMessageTooBig) {
		t.Errorf("connection ended with %v, want close 1009", err)
	}
	if e := ev.waitFor(t, ideserver.EventDisconnected); e.Err == nil {
		t.Error("disconnect without an error")
	}
}

func TestKeepAliveDropsHalfOpenClient(t *testing.T) {
	ev := newEvents()
	srv := startServer(t, &ideserver.Options{PingInterval: 50 * time.Millisecond, OnEvent: ev.hook})
	// This client completes the upgrade and then never reads again: it
	// answers no ping, like a peer whose machine went to sleep.
	r := dialFrames(t, srv)
	ev.waitFor(t, ideserver.EventConnected)
	e := ev.waitFor(t, ideserver.EventDisconnected)
	if e.Err == nil {
		t.Error("half-open client dropped without an error")
	}
	if n := len(srv.Clients()); n != 0 {
		t.Errorf("%d clients left", n)
	}
	// The server closed the TCP connection: reading ends (not by timeout).
	r.c.SetReadDeadline(time.Now().Add(testTimeout))
	if _, err := io.Copy(io.Discard, r.br); err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Error("connection to the dropped client is still open")
		}
	}
}

func TestKeepAliveKeepsLiveClient(t *testing.T) {
	const iv = 200 * time.Millisecond
	ev := newEvents()
	srv := startServer(t, &ideserver.Options{PingInterval: iv, OnEvent: ev.hook})
	conn, _, err := dialRaw(srv.URL(), authHeader(srv.AuthToken()), nil)
	if err != nil {
		t.Fatal(err)
	}
	// gorilla answers pings while its read loop runs; count them.
	pings := make(chan struct{}, 100)
	conn.SetPingHandler(func(data string) error {
		pings <- struct{}{}
		return conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	c := newClient(t, conn)
	c.handshake(1)
	// Several ping rounds pass without any message from the client.
	for i := range 5 {
		select {
		case <-pings:
		case <-time.After(testTimeout):
			t.Fatalf("no ping %d", i)
		}
	}
	if m := c.call("ping", nil); m.Error != nil {
		t.Fatalf("ping after idle rounds: %s", mustMarshal(m))
	}
	select {
	case e := <-ev.ch:
		if e.Kind == ideserver.EventDisconnected {
			t.Fatalf("live client dropped: %v", e.Err)
		}
	default:
	}
}
