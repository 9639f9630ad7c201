package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/coordbench/coordbench/internal/atomicfs"
)

// One run's output directory (des run, des case, silo run) is written
// whole: the run writes into a temporary directory next to --out
// (.tmp-<name>-*), which is renamed to --out once the run has ended, so
// --out is at every moment absent, the previous run, or the new run
// complete. An existing --out that holds anything is refused unless
// --force, which replaces it (atomicfs.MoveIntoPlace), never merges into
// it. A run killed outright (a second Ctrl-C) leaves only the temporary
// directory, which the next run into the same --out removes: a run holds
// its temporary directory (atomicfs.HoldDir) while it lives, so that one
// of a live run is never removed.

// runOutPrefix starts the name of a run's temporary directory.
const runOutPrefix = ".tmp-"

// runOut is the output directory of one run and the temporary directory it
// is written into.
type runOut struct {
	out, tmp string
	release  func() // the hold on tmp
}

// checkOut refuses to write a run into out if out holds anything (a
// file, or a directory that is not empty), unless force, and always if
// out is the working directory or holds it (it is replaced by a rename).
func checkOut(out string, force bool) error {
	st, err := os.Lstat(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if wd, err := os.Getwd(); err == nil && (wd == abs || strings.HasPrefix(wd, abs+string(filepath.Separator))) {
		return fmt.Errorf("--out %s is the working directory or holds it: give a directory inside it, e.g. --out runs/NAME", out)
	}
	if st.IsDir() {
		if ents, err := os.ReadDir(out); err == nil && len(ents) == 0 {
			return nil // an empty directory: nothing to lose
		}
	}
	if !force {
		what := "already exists and is not empty"
		if !st.IsDir() {
			what = "already exists"
		}
		return fmt.Errorf("--out %s %s: give another --out, or --force to replace it", out, what)
	}
	return nil
}

// newRunOut checks out (checkOut) and creates the temporary directory the
// run writes into.
func newRunOut(out string, force bool) (*runOut, error) {
	if err := checkOut(out, force); err != nil {
		return nil, err
	}
	parent := filepath.Dir(out)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	prefix := runOutPrefix + filepath.Base(out) + "-"
	if err := atomicfs.RemoveDead(parent, prefix); err != nil { // what killed runs into out left
		return nil, fmt.Errorf("--out: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	release, err := atomicfs.HoldDir(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("--out: %w", err)
	}
	return &runOut{out: out, tmp: tmp, release: release}, nil
}

// commit renames the temporary directory to out, replacing what out held
// (checkOut allowed it).
func (r *runOut) commit() error {
	defer r.release()
	if err := atomicfs.MoveIntoPlace(r.tmp, r.out, filepath.Dir(r.out), runOutPrefix); err != nil {
		os.RemoveAll(r.tmp)
		return fmt.Errorf("move the run into --out %s: %w", r.out, err)
	}
	return nil
}

// discard removes the temporary directory of a run that wrote nothing
// worth keeping.
func (r *runOut) discard() {
	os.RemoveAll(r.tmp)
	r.release()
}
