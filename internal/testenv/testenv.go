// Package testenv holds what the tests of several packages share about
// their environment: the programs they run (python3, node, chromium),
// whose absence fails a test in CI (CI set, as .ci/run sets it) and skips
// it elsewhere, and bounded waits for a condition that another goroutine
// or process brings about. Only tests import it.
package testenv

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// InCI reports whether the tests run in CI: the CI environment variable
// is set and not empty.
func InCI() bool { return os.Getenv("CI") != "" }

// Missing ends the test because something it needs is missing: a failure
// in CI, where everything must be installed, a skip elsewhere.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("%s (CI is set: .ci/run installs what the tests need)", msg)
		return
	}
	t.Skip(msg)
}

// LookPath returns the path of program on PATH, or ends the test with
// Missing.
func LookPath(t testing.TB, program string) string {
	t.Helper()
	p, err := exec.LookPath(program)
	if err != nil {
		Missing(t, "%s not found: %v", program, err)
	}
	return p
}

// WaitTimeout bounds Wait: a guard against a hang on a loaded machine,
// not a timing assertion.
const WaitTimeout = time.Minute

// Wait polls cond every few milliseconds until it holds, and fails the
// test naming what it waited for if it does not within WaitTimeout. It
// must be called from the test's goroutine.
func Wait(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %v waiting for %s", WaitTimeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// DirBytes is the total size of the regular files under dir (what a run
// directory costs, as tests that bound it measure it).
func DirBytes(t testing.TB, dir string) int64 {
	t.Helper()
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			total += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}
