//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package suite

import (
	"context"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/internal/atomicfs"
)

// Two suites never share a directory at once: an LLM suite running twice
// into one directory would pay twice for the same calls.
func TestSuiteDirLock(t *testing.T) {
	dir := t.TempDir()
	unlock, err := atomicfs.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Resolve(Options{Tasks: "I-01", Agents: "2", Protocols: "p2p"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), s, dir, RunOptions{}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("a locked directory: %v", err)
	}
	unlock()
	if rep, err := Run(context.Background(), s, dir, RunOptions{}); err != nil || !rep.Complete() {
		t.Errorf("after unlock: %v", err)
	}
}
