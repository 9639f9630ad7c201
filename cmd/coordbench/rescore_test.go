package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/internal/scorediff"
)

// TestRescoreCommands: des rescore of a suite and of a run, and silo
// rescore of a suite, through the command line: the table says "no
// change", --json prints rescore.json's report, --dry-run writes nothing,
// and a directory of neither kind is an error.
func TestRescoreCommands(t *testing.T) {
	des := filepath.Join(t.TempDir(), "des")
	if out, err := run(t, "des", "suite", "--suite", "A3C9-1", "--paradigm", "centralized,hierarchical", "--seeds", "1", "--out", des); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := run(t, "des", "rescore", des)
	if err != nil || !strings.Contains(out, "rescored 2 run(s) of suite") || !strings.Contains(out, "no change") {
		t.Errorf("des rescore: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(des, scorediff.ReportFile)); err != nil {
		t.Error(err)
	}
	caseDir := filepath.Join(des, "cases", "A3C9-1__centralized__rule__s1")
	out, err = run(t, "des", "rescore", "--json", "--dry-run", caseDir)
	var rep scorediff.Report
	if err != nil || json.Unmarshal([]byte(out), &rep) != nil || rep.Kind != "run" || !rep.DryRun || len(rep.Changes) != 0 {
		t.Errorf("des rescore --json --dry-run: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(caseDir, scorediff.ReportFile)); err == nil {
		t.Error("--dry-run wrote rescore.json")
	}

	silo := filepath.Join(t.TempDir(), "silo")
	if out, err := run(t, "silo", "suite", "--tasks", "I-01", "--agents", "2", "--protocols", "p2p", "--seeds", "1", "--max-rounds", "3", "--out", silo); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err = run(t, "silo", "rescore", silo)
	if err != nil || !strings.Contains(out, "rescored 2 run(s) of suite") || !strings.Contains(out, "silo-score/1") || !strings.Contains(out, "no change") {
		t.Errorf("silo rescore: %v\n%s", err, out)
	}
	if _, err := run(t, "silo", "rescore", des); err == nil {
		t.Error("silo rescore of a des suite: no error")
	}
}
