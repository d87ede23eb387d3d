package mcpclient

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idebridge/idebridge/internal/jsonrpc"
	"github.com/idebridge/idebridge/mcp"
)

// rawWS is a WebSocket server written against raw TCP with a tiny frame
// parser, so that a test sees exactly which frames the client put on the
// wire, and can send frames no library would.
type rawWS struct {
	t      *testing.T
	ln     net.Listener
	URL    string
	fmu    sync.Mutex
	frames []rawFrame // every frame received, in order
	// handle answers a message; nil means the default MCP handshake
	// answers, and an echo for tools/call.
	handle func(c *rawConn, m *jsonrpc.Message)
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
}

type rawFrame struct {
	fin    bool
	rsv    byte
	opcode byte
	masked bool
	size   int
	// payload is unmasked (only its first KiB is kept by the server).
	payload []byte
}

// takeFrames returns the frames received so far and forgets them.
func (s *rawWS) takeFrames() []rawFrame {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	f := s.frames
	s.frames = nil
	return f
}

type rawConn struct {
	c   net.Conn
	br  *bufio.Reader
	wmu sync.Mutex
}

func newRawWS(t *testing.T, handle func(c *rawConn, m *jsonrpc.Message)) *rawWS {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawWS{t: t, ln: ln, URL: "ws://" + ln.Addr().String() + "/", handle: handle}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				s.serve(&rawConn{c: c, br: bufio.NewReader(c)})
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

// closeConns cuts every connection the server accepted.
func (s *rawWS) closeConns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close()
	}
}

func (s *rawWS) serve(c *rawConn) {
	req, err := http.ReadRequest(c.br)
	if err != nil {
		return
	}
	sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	fmt.Fprintf(c.c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\nSec-WebSocket-Protocol: mcp\r\n\r\n",
		base64.StdEncoding.EncodeToString(sum[:]))
	var msg []byte
	for {
		f, err := readRawFrame(c.br)
		if err != nil {
			return
		}
		s.fmu.Lock()
		rec := f
		if len(rec.payload) > 1024 {
			rec.payload = rec.payload[:1024:1024] // enough to inspect
		}
		s.frames = append(s.frames, rec)
		s.fmu.Unlock()
		switch f.opcode {
		case 0x9: // ping
			c.write(0x8A, f.payload)
		case 0x8: // close
			c.write(0x88, f.payload)
			return
		case 0x1, 0x0:
			msg = append(msg, f.payload...)
			if !f.fin {
				continue
			}
			m, err := jsonrpc.Decode(msg)
			msg = nil
			if err != nil {
				s.t.Errorf("raw server: invalid message: %v", err)
				continue
			}
			if s.handle != nil {
				s.handle(c, m)
			} else {
				defaultRawHandle(c, m)
			}
		}
	}
}

func defaultRawHandle(c *rawConn, m *jsonrpc.Message) {
	switch m.Method {
	case "initialize":
		c.reply(m.ID, `{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"raw","version":"0"}}`)
	case "tools/list":
		c.reply(m.ID, `{"tools":[]}`)
	case "tools/call":
		var p struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		json.Unmarshal(m.Params, &p)
		c.reply(m.ID, `{"content":[{"type":"text","text":`+string(jsonrpc.AppendString(nil, string(p.Arguments)))+`}]}`)
	}
}

func readRawFrame(br *bufio.Reader) (rawFrame, error) {
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return rawFrame{}, err
	}
	f := rawFrame{fin: h[0]&0x80 != 0, rsv: h[0] & 0x70, opcode: h[0] & 0x0f, masked: h[1]&0x80 != 0}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return f, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return f, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	var key [4]byte
	if f.masked {
		if _, err := io.ReadFull(br, key[:]); err != nil {
			return f, err
		}
	}
	if n > 1<<30 {
		return f, errors.New("frame too large")
	}
	f.size = int(n)
	f.payload = make([]byte, n)
	if _, err := io.ReadFull(br, f.payload); err != nil {
		return f, err
	}
	for i := range f.payload {
		f.payload[i] ^= key[i%4]
	}
	return f, nil
}

// write sends one unmasked server frame with first byte b0.
func (c *rawConn) write(b0 byte, payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	var hdr []byte
	switch n := len(payload); {
	case n <= 125:
		hdr = []byte{b0, byte(n)}
	case n <= 0xffff:
		hdr = []byte{b0, 126, byte(n >> 8), byte(n)}
	default:
		hdr = binary.BigEndian.AppendUint64([]byte{b0, 127}, uint64(n))
	}
	_, err := c.c.Write(append(hdr, payload...))
	return err
}

func (c *rawConn) reply(id json.RawMessage, result string) {
	c.write(0x81, []byte(`{"jsonrpc":"2.0","id":`+string(id)+`,"result":`+result+`}`))
}

// TestLargeMessageIsOneFrame proves that a 5 MiB message leaves the client
// as ONE final frame (deployed IDEs close the connection on a fragmented
// message), and that every frame of the session was masked and final.
func TestLargeMessageIsOneFrame(t *testing.T) {
	s := newRawWS(t, nil)
	c := mustDial(t, s.URL, "tok", testOptions{})
	big := strings.Repeat("0123456789abcdef\n", 5<<20/17+1) // > 5 MiB
	r, err := callTool(testCtx(t), c, mcp.ToolOpenDiff, map[string]string{"new_file_contents": big}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(r.Text()), &args); err != nil || args["new_file_contents"] != big {
		t.Fatalf("the server did not get the 5 MiB text back intact (err %v)", err)
	}
	c.Close()
	var sawBig bool
	for _, f := range s.takeFrames() {
		if !f.fin || f.opcode == 0x0 {
			t.Errorf("fragmented frame: fin %v opcode %#x len %d", f.fin, f.opcode, len(f.payload))
		}
		if !f.masked {
			t.Errorf("unmasked client frame (opcode %#x)", f.opcode)
		}
		if f.rsv != 0 {
			t.Errorf("reserved bits set: %#x", f.rsv)
		}
		if f.size > 5<<20 {
			sawBig = true
			if f.opcode != 0x1 || !bytes.Contains(f.payload, []byte(`"name":"openDiff"`)) {
				t.Errorf("the large frame is not the openDiff text message")
			}
		}
	}
	if !sawBig {
		t.Error("no single frame carried the 5 MiB message")
	}
}

func TestFrameHeaderSizes(t *testing.T) {
	for _, n := range []int{0, 1, 125, 126, 127, 0xffff, 0x10000, 70000} {
		b := make([]byte, headroom, headroom+n)
		payload := bytes.Repeat([]byte{'x'}, n)
		b = append(b, payload...)
		frame := buildFrame(b, opText)
		f, err := readRawFrame(bufio.NewReader(bytes.NewReader(frame)))
		if err != nil {
			t.Fatalf("size %d: %v", n, err)
		}
		if !f.fin || f.opcode != opText || !f.masked || !bytes.Equal(f.payload, payload) {
			t.Errorf("size %d: frame decoded as fin %v op %d masked %v len %d", n, f.fin, f.opcode, f.masked, len(f.payload))
		}
	}
}

func TestMaskBytesMatchesNaive(t *testing.T) {
	for n := range 40 {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i * 7)
		}
		const key = 0xa1b2c3d4
		got := bytes.Clone(src)
		maskBytes(key, got)
		var k [4]byte
		binary.LittleEndian.PutUint32(k[:], key)
		for i := range src {
			if got[i] != src[i]^k[i%4] {
				t.Fatalf("len %d: byte %d masked wrong", n, i)
			}
		}
	}
}

// TestIncomingFramesFromTheWild covers server frames a client must handle:
// a fragmented reply with a ping between fragments, a text frame that is not
// JSON (skipped), and then a frame with reserved bits (a protocol error that
// ends the connection).
func TestIncomingFramesFromTheWild(t *testing.T) {
	s := newRawWS(t, func(c *rawConn, m *jsonrpc.Message) {
		if m.Method != "tools/call" {
			defaultRawHandle(c, m)
			return
		}
		var p struct {
			Name string `json:"name"`
		}
		json.Unmarshal(m.Params, &p)
		reply := []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[{"type":"text","text":"pieces"}]}}`)
		switch p.Name {
		case "fragmented":
			c.write(0x01, reply[:10])      // text, not final
			c.write(0x89, []byte("hello")) // ping in between
			c.write(0x00, reply[10:20])    // continuation
			c.write(0x80, reply[20:])      // final continuation
		case "garbage-first":
			c.write(0x81, []byte("this is not JSON"))
			c.write(0x81, []byte(`{"jsonrpc":"2.0","method":"x","id":[]}`))
			c.write(0x81, reply)
		case "reserved-bits":
			c.write(0xC1, reply) // RSV1 without an extension
		}
	})
	c := mustDial(t, s.URL, "", testOptions{})
	for _, name := range []string{"fragmented", "garbage-first"} {
		r, err := callTool(testCtx(t), c, name, nil, 0)
		if err != nil || r.Text() != "pieces" {
			t.Fatalf("%s: %v, %v", name, r, err)
		}
	}
	// The client answered the server's ping with a pong (sent off the
	// reading goroutine, so it may trail the reply).
	deadline := time.Now().Add(10 * time.Second)
	for pong := false; !pong; {
		for _, f := range s.takeFrames() {
			if f.opcode == 0xA && string(f.payload) == "hello" {
				pong = true
			}
		}
		if !pong && time.Now().After(deadline) {
			t.Fatal("no pong for the server's ping")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := callTool(testCtx(t), c, "reserved-bits", nil, 0); !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("reserved bits: %v, want ErrConnectionLost", err)
	}
}

// timeoutEvery is a reader that hands out its data one byte at a time with
// a timeout error between bytes: the worst case for resuming after a read
// deadline.
type timeoutEvery struct {
	data []byte
	tick bool
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func (r *timeoutEvery) Read(p []byte) (int, error) {
	r.tick = !r.tick
	if r.tick {
		return 0, timeoutErr{}
	}
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	p[0] = r.data[0]
	r.data = r.data[1:]
	return 1, nil
}

func serverFrame(b0 byte, payload []byte) []byte {
	var hdr []byte
	switch n := len(payload); {
	case n <= 125:
		hdr = []byte{b0, byte(n)}
	case n <= 0xffff:
		hdr = []byte{b0, 126, byte(n >> 8), byte(n)}
	default:
		hdr = binary.BigEndian.AppendUint64([]byte{b0, 127}, uint64(n))
	}
	return append(hdr, payload...)
}

type gotFrame struct {
	op      byte
	payload string
}

// readFrames reads every frame of data, retrying interrupted reads.
func readFrames(t *testing.T, r io.Reader, max int64) ([]gotFrame, error) {
	t.Helper()
	fr := &frameReader{br: bufio.NewReaderSize(r, 16), maxSize: max}
	var out []gotFrame
	for {
		op, p, err := fr.next()
		if errors.Is(err, ErrInterrupted) {
			continue
		}
		if err != nil {
			return out, err
		}
		out = append(out, gotFrame{op, string(p)})
	}
}

func TestFrameReaderResumesAfterEveryByte(t *testing.T) {
	big := strings.Repeat("z", 70000)
	var stream []byte
	stream = append(stream, serverFrame(0x01, []byte(`{"a":`))...) // text, not final
	stream = append(stream, serverFrame(0x89, []byte("p"))...)     // ping in between
	stream = append(stream, serverFrame(0x00, []byte(`1`))...)     // continuation
	stream = append(stream, serverFrame(0x80, []byte(`}`))...)     // final continuation
	stream = append(stream, serverFrame(0x82, []byte{0, 1, 2})...) // binary
	stream = append(stream, serverFrame(0x81, []byte(big))...)     // 64-bit length
	stream = append(stream, serverFrame(0x81, []byte("x"+big[:300]))...)
	stream = append(stream, serverFrame(0x88, []byte{0x03, 0xe8, 'b', 'y', 'e'})...)
	want := []gotFrame{
		{opPing, "p"}, {opText, `{"a":1}`}, {opBinary, "\x00\x01\x02"}, {opText, big}, {opText, "x" + big[:300]}, {opClose, "\x03\xe8bye"},
	}
	for name, r := range map[string]io.Reader{
		"whole":            bytes.NewReader(stream),
		"timeout per byte": &timeoutEvery{data: stream},
	} {
		got, err := readFrames(t, r, 1<<20)
		if err != io.EOF {
			t.Errorf("%s: ended with %v", name, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d frames, want %d", name, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: frame %d is %d %q, want %d %q", name, i, got[i].op, truncateText(got[i].payload, 20), want[i].op, truncateText(want[i].payload, 20))
			}
		}
	}
}

func TestFrameReaderRefusesBadFrames(t *testing.T) {
	masked := []byte{0x81, 0x81, 1, 2, 3, 4, 'x'}
	for name, stream := range map[string][]byte{
		"masked server frame":       masked,
		"reserved bits":             serverFrame(0xC1, []byte("x")),
		"long control frame":        serverFrame(0x89, bytes.Repeat([]byte("x"), 126)),
		"fragmented control frame":  serverFrame(0x09, []byte("x")),
		"continuation outside":      serverFrame(0x80, []byte("x")),
		"message inside a fragment": append(serverFrame(0x01, []byte("a")), serverFrame(0x81, []byte("b"))...),
		"unknown opcode":            serverFrame(0x83, []byte("x")),
	} {
		_, err := readFrames(t, bytes.NewReader(stream), 1<<20)
		var pe *wsProtocolError
		if !errors.As(err, &pe) {
			t.Errorf("%s: %v, want a protocol error", name, err)
		}
	}
	// Too large, known from the header before any payload is read: the
	// size is exact, fragments included.
	stream := append(serverFrame(0x01, bytes.Repeat([]byte("a"), 600)), serverFrame(0x80, bytes.Repeat([]byte("b"), 600))...)
	_, err := readFrames(t, bytes.NewReader(stream), 1000)
	var tooBig *MessageTooLargeError
	if !errors.As(err, &tooBig) || tooBig.Size != 1200 || tooBig.Limit != 1000 || !tooBig.Incoming {
		t.Errorf("over-size message: %v", err)
	}
}

// TestCloseRightAfterUpgrade: a 1008 close sent in the same write as the
// upgrade response (so gorilla's handshake reads it along) is still seen.
func TestCloseRightAfterUpgrade(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		resp := fmt.Sprintf("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\nSec-WebSocket-Protocol: mcp\r\n\r\n",
			base64.StdEncoding.EncodeToString(sum[:]))
		c.Write(append([]byte(resp), serverFrame(0x88, append([]byte{0x03, 0xf0}, "Unauthorized"...))...))
		io.Copy(io.Discard, br)
	}()
	c, err := dialConn(testCtx(t), "ws://"+ln.Addr().String()+"/", "bad", testOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = initialize(testCtx(t), c)
	if !errors.Is(err, ErrAuthFailed) || !strings.Contains(err.Error(), "Unauthorized") {
		t.Fatalf("error %v, want ErrAuthFailed with the IDE's reason", err)
	}
}
