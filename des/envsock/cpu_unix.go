//go:build unix

package envsock

import "syscall"

// ProcessCPU is the CPU time the process has used (user and system, every
// thread), in nanoseconds; -1 where it is unknown. Unlike wall-clock time,
// it hardly depends on the other work of a shared machine.
func ProcessCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
