//go:build unix

package extctl

import (
	"os/exec"
	"syscall"
)

// shellCommand runs a command line with the shell.
func shellCommand(line string) *exec.Cmd { return exec.Command("/bin/sh", "-c", line) }

// setProcessGroup puts the runner in a process group of its own, so that
// everything it starts can be stopped with it.
func setProcessGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// terminateGroup sends SIGTERM to the runner's process group.
func terminateGroup(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }

// killGroup sends SIGKILL to the runner's process group (no error when
// nothing is left of it).
func killGroup(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
