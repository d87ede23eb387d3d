package idebridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// The edit review flow against the server kit on loopback.

const reviewTimeout = 30 * time.Second

func reviewCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), reviewTimeout)
	t.Cleanup(cancel)
	return ctx
}

// reviewIDE starts a headless IDE deciding diffs with policy, serving a
// new directory.
func reviewIDE(t *testing.T, policy ideserver.DiffPolicy) (*ideserver.Server, string) {
	t.Helper()
	return reviewIDEIn(t, t.TempDir(), policy)
}

// reviewIDEIn is reviewIDE serving dir, the one workspace folder whose
// files its tools reach.
func reviewIDEIn(t *testing.T, dir string, policy ideserver.DiffPolicy) (*ideserver.Server, string) {
	t.Helper()
	srv, err := ideserver.New(&ideserver.Options{WorkspaceFolders: []string{dir}, NoLockfile: true, DiffPolicy: policy})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(reviewCtx(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, dir
}

// reviewClient connects to url (the server's own, or a proxy's).
func reviewClient(t testing.TB, url, token string) *idebridge.Client {
	t.Helper()
	c, err := idebridge.DialURL(reviewCtx(t), url, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func writeFile(t testing.TB, path, text string, mode fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // beyond the umask
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// onlyFiles fails unless dir holds exactly names: no temporary file left.
func onlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	slices.Sort(names)
	if !slices.Equal(got, names) {
		t.Errorf("directory holds %q, want %q", got, names)
	}
}

func modeOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode()
}

// recordingPolicy records each request and answers with decide.
type recordingPolicy struct {
	mu     sync.Mutex
	reqs   []ideserver.DiffRequest
	called chan struct{}
	decide func(ctx context.Context, req *ideserver.DiffRequest) (ideserver.DiffDecision, error)
}

func newRecordingPolicy(decide func(ctx context.Context, req *ideserver.DiffRequest) (ideserver.DiffDecision, error)) *recordingPolicy {
	return &recordingPolicy{called: make(chan struct{}, 100), decide: decide}
}

func (p *recordingPolicy) Decide(ctx context.Context, req *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, *req)
	p.mu.Unlock()
	p.called <- struct{}{}
	return p.decide(ctx, req)
}

func (p *recordingPolicy) requests() []ideserver.DiffRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.reqs)
}

// waitCalled waits until the policy has been asked n times in all.
func (p *recordingPolicy) waitCalled(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-p.called:
		case <-time.After(reviewTimeout):
			t.Fatalf("the IDE was not asked %d times", n)
		}
	}
}

// blockUntilClosed waits for the tab to be closed, as a user who never
// answers; the IDE then answers DIFF_REJECTED.
func blockUntilClosed(ctx context.Context, _ *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
	<-ctx.Done()
	return ideserver.DiffDecision{}, context.Cause(ctx)
}

// tabNameRE is the one tab-name scheme, Claude Code's, with the client's
// name (reviewClient does not set one: the default).
var tabNameRE = regexp.MustCompile(`^✻ \[idebridge\] main\.go \([0-9a-f]{6}\) ⧉$`)

func TestProposeEditOutcomes(t *testing.T) {
	const old, proposal = "package main\n\nfunc main() {}\n", "package main\n\nfunc main() { println(1) }\n"
	const edited = "package main\n\n// the user's own touch\nfunc main() { println(2) }\n"
	tests := []struct {
		name       string
		decide     ideserver.DiffDecision
		status     idebridge.EditStatus
		want       string // file content afterwards
		written    bool
		userEdited bool
	}{
		{"accept", ideserver.SaveDiff(proposal), idebridge.EditAccepted, proposal, true, false},
		{"accept with user edits", ideserver.SaveDiff(edited), idebridge.EditAccepted, edited, true, true},
		{"tab closed", ideserver.DiffDecision{Action: ideserver.DiffCloseTab}, idebridge.EditTabClosed, proposal, true, false},
		{"reject", ideserver.DiffDecision{Action: ideserver.DiffReject}, idebridge.EditRejected, old, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			policy := newRecordingPolicy(func(context.Context, *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
				return tt.decide, nil
			})
			srv, dir := reviewIDE(t, policy)
			path := filepath.Join(dir, "main.go")
			writeFile(t, path, old, 0o640)
			before, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			r := idebridge.NewReviewer(reviewClient(t, srv.URL(), srv.AuthToken()), nil)
			res, err := r.ProposeEdit(reviewCtx(t), idebridge.EditRequest{Path: path, NewText: proposal})
			if err != nil {
				t.Fatalf("ProposeEdit: %v", err)
			}
			if res.Status != tt.status || res.Written != tt.written || res.UserModified != tt.userEdited || !res.ViaIDE || res.Cancelled || res.Created || res.CloseTabError != "" {
				t.Errorf("result %+v", res)
			}
			if got := readFile(t, path); got != tt.want {
				t.Errorf("file holds %q, want %q", got, tt.want)
			}
			if m := modeOf(t, path); m != 0o640 {
				t.Errorf("mode %v, want 0640", m)
			}
			if !tt.written {
				after, _ := os.Stat(path)
				if !after.ModTime().Equal(before.ModTime()) {
					t.Error("a rejected edit touched the file")
				}
			}
			onlyFiles(t, dir, "main.go")

			// The IDE saw the deployed arguments: the same path twice, the
			// proposal, and a tab name in Claude Code's style.
			reqs := policy.requests()
			if len(reqs) != 1 {
				t.Fatalf("openDiff calls: %d", len(reqs))
			}
			q := reqs[0]
			if q.OldPath != path || q.NewPath != path || q.NewContents != proposal || !q.OldExists || q.OldContents != old || !tabNameRE.MatchString(q.TabName) || q.TabName != res.TabName {
				t.Errorf("openDiff request %+v (result tab %q)", q, res.TabName)
			}
			if r.Pending() != 0 {
				t.Errorf("%d reviews still pending", r.Pending())
			}
		})
	}
}

// TestProposeEditNotAccepted: an answer the protocol does not know leaves
// the file alone and reports the IDE's words.
func TestProposeEditNotAccepted(t *testing.T) {
	srv, dir := reviewIDE(t, nil)
	if err := srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: mcp.ToolOpenDiff}, Handler: func(context.Context, *ideserver.ToolCall) (*mcp.ToolResult, error) {
		return mcp.TextResult("DIFF_POSTPONED", "later"), nil
	}}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "a.txt")
	writeFile(t, path, "a\n", 0o644)
	r := idebridge.NewReviewer(reviewClient(t, srv.URL(), srv.AuthToken()), nil)
	res, err := r.ProposeEdit(reviewCtx(t), idebridge.EditRequest{Path: path, NewText: "b\n"})
	if err != nil || res.Status != idebridge.EditNotAccepted || res.Written || res.IDEAnswer != "DIFF_POSTPONED\nlater" {
		t.Fatalf("result %+v, %v", res, err)
	}
	if readFile(t, path) != "a\n" {
		t.Error("file changed")
	}
}

// TestProposeEditNewFile: an edit that creates a file gets the umask's
// mode, as os.WriteFile would give it.
func TestProposeEditNewFile(t *testing.T) {
	srv, dir := reviewIDE(t, ideserver.AcceptDiffs)
	path := filepath.Join(dir, "new.go")
	r := idebridge.NewReviewer(reviewClient(t, srv.URL(), srv.AuthToken()), nil)
	res, err := r.ProposeEdit(reviewCtx(t), idebridge.EditRequest{Path: path, NewText: "package x\n"})
	if err != nil || res.Status != idebridge.EditAccepted || !res.Written || !res.Created {
		t.Fatalf("result %+v, %v", res, err)
	}
	ref := filepath.Join(t.TempDir(), "ref")
	if err := os.WriteFile(ref, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if got, want := modeOf(t, path), modeOf(t, ref); got != want {
		t.Errorf("new file mode %v, os.WriteFile gives %v", got, want)
	}
	onlyFiles(t, dir, "new.go")
}

// TestProposeEditConflict: the file changes on disk while the user looks
// at the diff; accepting must not overwrite that change.
func TestProposeEditConflict(t *testing.T) {
	var path string
	policy := newRecordingPolicy(func(_ context.Context, req *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
		// Someone else (a formatter, the user in another editor) saves
		// the file while the diff is shown.
		if err := os.WriteFile(path, []byte("changed underneath\n"), 0o644); err != nil {
			return ideserver.DiffDecision{}, err
		}
		return ideserver.SaveDiff(req.NewContents), nil
	})
	srv, dir := reviewIDE(t, policy)
	path = filepath.Join(dir, "main.go")
	writeFile(t, path, "original\n", 0o644)
	r := idebridge.NewReviewer(reviewClient(t, srv.URL(), srv.AuthToken()), nil)
	res, err := r.ProposeEdit(reviewCtx(t), idebridge.EditRequest{Path: path, NewText: "proposal\n"})
	var ce *idebridge.ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, idebridge.ErrConflict) {
		t.Fatalf("want a *ConflictError, got %v", err)
	}
	if ce.Path != path || ce.Text != "proposal\n" || ce.Expected.Size != int64(len("original\n")) || ce.Actual.Size != int64(len("changed underneath\n")) {
		t.Errorf("conflict %+v", ce)
	}
	if res == nil || res.Status != idebridge.EditAccepted || res.Written || res.Text != "proposal\n" {
		t.Errorf("result %+v", res)
	}
	if got := readFile(t, path); got != "changed underneath\n" {
		t.Errorf("file holds %q", got)
	}
	onlyFiles(t, dir, "main.go")

	// A Base older than the proposal is honoured too: the agent read the
	// file, then it changed, then the agent proposed.
	base, err := idebridge.StatFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, "changed again\n", 0o644)
	srv2, _ := reviewIDEIn(t, dir, ideserver.AcceptDiffs)
	r2 := idebridge.NewReviewer(reviewClient(t, srv2.URL(), srv2.AuthToken()), nil)
	if _, err := r2.ProposeEdit(reviewCtx(t), idebridge.EditRequest{Path: path, NewText: "x\n", Base: base}); !errors.Is(err, idebridge.ErrConflict) {
		t.Fatalf("stale Base: %v", err)
	}
	if got := readFile(t, path); got != "changed again\n" {
		t.Errorf("file holds %q", got)
	}
}

// countingTool wraps srv's tool name so that its calls are counted.
func countingTool(t *testing.T, srv *ideserver.Server, name string) *atomic.Int32 {
	t.Helper()
	var n atomic.Int32
	for _, tool := range srv.Tools() {
		if tool.Name == name {
			inner := tool.Handler
			tool.Handler = func(ctx context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
				n.Add(1)
				return inner(ctx, call)
			}
			if err := srv.RegisterTool(tool); err != nil {
				t.Fatal(err)
			}
			return &n
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// proposeAll starts one ProposeEdit per file and returns their outcomes.
func proposeAll(t *testing.T, r *idebridge.Reviewer, paths []string) (results []*idebridge.EditResult, errs []error, wait func()) {
	results = make([]*idebridge.EditResult, len(paths))
	errs = make([]error, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = r.ProposeEdit(reviewCtx(t), idebridge.EditRequest{Path: p, NewText: "proposal " + filepath.Base(p) + "\n"})
		}()
	}
	return results, errs, wg.Wait
}

// TestCancelAllWithThreeInFlight: three diffs shown at once, each in its
// own tab; the user presses ESC: closeAllDiffTabs once, every edit
// rejected, every file untouched.
func TestCancelAllWithThreeInFlight(t *testing.T) {
	policy := newRecordingPolicy(blockUntilClosed)
	srv, dir := reviewIDE(t, policy)
	closeAll := countingTool(t, srv, mcp.ToolCloseAllDiffTabs)
	names := []string{"a.go", "b.go", "c.go"}
	var paths []string
	for _, n := range names {
		p := filepath.Join(dir, n)
		writeFile(t, p, "old "+n+"\n", 0o644)
		paths = append(paths, p)
	}
	r := idebridge.NewReviewer(reviewClient(t, srv.URL(), srv.AuthToken()), nil)
	results, errs, wait := proposeAll(t, r, paths)
	policy.waitCalled(t, 3)
	if r.Pending() != 3 {
		t.Fatalf("pending %d", r.Pending())
	}
	tabs := map[string]bool{}
	for _, q := range policy.requests() {
		tabs[q.TabName] = true
	}
	if len(tabs) != 3 {
		t.Fatalf("three diffs share tabs: %v", tabs)
	}
	n, err := r.CancelAll(reviewCtx(t))
	wait()
	if err != nil || n != 3 {
		t.Fatalf("CancelAll: %d, %v", n, err)
	}
	if got := closeAll.Load(); got != 1 {
		t.Errorf("closeAllDiffTabs called %d times", got)
	}
	for i, res := range results {
		if errs[i] != nil || res.Status != idebridge.EditRejected || !res.Cancelled || res.Written {
			t.Errorf("%s: %+v, %v", names[i], res, errs[i])
		}
		if got := readFile(t, paths[i]); got != "old "+names[i]+"\n" {
			t.Errorf("%s holds %q", names[i], got)
		}
	}
	onlyFiles(t, dir, names...)
	if r.Pending() != 0 {
		t.Errorf("pending %d after CancelAll", r.Pending())
	}
	// With nothing pending, ESC still closes the IDE's diff tabs.
	if n, err := r.CancelAll(reviewCtx(t)); n != 0 || err != nil || closeAll.Load() != 2 {
		t.Errorf("CancelAll with nothing pending: %d, %v, calls %d", n, err, closeAll.Load())
	}
}

// TestCancelAllWhenTheIDEAnswersTabClosed: an IDE that answers TAB_CLOSED
// to the diffs closeAllDiffTabs closed (as a VS Code family IDE may) must
// not get them applied: the user cancelled.
func TestCancelAllWhenTheIDEAnswersTabClosed(t *testing.T) {
	srv, dir := reviewIDE(t, nil)
	var mu sync.Mutex
	open := map[string]chan struct{}{}
	asked := make(chan struct{}, 10)
	var closeAllCalls atomic.Int32
	tools := []ideserver.Tool{
		{Tool: mcp.Tool{Name: mcp.ToolOpenDiff}, Handler: func(ctx context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
			var a struct {
				Tab string `json:"tab_name"`
			}
			if err := call.Bind(&a); err != nil {
				return nil, err
			}
			ch := make(chan struct{})
			mu.Lock()
			open[a.Tab] = ch
			mu.Unlock()
			asked <- struct{}{}
			select {
			case <-ch:
				return mcp.TextResult("TAB_CLOSED"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}},
		{Tool: mcp.Tool{Name: mcp.ToolCloseAllDiffTabs}, Handler: func(context.Context, *ideserver.ToolCall) (*mcp.ToolResult, error) {
			closeAllCalls.Add(1)
			mu.Lock()
			defer mu.Unlock()
			n := len(open)
			for tab, ch := range open {
				close(ch)
				delete(open, tab)
			}
			return mcp.TextResult("CLOSED_" + strconv.Itoa(n) + "_DIFF_TABS"), nil
		}},
	}
	for _, tool := range tools {
		if err := srv.RegisterTool(tool); err != nil {
			t.Fatal(err)
		}
	}
	var paths []string
	for _, n := range []string{"x.go", "y.go", "z.go"} {
		p := filepath.Join(dir, n)
		writeFile(t, p, "old\n", 0o644)
		paths = append(paths, p)
	}
	r := idebridge.NewReviewer(reviewClient(t, srv.URL(), srv.AuthToken()), nil)
	results, errs, wait := proposeAll(t, r, paths)
	for range 3 {
		select {
		case <-asked:
		case <-time.After(reviewTimeout):
			t.Fatal("openDiff not called three times")
		}
	}
	if n, err := r.CancelAll(reviewCtx(t)); n != 3 || err != nil {
		t.Fatalf("CancelAll: %d, %v", n, err)
	}
	wait()
	for i, res := range results {
		if errs[i] != nil || res.Status != idebridge.EditRejected || !res.Cancelled || res.Written {
			t.Errorf("%s: %+v, %v", paths[i], res, errs[i])
		}
		if got := readFile(t, paths[i]); got != "old\n" {
			t.Errorf("%s holds %q", paths[i], got)
		}
	}
	if closeAllCalls.Load() != 1 {
		t.Errorf("closeAllDiffTabs called %d times", closeAllCalls.Load())
	}
}

// cutProxy forwards loopback TCP connections to target until cut.
type cutProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			p.wg.Add(2)
			go func() { defer p.wg.Done(); io.Copy(up, c); up.Close() }()
			go func() { defer p.wg.Done(); io.Copy(c, up); c.Close() }()
		}
	}()
	t.Cleanup(func() { p.cut(); p.wg.Wait() })
	return p
}

// cut drops every connection at once, as a network failure would.
func (p *cutProxy) cut() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// TestProposeEditConnectionLost: the connection dies while the user looks
// at the diff: the file is untouched, the error says so and matches
// ErrConnectionLost.
func TestProposeEditConnectionLost(t *testing.T) {
	policy := newRecordingPolicy(blockUntilClosed)
	srv, dir := reviewIDE(t, policy)
	path := filepath.Join(dir, "main.go")
	writeFile(t, path, "old\n", 0o600)
	proxy := newCutProxy(t, strings.TrimSuffix(strings.TrimPrefix(srv.URL(), "ws://"), "/"))
	c := reviewClient(t, "ws://"+proxy.ln.Addr().String()+"/", srv.AuthToken())
	r := idebridge.NewReviewer(c, nil)
	done := make(chan struct{})
	var res *idebridge.EditResult
	var err error
	go func() {
		defer close(done)
		res, err = r.ProposeEdit(reviewCtx(t), idebridge.EditRequest{Path: path, NewText: "new\n"})
	}()
	policy.waitCalled(t, 1)
	proxy.cut()
	select {
	case <-done:
	case <-time.After(reviewTimeout):
		t.Fatal("ProposeEdit did not return after the connection was lost")
	}
	var re *idebridge.ReviewError
	if res != nil || !errors.As(err, &re) || !errors.Is(err, idebridge.ErrConnectionLost) || re.Path != path {
		t.Fatalf("result %+v, error %v", res, err)
	}
	if !strings.Contains(err.Error(), "untouched") {
		t.Errorf("message does not say the file is untouched: %v", err)
	}
	if got := readFile(t, path); got != "old\n" || modeOf(t, path) != 0o600 {
		t.Errorf("file holds %q", got)
	}
	onlyFiles(t, dir, "main.go")
}

// TestProposeEditContextEnds: the caller gives up; the file is untouched
// and the IDE's tab is closed, not left behind.
func TestProposeEditContextEnds(t *testing.T) {
	closed := make(chan error, 1)
	policy := newRecordingPolicy(func(ctx context.Context, _ *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
		<-ctx.Done()
		closed <- context.Cause(ctx)
		return ideserver.DiffDecision{}, nil
	})
	srv, dir := reviewIDE(t, policy)
	path := filepath.Join(dir, "main.go")
	writeFile(t, path, "old\n", 0o644)
	r := idebridge.NewReviewer(reviewClient(t, srv.URL(), srv.AuthToken()), nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		policy.waitCalled(t, 1)
		cancel()
	}()
	res, err := r.ProposeEdit(ctx, idebridge.EditRequest{Path: path, NewText: "new\n"})
	if res != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("result %+v, error %v", res, err)
	}
	select {
	case cause := <-closed:
		if !errors.Is(cause, ideserver.ErrRequestCancelled) && !errors.Is(cause, ideserver.ErrDiffClosed) {
			t.Errorf("the IDE's diff ended with %v", cause)
		}
	case <-time.After(reviewTimeout):
		t.Fatal("the IDE's diff stayed open")
	}
	if got := readFile(t, path); got != "old\n" {
		t.Errorf("file holds %q", got)
	}
}

// TestProposeEditCloseTabFailure: close_tab failing after a known outcome
// (Neovim answers an error after an accepted diff) is reported, logged,
// and changes nothing.
func TestProposeEditCloseTabFailure(t *testing.T) {
	srv, dir := reviewIDE(t, ideserver.AcceptDiffs)
	if err := srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: mcp.ToolCloseTab}, Hidden: true, Handler: func(context.Context, *ideserver.ToolCall) (*mcp.ToolResult, error) {
		return nil, &mcp.Error{Code: -32000, Message: "Buffer operation error", Data: json.RawMessage(`"Failed to unload buffer."`)}
	}}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "main.go")
	writeFile(t, path, "old\n", 0o644)
	r := idebridge.NewReviewer(reviewClient(t, srv.URL(), srv.AuthToken()), nil)
	res, err := r.ProposeEdit(reviewCtx(t), idebridge.EditRequest{Path: path, NewText: "new\n"})
	if err != nil || res.Status != idebridge.EditAccepted || !res.Written || !strings.Contains(res.CloseTabError, "Buffer operation error") {
		t.Fatalf("result %+v, %v", res, err)
	}
	if readFile(t, path) != "new\n" {
		t.Error("the accepted edit was not written")
	}
}

// TestProposeEditCloseTabTimeouts: close_tab is bounded by
// CloseTabTimeout; a negative one leaves only the client's CallTimeout.
// Either way the outcome stands.
func TestProposeEditCloseTabTimeouts(t *testing.T) {
	srv, dir := reviewIDE(t, ideserver.AcceptDiffs)
	if err := srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: mcp.ToolCloseTab}, Hidden: true, Handler: func(ctx context.Context, _ *ideserver.ToolCall) (*mcp.ToolResult, error) {
		<-ctx.Done() // a frozen IDE
		return nil, ctx.Err()
	}}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "main.go")
	writeFile(t, path, "old\n", 0o644)
	c, err := idebridge.DialURL(reviewCtx(t), srv.URL(), srv.AuthToken(), &idebridge.ClientOptions{CallTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const byCallTimeout = "no reply within 300ms"
	for _, tc := range []struct {
		timeout     time.Duration
		byCallLimit bool // the client's CallTimeout, not CloseTabTimeout, ended close_tab
	}{
		{50 * time.Millisecond, false},
		{-1, true},
	} {
		r := idebridge.NewReviewer(c, &idebridge.ReviewerOptions{CloseTabTimeout: tc.timeout})
		res, err := r.ProposeEdit(reviewCtx(t), idebridge.EditRequest{Path: path, NewText: "new\n"})
		if err != nil || res.Status != idebridge.EditAccepted || !res.Written ||
			!strings.Contains(res.CloseTabError, "deadline exceeded") || strings.Contains(res.CloseTabError, byCallTimeout) != tc.byCallLimit {
			t.Errorf("CloseTabTimeout %v: result %+v, %v; want a close_tab deadline (by the call limit: %v)", tc.timeout, res, err, tc.byCallLimit)
		}
	}
}

// TestProposeEditDuplicateTab: one tab name, one review at a time.
func TestProposeEditDuplicateTab(t *testing.T) {
	policy := newRecordingPolicy(blockUntilClosed)
	srv, dir := reviewIDE(t, policy)
	path := filepath.Join(dir, "main.go")
	writeFile(t, path, "old\n", 0o644)
	r := idebridge.NewReviewer(reviewClient(t, srv.URL(), srv.AuthToken()), nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.ProposeEdit(reviewCtx(t), idebridge.EditRequest{Path: path, NewText: "y", TabName: "tab"})
	}()
	policy.waitCalled(t, 1)
	if _, err := r.ProposeEdit(reviewCtx(t), idebridge.EditRequest{Path: path, NewText: "x", TabName: "tab"}); err == nil || !strings.Contains(err.Error(), "already under review") {
		t.Errorf("second review of one tab: %v", err)
	}
	r.CancelAll(reviewCtx(t))
	<-done
}

// TestWriteFileAtomic covers the writer on its own: modes, symbolic links,
// conflicts, and what is not a file.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "run.sh")
	writeFile(t, exe, "#!/bin/sh\n", 0o755)
	if err := idebridge.WriteFileAtomic(exe, []byte("#!/bin/sh\necho hi\n"), nil); err != nil {
		t.Fatal(err)
	}
	if m := modeOf(t, exe); m != 0o755 || readFile(t, exe) != "#!/bin/sh\necho hi\n" {
		t.Errorf("mode %v, content %q", m, readFile(t, exe))
	}

	// A symbolic link: the target is replaced, the link stays.
	target := filepath.Join(dir, "target.txt")
	writeFile(t, target, "target\n", 0o600)
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink("target.txt", link); err != nil {
		t.Fatal(err)
	}
	if err := idebridge.WriteFileAtomic(link, []byte("through the link\n"), nil); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", st, err)
	}
	if readFile(t, target) != "through the link\n" || modeOf(t, target) != 0o600 {
		t.Errorf("target %q %v", readFile(t, target), modeOf(t, target))
	}

	// Expectations: a file that appeared, one that vanished.
	fresh := filepath.Join(dir, "fresh.txt")
	absent, err := idebridge.StatFile(fresh)
	if err != nil || absent.Exists {
		t.Fatalf("StatFile of a missing file: %+v, %v", absent, err)
	}
	writeFile(t, fresh, "someone was faster\n", 0o644)
	if err := idebridge.WriteFileAtomic(fresh, []byte("mine\n"), absent); !errors.Is(err, idebridge.ErrConflict) || !strings.Contains(err.Error(), "created") {
		t.Errorf("file created meanwhile: %v", err)
	}
	st, err := idebridge.StatFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(fresh)
	if err := idebridge.WriteFileAtomic(fresh, []byte("mine\n"), st); !errors.Is(err, idebridge.ErrConflict) || !strings.Contains(err.Error(), "deleted") {
		t.Errorf("file deleted meanwhile: %v", err)
	}
	// Touching a file, or changing its mode, is not a conflict.
	writeFile(t, fresh, "same\n", 0o644)
	st, _ = idebridge.StatFile(fresh)
	os.Chtimes(fresh, time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	if err := idebridge.WriteFileAtomic(fresh, []byte("next\n"), st); err != nil {
		t.Errorf("touched file: %v", err)
	}

	// Not a regular file.
	if err := idebridge.WriteFileAtomic(dir, []byte("x"), nil); err == nil {
		t.Error("wrote over a directory")
	}
	if _, err := idebridge.StatFile(dir); err == nil {
		t.Error("StatFile of a directory")
	}
	// A directory that does not exist: an error, nothing created.
	if err := idebridge.WriteFileAtomic(filepath.Join(dir, "no", "such"), []byte("x"), nil); err == nil {
		t.Error("wrote into a missing directory")
	}
	onlyFiles(t, dir, "run.sh", "target.txt", "link.txt", "fresh.txt")
}

// TestApplyEdit: the path without an IDE writes and says so.
func TestApplyEdit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "main.go")
	writeFile(t, path, "old\n", 0o640)
	base, err := idebridge.StatFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := idebridge.ApplyEdit(idebridge.EditRequest{Path: path, NewText: "new\n", Base: base})
	if err != nil || res.Status != idebridge.EditApplied || !res.Written || res.ViaIDE || res.Bytes != 4 {
		t.Fatalf("result %+v, %v", res, err)
	}
	if readFile(t, path) != "new\n" || modeOf(t, path) != 0o640 {
		t.Error("not written as it should be")
	}
	// The same Base again: the file has changed since.
	if res, err := idebridge.ApplyEdit(idebridge.EditRequest{Path: path, NewText: "newer\n", Base: base}); !errors.Is(err, idebridge.ErrConflict) || res.Written {
		t.Errorf("stale base: %+v, %v", res, err)
	}
	if readFile(t, path) != "new\n" {
		t.Error("a conflicting edit was written")
	}
	onlyFiles(t, dir, "main.go")
}

// TestReviewerWithoutIDE: a Reviewer without a client fails cleanly.
func TestReviewerWithoutIDE(t *testing.T) {
	r := idebridge.NewReviewer(nil, nil)
	if _, err := r.ProposeEdit(reviewCtx(t), idebridge.EditRequest{Path: "x", NewText: "y"}); !errors.Is(err, idebridge.ErrNoIDE) {
		t.Errorf("ProposeEdit: %v", err)
	}
	if _, err := r.CancelAll(reviewCtx(t)); !errors.Is(err, idebridge.ErrNoIDE) {
		t.Errorf("CancelAll: %v", err)
	}
}
