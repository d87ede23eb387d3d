package mcpclient

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

// sseIDE is a scripted legacy-SSE MCP server on loopback that can misbehave
// in every way the SSE standard allows (and a few it does not).
type sseIDE struct {
	t     *testing.T
	srv   *httptest.Server
	URL   string
	Token string
	// Endpoint is the endpoint event's data; default a relative URL.
	Endpoint string
	// EOL is the line ending used for the stream; default "\n".
	EOL string
	// Prelude is written before the endpoint event.
	Prelude string
	// OnMessage handles a POSTed message; nil answers the handshake and
	// echoes tools/call arguments.
	OnMessage func(s *sseSession, m *jsonrpc.Message)
	// PostStatus, if set and not 0 for a message, refuses its POST with
	// that status.
	PostStatus func(m *jsonrpc.Message) int
	// Synchronous answers a POST only after OnMessage returned.
	Synchronous bool

	mu       sync.Mutex
	session  *sseSession
	sessions chan *sseSession
	stop     chan struct{}
}

type sseSession struct {
	ide      *sseIDE
	out      chan string
	abort    chan struct{}
	Received chan *jsonrpc.Message
}

func newSSEIDE(t *testing.T) *sseIDE { return startSSEIDE(t, false) }

// startSSEIDE starts the server over plain HTTP, or over HTTPS with
// httptest's certificate (trusted by s.srv.Client()).
func startSSEIDE(t *testing.T, secure bool) *sseIDE {
	s := &sseIDE{t: t, Token: "tok", EOL: "\n", Endpoint: "messages?sessionId=1", sessions: make(chan *sseSession, 4), stop: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sse", s.serveStream)
	mux.HandleFunc("POST /messages", s.servePost)
	s.srv = httptest.NewUnstartedServer(mux)
	if secure {
		// The untrusted-certificate test makes the server log a failed
		// handshake; that is expected, not news.
		s.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		s.srv.StartTLS()
	} else {
		s.srv.Start()
	}
	s.URL = s.srv.URL + "/sse"
	t.Cleanup(func() {
		close(s.stop)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
	return s
}

func (s *sseIDE) serveStream(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(mcp.AuthHeader) != s.Token {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	sess := &sseSession{ide: s, out: make(chan string, 64), abort: make(chan struct{}), Received: make(chan *jsonrpc.Message, 256)}
	s.mu.Lock()
	s.session = sess
	s.mu.Unlock()
	s.sessions <- sess
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, s.Prelude)
	io.WriteString(w, sess.format("endpoint", s.Endpoint))
	w.(http.Flusher).Flush()
	for {
		select {
		case chunk := <-sess.out:
			io.WriteString(w, chunk)
			w.(http.Flusher).Flush()
		case <-sess.abort:
			panic(http.ErrAbortHandler) // cut the connection as it is
		case <-r.Context().Done():
			return
		case <-s.stop:
			return
		}
	}
}

func (s *sseIDE) servePost(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	sess := s.session
	s.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	m, err := jsonrpc.Decode(body)
	if sess == nil || err != nil || r.URL.Query().Get("sessionId") != "1" || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "bad post", http.StatusBadRequest)
		return
	}
	if s.PostStatus != nil {
		if code := s.PostStatus(m); code != 0 {
			http.Error(w, "refused", code)
			return
		}
	}
	if !s.Synchronous {
		w.WriteHeader(http.StatusAccepted)
		w.(http.Flusher).Flush()
	}
	sess.Received <- m
	if s.OnMessage != nil {
		s.OnMessage(sess, m)
	} else {
		sess.answerDefault(m)
	}
	if s.Synchronous {
		w.WriteHeader(http.StatusAccepted)
	}
}

func (sess *sseSession) answerDefault(m *jsonrpc.Message) {
	switch m.Method {
	case "initialize":
		sess.Message(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"sse-ide","version":"1"}}}`)
	case "tools/list":
		sess.Message(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"tools":[{"name":"echo"}]}}`)
	case "tools/call":
		var p struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		json.Unmarshal(m.Params, &p)
		sess.Message(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[{"type":"text","text":` + string(jsonrpc.AppendString(nil, string(p.Arguments))) + `}]}}`)
	case "ping":
		sess.Message(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`)
	}
}

// format renders one event; data with newlines becomes several data lines.
func (sess *sseSession) format(event, data string) string {
	eol := sess.ide.EOL
	var b strings.Builder
	if event != "" {
		b.WriteString("event: " + event + eol)
	}
	for _, line := range strings.Split(data, "\n") {
		b.WriteString("data: " + line + eol)
	}
	b.WriteString(eol)
	return b.String()
}

// Message sends a JSON-RPC message as an unnamed event (which means
// "message").
func (sess *sseSession) Message(data string) { sess.out <- sess.format("", data) }

// Raw sends bytes as they are.
func (sess *sseSession) Raw(s string) { sess.out <- s }

// Cut drops the connection.
func (sess *sseSession) Cut() { close(sess.abort) }

func TestSSEHandshakeAndMisbehaviour(t *testing.T) {
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		t.Run(strings.NewReplacer("\r", "CR", "\n", "LF").Replace(eol), func(t *testing.T) {
			s := newSSEIDE(t)
			s.EOL = eol
			s.Prelude = ":" + " hello" + eol + "event: ping" + eol + eol + "retry: 1000" + eol + eol
			s.OnMessage = func(sess *sseSession, m *jsonrpc.Message) {
				if m.Method != "tools/call" {
					sess.answerDefault(m)
					return
				}
				// Comments, pings and unknown events between replies; the
				// reply itself split over several data lines (JSON allows
				// the newlines between tokens) and named "message".
				sess.Raw(": keep-alive" + eol)
				sess.Raw("event: ping" + eol + "data: {}" + eol + eol)
				sess.Raw("event: weird" + eol + "data: [1,2]" + eol + eol)
				reply := `{"jsonrpc":"2.0",` + "\n" + `"id":` + string(m.ID) + `,` + "\n" + `"result":{"content":[{"type":"text","text":"multi"}]}}`
				sess.out <- sess.format("message", reply)
			}
			c := mustDial(t, s.URL, s.Token, testOptions{})
			init, err := initialize(testCtx(t), c)
			if err != nil || init.ServerInfo.Name != "sse-ide" || init.ProtocolVersion != "2024-11-05" {
				t.Errorf("initialize: %+v, %v", init, err)
			}
			raw, err := c.Call(testCtx(t), mcp.MethodListTools, nil, 0)
			var tools mcp.ListToolsResult
			if err != nil || json.Unmarshal(raw, &tools) != nil || len(tools.Tools) != 1 {
				t.Errorf("tools/list: %s, %v", raw, err)
			}
			r, err := callTool(testCtx(t), c, "x", nil, 0)
			if err != nil || r.Text() != "multi" {
				t.Fatalf("call: %v, %v", r, err)
			}
		})
	}
}

func TestSSEEndpointResolution(t *testing.T) {
	for _, tc := range []struct {
		name, endpoint string
		ok             bool
	}{
		{"relative", "messages?sessionId=1", true},
		{"absolute path", "/messages?sessionId=1", true},
		{"same origin URL", "", true},
		{"other host", "http://evil.example/messages?sessionId=1", false},
		{"other port", "http://127.0.0.1:1/messages?sessionId=1", false},
		{"other scheme", "https://127.0.0.1/messages?sessionId=1", false},
		{"scheme-relative other host", "//evil.example/messages", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSSEIDE(t)
			s.Endpoint = tc.endpoint
			if s.Endpoint == "" {
				s.Endpoint = s.srv.URL + "/messages?sessionId=1"
			}
			c, err := DialSSE(testCtx(t), s.URL, &SSEOptions{AuthToken: s.Token})
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				c.Close()
				return
			}
			if !errors.Is(err, errForeignEndpoint) {
				t.Fatalf("endpoint %s: %v, want refusal", tc.endpoint, err)
			}
		})
	}
}

func TestSSEAuthFailed(t *testing.T) {
	s := newSSEIDE(t)
	if _, err := DialSSE(testCtx(t), s.URL, &SSEOptions{AuthToken: "wrong"}); !errors.Is(err, ErrAuthFailed) {
		t.Fatalf("error %v, want ErrAuthFailed", err)
	}
}

func TestSSEOversizeEvent(t *testing.T) {
	s := newSSEIDE(t)
	s.OnMessage = func(sess *sseSession, m *jsonrpc.Message) {
		if m.Method == "tools/call" {
			sess.Message(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 8192) + `"}]}}`)
			return
		}
		sess.answerDefault(m)
	}
	c := mustDial(t, s.URL, s.Token, testOptions{maxSize: 4096})
	_, err := callTool(testCtx(t), c, "big", nil, 0)
	var tooBig *MessageTooLargeError
	if !errors.As(err, &tooBig) || !tooBig.Incoming || tooBig.Limit != 4096 || !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("error %v, want *MessageTooLargeError and ErrConnectionLost", err)
	}
}

func TestSSECutMidEvent(t *testing.T) {
	s := newSSEIDE(t)
	var mu sync.Mutex
	calls := 0
	s.OnMessage = func(sess *sseSession, m *jsonrpc.Message) {
		if m.Method != "tools/call" {
			sess.answerDefault(m)
			return
		}
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 3 {
			sess.Raw(`data: {"jsonrpc":"2.0","id":` + string(m.ID) + `,"res`)
			time.Sleep(10 * time.Millisecond) // let the half event go out first
			sess.Cut()
		}
	}
	c := mustDial(t, s.URL, s.Token, testOptions{})
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := callTool(testCtx(t), c, "x", nil, 0)
			errs <- err
		}()
	}
	for range 3 {
		if err := <-errs; !errors.Is(err, ErrConnectionLost) {
			t.Errorf("pending call: %v, want ErrConnectionLost", err)
		}
	}
	<-c.Done()
}

// TestSSEKeepAlive: over SSE the keep-alive is an MCP ping, and any answer,
// even -32601 as Neovim gives, keeps the connection; a server that goes
// silent is declared lost.
func TestSSEKeepAlive(t *testing.T) {
	s := newSSEIDE(t)
	var mu sync.Mutex
	silent := false
	s.OnMessage = func(sess *sseSession, m *jsonrpc.Message) {
		mu.Lock()
		quiet := silent
		mu.Unlock()
		switch {
		case quiet:
		case m.Method == "ping":
			sess.Message(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"Method not found"}}`)
		default:
			sess.answerDefault(m)
		}
	}
	c := mustDial(t, s.URL, s.Token, testOptions{ping: 100 * time.Millisecond})
	sess := <-s.sessions
	for pings := 0; pings < 5; {
		if m := <-sess.Received; m.Method == "ping" {
			pings++
		}
	}
	if _, err := callTool(testCtx(t), c, "still-alive", nil, 0); err != nil || c.Err() != nil {
		t.Fatalf("after pings answered with -32601: %v, %v", err, c.Err())
	}
	mu.Lock()
	silent = true
	mu.Unlock()
	if _, err := callTool(testCtx(t), c, "into-the-void", nil, 0); !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("silent server: %v, want ErrConnectionLost", err)
	}
}

func TestSSENotAnEventStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html></html>")
	}))
	defer srv.Close()
	if _, err := DialSSE(testCtx(t), srv.URL+"/sse", nil); err == nil || !strings.Contains(err.Error(), "text/event-stream") {
		t.Fatalf("error %v, want a Content-Type complaint", err)
	}
}

func chunked(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		fmt.Fprintf(&b, "%x;ext=1\r\n%s\r\n", len(p), p)
	}
	b.WriteString("0\r\nTrailer: x\r\n\r\n")
	return b.String()
}

func TestChunkedBodyResumes(t *testing.T) {
	body := chunked("event: endpoint\n", "data: /messages?x=1\n\n", strings.Repeat("q", 5000))
	want := "event: endpoint\ndata: /messages?x=1\n\n" + strings.Repeat("q", 5000)
	for name, r := range map[string]io.Reader{
		"whole":            strings.NewReader(body),
		"timeout per byte": &timeoutEvery{data: []byte(body)},
	} {
		cb := &chunkedBody{br: bufio.NewReaderSize(r, 16)}
		var got []byte
		buf := make([]byte, 7)
		for {
			n, err := cb.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil && !isTimeout(err) {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if string(got) != want {
			t.Errorf("%s: decoded %d bytes, want %d", name, len(got), len(want))
		}
	}
	for _, bad := range []string{"zz\r\nx\r\n", "3\r\nabcX\r\n", "3\r\nab"} {
		cb := &chunkedBody{br: bufio.NewReader(strings.NewReader(bad))}
		if _, err := io.ReadAll(cb); err == nil {
			t.Errorf("malformed chunked body %q accepted", bad)
		}
	}
}

// TestSSEStreamResumesAfterInterrupts: the SSE parser over a chunked body
// keeps its place across read deadlines, as the shared reader needs.
func TestSSEStreamResumesAfterInterrupts(t *testing.T) {
	stream := chunked("event: endpoint\r", "\ndata: /m\r\n\r\nda", "ta: {\"a\":\ndata: 1}\n\n: c\n", "data: x\n\n")
	sr := newSSEReader(&chunkedBody{br: bufio.NewReaderSize(&timeoutEvery{data: []byte(stream)}, 16)}, 1<<20)
	var got []string
	for {
		ev, err := sr.next()
		if isTimeout(err) {
			continue
		}
		if err != nil {
			if err != io.EOF {
				t.Fatalf("ended with %v", err)
			}
			break
		}
		got = append(got, ev.Event+"="+string(ev.Data))
	}
	want := []string{"endpoint=/m", "message={\"a\":\n1}", "message=x"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events %q, want %q", got, want)
	}
}

func TestReadPostResponse(t *testing.T) {
	for _, tc := range []struct {
		name, resp string
		status     int
		reusable   bool
	}{
		{"202 no body", "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", 202, true},
		{"202 Accepted body", "HTTP/1.1 202 Accepted\r\nContent-Length: 8\r\n\r\nAccepted", 202, true},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked("Accepted"), 200, true},
		{"connection close", "HTTP/1.1 202 Accepted\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", 202, false},
		{"http/1.0", "HTTP/1.0 202 Accepted\r\nContent-Length: 0\r\n\r\n", 202, false},
		{"http/1.0 keep-alive", "HTTP/1.0 202 Accepted\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", 202, true},
		{"100 continue first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", 202, true},
		{"body to close", "HTTP/1.1 400 Bad Request\r\n\r\nbad message", 400, false},
		{"lf only", "HTTP/1.1 202 Accepted\nContent-Length: 2\n\nok", 202, true},
	} {
		br := bufio.NewReader(strings.NewReader(tc.resp + "NEXT"))
		status, reusable, err := readPostResponse(br)
		if err != nil || status != tc.status || reusable != tc.reusable {
			t.Errorf("%s: %d %v %v, want %d %v", tc.name, status, reusable, err, tc.status, tc.reusable)
			continue
		}
		if rest, _ := io.ReadAll(br); tc.reusable && string(rest) != "NEXT" {
			t.Errorf("%s: the body was not read exactly (left %q)", tc.name, rest)
		}
	}
	for _, bad := range []string{"", "HTTP/1.1\r\n\r\n", "SPDY 200 OK\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n"} {
		if _, _, err := readPostResponse(bufio.NewReader(strings.NewReader(bad))); err == nil {
			t.Errorf("malformed response %q accepted", bad)
		}
	}
}

// TestPosterConnections: POSTs reuse a kept-alive connection, but not one
// that has been idle long enough for the server to close it.
func TestPosterConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	closeAfter := make(chan int, 16) // per connection: close after n responses
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			limit := <-closeAfter
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				for i := 0; i < limit; i++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					io.WriteString(c, "HTTP/1.1 202 Accepted\r\nContent-Length: 8\r\n\r\nAccepted")
				}
			}()
		}
	}()
	u, _ := url.Parse("http://" + ln.Addr().String() + "/messages?sessionId=1")
	p := newPoster(httpEndpoint{dial: DialFunc(nil).orDefault()}, u, "tok", DefaultPostTimeout,
		func(id int64, err error) { t.Errorf("request %d refused: %v", id, err) },
		func(err error) { t.Errorf("session broken: %v", err) })
	defer p.close()
	ctx := testCtx(t)
	send := func(body string) error {
		m := getMessage()
		m.AppendRaw(body)
		_, err := p.send(ctx, m, 0)
		return err
	}
	closeAfter <- 2
	for i := range 2 {
		if err := send(`{"jsonrpc":"2.0","method":"x"}`); err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
	}
	if n := accepted.Load(); n != 1 {
		t.Fatalf("%d connections for two POSTs, want 1 (kept alive)", n)
	}
	// The server closes that connection. One idle for over a second is
	// not reused (servers close idle connections on their own schedule).
	wg.Wait()
	p.mu.Lock()
	p.idle[0].lastUsed = time.Now().Add(-2 * time.Second)
	p.mu.Unlock()
	closeAfter <- 1
	if err := send(`{}`); err != nil {
		t.Fatalf("post after the server closed the idle connection: %v", err)
	}
	if n := accepted.Load(); n != 2 {
		t.Fatalf("%d connections, want a new one after the old one closed", n)
	}
	p.close()
	wg.Wait()
}

// TestSSEPostAnswers: a server that answers each POST only after it has
// handled the message (and sent the reply) works, even for a call without
// a deadline; a POST refused for a request fails that call at once and
// leaves the connection up.
func TestSSEPostAnswers(t *testing.T) {
	s := newSSEIDE(t)
	s.Synchronous = true
	s.OnMessage = func(sess *sseSession, m *jsonrpc.Message) {
		if m.Method == "tools/call" {
			time.Sleep(30 * time.Millisecond) // a slow tool, past the grace period
		}
		sess.answerDefault(m)
		if m.Method == "tools/call" {
			time.Sleep(20 * time.Millisecond) // the POST answer trails the reply
		}
	}
	s.PostStatus = func(m *jsonrpc.Message) int {
		if bytes.Contains(m.Params, []byte(`"refuse"`)) {
			return http.StatusBadRequest
		}
		return 0
	}
	c := mustDial(t, s.URL, s.Token, testOptions{})
	for range 3 {
		r, err := callTool(testCtx(t), c, "slow", map[string]int{"a": 1}, 0)
		if err != nil || r.Text() != `{"a":1}` {
			t.Fatalf("synchronous server: %+v, %v", r, err)
		}
	}
	_, err := callTool(testCtx(t), c, "refuse", nil, 0)
	if err == nil || !strings.Contains(err.Error(), "HTTP 400") || errors.Is(err, ErrConnectionLost) {
		t.Fatalf("refused POST: %v", err)
	}
	if _, err := callTool(testCtx(t), c, "after", nil, 0); err != nil {
		t.Fatalf("after a refused POST: %v", err)
	}
}
