//go:build unix

package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/coordbench/coordbench/internal/atomicfs"
)

// The temporary directory a killed des run left beside --out (a second
// Ctrl-C) is removed by the next run into the same --out; that of a run
// still alive (it holds its directory) is left alone, and so is another
// --out's.
func TestRunRemovesDeadTemporaries(t *testing.T) {
	parent := t.TempDir()
	dead, live, other := filepath.Join(parent, ".tmp-run-111"), filepath.Join(parent, ".tmp-run-222"), filepath.Join(parent, ".tmp-other-333")
	for _, d := range []string{dead, live, other} {
		if err := os.MkdirAll(filepath.Join(d, "partial"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	release, err := atomicfs.HoldDir(live) // a run in flight
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if out, err := run(t, "des", "run", "--instance", "A3C9-1", "--seed", "3", "--out", filepath.Join(parent, "run")); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got, want := tempsIn(t, parent), []string{".tmp-other-333", ".tmp-run-222"}; !slices.Equal(got, want) {
		t.Errorf("temporaries left %v, want %v (the dead run's removed)", got, want)
	}
}
