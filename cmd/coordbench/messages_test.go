package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/llm"
)

// Messages say what is wrong in the user's terms: a missing instance
// file is missing (not an unknown name), sweep status wants directories,
// and no message names a Go option that the command has no word for.
func TestMessagesSayWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "exp.yaml")
	if err := os.WriteFile(file, []byte("benchmark: des\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"des", "run", "--instance", "nofile.yaml", "--out", filepath.Join(dir, "r")}, "instance file nofile.yaml: file does not exist (a reported instance is one of A3C9-1"},
		{[]string{"des", "instance", filepath.Join(dir, "sub", "plant")}, "plant: file does not exist"},
		{[]string{"des", "run", "--instance", "A3C9-7"}, `unknown instance "A3C9-7"`},
		{[]string{"sweep", "status", file}, "exp.yaml is a file, not a directory: sweep status reads the directories sweep run or serve wrote (their --out); for an experiment file's cases and cost estimate, run coordbench sweep plan"},
		{[]string{"sweep", "status", filepath.Join(dir, "nowhere")}, "nowhere: no such directory"},
	} {
		if _, err := run(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	// A replay miss in a sweep names the experiment's field, in des run
	// the flag; a command with neither drops the see-list.
	miss := fmt.Errorf("case x: %w", &llm.CacheMissError{Key: "k", Endpoint: "http://h/v1", Model: "m"})
	sweepRun, _, err := sweepCmd().Find([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		t    terms
		want string
	}{
		{termsOf(sweepRun), "cache mode read-write fills the cache (see the experiment's llm.cache_mode)"},
		{termsOf(desRunCmd()), "cache mode read-write fills the cache (see --llm-cache-mode)"},
		{termsOf(reportCmd()), "cache mode read-write fills the cache"},
	} {
		if got := inFlagTerms(tc.t, miss).Error(); !strings.HasSuffix(got, tc.want) {
			t.Errorf("%q, want it to end in %q", got, tc.want)
		}
	}
}

// sweep run into a suite of another configuration names the flag it
// has to replace it (not "see Force"), and --force does.
func TestSweepRunSuggestsItsOwnFlag(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "suite")
	if o, err := run(t, "des", "suite", "--suite", "A3C9-1", "--seeds", "1", "--paradigm", "centralized", "--out", out); err != nil {
		t.Fatalf("des suite: %v\n%s", err, o)
	}
	exp := filepath.Join(dir, "exp.yaml")
	if err := os.WriteFile(exp, []byte("benchmark: des\ndes:\n  instances: [A3C9-1]\n  paradigms: [holonic_hybrid]\n  controllers: [greedy]\n  seeds: [2]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := run(t, "sweep", "run", exp, "--out", out)
	if err == nil || !strings.Contains(err.Error(), "holds a suite of another configuration") || !strings.HasSuffix(err.Error(), "(see --force)") {
		t.Fatalf("sweep run into another suite: %v", err)
	}
	if o, err := run(t, "sweep", "run", exp, "--out", out, "--force"); err != nil {
		t.Fatalf("sweep run --force: %v\n%s", err, o)
	}
	if _, err := os.Stat(filepath.Join(out, "cases", "A3C9-1__holonic_hybrid__greedy__s2")); err != nil {
		t.Errorf("--force did not run the experiment: %v", err)
	}
}

// des validate on a suite directory checks every case (not "an
// incomplete run"), names a case with problems, and refuses a silo suite
// saying what it is.
func TestValidateSuiteDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "suite")
	if o, err := run(t, "des", "suite", "--suite", "A3C9-1", "--seeds", "1,2", "--paradigm", "centralized", "--out", dir); err != nil {
		t.Fatalf("des suite: %v\n%s", err, o)
	}
	out, err := run(t, "des", "validate", dir)
	if err != nil || !strings.Contains(out, dir+": 2 cases checked, 0 with problems") || strings.Count(out, ": all checks hold") != 2 {
		t.Fatalf("validate suite: %v\n%s", err, out)
	}
	bad := filepath.Join(dir, "cases", "A3C9-1__centralized__rule__s2")
	if err := os.WriteFile(filepath.Join(bad, "metrics.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = run(t, "des", "validate", dir)
	if err == nil || !strings.Contains(err.Error(), "in 1 of its 2 cases") || !strings.Contains(out, bad+": [metrics]") {
		t.Errorf("validate a suite with a bad case: %v\n%s", err, out)
	}
	silo := filepath.Join(t.TempDir(), "silo")
	if o, err := run(t, "silo", "suite", "--tasks", "I-01", "--agents", "2", "--protocols", "p2p", "--out", silo); err != nil {
		t.Fatalf("silo suite: %v\n%s", err, o)
	}
	if _, err := run(t, "des", "validate", silo); err == nil || !strings.Contains(err.Error(), "is a silo suite directory") {
		t.Errorf("validate a silo suite: %v", err)
	}
}
