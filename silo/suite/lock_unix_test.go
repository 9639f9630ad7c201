//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package suite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/internal/atomicfs"
	"github.com/coordbench/coordbench/suiterun"
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
	// The suite holding the lock has a run in flight, in its temporary
	// directory: the refused suite must leave it alone (issue 14: it used
	// to clean temporaries before taking the lock, losing the first
	// suite's runs in flight).
	inFlight := filepath.Join(dir, RunsDir, suiterun.TmpPrefix+"I-01__n2__p2p__reference__seeded-s1-123")
	if err := os.MkdirAll(inFlight, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), s, dir, RunOptions{}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("a locked directory: %v", err)
	}
	if _, err := os.Stat(inFlight); err != nil {
		t.Errorf("the refused suite removed the running suite's temporary directory: %v", err)
	}
	unlock()
	if rep, err := Run(context.Background(), s, dir, RunOptions{}); err != nil || !rep.Complete() {
		t.Errorf("after unlock: %v", err)
	}
}
