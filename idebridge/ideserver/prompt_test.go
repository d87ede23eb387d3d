package ideserver_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idebridge/idebridge/idebridge/ideserver"
)

// syncBuffer is an io.Writer safe for the policy's and the test's
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestPromptPolicy(t *testing.T) {
	req := &ideserver.DiffRequest{
		OldPath: "/w/main.go", NewPath: "/w/main.go", OldExists: true,
		OldContents: "package main\n", NewContents: "package main\n\nfunc main() {}\n",
		TabName: "tab", Client: ideserver.ClientInfo{Name: "claude-code", PID: 42},
	}
	edit := func(_ context.Context, r *ideserver.DiffRequest) (string, error) {
		return r.NewContents + "// edited\n", nil
	}
	tests := []struct {
		input string
		edit  bool
		want  ideserver.DiffDecision
	}{
		{"y\n", false, ideserver.SaveDiff(req.NewContents)},
		{" YES \n", false, ideserver.SaveDiff(req.NewContents)},
		{"n\n", false, ideserver.DiffDecision{Action: ideserver.DiffReject}},
		{"maybe\nno\n", false, ideserver.DiffDecision{Action: ideserver.DiffReject}},
		{"e\ny\n", false, ideserver.SaveDiff(req.NewContents)}, // no editor: e asks again
		{"e\n", true, ideserver.SaveDiff(req.NewContents + "// edited\n")},
		{"", false, ideserver.DiffDecision{Action: ideserver.DiffReject}}, // end of input
	}
	for _, tt := range tests {
		var out syncBuffer
		var opts *ideserver.PromptOptions
		if tt.edit {
			opts = &ideserver.PromptOptions{Edit: edit}
		}
		p := ideserver.NewPromptPolicy(strings.NewReader(tt.input), &out, opts)
		got, err := p.Decide(context.Background(), req)
		if err != nil || got != tt.want {
			t.Errorf("input %q: %+v, %v; want %+v", tt.input, got, err, tt.want)
		}
		o := out.String()
		for _, want := range []string{"claude-code (pid 42) proposes to change /w/main.go [tab]", "--- a/w/main.go\n+++ b/w/main.go\n", "+func main() {}\n", "Apply? [y]es / [n]o"} {
			if !strings.Contains(o, want) {
				t.Errorf("input %q: output lacks %q:\n%s", tt.input, want, o)
			}
		}
		if tt.edit != strings.Contains(o, "[e]dit") {
			t.Errorf("input %q: edit offered wrongly:\n%s", tt.input, o)
		}
	}
}

func TestPromptPolicyWaitsAndEndsWithContext(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	var out syncBuffer
	p := ideserver.NewPromptPolicy(pr, &out, &ideserver.PromptOptions{Edit: func(context.Context, *ideserver.DiffRequest) (string, error) {
		return "", errors.New("no editor")
	}})
	req := &ideserver.DiffRequest{OldPath: "/n", NewPath: "/n", NewContents: "x\n", TabName: "t"}

	// Nobody answers: the question ends with its context, rejected.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan ideserver.DiffDecision, 1)
	go func() {
		d, _ := p.Decide(ctx, req)
		done <- d
	}()
	waitOutput(t, &out, "Apply?")
	// A second question waits for the first.
	second := make(chan ideserver.DiffDecision, 1)
	go func() {
		d, _ := p.Decide(context.Background(), req)
		second <- d
	}()
	cancel()
	if d := <-done; d.Action != ideserver.DiffReject {
		t.Errorf("cancelled question: %+v", d)
	}
	// The second one gets the next line; a failing edit asks again.
	if _, err := io.WriteString(pw, "e\n"); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, &out, "edit failed: no editor")
	if _, err := io.WriteString(pw, "y\n"); err != nil {
		t.Fatal(err)
	}
	if d := <-second; d != ideserver.SaveDiff("x\n") {
		t.Errorf("second question: %+v", d)
	}
	if !strings.Contains(out.String(), "the agent proposes to create /n [t]") {
		t.Errorf("output:\n%s", out.String())
	}
}

func waitOutput(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("output never showed %q:\n%s", want, out.String())
		}
		time.Sleep(time.Millisecond)
	}
}
