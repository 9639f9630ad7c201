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
	// The seeded baseline: one N = 1 run per task and protocol, kept apart
	// from the merged ones.
	if out, err = run(t, append(args, "--baseline", "seeded")...); err != nil ||
		!strings.Contains(out, "12 runs: 4 run now, 8 already done") || !strings.Contains(out, "| seeded       |") {
		t.Errorf("seeded baseline: %v\n%s", err, out)
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
