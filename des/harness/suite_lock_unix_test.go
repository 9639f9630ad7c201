//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package harness

import (
	"context"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/des/policy"
	"github.com/coordbench/coordbench/internal/atomicfs"
)

// Two suites never share a directory at once.
func TestSuiteDirLock(t *testing.T) {
	dir := t.TempDir()
	unlock, err := atomicfs.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ResolveSuite(SuiteOptions{Builtins: policy.Builtins(), Suite: "A3C9-1", Paradigms: "all", Seeds: "1", Controllers: "rule"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RunSuite(context.Background(), s, dir, SuiteRunOptions{}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("a locked directory: %v", err)
	}
	unlock()
	if _, err := RunSuite(context.Background(), s, dir, SuiteRunOptions{}); err != nil {
		t.Error(err)
	}
}
