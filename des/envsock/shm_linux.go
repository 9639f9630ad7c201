package envsock

import (
	"os"

	"golang.org/x/sys/unix"
)

// anonymousFile is a memfd: memory with a descriptor, never on a disk. It
// may be sealed (sealSize).
func anonymousFile() (*os.File, error) {
	fd, err := unix.MemfdCreate("coordbench-envsock", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "coordbench-envsock"), nil
}

// sealSize forbids any change of f's size from now on, by anyone holding
// its descriptor: a client that shrank the region would otherwise make
// the server's writes into its mapping fault (SIGBUS).
func sealSize(f *os.File) error {
	_, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL)
	return err
}
