package ideserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
)

// PromptOptions configure NewPromptPolicy.
type PromptOptions struct {
	// Edit, when set, adds the answer "e": it receives the request and
	// returns the text the user made of the proposal (for example by
	// running $EDITOR on a temporary file), which is then saved.
	Edit func(ctx context.Context, req *DiffRequest) (string, error)
}

// NewPromptPolicy returns a DiffPolicy that asks a person: for each openDiff
// it writes the unified diff of the file on disk against the proposal to
// out, then reads an answer line from in: "y" saves the proposal, "n"
// rejects it, "e" (with PromptOptions.Edit) saves the user's edited text;
// anything else asks again. End of input (or a read error) rejects this and
// every later diff, as does the call's context ending. Questions are asked
// one at a time.
//
// Lines are read from in by one goroutine, started at the first question,
// that runs until in reaches its end.
func NewPromptPolicy(in io.Reader, out io.Writer, opts *PromptOptions) DiffPolicy {
	p := &promptPolicy{in: in, out: out, turn: make(chan struct{}, 1)}
	if opts != nil {
		p.edit = opts.Edit
	}
	return p
}

type promptPolicy struct {
	in   io.Reader
	out  io.Writer
	edit func(context.Context, *DiffRequest) (string, error)

	turn chan struct{} // one question at a time

	once  sync.Once
	lines chan string // closed at end of input
}

func (p *promptPolicy) readLines() {
	defer close(p.lines)
	sc := bufio.NewScanner(p.in)
	for sc.Scan() {
		p.lines <- sc.Text()
	}
}

func (p *promptPolicy) Decide(ctx context.Context, req *DiffRequest) (DiffDecision, error) {
	select {
	case p.turn <- struct{}{}:
		defer func() { <-p.turn }()
	case <-ctx.Done():
		return DiffDecision{Action: DiffReject}, nil
	}
	p.once.Do(func() {
		p.lines = make(chan string)
		go p.readLines()
	})
	who := req.Client.Name
	if who == "" {
		who = "the agent"
	}
	if req.Client.PID != 0 {
		who += fmt.Sprintf(" (pid %d)", req.Client.PID)
	}
	verb := "change"
	if !req.OldExists {
		verb = "create"
	}
	d := UnifiedDiff("a/"+strings.TrimPrefix(req.OldPath, "/"), "b/"+strings.TrimPrefix(req.NewPath, "/"), req.OldContents, req.NewContents)
	if d == "" {
		d = "(no changes)\n"
	}
	fmt.Fprintf(p.out, "\n%s proposes to %s %s [%s]:\n%s", who, verb, req.NewPath, req.TabName, d)
	choices := "[y]es / [n]o"
	if p.edit != nil {
		choices += " / [e]dit"
	}
	for {
		fmt.Fprintf(p.out, "Apply? %s: ", choices)
		var line string
		var ok bool
		select {
		case line, ok = <-p.lines:
		case <-ctx.Done():
			fmt.Fprintln(p.out, "\n(closed)")
			return DiffDecision{Action: DiffReject}, nil
		}
		if !ok {
			fmt.Fprintln(p.out, "\n(end of input: rejected)")
			return DiffDecision{Action: DiffReject}, nil
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return SaveDiff(req.NewContents), nil
		case "n", "no":
			return DiffDecision{Action: DiffReject}, nil
		case "e", "edit":
			if p.edit == nil {
				continue
			}
			text, err := p.edit(ctx, req)
			if err != nil {
				fmt.Fprintf(p.out, "edit failed: %v\n", err)
				continue
			}
			return SaveDiff(text), nil
		}
	}
}
