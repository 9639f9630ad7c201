//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package atomicfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// LockFile is the lock file LockDir keeps in a locked directory.
const LockFile = ".lock"

// LockDir takes an exclusive lock on directory dir (through the file
// LockFile in it) until unlock is called, so that two suites never write
// the same directory at once. The kernel drops the lock when the process
// dies, however it dies.
func LockDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s %w", dir, ErrLocked)
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}
