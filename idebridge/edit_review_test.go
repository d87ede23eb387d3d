package idebridge_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/idebridge/idebridge/idebridge"
	"github.com/idebridge/idebridge/idebridge/ideserver"
	"github.com/idebridge/idebridge/mcp"
)

// Review asks and never writes: the result is what the user did and the
// text to write.
func TestReviewWritesNothing(t *testing.T) {
	const old, proposal = "package main\n\nfunc main() {}\n", "package main\n\nfunc main() { println(1) }\n"
	const edited = "package main\n\n// the user's own touch\nfunc main() { println(2) }\n"
	for _, tt := range []struct {
		name     string
		decide   ideserver.DiffDecision
		status   idebridge.EditStatus
		text     string
		modified bool
	}{
		{"accept", ideserver.SaveDiff(proposal), idebridge.EditAccepted, proposal, false},
		{"accept with user edits", ideserver.SaveDiff(edited), idebridge.EditAccepted, edited, true},
		{"tab closed", ideserver.DiffDecision{Action: ideserver.DiffCloseTab}, idebridge.EditTabClosed, proposal, false},
		{"reject", ideserver.DiffDecision{Action: ideserver.DiffReject}, idebridge.EditRejected, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			policy := newRecordingPolicy(func(context.Context, *ideserver.DiffRequest) (ideserver.DiffDecision, error) {
				return tt.decide, nil
			})
			srv, dir := reviewIDE(t, policy)
			path := filepath.Join(dir, "main.go")
			writeFile(t, path, old, 0o644)
			r := idebridge.NewReviewer(reviewClient(t, srv.URL(), srv.AuthToken()), nil)
			res, err := r.Review(reviewCtx(t), idebridge.EditRequest{Path: path, NewText: proposal})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.status || res.Written || res.Text != tt.text || res.UserModified != tt.modified || !res.ViaIDE {
				t.Errorf("result %+v", res)
			}
			if got := readFile(t, path); got != old {
				t.Errorf("Review wrote the file: %q", got)
			}
			if n := len(policy.requests()); n != 1 {
				t.Errorf("openDiff calls: %d", n)
			}
			onlyFiles(t, dir, "main.go")
		})
	}
}

// SaveUnsaved saves exactly the files the IDE says are dirty; without
// saveDocument it refuses, naming the file.
func TestSaveUnsaved(t *testing.T) {
	srv, dir := reviewIDE(t, ideserver.RejectDiffs)
	a, b := filepath.Join(dir, "a.go"), filepath.Join(dir, "b.go")
	writeFile(t, a, "package a\n", 0o644)
	writeFile(t, b, "package a\n", 0o644)
	var mu sync.Mutex
	dirty := map[string]bool{b: true}
	var saved []string
	bind := func(call *ideserver.ToolCall) (string, error) {
		var args struct {
			FilePath string `json:"filePath"`
		}
		err := call.Bind(&args)
		return args.FilePath, err
	}
	schema := json.RawMessage(`{"type":"object","properties":{"filePath":{"type":"string"}},"required":["filePath"]}`)
	must(t, srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: mcp.ToolCheckDocumentDirty, InputSchema: schema},
		Handler: func(_ context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
			p, err := bind(call)
			if err != nil {
				return nil, err
			}
			mu.Lock()
			defer mu.Unlock()
			return ideserver.JSONResult(map[string]any{"success": true, "filePath": p, "isDirty": dirty[p], "isUntitled": false})
		}}))
	must(t, srv.RegisterTool(ideserver.Tool{Tool: mcp.Tool{Name: mcp.ToolSaveDocument, InputSchema: schema},
		Handler: func(_ context.Context, call *ideserver.ToolCall) (*mcp.ToolResult, error) {
			p, err := bind(call)
			if err != nil {
				return nil, err
			}
			mu.Lock()
			defer mu.Unlock()
			saved = append(saved, p)
			dirty[p] = false
			return ideserver.JSONResult(map[string]any{"success": true, "filePath": p, "saved": true})
		}}))
	c := reviewClient(t, srv.URL(), srv.AuthToken())
	ctx := reviewCtx(t)
	got, known, err := c.UnsavedFiles(ctx, []string{a, b})
	if err != nil || !known || !slices.Equal(got, []string{b}) {
		t.Fatalf("UnsavedFiles: %v %v %v", got, known, err)
	}
	done, err := c.SaveUnsaved(ctx, []string{a, b})
	if err != nil || !slices.Equal(done, []string{b}) || !slices.Equal(saved, []string{b}) {
		t.Fatalf("SaveUnsaved: %v %v (saved %v)", done, err, saved)
	}
	if got, _, _ := c.UnsavedFiles(ctx, []string{a, b}); len(got) != 0 {
		t.Errorf("still unsaved: %v", got)
	}

	// An IDE that cannot save: the dirty file is named.
	if !srv.UnregisterTool(mcp.ToolSaveDocument) {
		t.Fatal("saveDocument was not registered")
	}
	mu.Lock()
	dirty[a] = true
	mu.Unlock()
	c2 := reviewClient(t, srv.URL(), srv.AuthToken())
	if _, err := c2.SaveUnsaved(ctx, []string{a, b}); err == nil || !strings.Contains(err.Error(), a+" has unsaved changes") {
		t.Errorf("SaveUnsaved without saveDocument: %v", err)
	}
	if _, err := os.Stat(a); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// ReviewFunc answers in the shape of an all-or-nothing write's hook: the
// text to write and true for an accepted file (the user's text when they
// edited it), false for a rejected one, and writes nothing.
func TestReviewFunc(t *testing.T) {
	const old, proposal, edited = "a\n", "b\n", "c\n"
	for _, tt := range []struct {
		decide ideserver.DiffDecision
		final  string
		ok     bool
	}{
		{ideserver.SaveDiff(proposal), proposal, true},
		{ideserver.SaveDiff(edited), edited, true},
		{ideserver.DiffDecision{Action: ideserver.DiffCloseTab}, proposal, true},
		{ideserver.DiffDecision{Action: ideserver.DiffReject}, "", false},
	} {
		srv, dir := reviewIDE(t, ideserver.DiffPolicyFunc(func(context.Context, *ideserver.DiffRequest) (ideserver.DiffDecision, error) { return tt.decide, nil }))
		path := filepath.Join(dir, "f.txt")
		writeFile(t, path, old, 0o644)
		var seen []*idebridge.EditResult
		review := idebridge.NewReviewer(reviewClient(t, srv.URL(), srv.AuthToken()), nil).ReviewFunc(func(r *idebridge.EditResult) { seen = append(seen, r) })
		final, ok, err := review(reviewCtx(t), path, proposal)
		if err != nil || final != tt.final || ok != tt.ok || len(seen) != 1 {
			t.Errorf("%v: %q %v %v (%d results)", tt.decide.Action, final, ok, err, len(seen))
		}
		if readFile(t, path) != old {
			t.Errorf("%v: the file was written", tt.decide.Action)
		}
	}
}
