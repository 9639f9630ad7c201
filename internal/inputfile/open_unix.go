//go:build unix

package inputfile

import "syscall"

// openFlags makes opening a FIFO return at once instead of waiting for a
// writer (it has no effect on a regular file).
const openFlags = syscall.O_NONBLOCK
