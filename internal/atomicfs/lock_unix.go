//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package atomicfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// HoldDir takes an exclusive lock on the directory dir itself (nothing is
// added to it) until release is called or the process dies, so that
// RemoveDead knows it is in use: a run's temporary output directory.
func HoldDir(dir string) (release func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("hold %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}

// RemoveDead removes the directories of parent named prefix* that no
// process holds (HoldDir): those a killed run left. One held is left
// alone: its run is alive.
func RemoveDead(parent, prefix string) error {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		release, err := HoldDir(dir)
		if err != nil {
			continue // held by a live run, or gone
		}
		err = os.RemoveAll(dir)
		release()
		if err != nil {
			return err
		}
	}
	return nil
}
