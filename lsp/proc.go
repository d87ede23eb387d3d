package lsp

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// stderrTailBytes bounds how much of a server's stderr is kept for error
// messages.
const stderrTailBytes = 8 << 10

// tail keeps the last n bytes written to it. It is safe for concurrent use.
type tail struct {
	mu   sync.Mutex
	n    int
	buf  []byte
	lost bool // bytes were dropped from the front
}

func newTail(n int) *tail { return &tail{n: n} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(p) >= t.n {
		t.buf = append(t.buf[:0], p[len(p)-t.n:]...)
		t.lost = true
		return len(p), nil
	}
	if over := len(t.buf) + len(p) - t.n; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.lost = true
	}
	t.buf = append(t.buf, p...)
	return len(p), nil
}

// String returns the kept bytes, starting at a line boundary when the
// front was cut, with surrounding white space trimmed.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(t.buf)
	if t.lost {
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
		s = "..." + s
	}
	return strings.TrimSpace(s)
}

// proc is a started language-server process in its own process group.
type proc struct {
	cmd    *exec.Cmd
	stdin  *os.File // our write end; a pollable pipe, so write deadlines work
	stdout *os.File // our read end
	stderr *tail
	// stderrDone is closed when every writer of stderr, grandchildren
	// included, has closed it.
	stderrDone chan struct{}
	exited     chan struct{} // closed once the process has been waited for
	err        error         // Wait's result; read only after exited is closed
}

// startProc starts cmd with fresh pipes for stdin, stdout and stderr, in a
// new process group (see setProcAttr). Stderr is drained into a bounded
// tail by a goroutine that ends when every holder of the pipe, including
// grandchildren, has closed it.
func startProc(cmd *exec.Cmd) (*proc, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("creating stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("creating stderr pipe: %w", err)
	}
	// *os.File values make exec hand the descriptors over directly, so
	// Wait never waits on copying goroutines that a grandchild could keep
	// alive.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, err
	}
	closeAll(inR, outW, errW)
	p := &proc{cmd: cmd, stdin: inW, stdout: outR, stderr: newTail(stderrTailBytes),
		stderrDone: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer close(p.stderrDone)
		buf := make([]byte, 4096)
		for {
			n, err := errR.Read(buf)
			p.stderr.Write(buf[:n])
			if err != nil {
				errR.Close()
				return
			}
		}
	}()
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// kill sends SIGKILL to the whole process group (the process itself on
// systems without groups). It is safe to call more than once and after the
// process exited: grandchildren left in the group still die.
func (p *proc) kill() {
	killGroup(p.cmd.Process)
}

// exitStatus describes how the process ended, e.g. "exit status 2" or
// "signal: killed". Call it only after exited is closed.
func (p *proc) exitStatus() string {
	if p.err == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ProcessState.String()
	}
	return p.err.Error()
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}
