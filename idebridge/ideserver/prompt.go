package ideserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
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
// A line is read only while a question waits for it, so an editor run by
// Edit has the terminal to itself. A question whose context ends leaves
// its read pending (a blocked read cannot be interrupted); the next
// question takes that line.
func NewPromptPolicy(in io.Reader, out io.Writer, opts *PromptOptions) DiffPolicy {
	p := &promptPolicy{in: bufio.NewReader(in), out: out, turn: make(chan struct{}, 1)}
	if opts != nil {
		p.edit = opts.Edit
	}
	return p
}

type promptPolicy struct {
	in   *bufio.Reader
	out  io.Writer
	edit func(context.Context, *DiffRequest) (string, error)

	turn chan struct{} // one question at a time; guards the fields below

	pending chan lineResult // the read in progress, if any
	eof     bool
}

type lineResult struct {
	line string
	err  error
}

// readLine starts reading one line unless a read is already in progress,
// and returns where its result will arrive.
func (p *promptPolicy) readLine() chan lineResult {
	if p.pending == nil {
		ch := make(chan lineResult, 1)
		p.pending = ch
		go func() {
			line, err := p.in.ReadString('\n')
			ch <- lineResult{line, err}
		}()
	}
	return p.pending
}

func (p *promptPolicy) Decide(ctx context.Context, req *DiffRequest) (DiffDecision, error) {
	reject := DiffDecision{Action: DiffReject}
	select {
	case p.turn <- struct{}{}:
		defer func() { <-p.turn }()
	case <-ctx.Done():
		return reject, nil
	}
	if p.eof {
		return reject, nil
	}
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
		var r lineResult
		select {
		case r = <-p.readLine():
			p.pending = nil
		case <-ctx.Done():
			fmt.Fprintln(p.out, "\n(closed)")
			return reject, nil
		}
		if r.err != nil {
			p.eof = true
			if strings.TrimSpace(r.line) == "" {
				fmt.Fprintln(p.out, "\n(end of input: rejected)")
				return reject, nil
			}
		}
		switch strings.ToLower(strings.TrimSpace(r.line)) {
		case "y", "yes":
			return SaveDiff(req.NewContents), nil
		case "n", "no":
			return reject, nil
		case "e", "edit":
			if p.edit == nil {
				break
			}
			text, err := p.edit(ctx, req)
			if err != nil {
				fmt.Fprintf(p.out, "edit failed: %v\n", err)
				break
			}
			return SaveDiff(text), nil
		}
		if p.eof {
			fmt.Fprintln(p.out, "(end of input: rejected)")
			return reject, nil
		}
	}
}
