package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Names of fixed vocabularies are matched without regard to case in both
// benchmarks, and recorded in their one spelling (issue 14: silo matched
// task ids, levels and protocols so, des and the rest of silo did not).
func TestNamesMatchWithoutCase(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "run")
	if out, err := run(t, "des", "run", "--instance", "a3c9-1", "--paradigm", "CENTRALIZED", "--controller", "Greedy", "--seed", "1", "--out", dir); err != nil {
		t.Fatalf("des run: %v\n%s", err, out)
	}
	if m := metricsIn(t, dir); m.Instance != "A3C9-1" || m.Paradigm != "centralized" || m.Controller != "greedy" {
		t.Errorf("des run recorded %s × %s × %s", m.Instance, m.Paradigm, m.Controller)
	}
	out, err := run(t, "silo", "run", "--task", "i-01", "--protocol", "P2P", "--agent", "Tree", "--mode", "Seeded", "--message-format", "JSON", "--out", filepath.Join(tmp, "silo"))
	if err != nil || !strings.Contains(out, "N=2, p2p, tree agents") {
		t.Fatalf("silo run: %v\n%s", err, out)
	}
	suite := filepath.Join(tmp, "suite")
	if out, err := run(t, "des", "suite", "--suite", "a3c9", "--paradigm", "Centralized", "--controller", "RULE", "--seeds", "Test",
		"--group-by", "Paradigm", "--limit", "1", "--out", suite); err != nil {
		t.Fatalf("des suite: %v\n%s", err, out)
	}
	if rows := summaryRows(t, suite); len(rows) != 1 || rows[0][0] != "A3C9-1__centralized__rule__s11" {
		t.Errorf("des suite rows: %v", rows)
	}
	if out, err := run(t, "silo", "suite", "--tasks", "i-01", "--agents", "2", "--protocols", "SFS", "--agent", "Chain", "--mode", "SEEDED",
		"--baseline", "Seeded", "--out", filepath.Join(tmp, "silo-suite")); err != nil || !strings.Contains(out, "| chain ") {
		t.Fatalf("silo suite: %v\n%s", err, out)
	}
}
