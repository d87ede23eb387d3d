//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMainSignalsCancel checks that SIGINT, SIGTERM and SIGHUP cancel the
// command's context (so it can clean up) instead of killing the process.
func TestMainSignalsCancel(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = []string{"IDEBRIDGE_TEST_MAIN=1", "IDEBRIDGE_TEST_ARGS=zz-test wait"}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			t.Cleanup(func() {
				cmd.Process.Kill()
				<-done
			})
			r := bufio.NewReader(stdout)
			if line, err := r.ReadString('\n'); err != nil || line != "ready\n" {
				t.Fatalf("first line %q, %v", line, err)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			rest, _ := r.ReadString('\n')
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				done <- err
				if err != nil || strings.TrimSpace(rest) != "cancelled" {
					t.Errorf("after %v: exit %v, output %q", sig, err, rest)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("the command did not stop after %v", sig)
			}
		})
	}
}
