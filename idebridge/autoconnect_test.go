package idebridge_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/internal/env"
)

// acScene is a lockfile directory and a workspace with no IDE yet.
type acScene struct {
	lockDir, ws string
}

func newACScene(t *testing.T) *acScene {
	return &acScene{lockDir: t.TempDir() + "/ide", ws: t.TempDir()}
}

// newIDE starts a headless IDE that writes its lockfile in the scene; the
// caller closes it.
func (s *acScene) newIDE(opts ideserver.Options) (*ideserver.Server, error) {
	opts.LockfileDir = s.lockDir
	if opts.WorkspaceFolders == nil {
		opts.WorkspaceFolders = []string{s.ws}
	}
	srv, err := ideserver.New(&opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), reviewTimeout)
	defer cancel()
	if err := srv.Start(ctx); err != nil {
		return nil, err
	}
	return srv, nil
}

// startIDE is newIDE for the test goroutine, closing the IDE at cleanup.
func (s *acScene) startIDE(t *testing.T, opts ideserver.Options) *ideserver.Server {
	t.Helper()
	srv, err := s.newIDE(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// options returns auto-connect options that look only at the scene: no
// real environment, home or terminal.
func (s *acScene) options(vars map[string]string) *idebridge.AutoConnectOptions {
	return &idebridge.AutoConnectOptions{
		Discover:     &idebridge.DiscoverOptions{Cwd: s.ws, Env: env.FromMap(vars), Dirs: []string{s.lockDir}},
		PollInterval: 100 * time.Millisecond,
		Wait:         reviewTimeout,
	}
}

// recordLog keeps log records as "LEVEL message".
type recordLog struct {
	mu   sync.Mutex
	recs []string
}

func (h *recordLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *recordLog) WithGroup(string) slog.Handler            { return h }
func (h *recordLog) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Level.String()+" "+r.Message)
	return nil
}

func (h *recordLog) count(prefix string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range h.recs {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

// TestAutoConnectPicksUpALateLockfile: the IDE starts two seconds after
// the agent began looking; auto-connect keeps looking and connects.
func TestAutoConnectPicksUpALateLockfile(t *testing.T) {
	s := newACScene(t)
	type result struct {
		srv *ideserver.Server
		err error
	}
	started := make(chan result, 1)
	go func() {
		time.Sleep(2 * time.Second)
		srv, err := s.newIDE(ideserver.Options{ServerVersion: "0.1.0"})
		started <- result{srv, err}
	}()
	var late result
	t.Cleanup(func() {
		if late.srv == nil && late.err == nil {
			late = <-started
		}
		if late.srv != nil {
			late.srv.Close()
		}
	})
	logs := &recordLog{}
	opts := s.options(nil)
	opts.Logger = slog.New(logs)
	opts.MinServerVersion = "0.2.0"
	c, cand, err := idebridge.AutoConnect(reviewCtx(t), opts)
	if err != nil {
		t.Fatalf("AutoConnect: %v", err)
	}
	defer c.Close()
	late = <-started
	if late.err != nil {
		t.Fatal(late.err)
	}
	srv := late.srv
	if cand.Port != srv.Port() || !cand.Valid {
		t.Errorf("connected to %+v, the IDE is on %d", cand, srv.Port())
	}
	if looks := logs.count("DEBUG looked for IDEs"); looks < 2 {
		t.Errorf("auto-connect looked %d times; the lockfile came later than the first look", looks)
	}
	// Connected and usable.
	if _, err := c.GetWorkspaceFolders(reviewCtx(t)); err != nil {
		t.Errorf("using the client: %v", err)
	}
	// The IDE's version is older than asked: warned, not refused.
	if logs.count("WARN idebridge-ideserver 0.1.0 is older than 0.2.0") != 1 {
		t.Errorf("no version warning in %q", logs.recs)
	}
	if vc := c.CheckVersion("0.2.0"); !vc.Older || vc.Version != "0.1.0" {
		t.Errorf("CheckVersion: %+v", vc)
	}
}

// TestAutoConnectAmbiguous: two usable IDEs; the error lists both.
func TestAutoConnectAmbiguous(t *testing.T) {
	s := newACScene(t)
	a := s.startIDE(t, ideserver.Options{IDEName: "Cursor"})
	b := s.startIDE(t, ideserver.Options{IDEName: "Visual Studio Code"})
	opts := s.options(nil)
	opts.Wait = 300 * time.Millisecond
	c, _, err := idebridge.AutoConnect(reviewCtx(t), opts)
	var ae *idebridge.AmbiguousIDEError
	if c != nil || !errors.As(err, &ae) || !errors.Is(err, idebridge.ErrAmbiguousIDE) {
		t.Fatalf("want an ambiguity error, got %v", err)
	}
	ports := map[int]bool{}
	for _, v := range ae.Valid {
		ports[v.Port] = true
	}
	if len(ae.Valid) != 2 || !ports[a.Port()] || !ports[b.Port()] {
		t.Errorf("valid candidates %+v", ae.Valid)
	}
	for _, want := range []string{"2 usable IDEs", "Cursor on port " + strconv.Itoa(a.Port()), "Visual Studio Code on port " + strconv.Itoa(b.Port()), s.ws} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}

// TestAutoConnectNoIDE: nothing usable; the error says what was seen.
func TestAutoConnectNoIDE(t *testing.T) {
	s := newACScene(t)
	opts := s.options(nil)
	opts.Wait = -1 // one look
	_, _, err := idebridge.AutoConnect(reviewCtx(t), opts)
	var ne *idebridge.NoIDEError
	if !errors.As(err, &ne) || !errors.Is(err, idebridge.ErrNoIDE) || !strings.Contains(err.Error(), "no IDE lockfiles in "+s.lockDir) {
		t.Fatalf("no lockfiles: %v", err)
	}
	// An IDE on another workspace is seen, and why it is not usable said.
	other := t.TempDir()
	srv := s.startIDE(t, ideserver.Options{WorkspaceFolders: []string{other}})
	opts.Wait = 250 * time.Millisecond
	_, _, err = idebridge.AutoConnect(reviewCtx(t), opts)
	if !errors.As(err, &ne) || len(ne.Candidates) != 1 || ne.Candidates[0].Port != srv.Port() || !strings.Contains(err.Error(), "does not contain "+s.ws) {
		t.Fatalf("workspace mismatch: %v", err)
	}
	// The caller's context ends the wait.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	opts.Wait = time.Hour
	if _, _, err := idebridge.AutoConnect(ctx, opts); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled wait: %v", err)
	}
}

// TestAutoConnectSSEPort: CLAUDE_CODE_SSE_PORT names the IDE that started
// the agent; its lockfile matches whatever its workspace, and inside an
// IDE terminal it is exempt from the ancestry check that rules out the
// other IDE.
func TestAutoConnectSSEPort(t *testing.T) {
	s := newACScene(t)
	named := s.startIDE(t, ideserver.Options{WorkspaceFolders: []string{t.TempDir()}})
	s.startIDE(t, ideserver.Options{}) // in the workspace, but not our IDE
	opts := s.options(map[string]string{idebridge.EnvSSEPort: strconv.Itoa(named.Port()), "TERM_PROGRAM": "vscode"})
	opts.Discover.SelfPID = 1 // this test's IDEs are not the agent's ancestors
	opts.Wait = -1
	if ok, why := idebridge.ShouldAutoConnect(opts, nil); !ok {
		t.Fatalf("ShouldAutoConnect: %s", why)
	}
	c, cand, err := idebridge.AutoConnect(reviewCtx(t), opts)
	if err != nil {
		t.Fatalf("AutoConnect: %v", err)
	}
	defer c.Close()
	if cand.Port != named.Port() {
		t.Errorf("connected to port %d, want %d", cand.Port, named.Port())
	}
}

// TestWaitForIDERejectsNegativePollInterval: a negative PollInterval is an
// error naming it, before anything is looked at; a negative Wait is "look
// once".
func TestWaitForIDERejectsNegativePollInterval(t *testing.T) {
	s := newACScene(t)
	opts := s.options(nil)
	opts.PollInterval = -time.Second
	if _, _, err := idebridge.WaitForIDE(reviewCtx(t), opts); err == nil || !strings.Contains(err.Error(), "PollInterval is negative") {
		t.Errorf("WaitForIDE with a negative PollInterval: %v", err)
	}
	if _, _, err := idebridge.AutoConnect(reviewCtx(t), opts); err == nil || !strings.Contains(err.Error(), "PollInterval is negative") {
		t.Errorf("AutoConnect with a negative PollInterval: %v", err)
	}
	opts.PollInterval, opts.Wait = 0, -1
	start := time.Now()
	if _, _, err := idebridge.WaitForIDE(reviewCtx(t), opts); !errors.Is(err, idebridge.ErrNoIDE) {
		t.Errorf("WaitForIDE with a negative Wait: %v, want ErrNoIDE after one look", err)
	}
	if waited := time.Since(start); waited >= idebridge.DefaultPollInterval {
		t.Errorf("a negative Wait looked for %v: more than one look", waited)
	}
}

// TestShouldAutoConnectProcessEnvironment: with no environment given
// anywhere, the process's own is read.
func TestShouldAutoConnectProcessEnvironment(t *testing.T) {
	t.Setenv(idebridge.EnvAutoConnect, "off")
	if ok, why := idebridge.ShouldAutoConnect(&idebridge.AutoConnectOptions{Requested: true}, nil); ok || !strings.Contains(why, "=off") {
		t.Errorf("ShouldAutoConnect = %v (%s); want off from the process's environment", ok, why)
	}
	if ok, _ := idebridge.ShouldAutoConnect(&idebridge.AutoConnectOptions{Requested: true}, []string{}); !ok {
		t.Error("an empty environment must not fall back to the process's")
	}
}

func TestShouldAutoConnect(t *testing.T) {
	vscode := &idebridge.Terminal{IDE: "Visual Studio Code", Family: idebridge.FamilyVSCode, Via: "test"}
	tests := []struct {
		name      string
		requested bool
		terminal  *idebridge.Terminal
		env       map[string]string
		want      bool
	}{
		{"nothing", false, nil, map[string]string{}, false},
		{"caller", true, nil, map[string]string{}, true},
		{"truthy 1", false, nil, map[string]string{"CLAUDE_CODE_AUTO_CONNECT_IDE": "1"}, true},
		{"truthy TRUE", false, nil, map[string]string{"CLAUDE_CODE_AUTO_CONNECT_IDE": " TRUE "}, true},
		{"truthy yes", false, nil, map[string]string{"CLAUDE_CODE_AUTO_CONNECT_IDE": "yes"}, true},
		{"neither truthy nor falsy", false, nil, map[string]string{"CLAUDE_CODE_AUTO_CONNECT_IDE": "maybe"}, false},
		{"IDE terminal from the environment", false, nil, map[string]string{"TERM_PROGRAM": "vscode"}, true},
		{"IDE terminal from the options", false, vscode, map[string]string{}, true},
		{"SSE port", false, nil, map[string]string{"CLAUDE_CODE_SSE_PORT": "4321"}, true},
		{"falsy 0 beats the caller", true, nil, map[string]string{"CLAUDE_CODE_AUTO_CONNECT_IDE": "0"}, false},
		{"falsy false beats the terminal", false, nil, map[string]string{"CLAUDE_CODE_AUTO_CONNECT_IDE": "false", "CURSOR_TRACE_ID": "x"}, false},
		{"falsy off beats the SSE port", false, vscode, map[string]string{"CLAUDE_CODE_AUTO_CONNECT_IDE": "off", "CLAUDE_CODE_SSE_PORT": "4321"}, false},
		{"falsy no", true, nil, map[string]string{"CLAUDE_CODE_AUTO_CONNECT_IDE": "no"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := &idebridge.AutoConnectOptions{Requested: tt.requested, Discover: &idebridge.DiscoverOptions{Terminal: tt.terminal}}
			got, why := idebridge.ShouldAutoConnect(opts, env.FromMap(tt.env))
			if got != tt.want || why == "" {
				t.Errorf("ShouldAutoConnect = %v (%s), want %v", got, why, tt.want)
			}
			// The environment may come through the discovery options.
			opts.Discover.Env = env.FromMap(tt.env)
			if got2, _ := idebridge.ShouldAutoConnect(opts, nil); got2 != got {
				t.Errorf("with Discover.Env: %v, with env: %v", got2, got)
			}
		})
	}
}

// TestReconnect: the IDE restarts on the same port with a new token; the
// old token is refused, Reconnect reads the new one. Once the IDE is gone
// for good, Reconnect says so.
func TestReconnect(t *testing.T) {
	s := newACScene(t)
	first := s.startIDE(t, ideserver.Options{})
	opts := s.options(nil)
	c, cand, err := idebridge.AutoConnect(reviewCtx(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	port := first.Port()
	first.Close()
	select {
	case <-c.Done():
	case <-time.After(reviewTimeout):
		t.Fatal("the client did not notice the IDE closing")
	}
	if !errors.Is(c.Err(), idebridge.ErrConnectionLost) {
		t.Errorf("client error %v", c.Err())
	}
	second := s.startIDE(t, ideserver.Options{Port: port})
	if second.AuthToken() == cand.AuthToken {
		t.Fatal("the restarted IDE kept its token")
	}
	if old, err := idebridge.Connect(reviewCtx(t), *cand, nil); !errors.Is(err, idebridge.ErrAuthFailed) {
		if old != nil {
			old.Close()
		}
		t.Errorf("the old token: %v", err)
	}
	c2, fresh, err := idebridge.Reconnect(reviewCtx(t), *cand, nil)
	if err != nil {
		t.Fatalf("Reconnect: %v", err)
	}
	defer c2.Close()
	if fresh.Port != port || fresh.AuthToken != second.AuthToken() {
		t.Errorf("refreshed candidate %+v", fresh)
	}
	if _, err := c2.GetWorkspaceFolders(reviewCtx(t)); err != nil {
		t.Errorf("using the new client: %v", err)
	}
	second.Close()
	if _, _, err := idebridge.Reconnect(reviewCtx(t), *fresh, nil); !errors.Is(err, idebridge.ErrLockfileGone) {
		t.Errorf("Reconnect to a closed IDE: %v", err)
	}
}
