//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package atomicfs

// LockFile is the lock file LockDir keeps in a locked directory (none here).
const LockFile = ".lock"

// LockDir does not lock on this platform: do not run two suites into the
// same directory at once.
func LockDir(string) (unlock func(), err error) { return func() {}, nil }

// HoldDir does not lock on this platform.
func HoldDir(string) (release func(), err error) { return func() {}, nil }

// RemoveDead removes nothing on this platform: without HoldDir's lock a
// live run's directory cannot be told from a dead one's.
func RemoveDead(string, string) error { return nil }
