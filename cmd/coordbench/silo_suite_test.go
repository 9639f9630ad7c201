package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSiloSuite(t *testing.T) {
	dir := t.TempDir()
	args := []string{"silo", "suite", "--tasks", "I-01,III-23", "--agents", "2,5", "--protocols", "p2p,sfs", "--out", dir}
	out, err := run(t, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// 2 tasks × (2 N, each with its merged baseline) × 2 protocols.
	if !strings.Contains(out, "16 runs: 16 run now, 0 already done") || !strings.Contains(out, "| reference | III   |") ||
		!strings.Contains(out, "| merged       |") {
		t.Errorf("output:\n%s", out)
	}
	sum, err := os.ReadFile(filepath.Join(dir, "summary.csv"))
	if err != nil || strings.Count(string(sum), "\n") != 17 ||
		!strings.Contains(string(sum), "III-23__n5__sfs__reference__seeded-s1,III-23,III,5,sfs,reference,seeded,1,1,true,") {
		t.Errorf("summary.csv (%v):\n%s", err, sum)
	}
	for _, f := range []string{"aggregate.csv", "aggregate.md", "runs/I-01__n1__p2p__reference__seeded-s1-merged-n5/run.db"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if out, err = run(t, args...); err != nil || !strings.Contains(out, "16 runs: 0 run now, 16 already done") {
		t.Errorf("rerun: %v\n%s", err, out)
	}
	// Another configuration (the seeded baseline: other runs) is refused in
	// the same directory, which keeps its suite (issue 14: it rewrote the
	// summary without the earlier runs); --force replaces that suite.
	summary := string(mustRead(t, filepath.Join(dir, "summary.csv")))
	if _, err = run(t, append(args, "--baseline", "seeded")...); err == nil ||
		!strings.Contains(err.Error(), "--out: "+dir+" holds a suite of another configuration (baseline, cases differ from its silo_suite.json)") ||
		!strings.Contains(err.Error(), "(see --force)") {
		t.Errorf("another configuration: %v", err)
	}
	if string(mustRead(t, filepath.Join(dir, "summary.csv"))) != summary {
		t.Error("the refused suite rewrote summary.csv")
	}
	if out, err = run(t, append(args, "--baseline", "seeded", "--force")...); err != nil ||
		!strings.Contains(out, "12 runs: 12 run now, 0 already done") || !strings.Contains(out, "| seeded       |") {
		t.Errorf("seeded baseline with --force: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs", "I-01__n1__p2p__reference__seeded-s1-merged-n5")); !os.IsNotExist(err) {
		t.Errorf("--force kept a run of the replaced suite: %v", err)
	}
	// The seeded baseline's runs, kept apart from the merged ones, in a
	// directory of its own.
	seeded := t.TempDir()
	if out, err = run(t, append(args[:len(args)-2], "--baseline", "seeded", "--max-rounds", "50", "--out", seeded)...); err != nil ||
		!strings.Contains(out, "12 runs: 12 run now") {
		t.Errorf("seeded baseline: %v\n%s", err, out)
	}
	if _, err = run(t, append(args[:len(args)-2], "--baseline", "seeded", "--out", seeded)...); err == nil ||
		!strings.Contains(err.Error(), "(max_rounds differ from its silo_suite.json)") {
		t.Errorf("another round cap: %v", err)
	}
	for _, bad := range [][]string{
		{"silo", "suite", "--levels", "IV", "--out", dir},
		{"silo", "suite", "--protocols", "pigeon", "--out", dir},
		{"silo", "suite", "--agent", "llm", "--out", dir},
		{"silo", "suite", "--mode", "official", "--agents", "3", "--out", dir},
		{"silo", "suite", "--workers", "0", "--out", dir},
		{"silo", "suite", "--baseline", "pooled", "--out", dir},
	} {
		if _, err := run(t, bad...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
