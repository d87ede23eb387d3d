package lsp

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/idebridge/idebridge/internal/env"
)

// Process supervision. A language server is started so that its whole
// process tree (the server, and every worker or child it starts, like
// typescript-language-server's tsserver) can be killed at once, and so that
// it dies with the agent however the agent ends, SIGKILL included, without
// the host program shipping or running any helper binary:
//
//   - Linux: the server is the first process (init) of a new PID namespace
//     (CLONE_NEWPID, with CLONE_NEWUSER mapping the agent's own uid and gid
//     when the agent lacks CAP_SYS_ADMIN), and gets SIGKILL when the agent
//     dies (PR_SET_PDEATHSIG, from a thread that lives until the server is
//     reaped). When a namespace's init dies the kernel kills every other
//     process in it, so nothing the server started can outlive it. Where
//     namespaces are not allowed (some containers and hardened kernels) the
//     server gets its own process group and the death signal only: then a
//     grandchild that leaves the group, or any descendant when the agent is
//     killed, can survive.
//   - macOS and other Unix systems: a process group, killed as a whole on
//     every orderly stop and crash. No kernel mechanism ends the group when
//     the agent is SIGKILLed; servers that watch their stdin or the client
//     process id exit by themselves, their children may not.
//   - Windows: a job object that kills every process in it when its last
//     handle closes, which happens when the agent exits in any way.
//
// isolation says which of these a process got.
type isolation string

const (
	isolatePIDNamespace     isolation = "pid-namespace"      // Linux, CLONE_NEWPID
	isolateUserPIDNamespace isolation = "user+pid-namespace" // Linux, unprivileged
	isolateGroup            isolation = "process-group"      // Unix fallback
	isolateJob              isolation = "job-object"         // Windows
	isolateNone             isolation = "none"               // Windows without a job
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

// proc is a started language-server process and its contained tree.
type proc struct {
	cmd       *exec.Cmd // the command as started (startProc may start a copy)
	isolation isolation
	stdin     *os.File // our write end; a pollable pipe, so write deadlines work
	stdout    *os.File // our read end
	stderr    *tail
	// stderrDone is closed when every writer of stderr, grandchildren
	// included, has closed it.
	stderrDone chan struct{}
	exited     chan struct{} // closed once the process has been waited for
	err        error         // Wait's result; read only after exited is closed
	tree       tree          // the platform's handle on the process tree

	mu     sync.Mutex
	events []string // "exited", "killed": the order of the end, for tests
}

// startProc starts cmd with fresh pipes for stdin, stdout and stderr,
// contained as the package comment above describes. A bare command name is
// looked up in the PATH of cmd.Env when that sets one. Stderr is drained
// into a bounded tail by a goroutine that ends when every holder of the
// pipe, including grandchildren, has closed it.
func startProc(cmd *exec.Cmd) (*proc, error) {
	return startProcIn(cmd, containModes)
}

// startProcIn is startProc trying only the given ways of containing the
// process (most isolated first), so that tests can see each at work.
func startProcIn(cmd *exec.Cmd, modes []isolation) (*proc, error) {
	if err := resolveCommand(cmd); err != nil {
		return nil, err
	}
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
	p := &proc{stdin: inW, stdout: outR, stderr: newTail(stderrTailBytes),
		stderrDone: make(chan struct{}), exited: make(chan struct{})}
	started := make(chan error, 1)
	// One goroutine starts and waits for the process, on a thread of its
	// own (see startContained): the thread that forks a process is its
	// parent for the death signal, so it must live exactly as long as the
	// process does.
	go func() {
		c, err := startContained(cmd, p, modes)
		if err != nil {
			started <- err
			return
		}
		p.cmd = c
		started <- nil
		err = c.Wait()
		p.mu.Lock()
		p.err = err
		p.events = append(p.events, "exited")
		p.mu.Unlock()
		close(p.exited)
	}()
	err = <-started
	closeAll(inR, outW, errW)
	if err != nil {
		closeAll(inW, outR, errR)
		return nil, err
	}
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
	return p, nil
}

// copyCmd returns a fresh, unstarted copy of cmd (a Cmd cannot be started
// twice, even after a failed Start).
func copyCmd(cmd *exec.Cmd) *exec.Cmd {
	return &exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir, Err: cmd.Err,
		Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr, ExtraFiles: cmd.ExtraFiles}
}

// kill kills the whole process tree at once. It is safe to call more than
// once and after the process exited: what is left of the tree still dies.
func (p *proc) kill() {
	p.mu.Lock()
	p.events = append(p.events, "killed")
	p.mu.Unlock()
	p.tree.kill(p.cmd.Process)
}

// history returns the end events in the order they happened.
func (p *proc) history() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.events...)
}

// clientProcessID is the processId to send in initialize: the agent's pid,
// or null when the server runs in a PID namespace, where that pid means
// nothing (or another process). Servers built on vscode-languageserver
// (pyright, typescript-language-server) poll the pid they are given and
// exit when it looks dead; LSP allows null for "no parent to watch", and
// the namespace already ends the server with the agent.
func (p *proc) clientProcessID() any {
	if p.isolation == isolatePIDNamespace || p.isolation == isolateUserPIDNamespace {
		return nil
	}
	return os.Getpid()
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

// resolveCommand looks a bare command name up in the PATH of cmd.Env,
// which is the server's environment, when that sets PATH: exec.Command
// used the agent's own PATH. Elsewhere (and on Windows, whose PATHEXT
// rules exec applies) cmd is left as it is.
func resolveCommand(cmd *exec.Cmd) error {
	if runtime.GOOS == "windows" || cmd.Env == nil || len(cmd.Args) == 0 {
		return nil
	}
	name := cmd.Args[0]
	path, ok := env.Lookup(cmd.Env, "PATH")
	if !ok || strings.ContainsRune(name, filepath.Separator) {
		return nil
	}
	p, err := lookPathIn(name, path)
	cmd.Path, cmd.Err = p, err
	if err != nil {
		cmd.Path = name
	}
	return nil
}

// lookPathIn finds an executable named name in the directories of path (a
// PATH value) as a shell does, skipping relative directories, which would
// depend on the agent's working directory. The error is an *exec.Error
// that matches exec.ErrNotFound.
func lookPathIn(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		if p := filepath.Join(dir, name); isExecutable(p) {
			return p, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}
