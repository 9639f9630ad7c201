//go:build !unix

package envsock

// ProcessCPU is the CPU time the process has used; -1: unknown here.
func ProcessCPU() int64 { return -1 }
