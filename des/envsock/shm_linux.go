package envsock

import (
	"os"

	"golang.org/x/sys/unix"
)

// anonymousFile is a memfd: memory with a descriptor, never on a disk.
func anonymousFile() (*os.File, error) {
	fd, err := unix.MemfdCreate("coordbench-envsock", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "coordbench-envsock"), nil
}
