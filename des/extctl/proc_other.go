//go:build !unix

package extctl

import "os/exec"

// shellCommand runs a command line with the shell.
func shellCommand(line string) *exec.Cmd { return exec.Command("cmd", "/C", line) }

// setProcessGroup does nothing here: without process groups only the
// runner itself is stopped.
func setProcessGroup(*exec.Cmd) {}

func terminateGroup(cmd *exec.Cmd) { cmd.Process.Kill() }

func killGroup(cmd *exec.Cmd) { cmd.Process.Kill() }
