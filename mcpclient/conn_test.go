package mcpclient

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idebridge/idebridge/internal/jsonrpc"
)

// TestOptionsRule: zero means the default, negative is refused at
// construction with an error that names the option.
func TestOptionsRule(t *testing.T) {
	s := newRawWS(t, nil)
	if _, err := DialWebSocket(testCtx(t), s.URL, &WebSocketOptions{MaxMessageSize: -1}); err == nil || !strings.Contains(err.Error(), "MaxMessageSize") {
		t.Errorf("negative MaxMessageSize: %v", err)
	}
	if _, err := DialWebSocket(testCtx(t), s.URL, &WebSocketOptions{WriteTimeout: -time.Second}); err == nil || !strings.Contains(err.Error(), "WriteTimeout") {
		t.Errorf("negative WriteTimeout: %v", err)
	}
	sse := newSSEIDE(t)
	if _, err := DialSSE(testCtx(t), sse.URL, &SSEOptions{AuthToken: sse.Token, PostTimeout: -time.Second}); err == nil || !strings.Contains(err.Error(), "PostTimeout") {
		t.Errorf("negative PostTimeout: %v", err)
	}
	if _, err := DialSSE(testCtx(t), "ftp://127.0.0.1:1/sse", nil); err == nil {
		t.Error("an ftp URL was dialed")
	}
	tr, err := DialWebSocket(testCtx(t), s.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, err := New(tr, &Options{MaxMessageSize: -5}); err == nil || !strings.Contains(err.Error(), "MaxMessageSize") {
		t.Errorf("negative Conn MaxMessageSize: %v", err)
	}
	c, err := New(tr, nil) // nil options: the defaults, keep-alive on
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := callTool(testCtx(t), c, "echo", map[string]int{"n": 1}, 0); err != nil {
		t.Fatal(err)
	}
}

// TestInterruptIsNotLost: an Interrupt that comes before Recv is called
// still makes that Recv return ErrInterrupted, on both transports; the
// connection is intact after it.
func TestInterruptIsNotLost(t *testing.T) {
	ws := newRawWS(t, nil)
	sse := newSSEIDE(t)
	for name, dial := range map[string]func() (Transport, error){
		"ws":  func() (Transport, error) { return DialWebSocket(testCtx(t), ws.URL, nil) },
		"sse": func() (Transport, error) { return DialSSE(testCtx(t), sse.URL, &SSEOptions{AuthToken: sse.Token}) },
	} {
		t.Run(name, func(t *testing.T) {
			tr, err := dial()
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			tr.Interrupt()
			if _, err := tr.Recv(time.Time{}); !errors.Is(err, ErrInterrupted) {
				t.Fatalf("Recv after Interrupt: %v, want ErrInterrupted", err)
			}
			if _, err := tr.Recv(time.Now().Add(20 * time.Millisecond)); !errors.Is(err, ErrInterrupted) {
				t.Fatalf("Recv past its deadline: %v, want ErrInterrupted", err)
			}
			m := getMessage()
			m.id, m.req = 7, true
			m.b = append(jsonrpc.AppendRequestHead(m.b, 7, "tools/call"), `,"params":{"name":"x","arguments":{}}}`...)
			if err := tr.Send(testCtx(t), m); err != nil {
				t.Fatal(err)
			}
			putMessage(m)
			data, err := tr.Recv(time.Now().Add(10 * time.Second))
			if err != nil {
				t.Fatalf("Recv after the interrupts: %v", err)
			}
			if msg, err := jsonrpc.Decode(data); err != nil || string(msg.ID) != "7" {
				t.Fatalf("reply %s, %v", data, err)
			}
		})
	}
}

// TestCloseLeavesNothingRunning: after calls over each transport, with a
// call still pending (over SSE, its POST not answered either), Close
// returns with every goroutine of the Conn and its transport gone.
func TestCloseLeavesNothingRunning(t *testing.T) {
	ws := newRawWS(t, func(c *rawConn, m *jsonrpc.Message) {
		if m.Method == "tools/call" && strings.Contains(string(m.Params), `"never"`) {
			return
		}
		defaultRawHandle(c, m)
	})
	sse := newSSEIDE(t)
	// "never" is neither answered nor its POST: the transport is left
	// reading that POST's answer in the background.
	sse.Synchronous = true
	release := make(chan struct{})
	releaseNever := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseNever)
	sse.OnMessage = func(sess *sseSession, m *jsonrpc.Message) {
		if m.Method == "tools/call" && strings.Contains(string(m.Params), `"never"`) {
			<-release
			return
		}
		sess.answerDefault(m)
	}
	for name, url := range map[string]string{"ws": ws.URL, "sse": sse.URL} {
		t.Run(name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			c, err := dialConn(testCtx(t), url, sse.Token, testOptions{ping: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if _, err := callTool(testCtx(t), c, "echo", nil, 0); err != nil {
					t.Fatal(err)
				}
			}
			errc := make(chan error, 1)
			go func() {
				_, err := callTool(context.Background(), c, "never", nil, 0)
				errc <- err
			}()
			time.Sleep(20 * time.Millisecond) // past the POST's ack grace
			c.Close()
			c.Close()
			if err := <-errc; !errors.Is(err, ErrClosed) {
				t.Errorf("pending call after Close: %v, want ErrClosed", err)
			}
			// Ours are gone when Close returns (give one that is in its
			// last return a moment), while the servers still hold their
			// ends of the connections open.
			deadline := time.Now().Add(time.Second)
			for left := ourGoroutines(); left != ""; left = ourGoroutines() {
				if time.Now().After(deadline) {
					t.Fatalf("goroutines of the client still running after Close:\n%s", left)
				}
				time.Sleep(5 * time.Millisecond)
			}
			// And the count comes back once the servers let go too.
			releaseNever()
			sse.srv.CloseClientConnections()
			ws.closeConns()
			waitGoroutines(t, before)
		})
	}
}

// TestConcurrentSSECalls: concurrent calls over SSE, each POSTed on a
// connection of its own or a reused one, all get their own answers.
func TestConcurrentSSECalls(t *testing.T) {
	s := newSSEIDE(t)
	c := mustDial(t, s.URL, s.Token, testOptions{})
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 30 {
				args := map[string]int{"w": w, "i": i}
				r, err := callTool(testCtx(t), c, "echo", args, 0)
				if err != nil {
					t.Errorf("w%d i%d: %v", w, i, err)
					return
				}
				if want := `{"i":` + strconv.Itoa(i) + `,"w":` + strconv.Itoa(w) + `}`; r.Text() != want {
					t.Errorf("got %s, want %s", r.Text(), want)
				}
			}
		}()
	}
	wg.Wait()
}

// ourGoroutines returns the stacks of the goroutines running code of the
// Conn or a transport, "" when there are none.
func ourGoroutines() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, fn := range []string{"mcpclient.(*Conn)", "mcpclient.(*poster)", "mcpclient.(*postConn)", "mcpclient.(*sseTransport)", "mcpclient.(*wsTransport)"} {
			if strings.Contains(g, fn) {
				out = append(out, g)
				break
			}
		}
	}
	return strings.Join(out, "\n\n")
}
