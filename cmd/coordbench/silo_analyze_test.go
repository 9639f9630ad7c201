package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/silo/analyze"
)

// TestSiloAnalyze: silo analyze on a run written by silo run and on a
// suite written by silo suite (scripted agents, offline).
func TestSiloAnalyze(t *testing.T) {
	base := t.TempDir()
	runDir := filepath.Join(base, "run")
	if out, err := run(t, "silo", "run", "--task", "I-01", "--agents", "4", "--protocol", "sfs", "--out", runDir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := run(t, "silo", "analyze", runDir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, s := range []string{"hub: agent 0 (out 3, in 3, reached 3 of 3 peers, traffic share 1.0000); leader: true",
		"agents per label (labels): none", "wrote " + filepath.Join(runDir, analyze.DefaultOutDir)} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	md, err := os.ReadFile(filepath.Join(runDir, analyze.DefaultOutDir, analyze.FileMarkdown))
	if err != nil || !strings.Contains(string(md), "## Agents") {
		t.Errorf("analysis.md: %v\n%s", err, md)
	}

	suiteDir, outDir := filepath.Join(base, "suite"), filepath.Join(base, "out")
	if out, err := run(t, "silo", "suite", "--tasks", "I-01", "--agents", "3", "--protocols", "p2p", "--agent", "reference,chain",
		"--max-rounds", "3", "--workers", "1", "--out", suiteDir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err = run(t, "silo", "analyze", suiteDir, "--out", outDir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// N = 1 baselines (no leader verdict) and N = 3: the reference star
	// leads; the chain, cut at 3 of its 5 rounds, leaves agents unsubmitted.
	for _, s := range []string{"4 runs (3 successful): a leader emerged in 1 of the 2 runs with N >= 3",
		"agents per label (labels): no_submission 2"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	rows, err := os.ReadFile(filepath.Join(outDir, analyze.FileLeaders))
	if err != nil || !strings.Contains(string(rows), "reference,I,all,1,1,1.0000,1.0000,\n") {
		t.Errorf("leaders.csv: %v\n%s", err, rows)
	}

	if _, err := run(t, "silo", "analyze", base); err == nil || !strings.Contains(err.Error(), "neither a run directory") {
		t.Errorf("analyze of a plain directory: %v", err)
	}
	if _, err := run(t, "silo", "analyze", suiteDir, "--max-runs", "0"); err == nil || !strings.Contains(err.Error(), "--max-runs") {
		t.Errorf("--max-runs 0: %v", err)
	}
}
