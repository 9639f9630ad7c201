//go:build unix

package envsock

import (
	"fmt"
	"os"
	"syscall"
)

// newSharedReply makes a shared region of size bytes: an anonymous file
// (memfd on Linux; elsewhere a temporary file removed at once) mapped
// read-write and shared.
func newSharedReply(size int) (*sharedReply, error) {
	f, err := anonymousFile()
	if err != nil {
		return nil, fmt.Errorf("shared memory: %w", err)
	}
	if err := f.Truncate(int64(size)); err != nil {
		f.Close()
		return nil, fmt.Errorf("shared memory: %w", err)
	}
	if err := sealSize(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("shared memory: seal: %w", err)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("shared memory: mmap: %w", err)
	}
	return &sharedReply{file: f, mem: mem}, nil
}

func unmap(b []byte) { syscall.Munmap(b) }

// rightsOf is the ancillary data that passes f's descriptor over a unix
// socket.
func rightsOf(f *os.File) []byte { return syscall.UnixRights(int(f.Fd())) }
