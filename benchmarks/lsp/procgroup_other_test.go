//go:build !unix

package lsp

import "os/exec"

// ownProcessGroup: no process groups here; killProcessGroup ends the
// server alone.
func ownProcessGroup(*exec.Cmd) {}

func killProcessGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
