package rescore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coordbench/coordbench/internal/scorediff"
	"github.com/coordbench/coordbench/internal/scorediff/difftest"
	"github.com/coordbench/coordbench/silo/play"
	"github.com/coordbench/coordbench/silo/round"
	"github.com/coordbench/coordbench/silo/suite"
	"github.com/coordbench/coordbench/silo/task"
)

// The pinned run: the stored result.json and manifest of a mixed team's
// run (testdata/pinned-run: right and wrong answers, failure labels,
// model usage, per-model figures), and the SHA-256 of the scores the
// current scorer gives it and of RCC on fixed figures
// (testdata/pin.json). Only the scoring rules move it.
const (
	pinnedRun = "testdata/pinned-run"
	pinFile   = "testdata/pin.json"
)

// TestScorerPin fails when the scores of the pinned run, or RCC, change
// while suite.ScorerVersion stays: a change to a score's definition
// must bump the version (docs/silo-rounds.md, "Scorer version").
func TestScorerPin(t *testing.T) {
	got, changes := pinned(t)
	difftest.CheckPin(t, pinFile, suite.ScorerVersion, got, "suite.ScorerVersion", `docs/silo-rounds.md, "Scorer version"`, changes)
}

// pinned hashes the scores of the pinned run rescored, one "key=value"
// line each, and RCC of fixed figures.
func pinned(t *testing.T) (string, []scorediff.Change) {
	t.Helper()
	r, err := scoreRun(context.Background(), pinnedRun, "pinned", suite.CurrentScorer())
	if err != nil {
		t.Fatal(err)
	}
	all, err := scorediff.JSONChanges("", "", []byte("{}"), r.files[0].New)
	if err != nil {
		t.Fatal(err)
	}
	scored := []string{"S", "success", "P", "P_fine", "P_paper", "P_paper_crashes", "all_submitted", "failures.", "failures_flow.", "C", "C_code"}
	agent := []string{".correct", ".partial", ".partial_fine", ".partial_paper", ".partial_paper_crash", ".labels", ".labels_flow"}
	model := []string{".submitted", ".correct", ".S", ".P", ".P_paper", ".failures"}
	var lines strings.Builder
	for _, c := range all {
		k := c.Metric
		keep := false
		for _, p := range scored {
			keep = keep || k == p || strings.HasSuffix(p, ".") && strings.HasPrefix(k, p)
		}
		for _, p := range agent {
			keep = keep || strings.HasPrefix(k, "agents[") && (strings.HasSuffix(k, p) || strings.Contains(k, p+"["))
		}
		for _, p := range model {
			keep = keep || strings.HasPrefix(k, "by_model[") && (strings.HasSuffix(k, p) || strings.Contains(k, p+"."))
		}
		if keep {
			fmt.Fprintf(&lines, "%s=%s\n", k, c.New)
		}
	}
	if !strings.Contains(lines.String(), "agents[0].correct=") || !strings.Contains(lines.String(), "by_model[0].S=") {
		t.Fatalf("the pinned run lacks agents or models:\n%s", lines.String())
	}
	// RCC of fixed figures: a baseline row (S 0.8, success 0.5) and a row
	// of N = 2 (S 0.3, success 0.25).
	tk, err := task.Lookup("I-01")
	if err != nil {
		t.Fatal(err)
	}
	row := func(n, from int, s float64, success bool) suite.CaseResult {
		return suite.CaseResult{Case: suite.Case{Agent: "x", Task: tk, N: n, MergedFrom: from, Protocol: "p2p"}, Result: &round.Result{S: s, Success: success}}
	}
	aggs := suite.AggregatesUnder([]suite.CaseResult{row(1, 2, 1, true), row(1, 2, 0.6, false), row(2, 0, 0.5, true), row(2, 0, 0.1, false), row(2, 0, 0.3, false), row(2, 0, 0.3, false)},
		suite.BaselineMerged, suite.CurrentScorer().Rules)
	for _, a := range aggs {
		fmt.Fprintf(&lines, "RCC %d/%d=%v %v %v %v\n", a.N, a.MergedFrom, a.RCC, a.HasRCC, a.RCCSuccess, a.HasRCCSuccess)
	}
	return sha([]byte(lines.String())), r.changes
}

// TestWritePinnedRun writes the pinned run anew (a mixed team's run of
// I-01, N = 4, sfs) when COORDBENCH_WRITE_PINNED_RUN=1.
func TestWritePinnedRun(t *testing.T) {
	if os.Getenv("COORDBENCH_WRITE_PINNED_RUN") != "1" {
		t.Skip("set COORDBENCH_WRITE_PINNED_RUN=1 to write " + pinnedRun)
	}
	dir := runSuite(t, mixed(t))
	ents, err := os.ReadDir(filepath.Join(dir, suite.RunsDir))
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(pinnedRun)
	os.MkdirAll(pinnedRun, 0o755)
	for _, e := range ents {
		if !strings.Contains(e.Name(), "llm-mix") {
			continue
		}
		for _, f := range []string{play.FileResult, suite.FileManifest} {
			b, err := os.ReadFile(filepath.Join(dir, suite.RunsDir, e.Name(), f))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(pinnedRun, f), b, 0o644)
		}
		got, _ := pinned(t)
		difftest.WritePin(t, pinFile, difftest.Pin{Scorer: suite.ScorerVersion, Scored: got})
		return
	}
	t.Fatal("no run of the mixed team")
}
